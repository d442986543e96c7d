//go:build gatejetcuda || cuda

package cudrv

/*
#include <stdlib.h>
#include "shim.h"
*/
import "C"

import (
	"fmt"
	"strings"
	"sync"
	"unsafe"
)

// NVRTCLibs are the names LoadNVRTC tries, in order: the development link, then the sonames
// of CUDA 13, 12 and 11.2 and later (every 11.x from 11.2 keeps the soname libnvrtc.so.11.2),
// then those of 11.1 and 11.0. The environment variable GATEJET_NVRTC_LIB names the one file
// to use instead.
var NVRTCLibs = []string{"libnvrtc.so", "libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so.11.2", "libnvrtc.so.11.1", "libnvrtc.so.11.0"}

// LoadNVRTC opens NVRTC, once per process, and returns the same error on every call when no
// candidate opened: a *LoadError whose message names every library tried and why it failed.
func LoadNVRTC() error { return loadNVRTC() }

var loadNVRTC = sync.OnceValue(func() error {
	libs := libraries("GATEJET_NVRTC_LIB", NVRTCLibs...)
	var msgs []string
	for _, lib := range libs {
		err := open(lib, true)
		if err == nil {
			return nil
		}
		msgs = append(msgs, err.Error())
	}
	return &LoadError{Lib: strings.Join(libs, ", "), Msg: "no NVRTC: " + strings.Join(msgs, "; ")}
})

// NVRTCError is a failed NVRTC call.
type NVRTCError struct {
	Func string
	Code int // nvrtcResult
}

func (e *NVRTCError) Error() string {
	if e.Code == int(notLoaded) {
		return e.Func + ": not provided by this NVRTC"
	}
	return e.Func + ": " + C.GoString(C.gj_nvrtcGetErrorString(C.gj_nvrtcResult(e.Code)))
}

func checkRTC(fn string, r C.gj_nvrtcResult) error {
	if r == 0 {
		return nil
	}
	return &NVRTCError{Func: fn, Code: int(r)}
}

// NVRTCVersion is NVRTC's version (LoadNVRTC first).
func NVRTCVersion() (major, minor int, err error) {
	if err := LoadNVRTC(); err != nil {
		return 0, 0, err
	}
	var ma, mi C.int
	err = checkRTC("nvrtcVersion", C.gj_nvrtcVersion(&ma, &mi))
	return int(ma), int(mi), err
}

// NVRTCSupportedArchs returns the real architectures NVRTC compiles for, as numbers (52 for
// sm_52), NVRTC 11.2 and later.
func NVRTCSupportedArchs() ([]int, error) {
	if err := LoadNVRTC(); err != nil {
		return nil, err
	}
	var n C.int
	if err := checkRTC("nvrtcGetNumSupportedArchs", C.gj_nvrtcGetNumSupportedArchs(&n)); err != nil {
		return nil, err
	}
	if n <= 0 || n > 1024 {
		return nil, fmt.Errorf("nvrtcGetNumSupportedArchs: %d architectures", int(n))
	}
	archs := make([]C.int, int(n))
	if err := checkRTC("nvrtcGetSupportedArchs", C.gj_nvrtcGetSupportedArchs(&archs[0])); err != nil {
		return nil, err
	}
	out := make([]int, len(archs))
	for i, a := range archs {
		out[i] = int(a)
	}
	return out, nil
}

// Output is what Compile made: PTX (without its terminating NUL), the CUBIN when asked for
// and NVRTC made one (a virtual architecture gives none), and NVRTC's log.
type Output struct {
	PTX, CUBIN, Log string
}

// Compile compiles src (named name in diagnostics) with the given options; with cubin it also
// fetches the CUBIN. A failed compilation returns the log with the error.
func Compile(src, name string, options []string, cubin bool) (Output, error) {
	var out Output
	if err := LoadNVRTC(); err != nil {
		return out, err
	}
	csrc, cname := C.CString(src), C.CString(name)
	defer C.free(unsafe.Pointer(csrc))
	defer C.free(unsafe.Pointer(cname))
	var prog C.gj_nvrtcProgram
	if err := checkRTC("nvrtcCreateProgram", C.gj_nvrtcCreateProgram(&prog, csrc, cname)); err != nil {
		return out, err
	}
	defer C.gj_nvrtcDestroyProgram(&prog)
	// The option strings and the array of their addresses live in C memory: a Go array of
	// pointers may not be passed to C.
	copts := (**C.char)(C.calloc(C.size_t(len(options)+1), C.size_t(unsafe.Sizeof((*C.char)(nil)))))
	if copts == nil {
		return out, fmt.Errorf("nvrtc: no memory for %d options", len(options))
	}
	defer C.free(unsafe.Pointer(copts))
	optv := unsafe.Slice(copts, len(options)+1)
	for i, o := range options {
		optv[i] = C.CString(o)
		defer C.free(unsafe.Pointer(optv[i]))
	}
	cerr := checkRTC("nvrtcCompileProgram", C.gj_nvrtcCompileProgram(prog, C.int(len(options)), copts))
	out.Log = programLog(prog)
	if cerr != nil {
		return out, cerr
	}
	var n C.size_t
	if err := checkRTC("nvrtcGetPTXSize", C.gj_nvrtcGetPTXSize(prog, &n)); err != nil {
		return out, err
	}
	if n > 0 {
		b := make([]byte, int(n))
		if err := checkRTC("nvrtcGetPTX", C.gj_nvrtcGetPTX(prog, (*C.char)(unsafe.Pointer(&b[0])))); err != nil {
			return out, err
		}
		out.PTX = string(trimNUL(b))
	}
	if !cubin {
		return out, nil
	}
	if err := checkRTC("nvrtcGetCUBINSize", C.gj_nvrtcGetCUBINSize(prog, &n)); err != nil || n == 0 {
		return out, err // n == 0: no CUBIN (a virtual architecture)
	}
	b := make([]byte, int(n))
	if err := checkRTC("nvrtcGetCUBIN", C.gj_nvrtcGetCUBIN(prog, (*C.char)(unsafe.Pointer(&b[0])))); err != nil {
		return out, err
	}
	out.CUBIN = string(b)
	return out, nil
}

func programLog(prog C.gj_nvrtcProgram) string {
	var n C.size_t
	if C.gj_nvrtcGetProgramLogSize(prog, &n) != 0 || n == 0 {
		return ""
	}
	b := make([]byte, int(n))
	if C.gj_nvrtcGetProgramLog(prog, (*C.char)(unsafe.Pointer(&b[0]))) != 0 {
		return ""
	}
	return string(trimNUL(b))
}

// trimNUL drops the terminating NUL NVRTC writes after text.
func trimNUL(b []byte) []byte {
	for len(b) > 0 && b[len(b)-1] == 0 {
		b = b[:len(b)-1]
	}
	return b
}

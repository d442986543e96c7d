//go:build cuda

package nvrtccomp

/*
#include <stdlib.h>
#include <nvrtc.h>
*/
import "C"

import (
	"fmt"
	"unsafe"
)

// CompileCUBIN compiles src like Compile and returns, with the PTX, the CUBIN: the device code
// of the real architecture the options name (--gpu-architecture=sm_XX), which the driver
// loads without compiling PTX (nvrtcGetCUBIN, NVRTC 11.1 and later; gorgonia.org/cu v0.9.6
// has no binding for it). For a virtual architecture (compute_XX) NVRTC makes no CUBIN, and
// that is an error.
func (Compiler) CompileCUBIN(src, name string, options []string) (ptx, cubin string, err error) {
	csrc, cname := C.CString(src), C.CString(name)
	defer C.free(unsafe.Pointer(csrc))
	defer C.free(unsafe.Pointer(cname))
	var prog C.nvrtcProgram
	if r := C.nvrtcCreateProgram(&prog, csrc, cname, 0, nil, nil); r != C.NVRTC_SUCCESS {
		return "", "", fmt.Errorf("nvrtc: creating program %s: %s", name, errString(r))
	}
	defer C.nvrtcDestroyProgram(&prog)
	copts := make([]*C.char, len(options))
	for i, o := range options {
		copts[i] = C.CString(o)
		defer C.free(unsafe.Pointer(copts[i]))
	}
	var optp **C.char
	if len(copts) > 0 {
		optp = &copts[0]
	}
	if r := C.nvrtcCompileProgram(prog, C.int(len(copts)), optp); r != C.NVRTC_SUCCESS {
		return "", "", fmt.Errorf("nvrtc: compiling %s with %v: %s\n%s", name, options, errString(r), trim(programLog(prog)))
	}
	var n C.size_t
	if r := C.nvrtcGetPTXSize(prog, &n); r != C.NVRTC_SUCCESS {
		return "", "", fmt.Errorf("nvrtc: PTX size of %s: %s", name, errString(r))
	}
	pbuf := make([]byte, int(n))
	if n > 0 {
		if r := C.nvrtcGetPTX(prog, (*C.char)(unsafe.Pointer(&pbuf[0]))); r != C.NVRTC_SUCCESS {
			return "", "", fmt.Errorf("nvrtc: PTX of %s: %s", name, errString(r))
		}
	}
	if r := C.nvrtcGetCUBINSize(prog, &n); r != C.NVRTC_SUCCESS || n == 0 {
		return "", "", fmt.Errorf("nvrtc: no CUBIN for %s with %v (a virtual architecture gives none): %s", name, options, errString(r))
	}
	cbuf := make([]byte, int(n))
	if r := C.nvrtcGetCUBIN(prog, (*C.char)(unsafe.Pointer(&cbuf[0]))); r != C.NVRTC_SUCCESS {
		return "", "", fmt.Errorf("nvrtc: CUBIN of %s: %s", name, errString(r))
	}
	return string(trimNUL(pbuf)), string(cbuf), nil
}

func programLog(prog C.nvrtcProgram) string {
	var n C.size_t
	if C.nvrtcGetProgramLogSize(prog, &n) != C.NVRTC_SUCCESS || n == 0 {
		return ""
	}
	b := make([]byte, int(n))
	if C.nvrtcGetProgramLog(prog, (*C.char)(unsafe.Pointer(&b[0]))) != C.NVRTC_SUCCESS {
		return ""
	}
	return string(trimNUL(b))
}

func errString(r C.nvrtcResult) string { return C.GoString(C.nvrtcGetErrorString(r)) }

// trimNUL drops the terminating NUL NVRTC writes after text.
func trimNUL(b []byte) []byte {
	for len(b) > 0 && b[len(b)-1] == 0 {
		b = b[:len(b)-1]
	}
	return b
}

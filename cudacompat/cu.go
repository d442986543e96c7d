// Package cu is the part of the CUDA driver API binding gorgonia.org/cu that Gorgonia's cuda
// build (gorgonia.org/gorgonia and gorgonia.org/gorgonia/cuda, build tag cuda) and gatejet's
// CUDADoer ops use, written for gatejet to build on CUDA 11, 12 and 13 with no CUDA header.
// A module that builds Gorgonia with the tag cuda puts it in place of gorgonia.org/cu v0.9.6 with
//
//	replace gorgonia.org/cu => ./cudacompat
//
// (the path of this directory; see docs/gpu.md, "Gorgonia's CUDA build"). Its exported names and
// signatures are those the callers use; what is not listed here is not provided.
//
// The driver, libcuda.so.1 (or the file named by the environment variable GATEJET_CUDA_LIB), is
// opened with dlopen and initialised (cuInit) at the first call that needs it, not when the
// program starts: building needs a C compiler and libdl only, and a program runs, and reports
// an error from each call, where there is no driver or no device. Unlike gorgonia.org/cu, which
// links against libcuda and exits the process when cuInit fails, nothing here exits: a missing
// driver is a *LoadError, a failed cuInit an error wrapping the driver's Result
// (NoDevice, say), returned by NumDevices, GetDevice and every call after them.
//
// Driver calls return the driver's Result as the error (so err == OutOfMemory holds), or an
// *EntryPointError when the driver lacks the entry point. The entry points bound are those the
// drivers of CUDA 11, 12 and 13 all export (cuCtxCreate_v2, cuMemAlloc_v2, ...); the calls that
// use a context run on the OS thread the caller is on, where that context must be current
// (SetCurrentContext), as with the driver itself. A BatchedContext queues its calls and makes its
// context current on the thread that processes them.
package cu // import "gorgonia.org/cu"

/*
#cgo LDFLAGS: -ldl
#include <stdlib.h>
#include "shim.h"
*/
import "C"

import (
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"unsafe"
)

// DriverEnv names an environment variable that, when set, is the path of the driver library to
// open instead of libcuda.so.1 (a test driver, or a driver outside the loader's path).
const DriverEnv = "GATEJET_CUDA_LIB"

// DriverLib is the driver library opened when DriverEnv is not set.
const DriverLib = "libcuda.so.1"

// LoadError is a library that could not be opened or lacks a core entry point; Msg is the
// dynamic loader's message, which names the library.
type LoadError struct {
	Lib string // the file asked for
	Msg string
}

func (e *LoadError) Error() string { return "cu: loading the CUDA driver: " + e.Msg }

// EntryPointError is a call to an entry point the loaded driver does not export (an old
// driver, or a test driver that implements part of the API).
type EntryPointError struct {
	Name string // e.g. "cuMemAllocManaged"
}

func (e *EntryPointError) Error() string {
	return "cu: the CUDA driver has no entry point " + e.Name
}

var loaded atomic.Bool // the driver is open and initialised

// load opens and initialises the driver once per process; every later call returns the same
// error.
var load = sync.OnceValue(func() error {
	lib := DriverLib
	if p := os.Getenv(DriverEnv); p != "" {
		lib = p
	}
	clib := C.CString(lib)
	defer C.free(unsafe.Pointer(clib))
	var msg [512]C.char
	if C.gjcu_load(clib, &msg[0], C.size_t(len(msg))) != 0 {
		return &LoadError{Lib: lib, Msg: C.GoString(&msg[0])}
	}
	if r := C.gjcu_Init(0); r != 0 {
		// The driver's messages are usable from here on: cuGetErrorName needs no cuInit.
		loaded.Store(true)
		defer loaded.Store(false)
		return fmt.Errorf("cu: cuInit: %w", Result(r))
	}
	loaded.Store(true)
	return nil
})

// Init opens and initialises the CUDA driver if that has not been done, and returns why it
// could not; every function of the package that calls the driver does this first.
func Init() error { return load() }

// Version is the driver's CUDA version (12080 for 12.8), or -1 when there is no driver.
func Version() int {
	if load() != nil {
		return -1
	}
	var v C.int
	if C.gjcu_DriverGetVersion(&v) != 0 {
		return -1
	}
	return int(v)
}

// Result is a CUresult of the driver: the error of a failed driver call.
type Result int

// The CUresult values with a name here (cuda.h); the driver names the others in Error.
const (
	Success                     Result = 0
	InvalidValue                Result = 1
	OutOfMemory                 Result = 2
	NotInitialized              Result = 3
	Deinitialized               Result = 4
	NoDevice                    Result = 100
	InvalidDevice               Result = 101
	InvalidImage                Result = 200
	InvalidContext              Result = 201
	NoBinaryForGpu              Result = 209
	InvalidPtx                  Result = 218
	UnsupportedPtxVersion       Result = 222
	InvalidSource               Result = 300
	FileNotFound                Result = 301
	InvalidHandle               Result = 400
	NotFound                    Result = 500
	NotReady                    Result = 600
	IllegalAddress              Result = 700
	LaunchOutOfResources        Result = 701
	LaunchTimeout               Result = 702
	LaunchIncompatibleTexturing Result = 703
	LaunchFailed                Result = 719
	NotSupported                Result = 801
	Unknown                     Result = 999
)

// Error is the driver's name and description of r ("CUDA_ERROR_OUT_OF_MEMORY (2): out of
// memory"), or its number when no driver is loaded to name it.
func (r Result) Error() string {
	if !loaded.Load() {
		return fmt.Sprintf("CUresult %d", int(r))
	}
	var name, text *C.char
	if C.gjcu_GetErrorName(C.gjcu_result(r), &name) != 0 || name == nil {
		return fmt.Sprintf("CUresult %d", int(r))
	}
	s := fmt.Sprintf("%s (%d)", C.GoString(name), int(r))
	if C.gjcu_GetErrorString(C.gjcu_result(r), &text) == 0 && text != nil {
		s += ": " + C.GoString(text)
	}
	return s
}

// check is the error of the driver call entry that returned r: nil for CUDA_SUCCESS.
func check(entry string, r C.gjcu_result) error {
	switch r {
	case 0:
		return nil
	case C.GJ_NOT_LOADED:
		if err := load(); err != nil {
			return err
		}
		return NotInitialized
	case C.GJ_NO_ENTRY:
		return &EntryPointError{Name: entry}
	}
	return Result(r)
}

//go:build gatejetcuda || cuda

// Package cudrv is the standalone device backend's binding of the CUDA driver API and NVRTC:
// a small C shim (shim.c) that opens libcuda.so.1 and libnvrtc with dlopen at first use and
// calls the handful of entry points gatejet needs, declared by hand. Building it needs a C
// compiler and libdl, no CUDA header or library; running it needs the NVIDIA driver for the
// device (LoadDriver) and NVRTC for compiling (LoadNVRTC). A missing library or a driver that
// does not initialise is an error value, never an exit: the caller falls back to the CPU.
//
// The functions that use a context (everything after LoadDriver but the device queries) must
// run on an OS thread where that context is current (SetCurrent); the caller locks the thread.
package cudrv

/*
#cgo LDFLAGS: -ldl
#include <stdlib.h>
#include "shim.h"
*/
import "C"

import (
	"errors"
	"fmt"
	"os"
	"sync"
	"unsafe"
)

// Result is a CUresult of the driver API.
type Result int

// The CUresult values gatejet tells apart (cuda.h).
const (
	Success                    Result = 0
	ErrorInvalidValue          Result = 1
	ErrorNoDevice              Result = 100
	ErrorUnsupportedPTXVersion Result = 222
	notLoaded                  Result = C.GJ_NOT_LOADED
)

// Error is a failed driver call: the function and its CUresult, with the driver's name and
// description of it.
type Error struct {
	Func string
	Code Result
}

func (e *Error) Error() string {
	if e.Code == notLoaded {
		return e.Func + ": the CUDA driver is not loaded"
	}
	var name, text *C.char
	if C.gj_cuGetErrorName(C.gj_CUresult(e.Code), &name) != 0 || name == nil {
		return fmt.Sprintf("%s: CUresult %d", e.Func, int(e.Code))
	}
	s := fmt.Sprintf("%s: %s (%d)", e.Func, C.GoString(name), int(e.Code))
	if C.gj_cuGetErrorString(C.gj_CUresult(e.Code), &text) == 0 && text != nil {
		s += ": " + C.GoString(text)
	}
	return s
}

// check is nil for CUDA_SUCCESS, else an *Error of fn.
func check(fn string, r C.gj_CUresult) error {
	if r == 0 {
		return nil
	}
	return &Error{Func: fn, Code: Result(r)}
}

// Code returns the CUresult of a driver error anywhere in err's chain.
func Code(err error) (Result, bool) {
	var e *Error
	if errors.As(err, &e) {
		return e.Code, true
	}
	return 0, false
}

// LoadError is a library that could not be opened or lacks an entry point; Msg is the dynamic
// loader's message, which names the library.
type LoadError struct {
	Lib string // what was asked for, e.g. "libcuda.so.1"
	Msg string
}

func (e *LoadError) Error() string { return e.Msg }

// DriverLib is the driver library LoadDriver opens; the environment variable GATEJET_CUDA_LIB
// names another file (a path) instead.
const DriverLib = "libcuda.so.1"

// LoadDriver opens the CUDA driver library and initialises it (cuInit), once per process; it
// returns the same error on every call when that failed: a *LoadError when the library is
// missing, an *Error (CUDA_ERROR_NO_DEVICE, say) when cuInit failed.
func LoadDriver() error { return loadDriver() }

var loadDriver = sync.OnceValue(func() error {
	lib := libraries("GATEJET_CUDA_LIB", DriverLib)[0]
	if err := open(lib, false); err != nil {
		return err
	}
	return check("cuInit", C.gj_cuInit(0))
})

// libraries is the one file the environment variable env names, or else defaults.
func libraries(env string, defaults ...string) []string {
	if p := os.Getenv(env); p != "" {
		return []string{p}
	}
	return defaults
}

// open loads lib as the driver, or as NVRTC.
func open(lib string, nvrtc bool) error {
	clib := C.CString(lib)
	defer C.free(unsafe.Pointer(clib))
	var msg [512]C.char
	var r C.int
	if nvrtc {
		r = C.gj_load_nvrtc(clib, &msg[0], C.size_t(len(msg)))
	} else {
		r = C.gj_load_driver(clib, &msg[0], C.size_t(len(msg)))
	}
	if r != 0 {
		return &LoadError{Lib: lib, Msg: C.GoString(&msg[0])}
	}
	return nil
}

// DriverVersion is the driver's CUDA version, 11080 for 11.8 (0 when it cannot say).
func DriverVersion() int {
	var v C.int
	if C.gj_cuDriverGetVersion(&v) != 0 {
		return 0
	}
	return int(v)
}

// DeviceCount is the number of CUDA devices.
func DeviceCount() (int, error) {
	var n C.int
	err := check("cuDeviceGetCount", C.gj_cuDeviceGetCount(&n))
	return int(n), err
}

// Device is a CUdevice.
type Device struct{ d C.gj_CUdevice }

// GetDevice returns the device of the given ordinal.
func GetDevice(ordinal int) (Device, error) {
	var d C.gj_CUdevice
	err := check("cuDeviceGet", C.gj_cuDeviceGet(&d, C.int(ordinal)))
	return Device{d}, err
}

// Attribute is a CUdevice_attribute.
type Attribute int

// The attributes gatejet reads (cuda.h).
const (
	AttrMaxGridDimX            Attribute = 5
	AttrMaxSharedMemoryPerBlk  Attribute = 8
	AttrComputeCapabilityMajor Attribute = 75
	AttrComputeCapabilityMinor Attribute = 76
)

// Attribute returns one attribute of the device.
func (d Device) Attribute(a Attribute) (int, error) {
	var v C.int
	err := check("cuDeviceGetAttribute", C.gj_cuDeviceGetAttribute(&v, C.int(a), d.d))
	return int(v), err
}

// Name is the device's name, e.g. "NVIDIA H100 80GB HBM3".
func (d Device) Name() (string, error) {
	var buf [256]C.char
	if err := check("cuDeviceGetName", C.gj_cuDeviceGetName(&buf[0], C.int(len(buf)), d.d)); err != nil {
		return "", err
	}
	buf[len(buf)-1] = 0
	return C.GoString(&buf[0]), nil
}

// Context is a CUcontext.
type Context struct{ c C.gj_CUcontext }

// RetainPrimaryCtx retains the device's primary context.
func (d Device) RetainPrimaryCtx() (Context, error) {
	var c C.gj_CUcontext
	err := check("cuDevicePrimaryCtxRetain", C.gj_cuDevicePrimaryCtxRetain(&c, d.d))
	return Context{c}, err
}

// ReleasePrimaryCtx releases what RetainPrimaryCtx retained.
func (d Device) ReleasePrimaryCtx() error {
	return check("cuDevicePrimaryCtxRelease", C.gj_cuDevicePrimaryCtxRelease(d.d))
}

// SetCurrent makes c the calling thread's current context.
func SetCurrent(c Context) error { return check("cuCtxSetCurrent", C.gj_cuCtxSetCurrent(c.c)) }

// Module is a CUmodule.
type Module struct{ m C.gj_CUmodule }

// LoadModule loads a module image, PTX text or a CUBIN, into the current context.
func LoadModule(image string) (Module, error) {
	// A copy in C memory with a terminating NUL: PTX is read as a C string, a CUBIN carries
	// its own sizes.
	p := C.malloc(C.size_t(len(image) + 1))
	if p == nil {
		return Module{}, &Error{Func: "cuModuleLoadData", Code: 2} // CUDA_ERROR_OUT_OF_MEMORY
	}
	defer C.free(p)
	buf := unsafe.Slice((*byte)(p), len(image)+1)
	copy(buf, image)
	buf[len(image)] = 0
	var m C.gj_CUmodule
	err := check("cuModuleLoadData", C.gj_cuModuleLoadData(&m, p))
	return Module{m}, err
}

// Unload unloads the module.
func (m Module) Unload() error { return check("cuModuleUnload", C.gj_cuModuleUnload(m.m)) }

// Function is a CUfunction.
type Function struct{ f C.gj_CUfunction }

// Function returns the module's entry point of the given name.
func (m Module) Function(name string) (Function, error) {
	cname := C.CString(name)
	defer C.free(unsafe.Pointer(cname))
	var f C.gj_CUfunction
	if err := check("cuModuleGetFunction", C.gj_cuModuleGetFunction(&f, m.m, cname)); err != nil {
		return Function{}, fmt.Errorf("%s: %w", name, err)
	}
	return Function{f}, nil
}

// MaxParams is the most kernel parameters Launch passes.
const MaxParams = 32

// Launch queues f on s with a one-dimensional grid and block, shared bytes of dynamic shared
// memory and the given parameters, each a 64-bit value.
func (f Function) Launch(grid, block, shared int, s Stream, params []uint64) error {
	if len(params) == 0 || len(params) > MaxParams || grid < 0 || block < 0 || shared < 0 ||
		uint64(grid) > 1<<32-1 || uint64(block) > 1<<32-1 || uint64(shared) > 1<<32-1 {
		return &Error{Func: "cuLaunchKernel", Code: ErrorInvalidValue}
	}
	vals := (*C.ulonglong)(unsafe.Pointer(&params[0]))
	return check("cuLaunchKernel", C.gj_launch(f.f, C.uint(grid), C.uint(block), C.uint(shared), s.s, vals, C.int(len(params))))
}

// DevicePtr is a CUdeviceptr.
type DevicePtr uint64

// MemAlloc allocates n bytes of device memory.
func MemAlloc(n int64) (DevicePtr, error) {
	var p C.gj_CUdeviceptr
	if err := check("cuMemAlloc", C.gj_cuMemAlloc(&p, C.size_t(n))); err != nil {
		return 0, fmt.Errorf("%d bytes: %w", n, err)
	}
	return DevicePtr(p), nil
}

// MemFree frees what MemAlloc allocated.
func MemFree(p DevicePtr) error { return check("cuMemFree", C.gj_cuMemFree(C.gj_CUdeviceptr(p))) }

// MemAllocHost allocates n bytes of page-locked host memory, which asynchronous copies use at
// the full bus bandwidth.
func MemAllocHost(n int64) (unsafe.Pointer, error) {
	var p unsafe.Pointer
	if err := check("cuMemAllocHost", C.gj_cuMemAllocHost(&p, C.size_t(n))); err != nil {
		return nil, fmt.Errorf("%d bytes: %w", n, err)
	}
	return p, nil
}

// MemFreeHost frees what MemAllocHost allocated.
func MemFreeHost(p unsafe.Pointer) error { return check("cuMemFreeHost", C.gj_cuMemFreeHost(p)) }

// MemcpyHtoDAsync queues a copy of n bytes from host memory (page-locked, from MemAllocHost:
// it is read after the call returns) to the device.
func MemcpyHtoDAsync(dst DevicePtr, src unsafe.Pointer, n int64, s Stream) error {
	return check("cuMemcpyHtoDAsync", C.gj_cuMemcpyHtoDAsync(C.gj_CUdeviceptr(dst), src, C.size_t(n), s.s))
}

// MemcpyDtoHAsync queues a copy of n bytes from the device to page-locked host memory.
func MemcpyDtoHAsync(dst unsafe.Pointer, src DevicePtr, n int64, s Stream) error {
	return check("cuMemcpyDtoHAsync", C.gj_cuMemcpyDtoHAsync(dst, C.gj_CUdeviceptr(src), C.size_t(n), s.s))
}

// MemcpyDtoDAsync queues a copy of n bytes between device buffers.
func MemcpyDtoDAsync(dst, src DevicePtr, n int64, s Stream) error {
	return check("cuMemcpyDtoDAsync", C.gj_cuMemcpyDtoDAsync(C.gj_CUdeviceptr(dst), C.gj_CUdeviceptr(src), C.size_t(n), s.s))
}

// Stream is a CUstream.
type Stream struct{ s C.gj_CUstream }

// NewStream makes a stream that does not synchronise with the legacy default stream
// (CU_STREAM_NON_BLOCKING), so other users of the context do not serialise with it.
func NewStream() (Stream, error) {
	var s C.gj_CUstream
	err := check("cuStreamCreate", C.gj_cuStreamCreate(&s, 1))
	return Stream{s}, err
}

// Synchronize waits for the work queued on s.
func (s Stream) Synchronize() error {
	return check("cuStreamSynchronize", C.gj_cuStreamSynchronize(s.s))
}

// Destroy destroys the stream.
func (s Stream) Destroy() error { return check("cuStreamDestroy", C.gj_cuStreamDestroy(s.s)) }

// Event is a CUevent.
type Event struct{ e C.gj_CUevent }

// NewEvent makes an event with timing (CU_EVENT_DEFAULT).
func NewEvent() (Event, error) {
	var e C.gj_CUevent
	err := check("cuEventCreate", C.gj_cuEventCreate(&e, 0))
	return Event{e}, err
}

// Record records e on s.
func (e Event) Record(s Stream) error { return check("cuEventRecord", C.gj_cuEventRecord(e.e, s.s)) }

// Synchronize waits for e.
func (e Event) Synchronize() error {
	return check("cuEventSynchronize", C.gj_cuEventSynchronize(e.e))
}

// Elapsed is the time in milliseconds from e to stop, both recorded and complete.
func (e Event) Elapsed(stop Event) (float64, error) {
	var ms C.float
	err := check("cuEventElapsedTime", C.gj_cuEventElapsedTime(&ms, e.e, stop.e))
	return float64(ms), err
}

// Destroy destroys the event.
func (e Event) Destroy() error { return check("cuEventDestroy", C.gj_cuEventDestroy(e.e)) }

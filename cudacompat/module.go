package cu

// #include <stdlib.h>
// #include "shim.h"
import "C"

import (
	"fmt"
	"unsafe"
)

// Module is a loaded module (a CUmodule).
type Module struct{ m C.gjcu_mod }

// Function is a kernel entry point of a loaded module (a CUfunction).
type Function struct{ f C.gjcu_func }

// Stream is a CUDA stream (a CUstream); NoStream is the context's default stream.
type Stream struct{ s C.gjcu_stream }

// NoStream is the default stream.
var NoStream = Stream{}

// LoadData loads a module image, PTX text or a CUBIN, into the current context.
func LoadData(image string) (Module, error) {
	if err := load(); err != nil {
		return Module{}, err
	}
	// A copy in C memory with a terminating NUL: PTX is read as a C string.
	p := C.malloc(C.size_t(len(image) + 1))
	if p == nil {
		return Module{}, OutOfMemory
	}
	defer C.free(p)
	buf := unsafe.Slice((*byte)(p), len(image)+1)
	copy(buf, image)
	buf[len(image)] = 0
	var m C.gjcu_mod
	err := check("cuModuleLoadData", C.gjcu_ModuleLoadData(&m, p))
	return Module{m}, err
}

// Function returns the module's entry point of the given name.
func (m Module) Function(name string) (Function, error) {
	if err := load(); err != nil {
		return Function{}, err
	}
	cname := C.CString(name)
	defer C.free(unsafe.Pointer(cname))
	var f C.gjcu_func
	if err := check("cuModuleGetFunction", C.gjcu_ModuleGetFunction(&f, m.m, cname)); err != nil {
		return Function{}, fmt.Errorf("cu: entry point %q: %w", name, err)
	}
	return Function{f}, nil
}

// Unload unloads the module; its functions are no longer valid.
func (m Module) Unload() error {
	if err := load(); err != nil {
		return err
	}
	return check("cuModuleUnload", C.gjcu_ModuleUnload(m.m))
}

// MaxParams is the most kernel parameters a launch passes.
const MaxParams = C.GJCU_MAX_PARAMS

// launch launches f with the kernel parameters vals, each a 64-bit value.
func launch(f Function, grid, block [3]int, shared int, s Stream, vals []uint64) error {
	for _, v := range append(grid[:], append(block[:], shared)...) {
		if v < 0 || uint64(v) > 1<<32-1 {
			return InvalidValue
		}
	}
	if len(vals) > MaxParams {
		return InvalidValue
	}
	var p *C.ulonglong
	if len(vals) > 0 {
		p = (*C.ulonglong)(unsafe.Pointer(&vals[0]))
	}
	return check("cuLaunchKernel", C.gjcu_launch(f.f, C.uint(grid[0]), C.uint(grid[1]), C.uint(grid[2]),
		C.uint(block[0]), C.uint(block[1]), C.uint(block[2]), C.uint(shared), s.s, p, C.int(len(vals))))
}

// LaunchAndSync launches f in the current context and waits for the context's work
// (cuLaunchKernel, cuCtxSynchronize). Each kernel parameter is read as a 64-bit value: every
// parameter of the kernels is a pointer or a 64-bit number.
func (f Function) LaunchAndSync(gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ, sharedMemBytes int, stream Stream, kernelParams []unsafe.Pointer) error {
	if err := load(); err != nil {
		return err
	}
	vals, ok := paramValues(kernelParams)
	if !ok {
		return InvalidValue
	}
	if err := launch(f, [3]int{gridDimX, gridDimY, gridDimZ}, [3]int{blockDimX, blockDimY, blockDimZ}, sharedMemBytes, stream, vals); err != nil {
		return err
	}
	return Synchronize()
}

// paramValues reads the 64-bit value each kernel parameter points to; false for a nil one.
func paramValues(params []unsafe.Pointer) ([]uint64, bool) {
	vals := make([]uint64, len(params))
	for i, p := range params {
		if p == nil {
			return nil, false
		}
		vals[i] = *(*uint64)(p)
	}
	return vals, true
}

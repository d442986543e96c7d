// Package cublas is the part of gorgonia.org/cu/blas that Gorgonia's cuda build uses: a cuBLAS
// handle (Standard) and the matrix products of Gorgonia's CUDA engine (Dgemm, Sgemm, Dgemv,
// Sgemv, Dger, Sger), with cuBLAS opened by dlopen when Init is first called: libcublas.so.13,
// .12 or .11, the first that opens, or the file named by the environment variable
// GATEJET_CUBLAS_LIB. No CUDA header is needed to build it.
//
// The products take column-major matrices, as cuBLAS does, and slices over device (or managed)
// memory: their arguments go to cuBLAS unchanged, with alpha and beta from host memory. A
// failed call, or an argument cuBLAS would refuse, sets Err; once Err is set the products do
// nothing. Nothing panics: a missing cuBLAS is Init's error, and a product on a Standard that
// Init did not set up sets Err.
package cublas // import "gorgonia.org/cu/blas"

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
	"strings"
	"sync"
	"unsafe"

	"gonum.org/v1/gonum/blas"
	"gorgonia.org/cu"
)

// LibEnv names an environment variable that, when set, is the path of the cuBLAS library to
// open instead of those of Libs.
const LibEnv = "GATEJET_CUBLAS_LIB"

// Libs are the cuBLAS libraries tried in order.
var Libs = []string{"libcublas.so.13", "libcublas.so.12", "libcublas.so.11"}

// Status is a cublasStatus_t: the error of a failed cuBLAS call.
type Status int

// The cuBLAS statuses (cublas_api.h).
const (
	Success        Status = 0
	NotInitialized Status = 1
	AllocFailed    Status = 3
	InvalidValue   Status = 7
	ArchMismatch   Status = 8
	MappingError   Status = 11
	ExecFailed     Status = 13
	InternalError  Status = 14
	Unsupported    Status = 15
	LicenceError   Status = 16
)

var statusNames = map[Status]string{
	Success:        "CUBLAS_STATUS_SUCCESS",
	NotInitialized: "CUBLAS_STATUS_NOT_INITIALIZED",
	AllocFailed:    "CUBLAS_STATUS_ALLOC_FAILED",
	InvalidValue:   "CUBLAS_STATUS_INVALID_VALUE",
	ArchMismatch:   "CUBLAS_STATUS_ARCH_MISMATCH",
	MappingError:   "CUBLAS_STATUS_MAPPING_ERROR",
	ExecFailed:     "CUBLAS_STATUS_EXECUTION_FAILED",
	InternalError:  "CUBLAS_STATUS_INTERNAL_ERROR",
	Unsupported:    "CUBLAS_STATUS_NOT_SUPPORTED",
	LicenceError:   "CUBLAS_STATUS_LICENSE_ERROR",
}

func (s Status) Error() string {
	if n, ok := statusNames[s]; ok {
		return fmt.Sprintf("cublas: %s (%d)", n, int(s))
	}
	return fmt.Sprintf("cublas: status %d", int(s))
}

// LoadError is a cuBLAS library that could not be opened: the loader's message for each file
// tried.
type LoadError struct{ Msgs []string }

func (e *LoadError) Error() string {
	return "cublas: loading cuBLAS: " + strings.Join(e.Msgs, "; ")
}

// load opens cuBLAS once per process.
var load = sync.OnceValue(func() error {
	libs := Libs
	if p := os.Getenv(LibEnv); p != "" {
		libs = []string{p}
	}
	var msgs []string
	for _, lib := range libs {
		clib := C.CString(lib)
		var msg [512]C.char
		r := C.gjblas_load(clib, &msg[0], C.size_t(len(msg)))
		C.free(unsafe.Pointer(clib))
		if r == 0 {
			return nil
		}
		msgs = append(msgs, C.GoString(&msg[0]))
	}
	return &LoadError{Msgs: msgs}
})

func status(r C.gjblas_status) error {
	switch r {
	case 0:
		return nil
	case C.GJBLAS_NOT_LOADED:
		if err := load(); err != nil {
			return err
		}
		return NotInitialized
	}
	return Status(r)
}

// ConsOpt is an option of Init.
type ConsOpt func(impl *Standard)

// WithContext makes Init create the handle with ctx's CUDA context current, so that its work
// goes to that context.
func WithContext(ctx cu.Context) ConsOpt {
	return func(impl *Standard) { impl.ctx = ctx }
}

// Standard is a cuBLAS handle. Its zero value has none: Init creates it, Close destroys it.
// Its methods are safe for concurrent use (they hold a lock), but cuBLAS runs them in the
// context current on the calling OS thread, which must be the handle's.
type Standard struct {
	mu  sync.Mutex
	h   C.gjblas_handle
	e   error
	ctx cu.Context
}

var errNoHandle = errors.New("cublas: the Standard has no handle (Init was not called or failed)")

// Init applies opts and creates the handle (cublasCreate), on the calling OS thread with the
// context of WithContext made current there first: call it from the goroutine, locked to its
// thread, that makes the products (as Gorgonia's engine does). A Standard that has a handle
// keeps it.
func (impl *Standard) Init(opts ...ConsOpt) error {
	impl.mu.Lock()
	defer impl.mu.Unlock()
	for _, opt := range opts {
		opt(impl)
	}
	if impl.h != nil {
		return nil
	}
	if err := load(); err != nil {
		return err
	}
	if impl.ctx != nil {
		if err := cu.SetCurrentContext(impl.ctx.CUDAContext()); err != nil {
			return fmt.Errorf("cublas: making the context current: %w", err)
		}
	}
	var h C.gjblas_handle
	if err := status(C.gjblas_create(&h)); err != nil {
		return fmt.Errorf("cublas: cublasCreate: %w", err)
	}
	impl.h = h
	return nil
}

// Version is cuBLAS's version (120904 for 12.9.4), 0 without a handle.
func (impl *Standard) Version() int {
	impl.mu.Lock()
	defer impl.mu.Unlock()
	var v C.int
	if impl.h == nil || C.gjblas_get_version(impl.h, &v) != 0 {
		return 0
	}
	return int(v)
}

// Err is the error of the first failed product (nil when none failed).
func (impl *Standard) Err() error {
	impl.mu.Lock()
	defer impl.mu.Unlock()
	return impl.e
}

// Close destroys the handle; closing a Standard without one does nothing.
func (impl *Standard) Close() error {
	impl.mu.Lock()
	defer impl.mu.Unlock()
	if impl.h == nil {
		return nil
	}
	err := status(C.gjblas_destroy(impl.h))
	impl.h = nil
	impl.ctx = nil
	return err
}

func trans(t blas.Transpose) (C.int, bool) {
	switch t {
	case blas.NoTrans:
		return 0, true
	case blas.Trans:
		return 1, true
	case blas.ConjTrans:
		return 2, true
	}
	return 0, false
}

// start locks impl and reports whether a product may run: no error yet, a handle, and the
// checks of ok (arguments cuBLAS would refuse, slices that have no first element) passed.
// It sets Err otherwise. The caller unlocks.
func (impl *Standard) start(name string, ok bool) bool {
	impl.mu.Lock()
	switch {
	case impl.e != nil:
		return false
	case impl.h == nil:
		impl.e = errNoHandle
		return false
	case !ok:
		impl.e = fmt.Errorf("cublas: %s: %w", name, InvalidValue)
		return false
	}
	return true
}

func (impl *Standard) finish(name string, r C.gjblas_status) {
	if err := status(r); err != nil {
		impl.e = fmt.Errorf("cublas: %s: %w", name, err)
	}
}

// gemmOK checks the arguments of a product C = op(A)·op(B) of sizes m×k, k×n.
func gemmOK(tA, tB blas.Transpose, m, n, k, lenA, lenB, lenC int) (C.int, C.int, bool) {
	ta, okA := trans(tA)
	tb, okB := trans(tB)
	return ta, tb, okA && okB && m >= 0 && n >= 0 && k >= 0 && lenA > 0 && lenB > 0 && lenC > 0
}

// Dgemm computes C = alpha·op(A)·op(B) + beta·C (cublasDgemm).
func (impl *Standard) Dgemm(tA, tB blas.Transpose, m, n, k int, alpha float64, a []float64, lda int, b []float64, ldb int, beta float64, c []float64, ldc int) {
	ta, tb, ok := gemmOK(tA, tB, m, n, k, len(a), len(b), len(c))
	defer impl.mu.Unlock()
	if !impl.start("cublasDgemm", ok) {
		return
	}
	impl.finish("cublasDgemm", C.gjblas_dgemm(impl.h, ta, tb, C.int(m), C.int(n), C.int(k), (*C.double)(&alpha),
		(*C.double)(&a[0]), C.int(lda), (*C.double)(&b[0]), C.int(ldb), (*C.double)(&beta), (*C.double)(&c[0]), C.int(ldc)))
}

// Sgemm computes C = alpha·op(A)·op(B) + beta·C (cublasSgemm).
func (impl *Standard) Sgemm(tA, tB blas.Transpose, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	ta, tb, ok := gemmOK(tA, tB, m, n, k, len(a), len(b), len(c))
	defer impl.mu.Unlock()
	if !impl.start("cublasSgemm", ok) {
		return
	}
	impl.finish("cublasSgemm", C.gjblas_sgemm(impl.h, ta, tb, C.int(m), C.int(n), C.int(k), (*C.float)(&alpha),
		(*C.float)(&a[0]), C.int(lda), (*C.float)(&b[0]), C.int(ldb), (*C.float)(&beta), (*C.float)(&c[0]), C.int(ldc)))
}

// Dgemv computes y = alpha·op(A)·x + beta·y for an m×n matrix A (cublasDgemv).
func (impl *Standard) Dgemv(tA blas.Transpose, m, n int, alpha float64, a []float64, lda int, x []float64, incX int, beta float64, y []float64, incY int) {
	ta, ok := trans(tA)
	ok = ok && m >= 0 && n >= 0 && incX != 0 && incY != 0 && len(a) > 0 && len(x) > 0 && len(y) > 0
	defer impl.mu.Unlock()
	if !impl.start("cublasDgemv", ok) {
		return
	}
	impl.finish("cublasDgemv", C.gjblas_dgemv(impl.h, ta, C.int(m), C.int(n), (*C.double)(&alpha), (*C.double)(&a[0]),
		C.int(lda), (*C.double)(&x[0]), C.int(incX), (*C.double)(&beta), (*C.double)(&y[0]), C.int(incY)))
}

// Sgemv computes y = alpha·op(A)·x + beta·y for an m×n matrix A (cublasSgemv).
func (impl *Standard) Sgemv(tA blas.Transpose, m, n int, alpha float32, a []float32, lda int, x []float32, incX int, beta float32, y []float32, incY int) {
	ta, ok := trans(tA)
	ok = ok && m >= 0 && n >= 0 && incX != 0 && incY != 0 && len(a) > 0 && len(x) > 0 && len(y) > 0
	defer impl.mu.Unlock()
	if !impl.start("cublasSgemv", ok) {
		return
	}
	impl.finish("cublasSgemv", C.gjblas_sgemv(impl.h, ta, C.int(m), C.int(n), (*C.float)(&alpha), (*C.float)(&a[0]),
		C.int(lda), (*C.float)(&x[0]), C.int(incX), (*C.float)(&beta), (*C.float)(&y[0]), C.int(incY)))
}

// Dger computes A += alpha·x·yᵀ for an m×n matrix A (cublasDger).
func (impl *Standard) Dger(m, n int, alpha float64, x []float64, incX int, y []float64, incY int, a []float64, lda int) {
	ok := m >= 0 && n >= 0 && incX != 0 && incY != 0 && len(a) > 0 && len(x) > 0 && len(y) > 0
	defer impl.mu.Unlock()
	if !impl.start("cublasDger", ok) {
		return
	}
	impl.finish("cublasDger", C.gjblas_dger(impl.h, C.int(m), C.int(n), (*C.double)(&alpha), (*C.double)(&x[0]), C.int(incX),
		(*C.double)(&y[0]), C.int(incY), (*C.double)(&a[0]), C.int(lda)))
}

// Sger computes A += alpha·x·yᵀ for an m×n matrix A (cublasSger).
func (impl *Standard) Sger(m, n int, alpha float32, x []float32, incX int, y []float32, incY int, a []float32, lda int) {
	ok := m >= 0 && n >= 0 && incX != 0 && incY != 0 && len(a) > 0 && len(x) > 0 && len(y) > 0
	defer impl.mu.Unlock()
	if !impl.start("cublasSger", ok) {
		return
	}
	impl.finish("cublasSger", C.gjblas_sger(impl.h, C.int(m), C.int(n), (*C.float)(&alpha), (*C.float)(&x[0]), C.int(incX),
		(*C.float)(&y[0]), C.int(incY), (*C.float)(&a[0]), C.int(lda)))
}

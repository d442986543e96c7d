package cu

// #include "shim.h"
import "C"

import (
	"errors"
	"fmt"
	"runtime"
	"sync"
	"unsafe"
)

// CUContext is a CUDA context (a CUcontext); the zero value is no context.
type CUContext struct{ c C.gjcu_ctx }

// String is the context's address.
func (c CUContext) String() string { return fmt.Sprintf("0x%x", uintptr(unsafe.Pointer(c.c))) }

// ContextFlags are the flags of cuCtxCreate.
type ContextFlags uint

// The context flags (cuda.h).
const (
	SchedAuto         ContextFlags = 0x0
	SchedSpin         ContextFlags = 0x1
	SchedYield        ContextFlags = 0x2
	SchedBlockingSync ContextFlags = 0x4
	MapHost           ContextFlags = 0x8
	LmemResizeToMax   ContextFlags = 0x10
)

// SetCurrentContext makes c the calling OS thread's current context; the caller locks the
// goroutine to its thread (runtime.LockOSThread) for the calls that use it.
func SetCurrentContext(c CUContext) error {
	if err := load(); err != nil {
		return err
	}
	return check("cuCtxSetCurrent", C.gjcu_CtxSetCurrent(c.c))
}

// CurrentContext is the calling OS thread's current context (the zero CUContext when none).
func CurrentContext() (CUContext, error) {
	if err := load(); err != nil {
		return CUContext{}, err
	}
	var c C.gjcu_ctx
	err := check("cuCtxGetCurrent", C.gjcu_CtxGetCurrent(&c))
	return CUContext{c}, err
}

// DestroyContext destroys c (cuCtxDestroy).
func DestroyContext(c CUContext) error {
	if err := load(); err != nil {
		return err
	}
	return check("cuCtxDestroy_v2", C.gjcu_CtxDestroy(c.c))
}

// Synchronize waits for the work of the current context (cuCtxSynchronize).
func Synchronize() error {
	if err := load(); err != nil {
		return err
	}
	return check("cuCtxSynchronize", C.gjcu_CtxSynchronize())
}

// Context is a CUDA context with a goroutine to run functions on: a *Ctx, or a
// *BatchedContext built on one.
type Context interface {
	// CUDAContext is the driver's context.
	CUDAContext() CUContext
	// Error is the error of the context's own calls (a *Ctx makes none: nil).
	Error() error
	// Do runs fn on the goroutine that reads Work (Run, or a loop of the caller's) and returns
	// its error.
	Do(fn func() error) error
	// Work is where Do sends its functions; ErrChan is where their errors go back.
	Work() <-chan func() error
	ErrChan() chan error
	// Run reads Work on a goroutine locked to an OS thread where the context is current,
	// until Close.
	Run(errChan chan error) error
	// Close destroys the context.
	Close() error
}

// ErrClosed is the error of Do on a closed context.
var ErrClosed = errors.New("cu: the context is closed")

// Ctx is a CUDA context and the channels of Do, Work and ErrChan.
type Ctx struct {
	CUContext
	device Device
	flags  ContextFlags

	work    chan func() error
	errChan chan error
	done    chan struct{} // closed by Close

	mu     sync.Mutex
	closed bool
}

var _ Context = (*Ctx)(nil)

// CtxFromCUContext wraps the context c of device d, made with flags (Device.MakeContext);
// Close destroys it.
func CtxFromCUContext(d Device, c CUContext, flags ContextFlags) *Ctx {
	return &Ctx{
		CUContext: c,
		device:    d,
		flags:     flags,
		work:      make(chan func() error),
		errChan:   make(chan error),
		done:      make(chan struct{}),
	}
}

// CUDAContext is the driver's context.
func (ctx *Ctx) CUDAContext() CUContext { return ctx.CUContext }

// Device is the context's device.
func (ctx *Ctx) Device() Device { return ctx.device }

// Error is nil: a Ctx queues nothing of its own (a BatchedContext reports its calls by Errors).
func (ctx *Ctx) Error() error { return nil }

// Work is the channel Do sends its functions on.
func (ctx *Ctx) Work() <-chan func() error { return ctx.work }

// ErrChan is the channel the goroutine running the functions of Do sends their errors on.
func (ctx *Ctx) ErrChan() chan error { return ctx.errChan }

// Do sends fn to the goroutine reading Work and returns the error it sends back on ErrChan;
// ErrClosed once the context is closed.
func (ctx *Ctx) Do(fn func() error) error {
	select {
	case ctx.work <- fn:
	case <-ctx.done:
		return ErrClosed
	}
	select {
	case err := <-ctx.errChan:
		return err
	case <-ctx.done:
		return ErrClosed
	}
}

// Run locks the calling goroutine to its OS thread, makes the context current there, closes
// errChan (or, when that fails, sends the error on it, or returns it for a nil errChan), and
// runs the functions of Do until Close.
func (ctx *Ctx) Run(errChan chan error) error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := SetCurrentContext(ctx.CUContext); err != nil {
		if errChan == nil {
			return err
		}
		errChan <- err
		return nil
	}
	if errChan != nil {
		close(errChan)
	}
	for {
		select {
		case fn := <-ctx.work:
			err := fn()
			select {
			case ctx.errChan <- err:
			case <-ctx.done:
				return nil
			}
		case <-ctx.done:
			return nil
		}
	}
}

// Close destroys the context; Do and Run end. Closing again does nothing.
func (ctx *Ctx) Close() error {
	ctx.mu.Lock()
	defer ctx.mu.Unlock()
	if ctx.closed {
		return nil
	}
	ctx.closed = true
	close(ctx.done)
	if ctx.CUContext.c == nil {
		return nil
	}
	return DestroyContext(ctx.CUContext)
}

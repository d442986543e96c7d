package cu

// #include "shim.h"
import "C"

import (
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"unsafe"
)

// BatchedContext queues driver calls and makes them, in order, when DoWork processes the
// queue: on the goroutine that calls DoWork, with its OS thread locked and the context made
// current there for the batch. The calls that return a value (MemAlloc, MemAllocManaged,
// AllocAndCopy) process the queue at once, with themselves last, on the caller's goroutine.
// Errors reports the calls of the batch processed last, and keeps reporting them until
// another batch is processed (DoWork on an empty queue processes nothing).
//
// A BatchedContext may be copied (Gorgonia keeps one by value in each engine): the copies
// share the queue. It is safe for concurrent use; one batch is processed at a time.
type BatchedContext struct {
	Context
	Device

	b *batch
}

// workBufLen is the queue length at which WorkAvailable is signalled.
const workBufLen = 64

type batch struct {
	qmu   sync.Mutex // guards queue
	queue []*call

	pmu     sync.Mutex // held while a batch is processed; guards results
	results []*call

	workAvailable chan struct{}
	done          chan struct{}
	closeOnce     sync.Once
}

var _ Context = (*BatchedContext)(nil)

// NewBatchedContext makes a batched context on the context c of device d; Close closes c.
func NewBatchedContext(c Context, d Device) *BatchedContext {
	return &BatchedContext{Context: c, Device: d, b: &batch{
		workAvailable: make(chan struct{}, 1),
		done:          make(chan struct{}),
	}}
}

// IsInitialized reports whether the context was made by NewBatchedContext and is not closed.
func (ctx *BatchedContext) IsInitialized() bool {
	if ctx.b == nil {
		return false
	}
	select {
	case <-ctx.b.done:
		return false
	default:
		return true
	}
}

// WorkAvailable receives a value when work is waiting: Signal was called, or the queue
// reached its batch length. The goroutine that receives it calls DoWork.
func (ctx *BatchedContext) WorkAvailable() <-chan struct{} {
	if ctx.b == nil {
		return nil
	}
	return ctx.b.workAvailable
}

// Signal tells the receiver of WorkAvailable that work is waiting; it does not wait for a
// receiver (one pending signal is kept).
func (ctx *BatchedContext) Signal() {
	if ctx.b == nil {
		return
	}
	select {
	case ctx.b.workAvailable <- struct{}{}:
	default:
	}
}

type opcode int

const (
	opSetCurrent opcode = iota
	opAlloc
	opAllocManaged
	opAllocAndCopy
	opFree
	opMemcpy
	opHtoD
	opDtoH
	opLaunch
	opSync
)

var opNames = [...]string{
	opSetCurrent:   "cuCtxSetCurrent",
	opAlloc:        "cuMemAlloc",
	opAllocManaged: "cuMemAllocManaged",
	opAllocAndCopy: "cuMemAlloc+cuMemcpyHtoD",
	opFree:         "cuMemFree",
	opMemcpy:       "cuMemcpy",
	opHtoD:         "cuMemcpyHtoD",
	opDtoH:         "cuMemcpyDtoH",
	opLaunch:       "cuLaunchKernel",
	opSync:         "cuCtxSynchronize",
}

// call is one queued driver call and, once made, its result.
type call struct {
	op       opcode
	dst, src DevicePtr
	host     unsafe.Pointer // Go or C memory, kept alive while queued
	size     int64
	flags    MemAttachFlags
	ctx      CUContext
	fn       Function
	grid     [3]int
	block    [3]int
	shared   int
	stream   Stream
	params   []uint64
	badParam bool

	out DevicePtr // what an allocation returned
	err error
}

// run makes the call on the calling thread.
func (c *call) run() error {
	if c.size < 0 {
		return InvalidValue
	}
	n := C.size_t(c.size)
	switch c.op {
	case opSetCurrent:
		return check("cuCtxSetCurrent", C.gjcu_CtxSetCurrent(c.ctx.c))
	case opAlloc, opAllocAndCopy:
		var p C.gjcu_ptr
		if err := check("cuMemAlloc_v2", C.gjcu_MemAlloc(&p, n)); err != nil {
			return err
		}
		c.out = DevicePtr(p)
		if c.op == opAllocAndCopy {
			return check("cuMemcpyHtoD_v2", C.gjcu_MemcpyHtoD(p, c.host, n))
		}
		return nil
	case opAllocManaged:
		var p C.gjcu_ptr
		err := check("cuMemAllocManaged", C.gjcu_MemAllocManaged(&p, n, C.uint(c.flags)))
		c.out = DevicePtr(p)
		return err
	case opFree:
		return check("cuMemFree_v2", C.gjcu_MemFree(C.gjcu_ptr(c.dst)))
	case opMemcpy:
		return check("cuMemcpy", C.gjcu_Memcpy(C.gjcu_ptr(c.dst), C.gjcu_ptr(c.src), n))
	case opHtoD:
		return check("cuMemcpyHtoD_v2", C.gjcu_MemcpyHtoD(C.gjcu_ptr(c.dst), c.host, n))
	case opDtoH:
		return check("cuMemcpyDtoH_v2", C.gjcu_MemcpyDtoH(c.host, C.gjcu_ptr(c.src), n))
	case opLaunch:
		if c.badParam {
			return InvalidValue
		}
		return launch(c.fn, c.grid, c.block, c.shared, c.stream, c.params)
	case opSync:
		return check("cuCtxSynchronize", C.gjcu_CtxSynchronize())
	}
	return InvalidValue
}

// enqueue adds c to the queue, and signals WorkAvailable when the queue is a batch long.
func (ctx *BatchedContext) enqueue(c *call) {
	if ctx.b == nil {
		return // Errors says the context was not made by NewBatchedContext
	}
	ctx.b.qmu.Lock()
	ctx.b.queue = append(ctx.b.queue, c)
	n := len(ctx.b.queue)
	ctx.b.qmu.Unlock()
	if n >= workBufLen {
		ctx.Signal()
	}
}

// process makes the queued calls, then extra if not nil, as one batch; the caller holds pmu.
func (ctx *BatchedContext) process(extra *call) {
	b := ctx.b
	b.qmu.Lock()
	calls := b.queue
	b.queue = nil
	b.qmu.Unlock()
	if extra != nil {
		calls = append(calls, extra)
	}
	if len(calls) == 0 {
		return
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	err := load()
	if err == nil {
		if ctx.Context == nil {
			err = errNoContext
		} else if err = SetCurrentContext(ctx.Context.CUDAContext()); err != nil {
			err = fmt.Errorf("cu: making the batch's context current: %w", err)
		}
	}
	for _, c := range calls {
		if err != nil {
			c.err = err
			continue
		}
		c.err = c.run()
	}
	b.results = calls
}

var (
	errNoContext      = errors.New("cu: the batched context has no CUDA context")
	errNotInitialised = errors.New("cu: the batched context was not made by NewBatchedContext")
)

// DoWork processes the queue (see BatchedContext); with an empty queue it does nothing.
func (ctx *BatchedContext) DoWork() {
	if ctx.b == nil {
		return
	}
	ctx.b.pmu.Lock()
	defer ctx.b.pmu.Unlock()
	ctx.process(nil)
}

// blocking processes the queue with c last and returns what c allocated and c's own error;
// the errors of the calls queued before it are reported by Errors.
func (ctx *BatchedContext) blocking(c *call) (DevicePtr, error) {
	if ctx.b == nil {
		return 0, errNotInitialised
	}
	ctx.b.pmu.Lock()
	defer ctx.b.pmu.Unlock()
	ctx.process(c)
	return c.out, c.err
}

// BatchError is the failed calls of a batch.
type BatchError struct {
	Calls  int         // the calls in the batch
	Failed []CallError // those that failed, in order
}

// CallError is a failed call of a batch: its position, the driver function, its error.
type CallError struct {
	Index int
	Call  string
	Err   error
}

func (e CallError) Error() string { return fmt.Sprintf("[%d] %s: %v", e.Index, e.Call, e.Err) }
func (e CallError) Unwrap() error { return e.Err }

func (e *BatchError) Error() string {
	var s strings.Builder
	fmt.Fprintf(&s, "cu: %d of %d batched calls failed:", len(e.Failed), e.Calls)
	for _, f := range e.Failed {
		s.WriteString(" ")
		s.WriteString(f.Error())
		s.WriteString(";")
	}
	return strings.TrimSuffix(s.String(), ";")
}

// ListErrors is the errors of the failed calls.
func (e *BatchError) ListErrors() []error {
	errs := make([]error, len(e.Failed))
	for i, f := range e.Failed {
		errs[i] = f
	}
	return errs
}

// Unwrap lets errors.Is and errors.As find a failed call's error (a Result, say).
func (e *BatchError) Unwrap() []error { return e.ListErrors() }

// Errors is a *BatchError of the failed calls of the batch processed last, nil when all of
// them succeeded.
func (ctx *BatchedContext) Errors() error {
	if ctx.b == nil {
		return errNotInitialised
	}
	ctx.b.pmu.Lock()
	defer ctx.b.pmu.Unlock()
	e := &BatchError{Calls: len(ctx.b.results)}
	for i, c := range ctx.b.results {
		if c.err != nil {
			e.Failed = append(e.Failed, CallError{Index: i, Call: opNames[c.op], Err: c.err})
		}
	}
	if len(e.Failed) == 0 {
		return nil
	}
	return e
}

// Error is Errors.
func (ctx *BatchedContext) Error() error { return ctx.Errors() }

// Run processes the queue whenever WorkAvailable receives and runs the functions of Do, on
// the calling goroutine locked to its OS thread, until Close. An error of a batch is sent on
// errChan, or returned when errChan is nil.
func (ctx *BatchedContext) Run(errChan chan error) error {
	if ctx.b == nil || ctx.Context == nil {
		return errNotInitialised
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	for {
		select {
		case <-ctx.b.done:
			return nil
		case fn := <-ctx.Work():
			ctx.ErrChan() <- fn()
			continue
		case <-ctx.b.workAvailable:
		}
		ctx.DoWork()
		switch err := ctx.Errors(); {
		case err == nil:
		case errChan == nil:
			return err
		default:
			errChan <- err
		}
	}
}

// Cleanup does nothing: the queued calls hold no memory outside Go's.
func (ctx *BatchedContext) Cleanup() {}

// Close closes the batched context and its Context (destroying the CUDA context); the calls
// still queued are dropped.
func (ctx *BatchedContext) Close() error {
	if ctx.b != nil {
		ctx.b.closeOnce.Do(func() { close(ctx.b.done) })
		ctx.b.qmu.Lock()
		ctx.b.queue = nil
		ctx.b.qmu.Unlock()
	}
	if ctx.Context == nil {
		return nil
	}
	return ctx.Context.Close()
}

// SetCurrent queues making the context current (processing a batch does that anyway).
func (ctx *BatchedContext) SetCurrent() {
	c := &call{op: opSetCurrent}
	if ctx.Context != nil {
		c.ctx = ctx.Context.CUDAContext()
	}
	ctx.enqueue(c)
}

// MemAlloc allocates n bytes of device memory, processing the queue first.
func (ctx *BatchedContext) MemAlloc(n int64) (DevicePtr, error) {
	return ctx.blocking(&call{op: opAlloc, size: n})
}

// MemAllocManaged allocates n bytes of managed memory, processing the queue first.
func (ctx *BatchedContext) MemAllocManaged(n int64, flags MemAttachFlags) (DevicePtr, error) {
	return ctx.blocking(&call{op: opAllocManaged, size: n, flags: flags})
}

// AllocAndCopy allocates n bytes of device memory and copies n bytes of host memory from p
// there, processing the queue first.
func (ctx *BatchedContext) AllocAndCopy(p unsafe.Pointer, n int64) (DevicePtr, error) {
	return ctx.blocking(&call{op: opAllocAndCopy, host: p, size: n})
}

// MemFree queues freeing device memory.
func (ctx *BatchedContext) MemFree(p DevicePtr) { ctx.enqueue(&call{op: opFree, dst: p}) }

// Memcpy queues a copy of n bytes between addresses of the unified address space.
func (ctx *BatchedContext) Memcpy(dst, src DevicePtr, n int64) {
	ctx.enqueue(&call{op: opMemcpy, dst: dst, src: src, size: n})
}

// MemcpyHtoD queues a copy of n bytes from host memory to the device; src must stay
// unchanged until the queue is processed (the queue keeps Go memory alive).
func (ctx *BatchedContext) MemcpyHtoD(dst DevicePtr, src unsafe.Pointer, n int64) {
	ctx.enqueue(&call{op: opHtoD, dst: dst, host: src, size: n})
}

// MemcpyDtoH queues a copy of n bytes from the device to host memory, which holds them once
// the queue is processed.
func (ctx *BatchedContext) MemcpyDtoH(dst unsafe.Pointer, src DevicePtr, n int64) {
	ctx.enqueue(&call{op: opDtoH, host: dst, src: src, size: n})
}

// LaunchKernel queues a launch of fn. The parameters' values are read now, each as a 64-bit
// value (every parameter of the kernels is a pointer or a 64-bit number), so the variables
// they point to may change once it returns; at most MaxParams.
func (ctx *BatchedContext) LaunchKernel(fn Function, gridDimX, gridDimY, gridDimZ int, blockDimX, blockDimY, blockDimZ int, sharedMemBytes int, stream Stream, kernelParams []unsafe.Pointer) {
	vals, ok := paramValues(kernelParams)
	ctx.enqueue(&call{op: opLaunch, fn: fn, grid: [3]int{gridDimX, gridDimY, gridDimZ},
		block: [3]int{blockDimX, blockDimY, blockDimZ}, shared: sharedMemBytes, stream: stream,
		params: vals, badParam: !ok})
}

// Synchronize queues a synchronisation of the context (cuCtxSynchronize), whose result
// reports the failures of the kernels launched before it.
func (ctx *BatchedContext) Synchronize() { ctx.enqueue(&call{op: opSync}) }

// LaunchAndSync queues LaunchKernel and Synchronize.
func (ctx *BatchedContext) LaunchAndSync(fn Function, gridDimX, gridDimY, gridDimZ int, blockDimX, blockDimY, blockDimZ int, sharedMemBytes int, stream Stream, kernelParams []unsafe.Pointer) {
	ctx.LaunchKernel(fn, gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ, sharedMemBytes, stream, kernelParams)
	ctx.Synchronize()
}

// Package par spreads independent rows over the available cores.
//
// Work is split into contiguous, fixed chunks of rows; each row is computed by exactly one
// goroutine with the same code, so results are bit-identical whatever the core count.
//
// Parallel work lives only as long as the call that asked for it, as in gonum's Dgemm: For
// starts its helper goroutines, works beside them, and returns once every one of them has
// exited. Nothing of this package runs, waits or spins between calls, so a library call never
// costs its caller CPU time after it returns. A panic in a body, on any goroutine, is
// recovered there and raised again on the caller's goroutine once the helpers are done, where
// the caller can recover it.
//
// For allocates nothing: a call's bookkeeping lives in a pooled task whose helper entry point
// is a method value bound once, and the body is a func value that the callers bind once too (a
// method value stored in a pooled job).
package par

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// minWork is the break-even, in units of scalar work (roughly output elements written), below
// which a call runs on the calling goroutine. SetMinWork changes it.
var minWork atomic.Int64

// DefaultMinWork is the break-even below which For runs on the caller, in units of work
// (roughly output elements written). A split starts goroutines, and a goroutine started on an
// idle core of a virtual machine runs only after that core wakes, tens of microseconds later;
// meanwhile the caller works through the chunks itself. The constant was measured on the
// 2-core development VM (AMD EPYC, Go 1.26, load average below 1.1) by sweeping the work of a
// call with the rows on one goroutine and split over two, and taking the smallest work from
// which the split wins at every larger size of the sweep:
//
//	go test -run '^$' -bench BreakEven ./softmaxjet    # First 262144, HVP 262144, Second (K=4) none up to 262144
//	go test -run '^$' -bench BreakEven ./internal/par  # a memset-like body: none up to 262144
//
// Both benchmarks print the crossover they find.
const DefaultMinWork = 1 << 18

func init() { minWork.Store(DefaultMinWork) }

// SetMinWork sets the break-even below which one goroutine is used and returns the old value.
// A value ≤ 0 means "always split"; tests use it to check bit-identical results.
func SetMinWork(w int64) int64 { return minWork.Swap(w) }

// MinWork returns the current break-even (see SetMinWork).
func MinWork() int64 { return minWork.Load() }

// maxProcs caps the goroutines used (0: GOMAXPROCS). Tests set it through SetMaxProcs.
var maxProcs atomic.Int64

// SetMaxProcs caps the number of goroutines For uses (0 means GOMAXPROCS) and returns the old
// cap.
func SetMaxProcs(p int) int { return int(maxProcs.Swap(int64(p))) }

// Workers returns the number of goroutines For splits a large call over: GOMAXPROCS, capped
// by SetMaxProcs.
func Workers() int {
	w := runtime.GOMAXPROCS(0)
	if c := int(maxProcs.Load()); c > 0 && c < w {
		w = c
	}
	return w
}

// For calls body(lo, hi) over a partition of [0, n) into contiguous chunks. rowWork is the
// work of one row; when n·rowWork is below the break-even, body(0, n) runs on the caller.
// Otherwise For starts up to Workers()−1 helper goroutines, and the caller and the helpers
// take the chunks in order until none is left; For returns when every helper has exited.
// Which goroutine runs which chunk varies from call to call; the chunks themselves do not
// depend on it.
//
// If body panics, no further chunk is started, and once the helpers have exited For panics on
// the caller's goroutine with the first value recovered.
//
// body must not be a closure made for the call if the call is to allocate nothing: bind a
// method value once and reuse it. For may be called from several goroutines at once, and from
// within a body.
func For(n, rowWork int, body func(lo, hi int)) {
	if n <= 0 {
		return
	}
	workers := min(Workers(), n)
	if workers <= 1 || int64(n)*int64(max(rowWork, 1)) < minWork.Load() {
		body(0, n)
		return
	}
	// A few chunks per worker balance uneven rows without much scheduling cost.
	t := taskPool.Get().(*task)
	t.body, t.n, t.chunks = body, n, min(workers*4, n)
	t.next.Store(0)
	t.running.Store(int32(workers - 1))
	for h := 1; h < workers; h++ {
		go t.helper()
	}
	t.work()
	// The helpers are on their last chunks: poll for them a little before parking (waking a
	// parked goroutine costs more than a short chunk). The poll is a plain atomic load, so the
	// runtime can preempt it.
	for i := 0; i < 1<<12 && t.running.Load() != 0; i++ {
	}
	<-t.done
	p := t.panicked
	t.body, t.panicked = nil, nil
	taskPool.Put(t)
	if p != nil {
		panic(p.v)
	}
}

// task is one For call split into chunks; tasks are pooled, and a task goes back to the pool
// only after every helper started for it has exited.
type task struct {
	body      func(lo, hi int)
	n, chunks int
	next      atomic.Int64 // next chunk to hand out
	running   atomic.Int32 // helpers not yet exited
	done      chan struct{}
	helper    func() // (*task).help, bound once
	mu        sync.Mutex
	panicked  *panicValue // the first panic recovered from a body
}

// panicValue boxes a recovered value, so that a body that panics with nil is told apart from
// no panic.
type panicValue struct{ v any }

// work runs chunks until none is left, recording a panic and stopping the hand-out if a body
// panics.
func (t *task) work() {
	defer func() {
		if r := recover(); r != nil {
			t.next.Store(int64(t.chunks))
			t.mu.Lock()
			if t.panicked == nil {
				t.panicked = &panicValue{r}
			}
			t.mu.Unlock()
		}
	}()
	for {
		i := int(t.next.Add(1) - 1)
		if i >= t.chunks {
			return
		}
		t.body(i*t.n/t.chunks, (i+1)*t.n/t.chunks)
	}
}

// help is a helper goroutine's whole life: work, then tell the caller when it is the last one
// out.
func (t *task) help() {
	t.work()
	if t.running.Add(-1) == 0 {
		t.done <- struct{}{}
	}
}

var taskPool = sync.Pool{New: func() any {
	t := &task{done: make(chan struct{}, 1)}
	t.helper = t.help
	return t
}}

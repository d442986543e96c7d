// Package par spreads independent rows over the available cores.
//
// Work is split into contiguous, fixed chunks of rows; each row is computed by exactly one
// goroutine with the same code, so results are bit-identical whatever the core count.
//
// For allocates nothing: the helpers are long-lived goroutines that wait on a channel, and a
// call's bookkeeping lives in a pooled task. The body is a func value that the callers bind
// once (a method value stored in a pooled job), so passing it allocates nothing either.
package par

import (
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// minWork is the break-even, in units of scalar work (roughly output elements written), below
// which a call runs on the calling goroutine. SetMinWork changes it.
var minWork atomic.Int64

// DefaultMinWork is the break-even below which For runs on the caller, in units of work
// (roughly output elements written). It was measured on the 2-core development VM (AMD EPYC,
// Go 1.26, load average below 1.5) by sweeping N with the rows on one goroutine and split
// over two, and taking the smallest work from which the split wins at every larger size:
//
//	go test -run '^$' -bench BreakEven ./softmaxjet    # First 8192, HVP 8192, Second 16384
//	go test -run '^$' -bench BreakEven ./internal/par  # a memset-like body: 32768
//
// Both benchmarks print the crossover they find. The constant is the largest crossover of the
// kernels (a split costs about 1 µs when the helper is polling: below that much work per
// call, one goroutine is as fast); the memset-like body, cheaper per unit than any kernel,
// only gains from 32768 up.
const DefaultMinWork = 1 << 14

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
// Otherwise the chunks are handed out, in order, to the caller and to up to Workers()−1
// helper goroutines; For returns when every chunk is done. Which goroutine runs which chunk
// varies from call to call; the chunks themselves do not depend on it.
//
// body must not be a closure made for the call if the call is to allocate nothing: bind a
// method value once and reuse it. For may be called from several goroutines at once, and from
// within a body (the nested call then usually runs on its own goroutine).
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
	chunks := min(workers*4, n)
	t := getTask()
	t.body, t.n, t.chunks = body, n, chunks
	t.next.Store(0)
	t.state.Store(0) // open: publishes the fields above to the helpers that join
	startHelpers(workers - 1)
	for h := 1; h < workers; h++ {
		select {
		case queue <- t:
			queued.Add(1)
		default: // the queue is full (many concurrent calls): the caller does more itself
		}
	}
	t.work()
	// Close the task; wait for the helpers that joined it and are still working: each is on
	// its last chunk, so poll for them a while before parking (waking a parked goroutine costs
	// more than a short chunk), then take the last one's signal.
	if t.state.Or(closed) != 0 {
		deadline := time.Now().Add(spinFor)
		for i := 1; t.state.Load() != closed; i++ {
			if i%256 == 0 && time.Now().After(deadline) {
				break
			}
		}
		<-t.done
	}
	t.body = nil
	putTask(t)
}

// closed is the bit of task.state that stops helpers from joining; the other bits count the
// helpers working on the task.
const closed = 1 << 30

// task is one For call split into chunks. Tasks are pooled; a helper may find a task in the
// queue after its call has returned (it was queued but nobody was free to take it): the
// closed bit, or a later call's fresh state, makes that harmless.
type task struct {
	body      func(lo, hi int)
	n, chunks int
	next      atomic.Int64 // next chunk to hand out
	state     atomic.Int32 // helpers working | closed
	done      chan struct{}
}

// work runs chunks until none is left.
func (t *task) work() {
	for {
		i := int(t.next.Add(1) - 1)
		if i >= t.chunks {
			return
		}
		t.body(i*t.n/t.chunks, (i+1)*t.n/t.chunks)
	}
}

// help joins the task unless its call has closed it, works, and tells the caller when it is
// the last helper out of a closed task.
func (t *task) help() {
	for {
		s := t.state.Load()
		if s&closed != 0 {
			return
		}
		if t.state.CompareAndSwap(s, s+1) {
			break
		}
	}
	t.work()
	if t.state.Add(-1) == closed {
		t.done <- struct{}{}
	}
}

var taskPool = sync.Pool{New: func() any {
	t := &task{done: make(chan struct{}, 1)}
	t.state.Store(closed)
	return t
}}

func getTask() *task { return taskPool.Get().(*task) }

func putTask(t *task) { taskPool.Put(t) }

// queue hands tasks to the helpers. A task may wait there behind busy helpers; if its call has
// finished meanwhile, the helper that takes it finds it closed (or reused by a later call,
// which it then helps). When the queue is full the caller simply does more chunks itself.
var queue = make(chan *task, 64)

// queued is about the number of tasks in the queue (it is raised after a send and lowered
// after a receive): polling helpers read it, which is cheap and leaves them preemptible,
// and look at the queue itself only when it is positive.
var queued atomic.Int64

var (
	helperMu sync.Mutex
	helpers  atomic.Int64
)

// startHelpers makes sure that at least n helper goroutines exist. Helpers live for the rest
// of the process, parked on the queue when idle.
func startHelpers(n int) {
	if helpers.Load() >= int64(n) {
		return
	}
	helperMu.Lock()
	for helpers.Load() < int64(n) {
		helpers.Add(1)
		go helper()
	}
	helperMu.Unlock()
}

// spinFor is how long an idle helper keeps polling the queue before it parks. Waking a parked
// helper costs tens of microseconds on a virtual machine whose idle core has halted (32 µs
// measured on the 2-core development VM after 1 ms of idleness, against 0.2 µs when the
// helper is polling), which would make every split of a short call a loss; polling for a
// while after each task makes back-to-back calls cheap to split, at the price of that much
// CPU time per idle period.
const spinFor = 200 * time.Microsecond

func helper() {
	for {
		t := poll()
		if t == nil {
			t = <-queue
		}
		queued.Add(-1)
		t.help()
	}
}

// poll takes a task from the queue if one comes within spinFor, and returns nil otherwise.
// Its loop is plain Go code (an atomic load), so that the runtime can preempt it at once, for
// a garbage collection say; a loop of non-blocking channel receives spends its time in the
// runtime, where it cannot be preempted asynchronously, and stalls the collector.
func poll() *task {
	deadline := time.Now().Add(spinFor)
	for i := 1; ; i++ {
		if queued.Load() > 0 {
			select {
			case t := <-queue:
				return t
			default:
			}
		}
		if i%256 == 0 && time.Now().After(deadline) {
			return nil
		}
	}
}

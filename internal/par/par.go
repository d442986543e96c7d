// Package par spreads independent rows over the available cores.
//
// Work is split into contiguous, fixed chunks of rows; each row is computed by exactly one
// goroutine with the same code, so results are bit-identical whatever the core count.
package par

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// MinWork is the break-even, in units of scalar work (roughly output elements written), below
// which a call runs on the calling goroutine. It is read atomically; SetMinWork changes it.
var minWork atomic.Int64

// DefaultMinWork is the break-even measured on a 2-core machine: starting goroutines and
// waiting for them costs a few microseconds, the time to write about 32k float64 values.
const DefaultMinWork = 1 << 15

func init() { minWork.Store(DefaultMinWork) }

// SetMinWork sets the break-even below which one goroutine is used and returns the old value.
// A value ≤ 0 means "always split"; tests use it to check bit-identical results.
func SetMinWork(w int64) int64 { return minWork.Swap(w) }

// maxProcs caps the goroutines used (0: GOMAXPROCS). Tests set it through SetMaxProcs.
var maxProcs atomic.Int64

// SetMaxProcs caps the number of goroutines For uses (0 means GOMAXPROCS) and returns the old
// cap.
func SetMaxProcs(p int) int { return int(maxProcs.Swap(int64(p))) }

// For calls body(lo, hi) over a partition of [0, n) into contiguous chunks. rowWork is the
// work of one row; when n·rowWork is below the break-even, body(0, n) runs on the caller.
func For(n, rowWork int, body func(lo, hi int)) {
	if n <= 0 {
		return
	}
	workers := runtime.GOMAXPROCS(0)
	if c := int(maxProcs.Load()); c > 0 && c < workers {
		workers = c
	}
	if workers > n {
		workers = n
	}
	if workers <= 1 || int64(n)*int64(max(rowWork, 1)) < minWork.Load() {
		body(0, n)
		return
	}
	// A few chunks per worker balance uneven rows without much scheduling cost.
	chunks := workers * 4
	if chunks > n {
		chunks = n
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	wg.Add(workers)
	run := func() {
		defer wg.Done()
		for {
			i := int(next.Add(1) - 1)
			if i >= chunks {
				return
			}
			body(i*n/chunks, (i+1)*n/chunks)
		}
	}
	for w := 1; w < workers; w++ {
		go run()
	}
	run()
	wg.Wait()
}

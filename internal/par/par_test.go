package par

import (
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestForCoversEveryRowOnce(t *testing.T) {
	defer SetMinWork(SetMinWork(0))
	for _, n := range []int{0, 1, 2, 3, 7, 64, 1000} {
		hits := make([]int32, n)
		For(n, 1, func(lo, hi int) {
			for i := lo; i < hi; i++ {
				atomic.AddInt32(&hits[i], 1)
			}
		})
		for i, h := range hits {
			require.EqualValues(t, 1, h, "n=%d row %d", n, i)
		}
	}
}

func TestForSmallRunsInline(t *testing.T) {
	calls := 0
	For(10, 1, func(lo, hi int) { calls++; require.Equal(t, 0, lo); require.Equal(t, 10, hi) })
	require.Equal(t, 1, calls)
}

// counter is a body bound once as a method value, as the kernels do.
type counter struct {
	hits []int32
	run  func(lo, hi int)
}

func (c *counter) do(lo, hi int) {
	for i := lo; i < hi; i++ {
		atomic.AddInt32(&c.hits[i], 1)
	}
}

func TestForAllocatesNothing(t *testing.T) {
	if testing.CoverMode() != "" || raceEnabled {
		t.Skip("allocation counts are not meaningful under -cover or -race")
	}
	defer SetMinWork(SetMinWork(0))
	c := &counter{hits: make([]int32, 1000)}
	c.run = c.do
	For(len(c.hits), 1, c.run)
	allocs := testing.AllocsPerRun(200, func() { For(len(c.hits), 1, c.run) })
	require.Zero(t, allocs)
	for _, h := range c.hits {
		require.EqualValues(t, 201+1, h)
	}
}

// TestForConcurrentAndNested runs For from several goroutines at once, each body calling For
// again: every row of every call is done exactly once, and nothing deadlocks (go test -race).
func TestForConcurrentAndNested(t *testing.T) {
	defer SetMinWork(SetMinWork(0))
	const outer, inner = 16, 50
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for rep := 0; rep < 20; rep++ {
				hits := make([]int32, outer*inner)
				For(outer, inner, func(lo, hi int) {
					for o := lo; o < hi; o++ {
						For(inner, 1, func(l, h int) {
							for i := l; i < h; i++ {
								atomic.AddInt32(&hits[o*inner+i], 1)
							}
						})
					}
				})
				for i, h := range hits {
					if h != 1 {
						t.Errorf("row %d done %d times", i, h)
						return
					}
				}
			}
		}()
	}
	wg.Wait()
}

func TestForRespectsMaxProcs(t *testing.T) {
	defer SetMinWork(SetMinWork(0))
	defer SetMaxProcs(SetMaxProcs(1))
	var calls atomic.Int32
	For(100, 1, func(lo, hi int) { calls.Add(1); require.Equal(t, 0, lo); require.Equal(t, 100, hi) })
	require.EqualValues(t, 1, calls.Load())
}

// TestForLeavesNoGoroutine: every helper a call starts has exited soon after For returns, so
// nothing of this package runs or waits between calls.
func TestForLeavesNoGoroutine(t *testing.T) {
	if Workers() < 2 {
		t.Skip("GOMAXPROCS is 1: For starts no helper")
	}
	defer SetMinWork(SetMinWork(0))
	base := runtime.NumGoroutine()
	c := &counter{hits: make([]int32, 1000)}
	c.run = c.do
	for range 100 {
		For(len(c.hits), 1, c.run)
	}
	// A helper's last act is to signal the caller; give its goroutine the moment to end.
	deadline := time.Now().Add(2 * time.Second)
	for runtime.NumGoroutine() > base && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	require.LessOrEqual(t, runtime.NumGoroutine(), base, "goroutines left after the calls returned")
}

// TestForPanicReachesCaller: a body that panics on a helper's goroutine makes For panic on
// the caller's goroutine, with the value of the first panic, after the helpers are done; the
// process survives and later calls work.
func TestForPanicReachesCaller(t *testing.T) {
	if Workers() < 2 {
		t.Skip("GOMAXPROCS is 1: no helper goroutine to panic on")
	}
	defer SetMinWork(SetMinWork(0))
	defer SetMaxProcs(SetMaxProcs(2))
	// Every chunk waits until two chunks run at once (so one of them is on the helper), then
	// panics.
	var started atomic.Int32
	got := func() (r any) {
		defer func() { r = recover() }()
		For(1000, 1, func(lo, hi int) {
			started.Add(1)
			for deadline := time.Now().Add(time.Second); started.Load() < 2 && time.Now().Before(deadline); {
				runtime.Gosched()
			}
			panic("boom")
		})
		return nil
	}()
	require.Equal(t, "boom", got)
	require.GreaterOrEqual(t, started.Load(), int32(2), "the helper never ran a chunk")
	TestForCoversEveryRowOnce(t)
}

package par

import (
	"sync"
	"sync/atomic"
	"testing"

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

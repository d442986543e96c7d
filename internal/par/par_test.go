package par

import (
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

package check

import (
	"errors"
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gatejet/gatejet"
)

func TestElems(t *testing.T) {
	for _, c := range []struct {
		dims []int
		n    int
		ok   bool
	}{
		{nil, 1, true},
		{[]int{3, 4}, 12, true},
		{[]int{0, math.MaxInt, math.MaxInt}, 0, true},
		{[]int{math.MaxInt, math.MaxInt, 0}, 0, true},
		{[]int{1 << 40, 1 << 40}, 0, false},
		{[]int{-1, 2}, 0, false},
		{[]int{2, -1, 0}, 0, false},
	} {
		n, ok := Elems(c.dims...)
		require.Equal(t, c.ok, ok, "%v", c.dims)
		require.Equal(t, c.n, n, "%v", c.dims)
	}
}

func TestAlloc(t *testing.T) {
	n, err := Alloc("op", "dst", 8, 4096, 16, 16, 16)
	require.NoError(t, err)
	require.Equal(t, 4096*16*16*16, n)

	// 32 TiB: over the default limit, an ErrSize naming the size and the limit.
	_, err = Alloc("ops.SoftmaxJetSecond", "output", 8, 1, 1<<21, 1<<21, 1)
	require.ErrorIs(t, err, gatejet.ErrSize)
	var ge *gatejet.Error
	require.True(t, errors.As(err, &ge))
	require.Equal(t, "output", ge.Arg)
	require.Contains(t, err.Error(), "32.0 TiB")
	require.Contains(t, err.Error(), "16.0 GiB")

	_, err = Alloc("op", "dst", 8, 1<<40, 1<<40)
	require.ErrorIs(t, err, gatejet.ErrSize)

	prev := gatejet.SetMaxBytes(1024)
	defer gatejet.SetMaxBytes(prev)
	_, err = Alloc("op", "dst", 8, 128)
	require.NoError(t, err)
	_, err = Alloc("op", "dst", 8, 129)
	require.ErrorIs(t, err, gatejet.ErrSize)
	require.Equal(t, int64(1024), gatejet.SetMaxBytes(0))
	require.Equal(t, gatejet.DefaultMaxBytes, gatejet.MaxBytes())
}

func TestBytes(t *testing.T) {
	require.Equal(t, "512 B", Bytes(512))
	require.Equal(t, "128.0 MiB", Bytes(128<<20))
}

func TestOverlap(t *testing.T) {
	a := make([]float64, 10)
	require.True(t, Overlap(a[:5], a[4:]))
	require.False(t, Overlap(a[:5], a[5:]))
	require.True(t, Overlap(a, a))
	require.False(t, Overlap(a[:0], a))
	require.False(t, Overlap(a, nil))
	b := make([]float32, 4)
	require.False(t, Overlap(b, make([]float32, 4)))
}

// TestAllocAllocatesNothing: a size that fits costs no allocation, so kernels may check on
// every call.
func TestAllocAllocatesNothing(t *testing.T) {
	if testing.CoverMode() != "" {
		t.Skip("allocation counts are not meaningful under -cover")
	}
	a, b, c := 4096, 16, 16
	allocs := testing.AllocsPerRun(100, func() {
		if _, err := Alloc("op", "arg", 8, a, b, c); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Fatalf("Alloc allocated %v times per call", allocs)
	}
}

func TestBatchShape(t *testing.T) {
	require.NoError(t, BatchShape("op", 0, 1, 1))
	require.NoError(t, BatchShape("op", 0, math.MaxInt, math.MaxInt))
	require.NoError(t, BatchShape("op", 4, 3, 2))
	for _, s := range [][3]int{{-1, 1, 1}, {1, 0, 1}, {1, 1, 0}, {1 << 20, 1 << 20, 1 << 30}} {
		err := BatchShape("op", s[0], s[1], s[2])
		kind := gatejet.ErrShape
		if s[0] > 0 && s[1] > 0 && s[2] > 0 {
			kind = gatejet.ErrSize // a size that overflows int
		}
		require.ErrorIs(t, err, kind, "%v", s)
		var ge *gatejet.Error
		require.True(t, errors.As(err, &ge))
		require.Equal(t, "op", ge.Op)
		require.Equal(t, "shape", ge.Arg)
	}
}

package backward_test

import (
	"errors"
	"math/rand/v2"
	"testing"

	"github.com/gatejet/gatejet"
	"github.com/gatejet/gatejet/backward"
	"github.com/stretchr/testify/require"
)

// requireOverlapErr checks that err is an ErrParam *gatejet.Error naming arg.
func requireOverlapErr(t *testing.T, err error, arg, what string) {
	t.Helper()
	require.ErrorIs(t, err, gatejet.ErrParam, what)
	var ge *gatejet.Error
	require.True(t, errors.As(err, &ge), what)
	require.Equal(t, arg, ge.Arg, what)
	require.ErrorContains(t, err, "overlaps", what)
}

// TestOverlapRefused: an output that partly overlaps an input, or that shares memory with the
// other output, is refused with ErrParam naming it, in every kernel. SoftmaxBackward with dx
// partly over y returned a wrong dx, and SoftmaxBackwardGrad with gy == gdy no error.
func TestOverlapRefused(t *testing.T) {
	shape := []int{3, 4}
	const n = 12
	arena := make([]float64, 64)
	a, b := arena[0:n], arena[5:5+n] // a and b partly overlap
	c, d, e := make([]float64, n), make([]float64, n), make([]float64, n)
	cases := []struct {
		name, arg string
		call      func() error
	}{
		{"SoftmaxBackward dx/y", "dx", func() error { return backward.SoftmaxBackward(b, a, c, shape, -1) }},
		{"SoftmaxBackward dx/dy", "dx", func() error { return backward.SoftmaxBackward(b, c, a, shape, 0) }},
		{"LogSoftmaxBackward dx/y", "dx", func() error { return backward.LogSoftmaxBackward(a, b, c, shape, 1) }},
		{"SoftmaxBackwardGrad gy=gdy", "gy", func() error { return backward.SoftmaxBackwardGrad(d, d, a, c, e, shape, -1) }},
		{"SoftmaxBackwardGrad gy/gdy", "gy", func() error { return backward.SoftmaxBackwardGrad(a, b, c, d, e, shape, -1) }},
		{"SoftmaxBackwardGrad gdy/g", "gdy", func() error { return backward.SoftmaxBackwardGrad(nil, b, c, d, a, shape, -1) }},
		{"LogSoftmaxBackwardGrad gy/y", "gy", func() error { return backward.LogSoftmaxBackwardGrad(b, nil, a, d, e, shape, 0) }},
		{"LogSoftmaxBackwardGrad gy=gdy", "gy", func() error { return backward.LogSoftmaxBackwardGrad(c, c, a, d, e, shape, 0) }},
		{"ReLU", "y", func() error { return backward.ReLU(b, a) }},
		{"GELU", "y", func() error { return backward.GELU(a, b) }},
		{"SiLU", "y", func() error { return backward.SiLU(b, a) }},
		{"ReLUBackward dx/x", "dx", func() error { return backward.ReLUBackward(b, a, c) }},
		{"GELUBackward dx/dy", "dx", func() error { return backward.GELUBackward(b, c, a) }},
		{"SiLUBackward dx/x", "dx", func() error { return backward.SiLUBackward(a, b, c) }},
		{"ReLUBackwardGrad gx=gdy", "gx", func() error { return backward.ReLUBackwardGrad(d, d, a, c, e) }},
		{"GELUBackwardGrad gx/g", "gx", func() error { return backward.GELUBackwardGrad(b, nil, c, d, a) }},
		{"SiLUBackwardGrad gdy/x", "gdy", func() error { return backward.SiLUBackwardGrad(nil, b, a, c, d) }},
		{"SiLUBackwardGrad gx/gdy", "gx", func() error { return backward.SiLUBackwardGrad(a, b, c, d, e) }},
	}
	for _, tc := range cases {
		var err error
		require.NotPanics(t, func() { err = tc.call() }, tc.name)
		requireOverlapErr(t, err, tc.arg, tc.name)
	}
	// float32 as well.
	a32 := make([]float32, 40)
	requireOverlapErr(t, backward.SoftmaxBackward(a32[1:13], a32[0:12], make([]float32, n), shape, 1), "dx", "float32")
}

// TestInPlaceAllowed: an output that is exactly one of the inputs, as documented, gives the
// out-of-place result bit for bit.
func TestInPlaceAllowed(t *testing.T) {
	rng := rand.New(rand.NewPCG(91, 92))
	shape := []int{3, 5, 4}
	n := prod(shape)
	fill := func() []float64 {
		x := make([]float64, n)
		for i := range x {
			x[i] = rng.NormFloat64()
		}
		return x
	}
	y, dy, g := fill(), fill(), fill()
	clone := func(x []float64) []float64 { return append([]float64(nil), x...) }
	for _, axis := range []int{0, 1, -1} {
		want := make([]float64, n)
		require.NoError(t, backward.SoftmaxBackward(want, y, dy, shape, axis))
		for _, inPlace := range []string{"y", "dy"} {
			yy, dd := clone(y), clone(dy)
			out := yy
			if inPlace == "dy" {
				out = dd
			}
			require.NoError(t, backward.SoftmaxBackward(out, yy, dd, shape, axis), inPlace)
			require.Equal(t, want, out, "dx = %s, axis %d", inPlace, axis)
		}
		wgy, wgdy := make([]float64, n), make([]float64, n)
		require.NoError(t, backward.SoftmaxBackwardGrad(wgy, wgdy, y, dy, g, shape, axis))
		yy, dd, gg := clone(y), clone(dy), clone(g)
		require.NoError(t, backward.SoftmaxBackwardGrad(gg, dd, yy, dd, gg, shape, axis))
		require.Equal(t, wgy, gg, "gy = g")
		require.Equal(t, wgdy, dd, "gdy = dy")
	}
	x := fill()
	want := make([]float64, n)
	require.NoError(t, backward.GELUBackward(want, x, dy))
	xx := clone(x)
	require.NoError(t, backward.GELUBackward(xx, xx, dy))
	require.Equal(t, want, xx)
	wgx, wgdy := make([]float64, n), make([]float64, n)
	require.NoError(t, backward.SiLUBackwardGrad(wgx, wgdy, x, dy, g))
	xx, dd, gg := clone(x), clone(dy), clone(g)
	require.NoError(t, backward.SiLUBackwardGrad(dd, xx, xx, dd, gg))
	require.Equal(t, wgx, dd)
	require.Equal(t, wgdy, xx)
}

// TestPartialSumsLimit: a long axis reduces into partial sums, which are checked against
// gatejet.MaxBytes before they are allocated.
func TestPartialSumsLimit(t *testing.T) {
	shape := []int{2, 70000}
	n := prod(shape)
	y, dy, dx := make([]float64, n), make([]float64, n), make([]float64, n)
	prev := gatejet.SetMaxBytes(40) // the partial sums take 6 (48 bytes) and 12 floats
	defer gatejet.SetMaxBytes(prev)
	err := backward.SoftmaxBackward(dx, y, dy, shape, -1)
	require.ErrorIs(t, err, gatejet.ErrSize)
	require.ErrorContains(t, err, "backward.SoftmaxBackward")
	require.ErrorIs(t, backward.SoftmaxBackwardGrad(dx, nil, y, dy, dy, shape, -1), gatejet.ErrSize)
	// A short axis needs none.
	require.NoError(t, backward.SoftmaxBackward(dx, y, dy, []int{70000, 2}, -1))
	gatejet.SetMaxBytes(prev)
	require.NoError(t, backward.SoftmaxBackward(dx, y, dy, shape, -1))
}

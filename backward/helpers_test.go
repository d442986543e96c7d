package backward_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gatejet/gatejet/internal/axisref"
)

// axisCase is a shape with an axis to reduce along.
type axisCase struct {
	shape []int
	axis  int
}

// refCases cover rank 1 to 4 and 8, negative axes, first/middle/last axes, size-1 axes,
// empty tensors, row lengths that are not multiples of 4 and strided slabs wider than one
// column block.
var refCases = []axisCase{
	{[]int{5}, 0}, {[]int{5}, -1}, {[]int{1}, 0}, {[]int{0}, 0}, {[]int{13}, 0},
	{[]int{3, 4}, 0}, {[]int{3, 4}, 1}, {[]int{3, 4}, -1}, {[]int{3, 4}, -2},
	{[]int{7, 1}, 1}, {[]int{1, 7}, 0}, {[]int{4, 0}, -1}, {[]int{0, 4}, 1}, {[]int{3, 37}, 1},
	{[]int{2, 3, 4}, 0}, {[]int{2, 3, 4}, 1}, {[]int{2, 3, 4}, 2}, {[]int{2, 3, 4}, -2},
	{[]int{3, 0, 2}, 1}, {[]int{3, 0, 2}, 0}, {[]int{2, 9, 3}, 1},
	{[]int{2, 1, 3, 5}, 1}, {[]int{2, 1, 3, 5}, 3}, {[]int{2, 1, 3, 5}, 0}, {[]int{2, 1, 3, 5}, -3},
	{[]int{2, 1, 2, 3, 1, 2, 1, 2}, 3}, {[]int{2, 1, 2, 3, 1, 2, 1, 2}, -1},
	{[]int{2, 1, 2, 3, 1, 2, 1, 2}, 0}, {[]int{2, 1, 2, 3, 1, 2, 1, 2}, 4},
	{[]int{2, 11, 600}, 1}, {[]int{11, 513}, 0},
	// Long axes, reduced in several chunks; slabs wider than one column block.
	{[]int{300, 300}, 0}, {[]int{2, 70000}, -1}, {[]int{3, 5000, 7}, 1}, {[]int{2, 40, 1500}, 1},
	{[]int{70000, 2}, 0},
}

// axisLen is the length of the case's axis.
func axisLen(c axisCase) int {
	if c.axis < 0 {
		return c.shape[c.axis+len(c.shape)]
	}
	return c.shape[c.axis]
}

func prod(shape []int) int {
	p := 1
	for _, d := range shape {
		p *= d
	}
	return p
}

func randVec(r *rand.Rand, n int, lo, hi float64) []float64 {
	v := make([]float64, n)
	for i := range v {
		v[i] = lo + (hi-lo)*r.Float64()
	}
	return v
}

// Naive references, straight from the formulas, one line at a time.

// refByLine returns, for each line of shape along axis, dx[i] = out(i, s) with s the sum of
// term(j) over the line's j.
func refByLine(n int, shape []int, axis int, term func(j int) float64, out func(i int, s float64) float64) []float64 {
	dx := make([]float64, n)
	for _, ln := range axisref.Lines(shape, axis) {
		var s float64
		for _, j := range ln {
			s += term(j)
		}
		for _, i := range ln {
			dx[i] = out(i, s)
		}
	}
	return dx
}

// refSoftmaxBackward: dx = y⊙(dy − Σ y⊙dy).
func refSoftmaxBackward(y, dy []float64, shape []int, axis int) []float64 {
	return refByLine(len(y), shape, axis,
		func(j int) float64 { return y[j] * dy[j] },
		func(i int, s float64) float64 { return y[i] * (dy[i] - s) })
}

// refLogSoftmaxBackward: dx = dy − exp(y)·Σ dy.
func refLogSoftmaxBackward(y, dy []float64, shape []int, axis int) []float64 {
	return refByLine(len(y), shape, axis,
		func(j int) float64 { return dy[j] },
		func(i int, s float64) float64 { return dy[i] - math.Exp(y[i])*s })
}

func refSoftmaxBackwardGrad(y, dy, g []float64, shape []int, axis int) (gy, gdy []float64) {
	gy, gdy = make([]float64, len(y)), make([]float64, len(y))
	for _, ln := range axisref.Lines(shape, axis) {
		var yd, yg float64
		for _, i := range ln {
			yd += y[i] * dy[i]
			yg += y[i] * g[i]
		}
		for _, i := range ln {
			gy[i] = g[i]*(dy[i]-yd) - dy[i]*yg
			gdy[i] = y[i] * (g[i] - yg)
		}
	}
	return gy, gdy
}

func refLogSoftmaxBackwardGrad(y, dy, g []float64, shape []int, axis int) (gy, gdy []float64) {
	gy, gdy = make([]float64, len(y)), make([]float64, len(y))
	for _, ln := range axisref.Lines(shape, axis) {
		var sdy, sge float64
		for _, i := range ln {
			sdy += dy[i]
			sge += g[i] * math.Exp(y[i])
		}
		for _, i := range ln {
			gy[i] = -g[i] * math.Exp(y[i]) * sdy
			gdy[i] = g[i] - sge
		}
	}
	return gy, gdy
}

// requireClose checks max|got − want| ≤ tol·max(max|want|, floor): a normwise relative error.
func requireClose[T ~float32 | ~float64](t testing.TB, want []float64, got []T, tol, floor float64, msg string, args ...any) {
	t.Helper()
	require.Len(t, got, len(want), append([]any{msg}, args...)...)
	var maxErr, scale float64
	at := -1
	for i := range want {
		scale = math.Max(scale, math.Abs(want[i]))
		if e := math.Abs(float64(got[i]) - want[i]); e > maxErr || math.IsNaN(e) {
			maxErr, at = e, i
			if math.IsNaN(e) {
				maxErr = math.Inf(1)
			}
		}
	}
	scale = math.Max(scale, floor)
	if maxErr > tol*scale {
		require.Failf(t, "not close", "%s: max error %.3g at %d (got %v want %v), scale %.3g, tol %.3g",
			fmt.Sprintf(msg, args...), maxErr, at, float64(got[at]), want[at], scale, tol)
	}
}

func to32(v []float64) []float32 {
	out := make([]float32, len(v))
	for i, x := range v {
		out[i] = float32(x)
	}
	return out
}

func to64[T ~float32 | ~float64](v []T) []float64 {
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = float64(x)
	}
	return out
}

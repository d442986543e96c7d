// Package testkit holds the test helpers that the tests of several gatejet packages share
// (softmaxjet, backward, internal/tower, cudaops, cudaops/internal/modcache, ops, graphs): it
// is imported by tests only.
package testkit

import (
	"errors"
	"math"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
	"gorgonia.org/tensor"

	"github.com/gatejet/gatejet"
)

// RequireError requires err to match kind and to be a *gatejet.Error of operation op and
// argument arg, and returns it.
func RequireError(t testing.TB, err error, kind error, op, arg string) *gatejet.Error {
	t.Helper()
	require.ErrorIs(t, err, kind)
	var ge *gatejet.Error
	require.True(t, errors.As(err, &ge), "want a *gatejet.Error, got %T: %v", err, err)
	require.Equal(t, op, ge.Op, "%v", err)
	require.Equal(t, arg, ge.Arg, "%v", err)
	return ge
}

// RequireGatejetError runs call, which must not panic and must fail with an error matching
// kind, and returns that error as the *gatejet.Error it must be.
func RequireGatejetError(t *testing.T, call func() error, kind error) *gatejet.Error {
	t.Helper()
	var err error
	require.NotPanics(t, func() { err = call() })
	require.ErrorIs(t, err, kind)
	var ge *gatejet.Error
	require.True(t, errors.As(err, &ge))
	return ge
}

// OverlapCase is a call that must be refused for an output, Arg, that overlaps another
// argument.
type OverlapCase struct {
	Name, Arg string
	Call      func() error
}

// RequireOverlapsRefused runs each case as a subtest: its call must fail with an ErrParam
// *gatejet.Error naming the case's Arg and saying that it overlaps.
func RequireOverlapsRefused(t *testing.T, cases []OverlapCase) {
	for _, tc := range cases {
		t.Run(tc.Name, func(t *testing.T) {
			ge := RequireGatejetError(t, tc.Call, gatejet.ErrParam)
			require.Equal(t, tc.Arg, ge.Arg)
			require.ErrorContains(t, ge, "overlaps")
		})
	}
}

// WithMaxBytes sets gatejet.MaxBytes for the test.
func WithMaxBytes(t *testing.T, n int64) {
	prev := gatejet.SetMaxBytes(n)
	t.Cleanup(func() { gatejet.SetMaxBytes(prev) })
}

// MaxAbs returns the largest |x[i]|: 0 for an empty x, NaN if x holds a NaN (math.Max).
func MaxAbs[T ~float32 | ~float64](x []T) float64 {
	m := 0.0
	for _, v := range x {
		m = math.Max(m, math.Abs(float64(v)))
	}
	return m
}

// FDJacobian returns J[i][j] = ∂f_j/∂x_i by central differences of step h, perturbing x in
// place (and restoring it).
func FDJacobian(x []float64, f func() []float64, h float64) [][]float64 {
	J := make([][]float64, len(x))
	for i := range x {
		x0 := x[i]
		x[i] = x0 + h
		fp := f()
		x[i] = x0 - h
		fm := f()
		x[i] = x0
		J[i] = make([]float64, len(fp))
		for j := range fp {
			J[i][j] = (fp[j] - fm[j]) / (2 * h)
		}
	}
	return J
}

// FDAlong is the derivative along vs of f, which reads the slices xs: d/ds f(xs + s·vs) at
// s = 0 by central differences of step h in the one variable s (FDJacobian in s). It moves xs
// in place for each call of f and restores them.
func FDAlong(xs, vs [][]float64, h float64, f func() []float64) []float64 {
	orig := make([][]float64, len(xs))
	for i := range xs {
		orig[i] = slices.Clone(xs[i])
	}
	s := []float64{0}
	d := FDJacobian(s, func() []float64 {
		for i := range xs {
			for j := range xs[i] {
				xs[i][j] = orig[i][j] + s[0]*vs[i][j]
			}
		}
		return f()
	}, h)[0]
	for i := range xs {
		copy(xs[i], orig[i])
	}
	return d
}

// RequireAVX skips the test where the machine has no AVX code (has false, the package's
// hasAVX), naming what it would have tested, and restores the package's switch *use (useAVX)
// when the test ends, so that the test may set it freely.
func RequireAVX(t testing.TB, what string, has bool, use *bool) {
	t.Helper()
	if !has {
		t.Skipf("no AVX %s on this machine", what)
	}
	prev := *use
	t.Cleanup(func() { *use = prev })
}

// Dense returns a Dense of dtype dt (Float32 or Float64) and the given shape, its entries
// drawn from draw in row-major order (rounded to float32 for Float32).
func Dense(dt tensor.Dtype, draw func() float64, shape ...int) *tensor.Dense {
	n := 1
	for _, d := range shape {
		n *= d
	}
	if dt == tensor.Float32 {
		b := make([]float32, n)
		for i := range b {
			b[i] = float32(draw())
		}
		return tensor.New(tensor.WithShape(shape...), tensor.WithBacking(b))
	}
	b := make([]float64, n)
	for i := range b {
		b[i] = draw()
	}
	return tensor.New(tensor.WithShape(shape...), tensor.WithBacking(b))
}

package tower

import (
	"errors"
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gatejet/gatejet"
	"github.com/gatejet/gatejet/internal/testkit"
)

// This file holds the tests of the accepted parameter ranges (gatejet.MaxInvTau,
// gatejet.MaxLogisticAlpha, and 1e18 for the float32 jets), of the size checks made before
// allocating, and of the refusal of overlapping outputs.

// TestParameterBounds: past the bounds the tower and the row program refuse, naming the bound.
func TestParameterBounds(t *testing.T) {
	sh := Shape{N: 1, K: 6, P: 1}
	l := []float64{0.5, 0.2, -0.1, 0.3, 0.9, -2}
	d := []float64{1, 2, 3, 4, 5, 6}
	be := make([]float64, 6)
	var err error
	for _, s := range []float64{math.Nextafter(gatejet.MaxInvTau, math.Inf(1)), 5.7e102, 1.35e154, math.MaxFloat64} {
		_, err = NewProgram[float64](ProgramSpec{K: 2, P: 1, Gate: Softmax(s)})
		require.ErrorIs(t, err, gatejet.ErrTemperature)
	}

	// The float32 jets hold s² and α²: past 1e18 the float32 tower and program refuse.
	l32, d32 := make([]float32, 6), make([]float32, 6)
	require.ErrorIs(t, TowerChannels(nil, make([]float32, 6), nil, l32, d32, sh, 1e19), gatejet.ErrTemperature)
	require.NoError(t, TowerChannels(nil, make([]float32, 6), nil, l32, d32, sh, 1e18))
	require.ErrorIs(t, TowerLogisticChannels(nil, make([]float32, 6), nil, l32, d32, sh, []float64{1, 1, 1, 1, 1, -1e19}, be), gatejet.ErrParam)
	_, err = NewProgram[float32](ProgramSpec{K: 2, P: 1, Gate: Softmax(1e19)})
	require.ErrorIs(t, err, gatejet.ErrTemperature)
	// β past float32's range met α·l overflowed to +Inf in the float32 jets: ∞ − ∞ = NaN where
	// the gate is 0.
	one := Shape{N: 1, K: 1, P: 1}
	err = TowerLogisticChannels(nil, make([]float32, 1), nil, []float32{1e30}, []float32{1}, one, []float64{1e18}, []float64{-1e300})
	require.ErrorIs(t, err, gatejet.ErrParam)
	require.ErrorContains(t, err, "beta")
	f := make([]float32, 1)
	require.NoError(t, TowerLogisticChannels(nil, f, nil, []float32{1e30}, []float32{1}, one, []float64{1e18}, []float64{-math.MaxFloat32}))
	require.Zero(t, f[0])
	require.NoError(t, TowerChannels(nil, make([]float64, 6), nil, l, d, sh, 1e19))
}

// TestProgramSizes: a program whose jets would not fit is refused before anything is
// allocated, where K = 1<<40, P = 1<<40 ended the process (out of memory in Tower.Jet),
// K = 1<<62 panicked in makeslice and K = 1<<17 allocated 128 GiB of jets.
func TestProgramSizes(t *testing.T) {
	for _, spec := range []ProgramSpec{
		{K: 1 << 40, P: 1 << 40, Gate: Softmax(1)},
		{K: 1 << 62, P: 1, Gate: Softmax(1)},
		{K: 1 << 17, P: 1, Gate: Softmax(1)},
		{K: math.MaxInt, P: math.MaxInt, Gate: Softmax(1)},
		{K: 3, P: 1, Gate: Softmax(1), Basis: fixedBasis(1, 1<<31), Decoder: make([]float64, 1), LatentPrimaries: true},
		{K: 3, P: 1, Gate: Softmax(1), Basis: fixedBasis(1, 1<<20), Decoder: make([]float64, 1)}, // ∂²Φ: 8 TiB
		{K: 3, P: 1, Gate: Softmax(1), Basis: fixedBasis(1, 1<<40), Decoder: make([]float64, 1)},
		{K: 3, P: 1, Gate: Softmax(1), Basis: fixedBasis(1<<40, 1<<20)},
	} {
		var err error
		require.NotPanics(t, func() { _, err = NewProgram[float64](spec) }, "K=%d P=%d", spec.K, spec.P)
		require.Error(t, err, "K=%d P=%d", spec.K, spec.P)
		require.True(t, errors.Is(err, gatejet.ErrSize) || errors.Is(err, gatejet.ErrShape), "%v", err)
	}
	// The workspace is (K+3)·(K+K²) elements: K = 64 in float64 takes 67·4160·8 bytes.
	need := int64(67 * 4160 * 8)
	testkit.WithMaxBytes(t, need)
	_, err := NewProgram[float64](ProgramSpec{K: 64, P: 1, Gate: Softmax(1)})
	require.NoError(t, err)
	_, err = NewProgram[float32](ProgramSpec{K: 64, P: 1, Gate: Softmax(1)})
	require.NoError(t, err)
	gatejet.SetMaxBytes(need - 1)
	_, err = NewProgram[float64](ProgramSpec{K: 64, P: 1, Gate: Softmax(1)})
	require.ErrorIs(t, err, gatejet.ErrSize)
	require.ErrorContains(t, err, "SetMaxBytes")
	l, d := make([]float64, 64), make([]float64, 64)
	require.ErrorIs(t, TowerChannels(make([]float64, 1), nil, nil, l, d, Shape{N: 1, K: 64, P: 1}, 1), gatejet.ErrSize)
	require.NoError(t, TowerChannels[float64](nil, nil, nil, nil, nil, Shape{N: 0, K: 64, P: 1}, 1))
}

// TestJetSizes: a jet too large for gatejet.MaxBytes panics with an ErrSize error (as m < 0
// panics), before allocating, where it ended the process.
func TestJetSizes(t *testing.T) {
	for _, f := range []func(){
		func() { NewJet[float64](1 << 20) },
		func() { NewJet[float32](math.MaxInt) },
		func() { NewTower[float64](1 << 40) },
		func() { NewTower[float64](1).Reset(1 << 32) },
		func() { Constant[float64](1<<31, 1) },
	} {
		var v any
		func() {
			defer func() { v = recover() }()
			f()
		}()
		err, ok := v.(error)
		require.True(t, ok, "panic value %v", v)
		require.ErrorIs(t, err, gatejet.ErrSize)
	}
}

func fixedBasis(nb, d int) Basis {
	return sizingBasis{nb: func() int { return nb }, d: func() int { return d }}
}

// sizingBasis is a Basis whose Len() and Dim() follow the given functions.
type sizingBasis struct{ nb, d func() int }

func (b sizingBasis) Len() int { return b.nb() }
func (b sizingBasis) Dim() int { return b.d() }
func (b sizingBasis) Eval(t []float64, phi, dphi, d2phi []float64) {
	for i := 0; i < b.nb(); i++ {
		phi[i] = 1 // indexes past phi once Len() has grown: the panic a changed size caused
		if dphi != nil {
			for j := range t {
				dphi[i*len(t)+j] = 0
			}
		}
	}
}

// TestBasisChangesSize: the Basis's sizes are read once, at NewProgram; a Basis whose Len()
// grows afterwards makes RowLatent return ErrParam where it panicked (index out of range), and
// one whose Len() changes between the calls NewProgram makes cannot make it allocate an
// unchecked size.
func TestBasisChangesSize(t *testing.T) {
	nb := 2
	b := sizingBasis{nb: func() int { return nb }, d: func() int { return 1 }}
	for _, latent := range []bool{false, true} {
		nb = 2
		pr, err := NewProgram[float64](ProgramSpec{K: 2, P: 1, Gate: Softmax(1), Basis: b, Decoder: []float64{1, 2}, LatentPrimaries: latent})
		require.NoError(t, err)
		m := pr.Primaries()
		require.NoError(t, pr.RowLatent(make([]float64, 1), make([]float64, m), nil, []float64{0, 1}, []float64{0.5, 0.25}))
		nb = 3
		ge := testkit.RequireGatejetError(t, func() error {
			return pr.RowLatent(make([]float64, 1), make([]float64, m), nil, []float64{0, 1}, []float64{0.5, 0.25})
		}, gatejet.ErrParam)
		require.Equal(t, "Basis", ge.Arg)
	}
	// Len() is 1 when checked and huge when used: read once, it is checked as used.
	calls := 0
	liar := sizingBasis{nb: func() int {
		calls++
		if calls == 1 {
			return 1
		}
		return 1 << 40
	}, d: func() int { return 1 }}
	var pr *Program[float64]
	var err error
	require.NotPanics(t, func() {
		pr, err = NewProgram[float64](ProgramSpec{K: 2, P: 1, Gate: Softmax(1), Basis: liar, Decoder: []float64{1}})
	})
	require.NoError(t, err)
	require.Equal(t, 1, calls)
	require.Len(t, pr.phi, 1)
}

// TestOverlapRefused: an output that shares memory with an input or with another output is
// refused with ErrParam naming it: the rows are written while the inputs are read, so such a
// call would give a wrong result.
func TestOverlapRefused(t *testing.T) {
	sh := Shape{N: 2, K: 3, P: 2}
	arena := make([]float64, 200)
	l := arena[0:6] // every case's first output starts at arena[3], inside the logits
	d, gS := make([]float64, 12), make([]float64, 36)
	al, be := []float64{1, 2, 3}, []float64{0, 0, 0}
	o := func(n int) []float64 { return arena[3 : 3+n] }
	cases := []testkit.OverlapCase{
		{Name: "TowerChannels", Arg: "first", Call: func() error { return TowerChannels(nil, o(12), nil, l, d, sh, 1) }},
		{Name: "TowerLogisticChannels", Arg: "second", Call: func() error { return TowerLogisticChannels(nil, nil, o(36), l, d, sh, al, be) }},
		// Outputs against each other.
		{Name: "TowerChannels outputs", Arg: "first", Call: func() error { return TowerChannels(nil, gS[:12], gS, l, d, sh, 1) }},
		// An output over the logistic gate's parameters.
		{Name: "TowerLogisticChannels alpha", Arg: "value", Call: func() error {
			return TowerLogisticChannels(arena[100:104], nil, nil, l, d, sh, arena[102:105], be)
		}},
	}
	testkit.RequireOverlapsRefused(t, cases)

	// The row program: outputs against its inputs and each other.
	pr, err := NewProgram[float64](ProgramSpec{K: 3, P: 2, Gate: Softmax(1)})
	require.NoError(t, err)
	require.ErrorIs(t, pr.RowDecoded(nil, arena[0:6], nil, arena[4:7], d[:6]), gatejet.ErrParam)
	require.ErrorIs(t, pr.RowDecoded(arena[0:2], arena[1:7], nil, l[:3], d[:6]), gatejet.ErrParam)
	require.ErrorIs(t, pr.RowDecoded(nil, nil, arena[40:58], l[:3], arena[50:56]), gatejet.ErrParam)
	require.NoError(t, pr.RowDecoded(arena[100:102], arena[110:116], arena[120:138], l[:3], d[:6]))
	b := fixedBasis(1, 1)
	prl, err := NewProgram[float64](ProgramSpec{K: 3, P: 2, Gate: Softmax(1), Basis: b, Decoder: []float64{1, 2}})
	require.NoError(t, err)
	require.ErrorIs(t, prl.RowLatent(arena[0:2], nil, nil, arena[1:4], arena[10:13]), gatejet.ErrParam)
	require.ErrorIs(t, prl.RowLatent(nil, arena[10:16], nil, arena[0:3], arena[15:18]), gatejet.ErrParam)
}

package check

import (
	"errors"
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gatejet/gatejet"
)

func TestErrorf(t *testing.T) {
	err := error(Errorf(gatejet.ErrShape, "softmaxjet.Softmax.First", "decoded", "want %d, got %d", 12, 10))
	require.ErrorIs(t, err, gatejet.ErrShape)
	require.Equal(t, "softmaxjet.Softmax.First: decoded: shape mismatch: want 12, got 10", err.Error())
	require.Equal(t, "op: arg: detail 1", Errorf(nil, "op", "arg", "detail %d", 1).Error())
}

func TestInvTau(t *testing.T) {
	for _, bad := range []float64{0, -1, math.NaN(), math.Inf(1), math.Inf(-1), -0.0,
		math.Nextafter(gatejet.MaxInvTau, math.Inf(1)), 5.7e102, 1.35e154, math.MaxFloat64} {
		err := InvTau("op", bad)
		require.Error(t, err, "invTau=%v", bad)
		require.True(t, errors.Is(err, gatejet.ErrTemperature))
	}
	// Beyond gatejet.MaxInvTau the error names the bound.
	require.ErrorContains(t, InvTau("op", 1e200), "gatejet.MaxInvTau = 1e+100")
	for _, good := range []float64{5e-324, 1e-300, 1e-3, 1, 1e3, 1e99, gatejet.MaxInvTau} {
		require.NoError(t, InvTau("op", good), "invTau=%v", good)
	}
}

func TestLogisticGate(t *testing.T) {
	ok := []float64{1, -2, 0}
	require.NoError(t, LogisticGate("op", 3, ok, ok))
	require.NoError(t, LogisticGate("op", 2, []float64{gatejet.MaxLogisticAlpha, -gatejet.MaxLogisticAlpha}, []float64{math.MaxFloat64, -1}))
	for _, tc := range []struct {
		alpha, beta []float64
		kind        error
		arg         string
	}{
		{ok[:2], ok, gatejet.ErrParam, "alpha"},
		{ok, ok[:2], gatejet.ErrParam, "beta"},
		{[]float64{1, math.NaN(), 0}, ok, gatejet.ErrNonFinite, "alpha"},
		{ok, []float64{math.Inf(-1), 0, 0}, gatejet.ErrNonFinite, "beta"},
		{[]float64{1, 1e200, 0}, ok, gatejet.ErrParam, "alpha"},
		{[]float64{1, 0, -math.Nextafter(gatejet.MaxLogisticAlpha, math.Inf(1))}, ok, gatejet.ErrParam, "alpha"},
	} {
		err := LogisticGate("op", 3, tc.alpha, tc.beta)
		require.ErrorIs(t, err, tc.kind, "%v %v", tc.alpha, tc.beta)
		var ge *gatejet.Error
		require.ErrorAs(t, err, &ge)
		require.Equal(t, tc.arg, ge.Arg)
	}
	require.ErrorContains(t, LogisticGate("op", 1, []float64{1e200}, []float64{0}), "gatejet.MaxLogisticAlpha = 1e+100")
}

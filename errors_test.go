package gatejet

import (
	"errors"
	"math"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestErrorWrapsKind(t *testing.T) {
	err := error(Errorf(ErrShape, "softmaxjet.First", "decoded", "want %d, got %d", 12, 10))
	require.ErrorIs(t, err, ErrShape)
	require.NotErrorIs(t, err, ErrRank)
	var ge *Error
	require.ErrorAs(t, err, &ge)
	require.Equal(t, "decoded", ge.Arg)
	require.Equal(t, "softmaxjet.First: decoded: shape mismatch: want 12, got 10", err.Error())
}

func TestCheckInvTau(t *testing.T) {
	for _, bad := range []float64{0, -1, math.NaN(), math.Inf(1), math.Inf(-1), -0.0,
		math.Nextafter(MaxInvTau, math.Inf(1)), 5.7e102, 1.35e154, math.MaxFloat64} {
		err := CheckInvTau("op", bad)
		require.Error(t, err, "invTau=%v", bad)
		require.True(t, errors.Is(err, ErrTemperature))
	}
	// Beyond MaxInvTau the error names the bound.
	require.ErrorContains(t, CheckInvTau("op", 1e200), "MaxInvTau = 1e+100")
	for _, good := range []float64{5e-324, 1e-300, 1e-3, 1, 1e3, 1e99, MaxInvTau} {
		require.NoError(t, CheckInvTau("op", good), "invTau=%v", good)
	}
}

func TestNilErrorIsSafe(t *testing.T) {
	var e *Error
	require.NotPanics(t, func() {
		require.False(t, errors.Is(e, ErrShape))
		require.Equal(t, "<nil>", e.Error())
	})
}

// TestNilKindIsSafe: an *Error with a nil Kind (Errorf(nil, …) or a literal) formats without
// the kind and unwraps to nil.
func TestNilKindIsSafe(t *testing.T) {
	for _, e := range []*Error{Errorf(nil, "op", "arg", "detail %d", 1), {Op: "op"}, {}} {
		var s string
		require.NotPanics(t, func() { s = e.Error() })
		require.NotContains(t, s, "%!")
		require.Nil(t, e.Unwrap())
		require.False(t, errors.Is(e, ErrParam))
	}
	require.Equal(t, "op: arg: detail 1", Errorf(nil, "op", "arg", "detail %d", 1).Error())
	require.Equal(t, "op", (&Error{Op: "op"}).Error())
}

func TestCheckLogisticGate(t *testing.T) {
	ok := []float64{1, -2, 0}
	require.NoError(t, CheckLogisticGate("op", 3, ok, ok))
	require.NoError(t, CheckLogisticGate("op", 2, []float64{MaxLogisticAlpha, -MaxLogisticAlpha}, []float64{math.MaxFloat64, -1}))
	for _, tc := range []struct {
		alpha, beta []float64
		kind        error
		arg         string
	}{
		{ok[:2], ok, ErrParam, "alpha"},
		{ok, ok[:2], ErrParam, "beta"},
		{[]float64{1, math.NaN(), 0}, ok, ErrNonFinite, "alpha"},
		{ok, []float64{math.Inf(-1), 0, 0}, ErrNonFinite, "beta"},
		{[]float64{1, 1e200, 0}, ok, ErrParam, "alpha"},
		{[]float64{1, 0, -math.Nextafter(MaxLogisticAlpha, math.Inf(1))}, ok, ErrParam, "alpha"},
	} {
		err := CheckLogisticGate("op", 3, tc.alpha, tc.beta)
		require.ErrorIs(t, err, tc.kind, "%v %v", tc.alpha, tc.beta)
		var ge *Error
		require.ErrorAs(t, err, &ge)
		require.Equal(t, tc.arg, ge.Arg)
	}
	require.ErrorContains(t, CheckLogisticGate("op", 1, []float64{1e200}, []float64{0}), "MaxLogisticAlpha = 1e+100")
}

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
	for _, bad := range []float64{0, -1, math.NaN(), math.Inf(1), math.Inf(-1), -0.0} {
		err := CheckInvTau("op", bad)
		require.Error(t, err, "invTau=%v", bad)
		require.True(t, errors.Is(err, ErrTemperature))
	}
	for _, good := range []float64{1e-300, 1e-3, 1, 1e3, math.MaxFloat64} {
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

package gatejet

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestErrorWrapsKind(t *testing.T) {
	err := error(&Error{Op: "softmaxjet.Softmax.First", Arg: "decoded", Kind: ErrShape, Detail: "want 12, got 10"})
	require.ErrorIs(t, err, ErrShape)
	require.NotErrorIs(t, err, ErrRank)
	var ge *Error
	require.ErrorAs(t, err, &ge)
	require.Equal(t, "decoded", ge.Arg)
	require.Equal(t, "softmaxjet.Softmax.First: decoded: shape mismatch: want 12, got 10", err.Error())
}

func TestNilErrorIsSafe(t *testing.T) {
	var e *Error
	require.NotPanics(t, func() {
		require.False(t, errors.Is(e, ErrShape))
		require.Equal(t, "<nil>", e.Error())
	})
}

// TestNilKindIsSafe: an *Error with a nil Kind formats without the kind and unwraps to nil.
func TestNilKindIsSafe(t *testing.T) {
	for _, e := range []*Error{{Op: "op", Arg: "arg", Detail: "detail 1"}, {Op: "op"}, {}} {
		var s string
		require.NotPanics(t, func() { s = e.Error() })
		require.NotContains(t, s, "%!")
		require.Nil(t, e.Unwrap())
		require.False(t, errors.Is(e, ErrParam))
	}
	require.Equal(t, "op: arg: detail 1", (&Error{Op: "op", Arg: "arg", Detail: "detail 1"}).Error())
	require.Equal(t, "op", (&Error{Op: "op"}).Error())
}

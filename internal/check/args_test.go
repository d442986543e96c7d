package check

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gatejet/gatejet"
)

// requireArg requires err to be a *gatejet.Error of the given kind naming argument arg.
func requireArg(t *testing.T, err error, kind error, arg string) {
	t.Helper()
	require.ErrorIs(t, err, kind)
	var ge *gatejet.Error
	require.True(t, errors.As(err, &ge))
	require.Equal(t, arg, ge.Arg)
}

func TestArgs(t *testing.T) {
	arena := make([]float64, 20)
	in, dst := arena[0:4], arena[10:16]
	f32 := make([]float32, 6)

	// Lengths: a nil optional output is skipped, a nil required one is not.
	require.NoError(t, Lengths("op", 1, 2, 3, In("l", in, 4), OptOut("o", []float64(nil), 6), Out("dst", dst, 6)))
	requireArg(t, Lengths("op", 1, 2, 3, In("l", in, 4), Out("dst", []float64(nil), 6)), gatejet.ErrSize, "dst")
	requireArg(t, Lengths("op", 1, 2, 3, In("l", in, 5)), gatejet.ErrSize, "l")

	// Disjoint: an output over an input or another output, of any element type, is named.
	require.NoError(t, Disjoint("op", In("l", in, 4), Out("dst", dst, 6), OptOut("o", f32, 6)))
	requireArg(t, Disjoint("op", In("l", in, 4), Out("dst", arena[2:8], 6)), gatejet.ErrParam, "dst")
	requireArg(t, Disjoint("op", Out("a", dst, 6), OptOut("b", arena[15:17], 2)), gatejet.ErrParam, "a")
	require.NoError(t, Disjoint("op", In("x", in, 4), In("y", in, 4))) // inputs may share

	// GateDisjoint: an output over alpha or beta, none for a softmax gate (nil alpha and beta).
	requireArg(t, GateDisjoint("op", arena[12:14], nil, In("l", arena[12:14], 2), Out("dst", dst, 6)), gatejet.ErrParam, "dst")
	require.ErrorContains(t, GateDisjoint("op", in, dst[1:3], Out("dst", dst, 6)), "beta")
	require.NoError(t, GateDisjoint("op", nil, nil, Out("dst", dst, 6)))

	// ParamsDisjoint: the first output that overlaps a parameter is named, with the first
	// parameter it overlaps; inputs over a parameter are fine.
	names, params := []string{"w", "c"}, [][]float64{arena[4:6], arena[17:19]}
	err := ParamsDisjoint("op", names, params, In("l", arena[4:6], 2), Out("a", arena[16:20], 4), Out("b", arena[2:8], 6))
	requireArg(t, err, gatejet.ErrParam, "a")
	require.ErrorContains(t, err, "a overlaps c")
	require.ErrorContains(t, ParamsDisjoint("op", names, params, Out("b", arena[2:19], 17)), "b overlaps w")
	require.NoError(t, ParamsDisjoint("op", names, params, Out("dst", dst, 6)))
	require.NoError(t, ParamsDisjoint("op", nil, nil, Out("dst", dst, 6)))
}

package main

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/gatejet/gatejet/graphs"
	"github.com/stretchr/testify/require"
)

func TestRunPasses(t *testing.T) {
	for _, dtype := range []string{"float64", "float32"} {
		t.Run(dtype, func(t *testing.T) {
			var out bytes.Buffer
			err := run(Config{Machines: "both", DType: dtype, Seed: 1, Out: &out})
			require.NoError(t, err, out.String())
			report := out.String()
			require.Contains(t, report, "tape machine")
			require.Contains(t, report, "lisp machine")
			for _, name := range []string{"X", "W", "D", "V"} {
				require.Equal(t, 2, strings.Count(report, "  ok   "+name+":"), "node %s on both machines:\n%s", name, report)
			}
			require.NotContains(t, report, "FAIL")
			require.Contains(t, report, "all gradients match")
		})
	}
}

// TestRunCatchesBug: with the deliberately wrong op, the check fails on both machines and
// run returns an error matching graphs.ErrGradient (main then exits with status 1).
func TestRunCatchesBug(t *testing.T) {
	var out bytes.Buffer
	err := run(Config{Machines: "both", DType: "float64", Seed: 1, Bug: true, Out: &out})
	require.Error(t, err)
	require.True(t, errors.Is(err, graphs.ErrGradient), "%v", err)
	require.Equal(t, 2, strings.Count(out.String(), "MISMATCH"), out.String())
	require.NotContains(t, out.String(), "all gradients match")
}

func TestRunBadFlags(t *testing.T) {
	require.Error(t, run(Config{Machines: "jit"}))
	require.Error(t, run(Config{DType: "float16"}))
}

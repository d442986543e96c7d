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

// TestRunExplainsRatio: the report's "ratio" column is explained in the output, once, before
// the reports, with the formula graphs.GradCheck uses and the pass criterion.
func TestRunExplainsRatio(t *testing.T) {
	var out bytes.Buffer
	require.NoError(t, run(Config{Machines: "tape", DType: "float64", Seed: 1, Out: &out}))
	text := out.String()
	legend := "ratio = |analytic − numeric| / (atol + rtol·max(|analytic|, |numeric|))"
	require.Equal(t, 1, strings.Count(text, legend), text)
	require.Contains(t, text, "passes when ratio ≤ 1")
	require.Less(t, strings.Index(text, legend), strings.Index(text, "(ratio "), "the legend comes before the column it explains")
}

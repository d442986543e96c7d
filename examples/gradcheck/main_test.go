package main

import (
	"bytes"
	"errors"
	"flag"
	"strings"
	"testing"

	"github.com/gatejet/gatejet"
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

// TestBadFlags: an unknown flag, a malformed value or an extra argument is refused by the
// parser; -machine and -dtype outside their choices by run, with a *gatejet.Error naming the
// flag, before anything is checked.
func TestBadFlags(t *testing.T) {
	var errOut bytes.Buffer
	for _, args := range [][]string{{"-nosuch"}, {"extra"}, {"-seed", "-1"}, {"-seed", "x"}, {"-bug=maybe"}} {
		_, err := parseFlags(args, &errOut)
		require.Error(t, err, "%v", args)
	}
	for _, c := range []struct {
		args []string
		flag string
	}{
		{[]string{"-machine", "jit"}, "-machine"},
		{[]string{"-machine", ""}, "-machine"},
		{[]string{"-dtype", "float16"}, "-dtype"},
		{[]string{"-dtype", ""}, "-dtype"},
	} {
		cfg, err := parseFlags(c.args, &errOut)
		require.NoError(t, err)
		var out bytes.Buffer
		cfg.Out = &out
		err = run(cfg)
		var ge *gatejet.Error
		require.True(t, errors.As(err, &ge), "%v: %v", c.args, err)
		require.ErrorIs(t, err, gatejet.ErrParam)
		require.Equal(t, "gradcheck", ge.Op)
		require.Equal(t, c.flag, ge.Arg)
		require.Empty(t, out.String())
	}
}

// TestUsage: -h prints the command line and what the command does, and is no failure.
func TestUsage(t *testing.T) {
	var errOut bytes.Buffer
	_, err := parseFlags([]string{"-h"}, &errOut)
	require.ErrorIs(t, err, flag.ErrHelp)
	require.Contains(t, errOut.String(), "usage: go run ./examples/gradcheck [flags]\n"+about+"\n")
	cfg, err := parseFlags(nil, &errOut)
	require.NoError(t, err)
	require.Equal(t, Config{Machines: "both", DType: "float64", Seed: 1}, cfg)
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

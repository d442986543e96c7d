package main

import (
	"bytes"
	"errors"
	"flag"
	"math"
	"runtime"
	"strings"
	"testing"

	"github.com/gatejet/gatejet"
	"github.com/gatejet/gatejet/graphs"
	"github.com/stretchr/testify/require"
)

// TestRunMeasured times the real candidates (a small batch) and checks that every number
// is consistent with the others; which candidate wins depends on the machine.
func TestRunMeasured(t *testing.T) {
	cfg := defaultConfig()
	cfg.Rows, cfg.Reps = 256, 2
	var out bytes.Buffer
	cfg.Out = &out
	res, err := run(cfg)
	require.NoError(t, err)
	require.Equal(t, []int{8, 32, 128, 256}, res.Candidates)
	require.Len(t, res.NsPerRow, 4)
	for _, ns := range res.NsPerRow {
		require.Greater(t, ns, 0.0)
	}
	checkConsistent(t, cfg, res)
	require.Contains(t, out.String(), "hard pick (graphs.Argmin)")
}

// TestRunWideCostSpread: costs spread far apart at τ = 0.05 drive some probabilities to 1e-30
// and below; the natural steps must still land on the soft pick. With λ = 0 these spreads put
// the policy on the worst candidate (the pseudo-inverse divides rounding by the tiny p_i);
// a cold first measurement in a fresh process produces such spreads.
func TestRunWideCostSpread(t *testing.T) {
	for _, costs := range [][]float64{{1, 5, 3, 40}, {30, 1, 1.01, 200}, {1, 1.0000001, 1.0000002, 60}} {
		cfg := defaultConfig()
		cfg.Candidates = []int{8, 32, 128, 256}
		cfg.Measure = func(i, _ int) (float64, error) { return costs[i], nil }
		res, err := run(cfg)
		require.NoError(t, err)
		checkConsistent(t, cfg, res)
	}
}

// TestRunGivenCosts: with fixed costs the results are known in closed form.
func TestRunGivenCosts(t *testing.T) {
	costs := []float64{3, 1.5, 1.2, 1.3, 2}
	cfg := defaultConfig()
	cfg.Tau = 0.2
	cfg.Damping = 0 // the pseudo-inverse, whose closed form is checked below
	cfg.Candidates = []int{10, 20, 30, 40, 50}
	cfg.Measure = func(i, _ int) (float64, error) { return 1e3 * costs[i], nil }
	res, err := run(cfg)
	require.NoError(t, err)
	require.Nil(t, res.NsPerRow)
	require.Equal(t, 2, res.Best)
	// Costs are relative to the best.
	for i, c := range costs {
		require.InDelta(t, c/1.2, res.Costs[i], 1e-15)
	}
	checkConsistent(t, cfg, res)
	// F⁺·(diag p − ppᵀ)·c is c minus its plain mean (every p_i > 0 here).
	var mean float64
	for _, c := range res.Costs {
		mean += c / float64(len(res.Costs))
	}
	for i, c := range res.Costs {
		require.InDelta(t, c-mean, res.Natural[i], 1e-9)
	}
}

func checkConsistent(t *testing.T, cfg Config, res Result) {
	t.Helper()
	invTau := 1 / cfg.Tau
	require.Equal(t, graphs.Argmin(res.Costs), res.Best)
	require.Equal(t, 1.0, res.Costs[res.Best])

	p, err := graphs.SoftArgminProbs(res.Costs, invTau)
	require.NoError(t, err)
	var sum, e float64
	for i := range p {
		require.InDelta(t, p[i], res.Probs[i], 1e-15)
		sum += res.Probs[i]
		e += res.Probs[i] * res.Costs[i]
		require.LessOrEqual(t, res.Probs[i], res.Probs[res.Best], "the soft pick favours the hard pick")
	}
	require.InDelta(t, 1, sum, 1e-12)
	require.InDelta(t, e, res.Expected, 1e-12)

	// ∂E/∂c = J·c with J the negative softmax Jacobian, by both graph routes.
	want, err := graphs.SoftArgminVJP(res.Probs, res.Costs, invTau)
	require.NoError(t, err)
	var gsum float64
	for i := range want {
		require.InDelta(t, want[i], res.GradCosts[i], 1e-12)
		require.InDelta(t, want[i], res.GradSB[i], 1e-12)
		require.InDelta(t, -cfg.Tau*want[i], res.GradLogits[i], 1e-12)
		gsum += res.GradCosts[i]
	}
	require.InDelta(t, 0, gsum, 1e-12, "J·1 = 0: a common shift of the costs changes nothing")

	// The natural gradient solves F·x = g (F = diag p − ppᵀ) where p has support.
	for i := range res.Natural {
		var fx float64
		for j := range res.Natural {
			d := 0.0
			if i == j {
				d = res.Probs[i]
			}
			fx += (d - res.Probs[i]*res.Probs[j]) * res.Natural[j]
		}
		require.InDelta(t, res.GradLogits[i], fx, 1e-9+1e-6*math.Abs(res.GradLogits[i]))
	}

	// T natural steps of η = 1/(τT) from uniform land on the soft pick; plain steps fall short.
	for i := range res.Probs {
		require.InDelta(t, res.Probs[i], res.NaturalP[i], 1e-9)
	}
	require.Less(t, res.PlainP[res.Best], res.NaturalP[res.Best])
}

func TestRunBadConfig(t *testing.T) {
	for _, edit := range []func(*Config){
		func(c *Config) { c.Tau = 0 },
		func(c *Config) { c.Rows = 0 },
		func(c *Config) { c.Damping = -1 },
		func(c *Config) { c.Measure = func(int, int) (float64, error) { return math.NaN(), nil } },
	} {
		cfg := defaultConfig()
		edit(&cfg)
		_, err := run(cfg)
		require.Error(t, err)
	}
}

// TestUsage: -h prints the command line and what the command does, and is no failure.
func TestUsage(t *testing.T) {
	var errOut bytes.Buffer
	_, err := parseFlags([]string{"-h"}, &errOut)
	require.ErrorIs(t, err, flag.ErrHelp)
	require.Contains(t, errOut.String(), "usage: go run ./examples/autotune [flags]\n"+about+"\n")
	for _, args := range [][]string{{"extra"}, {"-nosuch"}, {"-rows", "many"}, {"-tau", "1e-400"}} {
		_, err := parseFlags(args, &errOut)
		require.Error(t, err, "%v", args)
	}
}

// TestFlagRefusals: every flag at nonsense values, and sizes whose buffers exceed
// gatejet.MaxBytes (alone, together, or overflowing int), is refused before anything is
// allocated or timed, with a *gatejet.Error naming the flags.
func TestFlagRefusals(t *testing.T) {
	prev := gatejet.SetMaxBytes(0) // the default limit, whatever ran before
	defer gatejet.SetMaxBytes(prev)
	for _, c := range []struct {
		args  []string
		flags string // the *gatejet.Error's Arg
		kind  error
		limit int64 // gatejet.SetMaxBytes for the case (0: the default)
	}{
		{[]string{"-rows", "0"}, "-rows", gatejet.ErrParam, 0},
		{[]string{"-rows", "-1"}, "-rows", gatejet.ErrParam, 0},
		{[]string{"-K", "0"}, "-K", gatejet.ErrParam, 0},
		{[]string{"-P", "-3"}, "-P", gatejet.ErrParam, 0},
		{[]string{"-reps", "0"}, "-reps", gatejet.ErrParam, 0},
		{[]string{"-reps", "100001"}, "-reps", gatejet.ErrParam, 0},
		{[]string{"-steps", "0"}, "-steps", gatejet.ErrParam, 0},
		{[]string{"-steps", "1000001"}, "-steps", gatejet.ErrParam, 0},
		{[]string{"-tau", "0"}, "-tau", gatejet.ErrParam, 0},
		{[]string{"-tau", "-1"}, "-tau", gatejet.ErrParam, 0},
		{[]string{"-tau", "NaN"}, "-tau", gatejet.ErrParam, 0},
		{[]string{"-tau", "Inf"}, "-tau", gatejet.ErrParam, 0},
		{[]string{"-tau", "1e-200"}, "-tau", gatejet.ErrParam, 0},
		{[]string{"-tie", "-0.1"}, "-tie", gatejet.ErrParam, 0},
		{[]string{"-tie", "NaN"}, "-tie", gatejet.ErrParam, 0},
		{[]string{"-damping", "-1"}, "-damping", gatejet.ErrParam, 0},
		{[]string{"-damping", "+Inf"}, "-damping", gatejet.ErrParam, 0},
		{[]string{"-rows", "100000", "-K", "200", "-P", "200"}, "-rows × -K × -P", gatejet.ErrSize, 0},
		{[]string{"-rows", "10000", "-K", "200", "-P", "200"}, "-rows × -K × -K × -P", gatejet.ErrSize, 0},
		{[]string{"-rows", "9223372036854775807", "-K", "2"}, "-rows × -K", gatejet.ErrSize, 0},
		// Each buffer within 1 MiB, the three together over it.
		{[]string{"-rows", "4096", "-K", "2", "-P", "8"}, "-rows × -K + -rows × -K × -P + -rows × -K × -K × -P", gatejet.ErrSize, 1 << 20},
	} {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			var errOut bytes.Buffer
			cfg, err := parseFlags(c.args, &errOut)
			require.NoError(t, err, errOut.String())
			var out bytes.Buffer
			cfg.Out = &out
			if c.limit != 0 {
				gatejet.SetMaxBytes(c.limit)
				defer gatejet.SetMaxBytes(0)
			}
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			_, err = run(cfg)
			runtime.ReadMemStats(&after)
			var ge *gatejet.Error
			require.True(t, errors.As(err, &ge), "%T %v", err, err)
			require.ErrorIs(t, err, c.kind)
			require.Equal(t, "autotune", ge.Op)
			require.Equal(t, c.flags, ge.Arg, "%v", err)
			require.Empty(t, out.String(), "refused before anything is timed")
			require.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(1<<20), "refused before anything is allocated")
		})
	}
}

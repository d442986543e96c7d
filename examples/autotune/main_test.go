package main

import (
	"bytes"
	"math"
	"testing"

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

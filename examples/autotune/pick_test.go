package main

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gatejet/gatejet/graphs"
	"github.com/stretchr/testify/require"
)

// noisyMachine models timings on a shared two-core machine as observed there: each
// measurement is the candidate's true cost times a small jitter, times a load factor of
// 1.1–1.7 that holds for spells of 1–12 measurements a quarter of the time (another process
// holding a core), and one time in twenty a spike of 5–30× (a preemption). Its samples have
// an interquartile range of about 25 % of the median (4–50 % from seed to seed) and spikes
// to 30×, as 61 rounds on that machine gave (4–36 %, spikes to 50×), and it makes the old
// selection flip between candidates as that machine did (32, 512 and 128 in three runs).
type noisyMachine struct {
	rng   *rand.Rand
	truth []float64
	load  float64
	spell int // measurements left in the current load spell
}

func newNoisyMachine(seed uint64, truth []float64) *noisyMachine {
	return &noisyMachine{rng: rand.New(rand.NewPCG(seed, 13)), truth: truth}
}

func (m *noisyMachine) measure(i, _ int) (float64, error) {
	if m.spell == 0 {
		m.spell = 1 + m.rng.IntN(12)
		m.load = 1
		if m.rng.Float64() < 0.25 {
			m.load = 1.1 + 0.6*m.rng.Float64()
		}
	}
	m.spell--
	v := m.truth[i] * (1 + math.Abs(0.04*m.rng.NormFloat64())) * m.load
	if m.rng.Float64() < 0.05 {
		v *= 5 + 25*m.rng.Float64()
	}
	return 150 * v, nil
}

// oldPick is the selection this command made before: each candidate timed reps times in a
// row, the best time counts, and the fastest candidate is the pick.
func oldPick(m *noisyMachine, reps int) int {
	best := make([]float64, len(m.truth))
	for i := range best {
		best[i] = math.Inf(1)
		for r := 0; r < reps; r++ {
			v, _ := m.measure(i, 0)
			best[i] = math.Min(best[i], v)
		}
	}
	return graphs.Argmin(best)
}

// TestPickStableUnderNoise: under timing noise of the size observed, the pick is the same
// in every run: the candidate clearly fastest where there is one, and the larger of
// candidates within a few per cent of each other. The old selection (best of 5, fastest
// wins) is shown to flip under the same noise, so the noise is large enough to matter.
func TestPickStableUnderNoise(t *testing.T) {
	candidates := []int{8, 32, 128, 512, 1024}
	for _, tc := range []struct {
		name  string
		truth []float64 // true cost per row of each candidate
		want  int       // rows per call
	}{
		{"near-equal large chunks", []float64{1.20, 1.05, 1.10, 1.00, 1.02}, 1024},
		{"loaded machine", []float64{1.12, 1.00, 2.50, 1.70, 1.30}, 32},
		{"clear middle", []float64{1.30, 1.20, 1.00, 1.25, 1.40}, 128},
	} {
		t.Run(tc.name, func(t *testing.T) {
			picks, old := map[int]int{}, map[int]int{}
			for seed := uint64(1); seed <= 40; seed++ {
				cfg := defaultConfig()
				cfg.Candidates = candidates
				cfg.Measure = newNoisyMachine(seed, tc.truth).measure
				res, err := run(cfg)
				require.NoError(t, err)
				require.Len(t, res.Spreads, len(candidates))
				picks[candidates[res.Pick]]++
				old[candidates[oldPick(newNoisyMachine(seed, tc.truth), 5)]]++
			}
			t.Logf("picks over 40 noisy runs: %v; the old selection: %v", picks, old)
			require.Equal(t, map[int]int{tc.want: 40}, picks, "picks over 40 noisy runs (old selection: %v)", old)
			if tc.name != "clear middle" {
				require.Greater(t, len(old), 1, "the old selection should flip under this noise: %v", old)
			}
		})
	}
}

func TestSpreadOf(t *testing.T) {
	s := spreadOf([]float64{5, 1, 4, 2, 3})
	require.Equal(t, Spread{Median: 3, Q1: 2, Q3: 4, Min: 1, Max: 5}, s)
	s = spreadOf([]float64{4, 1, 3, 2})
	require.Equal(t, Spread{Median: 2.5, Q1: 1.75, Q3: 3.25, Min: 1, Max: 4}, s)
	require.Equal(t, Spread{Median: 7, Q1: 7, Q3: 7, Min: 7, Max: 7}, spreadOf([]float64{7}))
}

// TestMeasureInterleaves: every round measures every candidate once, starting one further
// on each round.
func TestMeasureInterleaves(t *testing.T) {
	var order []int
	samples, err := measure(3, 3, func(i int) (float64, error) { order = append(order, i); return float64(len(order)), nil })
	require.NoError(t, err)
	require.Equal(t, []int{0, 1, 2, 1, 2, 0, 2, 0, 1}, order)
	require.Equal(t, [][]float64{{1, 6, 8}, {2, 4, 9}, {3, 5, 7}}, samples)
}

// TestChooseTies: candidates within the band tie and the largest rows per call wins; the
// band is the floor or the fastest median's notch, whichever is more.
func TestChooseTies(t *testing.T) {
	rows := []int{8, 32, 128}
	flat := func(m float64) Spread { return Spread{Median: m, Q1: m, Q3: m, Min: m, Max: m} }
	c := choose(rows, []Spread{flat(100), flat(104), flat(106)}, 0, 9, 0.05)
	require.Equal(t, []bool{true, true, false}, c.Tied)
	require.Equal(t, 1, c.Pick)
	require.Equal(t, 0.05, c.Band)
	// A noisy fastest median widens the band to its notch: 1.58·IQR/√n/median = 1.58·30/3/100.
	noisy := Spread{Median: 100, Q1: 90, Q3: 120, Min: 80, Max: 400}
	c = choose(rows, []Spread{noisy, flat(104), flat(115)}, 0, 9, 0.05)
	require.InDelta(t, 0.158, c.Band, 1e-12)
	require.Equal(t, 2, c.Pick)
	// A noisy slow candidate does not.
	wild := Spread{Median: 120, Q1: 50, Q3: 900, Min: 40, Max: 5000}
	c = choose(rows, []Spread{flat(104), flat(100), wild}, 1, 9, 0.05)
	require.Equal(t, []bool{true, true, false}, c.Tied)
	require.Equal(t, 1, c.Pick)
}

// TestRunBadSample: one NaN, zero or infinite measurement among many is refused, not hidden
// in a median; so are rounds that would not fit in memory and chunks of no rows.
func TestRunBadSample(t *testing.T) {
	for _, bad := range []float64{math.NaN(), 0, -1, math.Inf(1)} {
		calls := 0
		cfg := defaultConfig()
		cfg.Candidates = []int{8, 32}
		cfg.Measure = func(int, int) (float64, error) {
			calls++
			if calls == 7 {
				return bad, nil
			}
			return 100, nil
		}
		_, err := run(cfg)
		require.ErrorContains(t, err, "positive and finite", "sample %v", bad)
	}
	cfg := defaultConfig()
	cfg.Reps = maxReps + 1
	_, err := run(cfg)
	require.Error(t, err)
	cfg = defaultConfig()
	cfg.Candidates = []int{8, 0}
	_, err = run(cfg)
	require.Error(t, err)
}

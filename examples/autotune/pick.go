package main

import (
	"math"
	"slices"
)

// measure takes reps samples of each of m candidates. Each round samples every candidate
// once, starting one candidate further on than the round before, so that a slow spell of the
// machine (another process, a frequency change) spoils a sample of every candidate alike
// instead of all the samples of one, and no candidate always runs first after the last.
// It returns samples[i], candidate i's samples in the order taken.
func measure(m, reps int, sample func(i int) (float64, error)) ([][]float64, error) {
	samples := make([][]float64, m)
	for i := range samples {
		samples[i] = make([]float64, 0, reps)
	}
	for r := 0; r < reps; r++ {
		for k := 0; k < m; k++ {
			i := (r + k) % m
			v, err := sample(i)
			if err != nil {
				return nil, err
			}
			samples[i] = append(samples[i], v)
		}
	}
	return samples, nil
}

// Spread summarises one candidate's samples: the median, the quartiles (linear
// interpolation between order statistics) and the extremes.
type Spread struct {
	Median, Q1, Q3, Min, Max float64
}

// IQR is the interquartile range Q3 − Q1.
func (s Spread) IQR() float64 { return s.Q3 - s.Q1 }

func spreadOf(xs []float64) Spread {
	if len(xs) == 0 {
		nan := math.NaN()
		return Spread{nan, nan, nan, nan, nan}
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	q := func(f float64) float64 {
		pos := f * float64(len(s)-1)
		lo := int(pos)
		if lo+1 >= len(s) {
			return s[lo]
		}
		return s[lo] + (pos-float64(lo))*(s[lo+1]-s[lo])
	}
	return Spread{Median: q(0.5), Q1: q(0.25), Q3: q(0.75), Min: s[0], Max: s[len(s)-1]}
}

// Choice is choose's verdict.
type Choice struct {
	Pick int     // the tied candidate with the most rows per call
	Tied []bool  // candidates the measurements cannot tell from the fastest median
	Band float64 // the tie band: how far, relative to the fastest median, a tied median may lie above it
}

// choose picks a candidate (rows per call) from the spreads of n measurements of each, given
// best, the candidate with the fastest median. A candidate ties with the fastest when its
// median lies above the fastest median by no more than the band: the half-width of the
// fastest median's notch, 1.58·IQR/√n (McGill, Tukey and Larsen 1978; about a 95 %
// confidence interval of the median), and at least floor times the fastest median. A
// candidate noisier than the fastest does not widen the band: its noise is a cost too.
// The pick is the tied candidate with the most rows per call (the earliest of equal ones).
// Picking the fastest median alone flips between near-equal candidates from run to run; one
// fixed rule among the ties does not, and more rows per call means fewer calls for the
// same time per row.
func choose(rows []int, spreads []Spread, best, n int, floor float64) Choice {
	b := spreads[best]
	c := Choice{Pick: best, Tied: make([]bool, len(rows))}
	c.Band = math.Max(floor, 1.58*b.IQR()/math.Sqrt(float64(n))/b.Median)
	for i := range rows {
		c.Tied[i] = spreads[i].Median <= (1+c.Band)*b.Median
		if c.Tied[i] && rows[i] > rows[c.Pick] {
			c.Pick = i
		}
	}
	return c
}

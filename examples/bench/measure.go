package main

import (
	"fmt"
	"math"
	"runtime"
	"sort"
	"time"
)

// timer measures the median wall time of a function: warm-up calls first (pools, pages,
// caches, the machine's first run), then timed repetitions, fewer when one call is slow.
type timer struct {
	warm, reps int
	budget     time.Duration // the time the repetitions of one function may take
}

// median runs f warm times, then up to reps timed times (at least 3, fewer than reps when
// they would exceed the budget), and returns the median and the number of timed runs.
func (tm timer) median(f func() error) (time.Duration, int, error) {
	var first time.Duration
	for i := 0; i < max(tm.warm, 1); i++ {
		t0 := time.Now()
		if err := f(); err != nil {
			return 0, 0, err
		}
		first = time.Since(t0)
	}
	reps := tm.reps
	if first > 0 && time.Duration(reps)*first > tm.budget {
		reps = max(3, int(tm.budget/first))
	}
	// Short calls are taken many times: a single interruption by another process (a shared
	// machine) costs them a large fraction, and the median of many shrugs it off.
	if first > 0 && first < time.Millisecond && tm.reps > 3 {
		reps = max(reps, min(101, int(100*time.Millisecond/first)))
	}
	ts := make([]time.Duration, 0, reps)
	for i := 0; i < reps; i++ {
		t0 := time.Now()
		if err := f(); err != nil {
			return 0, 0, err
		}
		ts = append(ts, time.Since(t0))
	}
	sort.Slice(ts, func(i, j int) bool { return ts[i] < ts[j] })
	return ts[len(ts)/2], reps, nil
}

// interleaved times several functions in turns — f0, f1, …, f0, f1, … — after warm runs of
// each, and returns the median of each. Ratios between them are then measured under the same
// conditions: on a shared VM the memory bandwidth drifts by tens of percent over seconds,
// which one-after-the-other medians would fold into the ratio.
func (tm timer) interleaved(fs ...func() error) ([]time.Duration, int, error) {
	for i := 0; i < max(tm.warm, 1); i++ {
		for _, f := range fs {
			if err := f(); err != nil {
				return nil, 0, err
			}
		}
	}
	reps := max(tm.reps, 3)
	ts := make([][]time.Duration, len(fs))
	for i := 0; i < reps; i++ {
		for j, f := range fs {
			t0 := time.Now()
			if err := f(); err != nil {
				return nil, 0, err
			}
			ts[j] = append(ts[j], time.Since(t0))
		}
	}
	meds := make([]time.Duration, len(fs))
	for j := range ts {
		sort.Slice(ts[j], func(a, b int) bool { return ts[j][a] < ts[j][b] })
		meds[j] = ts[j][len(ts[j])/2]
	}
	return meds, reps, nil
}

// row is one line of the table: gatejet's time on an operation against one baseline.
type row struct {
	Op, Shape, DType string
	Gatejet          time.Duration
	Baseline         string
	Other            time.Duration // the baseline's time
	Target           float64       // the speedup the issue asks for (0: none)
	Bytes            int64         // bytes gatejet reads and writes (minimum traffic)
	Probe            string        // the memory-limit probe for this operation
	ProbeBW          float64       // its bytes/s on the same bytes
	Agree            float64       // max |gatejet − baseline| / max |baseline| (NaN: not compared)
	Reps             int           // timed repetitions behind the gatejet median
}

// vs returns r as compared with a baseline that took other.
func (r row) vs(baseline string, other time.Duration) row {
	r.Baseline, r.Other = baseline, other
	return r
}

// agreeing returns r with agree, the relative difference of its output from the baseline's.
func (r row) agreeing(agree float64) row {
	r.Agree = agree
	return r
}

// Speedup is the baseline's time over gatejet's: above 1, gatejet is faster. For a memory
// probe the target is below 1 (0.5 means within 2× of the probe).
func (r row) Speedup() float64 { return r.Other.Seconds() / r.Gatejet.Seconds() }

// BW is gatejet's bytes per second.
func (r row) BW() float64 { return float64(r.Bytes) / r.Gatejet.Seconds() }

func (r row) met() string {
	switch {
	case r.Target == 0:
		return ""
	case r.Speedup() >= r.Target:
		return "met"
	default:
		return "NOT met"
	}
}

func (r row) target() string {
	if r.Target == 0 {
		return ""
	}
	return "≥" + ratio(r.Target)
}

func (r row) agree() string {
	if math.IsNaN(r.Agree) {
		return ""
	}
	return fmt.Sprintf("%.0e", r.Agree)
}

func ratio(x float64) string {
	switch {
	case x >= 100:
		return fmt.Sprintf("%.0f×", x)
	case x >= 10:
		return fmt.Sprintf("%.1f×", x)
	default:
		return fmt.Sprintf("%.2f×", x)
	}
}

func ms(d time.Duration) string { return fmt.Sprintf("%.3f", d.Seconds()*1e3) }

func gbs(bw float64) string {
	if bw == 0 {
		return ""
	}
	return fmt.Sprintf("%.1f", bw/1e9)
}

// maxRelDiff is max |a − b| / max |b|.
func maxRelDiff(a, b []float64) float64 {
	num, den := 0.0, 0.0
	for i := range b {
		num = math.Max(num, math.Abs(a[i]-b[i]))
		den = math.Max(den, math.Abs(b[i]))
	}
	if den == 0 {
		return num
	}
	return num / den
}

// settle collects garbage between measurements, so that one measurement's garbage is not
// collected during the next.
func settle() { runtime.GC() }

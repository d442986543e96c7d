package par

import (
	"fmt"
	"testing"
	"time"
)

// fillJob writes one float64 per unit of work: the cheapest body a kernel has (a memset with
// a multiply), so the crossover it gives is the highest break-even any kernel needs.
type fillJob struct {
	dst []float64
	run func(lo, hi int)
}

func (j *fillJob) do(lo, hi int) {
	d := j.dst[lo:hi]
	for i := range d {
		d[i] = float64(lo+i) * 0.5
	}
}

// BenchmarkBreakEven sweeps the work of a call (units = float64 values written) with For
// split over Workers() goroutines and with one goroutine, and prints the smallest work from
// which the split is faster at every larger size of the sweep: the measured break-even behind
// DefaultMinWork. Run it on a quiet machine:
//
//	go test -run '^$' -bench BreakEven ./internal/par
func BenchmarkBreakEven(b *testing.B) {
	if Workers() < 2 {
		b.Skip("one core: nothing to split")
	}
	defer SetMinWork(SetMinWork(0))
	type res struct{ one, split time.Duration }
	var sweep []int
	for w := 256; w <= 1<<18; w *= 2 {
		sweep = append(sweep, w)
	}
	results := make([]res, len(sweep))
	for i, w := range sweep {
		j := &fillJob{dst: make([]float64, w)}
		j.run = j.do
		for _, procs := range []int{1, 0} {
			name := fmt.Sprintf("work=%d/procs=%d", w, max(procs, Workers()*(1-procs)))
			b.Run(name, func(b *testing.B) {
				old := SetMaxProcs(procs)
				defer SetMaxProcs(old)
				b.SetBytes(int64(w) * 8)
				for b.Loop() {
					For(w, 1, j.run)
				}
				per := b.Elapsed() / time.Duration(b.N)
				if procs == 1 {
					results[i].one = per
				} else {
					results[i].split = per
				}
			})
		}
	}
	cross := -1
	for i := len(sweep) - 1; i >= 0; i-- {
		r := results[i]
		if r.one == 0 || r.split == 0 || r.split >= r.one {
			break
		}
		cross = sweep[i]
	}
	for i, w := range sweep {
		b.Logf("work %7d: one goroutine %9v, split %9v", w, results[i].one, results[i].split)
	}
	if cross < 0 {
		fmt.Printf("par: BenchmarkBreakEven: splitting never won on this sweep (DefaultMinWork %d)\n", DefaultMinWork)
		return
	}
	fmt.Printf("par: BenchmarkBreakEven: splitting wins from work %d up (DefaultMinWork %d)\n", cross, DefaultMinWork)
}

// BenchmarkIdleGaps runs calls that split over every core, each followed by an idle gap (a
// training loop's other work, or nothing), and reports the process's CPU time against the
// wall time. Between calls nothing of this package runs, so the CPU time is the calls' own
// work: cpu-µs/op stays close to the work of one call, however long the gaps.
//
//	go test -run '^$' -bench IdleGaps ./internal/par
func BenchmarkIdleGaps(b *testing.B) {
	if Workers() < 2 {
		b.Skip("one core: nothing to split")
	}
	defer SetMinWork(SetMinWork(0)) // every call splits, whatever the break-even
	j := &fillJob{dst: make([]float64, 1<<17)}
	j.run = j.do
	for _, gap := range []time.Duration{0, 100 * time.Microsecond, time.Millisecond} {
		b.Run(fmt.Sprintf("gap=%v", gap), func(b *testing.B) {
			cpu0 := processCPU()
			for b.Loop() {
				For(len(j.dst), 1, j.run)
				if gap > 0 {
					time.Sleep(gap)
				}
			}
			cpu := processCPU() - cpu0
			b.ReportMetric(float64(cpu.Microseconds())/float64(b.N), "cpu-µs/op")
			b.ReportMetric(cpu.Seconds()/b.Elapsed().Seconds(), "cpu/wall")
		})
	}
}

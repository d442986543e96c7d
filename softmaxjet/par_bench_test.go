package softmaxjet

import (
	"fmt"
	"testing"
	"time"

	"github.com/gatejet/gatejet/internal/par"
)

// BenchmarkBreakEven sweeps the work of a call of three kernels (First and HVP at K = 16,
// P = 16: K·P units of work per row; Second at K = 4, P = 16: K²·P units) over N, with the rows
// on one goroutine and split over par.Workers(), and prints for each kernel the smallest work
// from which the split is faster at every larger size of the sweep. par.DefaultMinWork is set
// from these crossovers (see its comment). Run it on a quiet machine:
//
//	go test -run '^$' -bench BreakEven ./softmaxjet
func BenchmarkBreakEven(b *testing.B) {
	if par.Workers() < 2 {
		b.Skip("one core: nothing to split")
	}
	defer par.SetMinWork(par.SetMinWork(0))
	type kernelCase struct {
		name string
		K, P int
		work func(sh Shape) int
		run  func(sh Shape) func() error
	}
	kernels := []kernelCase{
		{"First", 16, 16, func(sh Shape) int { return sh.N * sh.K * sh.P }, func(sh Shape) func() error {
			l, d, _ := benchInputs[float64](sh)
			out := make([]float64, sh.FirstLen())
			return func() error { return Softmax[float64]{InvTau: 1}.First(out, l, d, sh) }
		}},
		{"HVP", 16, 16, func(sh Shape) int { return sh.N * sh.K * sh.P }, func(sh Shape) func() error {
			l, d, v := benchInputs[float64](sh)
			out := make([]float64, sh.FirstLen())
			return func() error { return Softmax[float64]{InvTau: 1}.HVP(out, l, d, v, sh) }
		}},
		{"Second", 4, 16, func(sh Shape) int { return sh.N * sh.K * sh.K * sh.P }, func(sh Shape) func() error {
			l, d, _ := benchInputs[float64](sh)
			out := make([]float64, sh.SecondLen())
			return func() error { return Softmax[float64]{InvTau: 1}.Second(out, l, d, sh) }
		}},
	}
	for _, kc := range kernels {
		var works []int
		var one, split []time.Duration
		for n := 1; n <= 1024; n *= 2 {
			sh := Shape{N: n, K: kc.K, P: kc.P}
			f := kc.run(sh)
			w := kc.work(sh)
			works = append(works, w)
			var t [2]time.Duration
			for i, procs := range []int{1, 0} {
				b.Run(fmt.Sprintf("%s/work=%d/procs=%d", kc.name, w, max(procs, par.Workers()*(1-procs))), func(b *testing.B) {
					defer par.SetMaxProcs(par.SetMaxProcs(procs))
					for b.Loop() {
						if err := f(); err != nil {
							b.Fatal(err)
						}
					}
					t[i] = b.Elapsed() / time.Duration(b.N)
				})
			}
			one, split = append(one, t[0]), append(split, t[1])
		}
		cross := -1
		for i := len(works) - 1; i >= 0; i-- {
			if one[i] == 0 || split[i] == 0 || split[i] >= one[i] {
				break
			}
			cross = works[i]
		}
		for i, w := range works {
			b.Logf("%s work %7d: one goroutine %9v, split %9v", kc.name, w, one[i], split[i])
		}
		if cross < 0 {
			fmt.Printf("softmaxjet: BenchmarkBreakEven: %s: splitting never won on this sweep\n", kc.name)
			continue
		}
		fmt.Printf("softmaxjet: BenchmarkBreakEven: %s: splitting wins from work %d up (par.DefaultMinWork %d)\n", kc.name, cross, par.DefaultMinWork)
	}
}

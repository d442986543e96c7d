package softmaxjet

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/gatejet/gatejet/internal/tower"
)

// Benchmarks of the tower (internal/tower's TowerChannels, second channel only). BenchmarkTower
// uses the shapes and sub-benchmark names of BenchmarkClosedForm (bench_test.go), so that
//
//	go test -run '^$' -bench 'ClosedForm/Second|Tower/Second' ./softmaxjet | benchstat -col .name -
//
// sets the closed form and the tower side by side. BenchmarkTowerScaling runs both on
// K = 8 … 128 with the same rows. b.SetBytes is the output size, so MB/s is write bandwidth.

// towerBenchShapes are the shapes of BenchmarkClosedForm.
var towerBenchShapes = []Shape{{N: 4096, K: 16, P: 16}, {N: 256, K: 64, P: 16}}

func towerBenchInputs[T Float](sh Shape) (l, d []T) {
	rng := rand.New(rand.NewPCG(1, uint64(sh.K)))
	l, d = make([]T, sh.N*sh.K), make([]T, sh.N*sh.K*sh.P)
	for i := range l {
		l[i] = T(rng.NormFloat64())
	}
	for i := range d {
		d[i] = T(rng.NormFloat64())
	}
	return l, d
}

func towerBenchSize[T Float]() int64 {
	var zero T
	if any(zero) == any(float32(0)) {
		return 4
	}
	return 8
}

func towerBenchSecond[T Float](b *testing.B, name string, sh Shape, closed bool) {
	b.Helper()
	l, d := towerBenchInputs[T](sh)
	out := make([]T, sh.N*sh.K*sh.K*sh.P)
	run := func() error {
		if closed {
			return Second(out, l, d, sh, 1)
		}
		return tower.TowerChannels(nil, nil, out, l, d, tower.Shape(sh), 1)
	}
	b.Run(name, func(b *testing.B) {
		b.SetBytes(int64(len(out)) * towerBenchSize[T]())
		b.ReportAllocs()
		if err := run(); err != nil { // touch the output pages and fill the workspace pools
			b.Fatal(err)
		}
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			if err := run(); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkTower: the tower on BenchmarkClosedForm's shapes, e.g.
// BenchmarkTower/Second/f64/N=4096/K=16/P=16 against BenchmarkClosedForm/Second/f64/….
func BenchmarkTower(b *testing.B) {
	for _, sh := range towerBenchShapes {
		towerBenchSecond[float64](b, fmt.Sprintf("Second/f64/N=%d/K=%d/P=%d", sh.N, sh.K, sh.P), sh, false)
	}
	for _, sh := range towerBenchShapes {
		towerBenchSecond[float32](b, fmt.Sprintf("Second/f32/N=%d/K=%d/P=%d", sh.N, sh.K, sh.P), sh, false)
	}
}

// BenchmarkTowerScaling: the second channel by the tower (O(K³·P) per row) and by the closed
// form (O(K²·P) per row) for K = 8 … 128 with P = 16, on N·K² = 2^20 rows·atoms² (the same
// output size, 128 MiB in float64, for every K). Per element written, the tower's cost grows
// linearly in K and the closed form's stays flat.
func BenchmarkTowerScaling(b *testing.B) {
	for _, K := range []int{8, 16, 32, 64, 128} {
		sh := Shape{N: (1 << 20) / (K * K), K: K, P: 16}
		towerBenchSecond[float64](b, fmt.Sprintf("tower/K=%d", K), sh, false)
		towerBenchSecond[float64](b, fmt.Sprintf("closed/K=%d", K), sh, true)
	}
}

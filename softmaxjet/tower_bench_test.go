package softmaxjet

import (
	"fmt"
	"testing"

	"github.com/gatejet/gatejet"
	"github.com/gatejet/gatejet/internal/tower"
)

// Benchmarks of the tower (internal/tower's TowerChannels, second channel only). BenchmarkTower
// uses the shapes and sub-benchmark names of BenchmarkClosedForm (bench_test.go), so that
//
//	go test -run '^$' -bench 'ClosedForm/Second|Tower/Second' ./softmaxjet | benchstat -col .name -
//
// sets the closed form and the tower side by side. BenchmarkTowerScaling runs both on
// K = 8 … 128 with the same rows. b.SetBytes is the output size, so MB/s is write bandwidth.

// towerBenchSecond benchmarks the second channel, by the tower or, closed, by the closed form,
// as the sub-benchmark name.
func towerBenchSecond[T gatejet.Float](b *testing.B, name string, sh Shape, closed bool) {
	b.Helper()
	l, d, _ := benchInputs[T](sh)
	benchOutput(b, name, sh.SecondLen(), func(out []T) error {
		if closed {
			return Softmax[T]{InvTau: 1}.Second(out, l, d, sh)
		}
		return tower.TowerChannels(nil, nil, out, l, d, tower.Shape(sh), 1)
	})
}

// BenchmarkTower: the tower on BenchmarkClosedForm's shapes, e.g.
// BenchmarkTower/Second/f64/N=4096/K=16/P=16 against BenchmarkClosedForm/Second/f64/….
func BenchmarkTower(b *testing.B) {
	for _, sh := range benchShapes {
		towerBenchSecond[float64](b, benchName("Second", "f64", sh), sh, false)
	}
	for _, sh := range benchShapes {
		towerBenchSecond[float32](b, benchName("Second", "f32", sh), sh, false)
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

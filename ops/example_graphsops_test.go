package ops_test

import (
	"fmt"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/gatejet/gatejet/ops"
)

// Soft argmin of the costs (0, ln 2, ln 4) at invTau = 1: p ∝ (1, ½, ¼), that is (4, 2, 1)/7.
func ExampleSoftArgmin() {
	g := G.NewGraph()
	costs := G.NewVector(g, tensor.Float64, G.WithShape(3), G.WithName("costs"),
		G.WithValue(tensor.New(tensor.WithShape(3), tensor.WithBacking([]float64{0, 0.6931471805599453, 1.3862943611198906}))))
	p := G.Must(ops.SoftArgmin(costs, 1))
	fmt.Printf("%.4f (4/7 = %.4f)\n", valueAfterRun(p).Data(), 4.0/7)
	// Output:
	// [0.5714 0.2857 0.1429] (4/7 = 0.5714)
}

// The log-determinant of H + λI for one 2×2 row, H = diag(2, 3) and λ = 1: log(3·4) = log 12.
func ExampleLogDetPlusRidge() {
	g := G.NewGraph()
	h := G.NewTensor(g, tensor.Float64, 3, G.WithShape(1, 2, 2), G.WithName("H"),
		G.WithValue(tensor.New(tensor.WithShape(1, 2, 2), tensor.WithBacking([]float64{2, 0, 0, 3}))))
	ld := G.Must(ops.LogDetPlusRidge(h, 1))
	fmt.Printf("%.4f\n", valueAfterRun(ld).Data())
	// Output:
	// [2.4849]
}

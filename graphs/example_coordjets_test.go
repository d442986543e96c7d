package graphs_test

import (
	"fmt"

	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/gatejet/gatejet/graphs"
)

// Two atoms decoded by cubic B-splines on clamped knots over [0, 1] (five basis functions),
// each with one output column, evaluated at latent coordinates t, with the gradient of a loss
// on the decoded rows reaching both t and the coefficients B.
func ExampleBSplineJets() {
	g := gorgonia.NewGraph()
	t := gorgonia.NewMatrix(g, tensor.Float64, gorgonia.WithShape(1, 2), gorgonia.WithName("t"),
		gorgonia.WithValue(tensor.New(tensor.WithShape(1, 2), tensor.WithBacking([]float64{0.25, 0.5}))))
	// Atom 0's coefficients are the knots' Greville abscissae 0, 1/6, 1/2, 5/6, 1 (means of
	// three successive inner knots), so it decodes t itself; atom 1's are all 2, a constant.
	B := gorgonia.NewTensor(g, tensor.Float64, 3, gorgonia.WithShape(2, 5, 1), gorgonia.WithName("B"),
		gorgonia.WithValue(tensor.New(tensor.WithShape(2, 5, 1), tensor.WithBacking([]float64{
			0, 1.0 / 6, 0.5, 5.0 / 6, 1,
			2, 2, 2, 2, 2,
		}))))
	knots := []float64{0, 0, 0, 0, 0.5, 1, 1, 1, 1}
	d0, d1, d2, err := graphs.BSplineJets(t, B, knots)
	if err != nil {
		fmt.Println(err)
		return
	}
	// The jets on a machine of their own: a tape machine may reuse an intermediate's memory
	// for a later result (the loss's square, below).
	jm := gorgonia.NewTapeMachine(g.SubgraphRoots(d0, d1, d2))
	defer jm.Close()
	if err := jm.RunAll(); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("d0 %.4f\nd1 %.4f\nd2 %.4f\n", d0.Value().Data(), d1.Value().Data(), d2.Value().Data())

	loss := gorgonia.Must(gorgonia.Sum(gorgonia.Must(gorgonia.Square(d0))))
	grads, err := graphs.Grad(loss, t, B)
	if err != nil {
		fmt.Println(err)
		return
	}
	m := gorgonia.NewTapeMachine(g)
	defer m.Close()
	if err := m.RunAll(); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("∂loss/∂t %.4f\n", grads[0].Value().Data())
	// ∂loss/∂B[k,b] = 2·d0[k]·Φ_b(t[k]): the basis at t, which sums to 1.
	fmt.Printf("∂loss/∂B %.4f\n", grads[1].Value().Data())
	// Output:
	// d0 [0.2500 2.0000]
	// d1 [1.0000 0.0000]
	// d2 [0.0000 0.0000]
	// ∂loss/∂t [0.5000 0.0000]
	// ∂loss/∂B [0.0625 0.2969 0.1250 0.0156 0.0000 0.0000 1.0000 2.0000 1.0000 0.0000]
}

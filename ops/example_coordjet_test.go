package ops_test

import (
	"fmt"
	"math"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/gatejet/gatejet/graphs"
	"github.com/gatejet/gatejet/ops"
)

// One row gating K = 2 atoms, each decoded from a latent coordinate t_k by a line (the
// monomial basis 1, t): atom 0 decodes t itself, atom 1 the constant 2. The Gauss-Newton slab
// over the four primaries (ℓ_0, ℓ_1, t_0, t_1) is first·firstᵀ, and the gradient of its trace
// reaches the coordinates through the decoded jets.
func ExampleSoftmaxCoordJetGaussNewton() {
	g := G.NewGraph()
	logits := G.NewMatrix(g, tensor.Float64, G.WithShape(1, 2), G.WithName("logits"),
		G.WithValue(tensor.New(tensor.WithShape(1, 2), tensor.WithBacking([]float64{0, math.Log(3)}))))
	t := G.NewMatrix(g, tensor.Float64, G.WithShape(1, 2), G.WithName("t"),
		G.WithValue(tensor.New(tensor.WithShape(1, 2), tensor.WithBacking([]float64{0.5, 0.25}))))
	B := G.NewTensor(g, tensor.Float64, 3, G.WithShape(2, 2, 1), G.WithName("B"),
		G.WithValue(tensor.New(tensor.WithShape(2, 2, 1), tensor.WithBacking([]float64{0, 1, 2, 0}))))
	d0, d1, _, err := graphs.MonomialJets(t, B)
	if err != nil {
		fmt.Println(err)
		return
	}
	// ζ = (¼, ¾), d0 = (0.5, 2), d1 = (1, 0), ẑ = 1.625: first = (ζ_a·(d0_a − ẑ), ζ_k·d1_k)
	// = (−0.28125, 0.28125, 0.25, 0).
	gn, err := ops.SoftmaxCoordJetGaussNewton(logits, d0, d1, 1)
	if err != nil {
		fmt.Println(err)
		return
	}
	trace := G.Must(G.Sum(G.Must(G.HadamardProd(gn, G.NewConstant(tensor.New(tensor.WithShape(1, 4, 4),
		tensor.WithBacking([]float64{1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1})))))))
	grads, err := graphs.Grad(trace, t)
	if err != nil {
		fmt.Println(err)
		return
	}
	// A tape machine keeps only its roots' values for sure: gn is read as it is computed.
	var slab G.Value
	G.Read(gn, &slab)
	m := G.NewTapeMachine(g)
	defer m.Close()
	if err := m.RunAll(); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("shape", gn.Shape())
	fmt.Printf("slab %.4f\n", slab.Data())
	fmt.Printf("trace %.6f\n", trace.Value().Data())
	fmt.Printf("∂trace/∂t %.6f\n", grads[0].Value().Data())
	// Output:
	// shape (1, 4, 4)
	// slab [0.0791 -0.0791 -0.0703 0.0000 -0.0791 0.0791 0.0703 0.0000 -0.0703 0.0703 0.0625 0.0000 0.0000 0.0000 0.0000 0.0000]
	// trace 0.220703
	// ∂trace/∂t [-0.210938 0.000000]
}

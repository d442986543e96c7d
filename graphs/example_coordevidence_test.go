package graphs_test

import (
	"fmt"
	"math"

	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/gatejet/gatejet/graphs"
)

// The log-determinant term of a Laplace evidence over the row primaries (ℓ, t) of a
// latent-coordinate model: two rows, K = 2 atoms with linear decoders d_k(t) = B[k,0] +
// B[k,1]·t in P = 2 columns. The inverse temperature, log σ and log λ are variables, and the
// term's gradient in them (and in B) is what a hyperparameter step on the evidence needs.
func ExampleCoordGaussNewtonLogDet() {
	g := gorgonia.NewGraph()
	mat := func(name string, shape []int, x ...float64) *gorgonia.Node {
		return gorgonia.NewTensor(g, tensor.Float64, len(shape), gorgonia.WithShape(shape...), gorgonia.WithName(name),
			gorgonia.WithValue(tensor.New(tensor.WithShape(shape...), tensor.WithBacking(x))))
	}
	scalar := func(name string, x float64) *gorgonia.Node {
		return gorgonia.NewScalar(g, tensor.Float64, gorgonia.WithName(name), gorgonia.WithValue(x))
	}
	logits := mat("logits", []int{2, 2}, 0.3, -0.2, 1.0, 0.5)
	t := mat("t", []int{2, 2}, 0.1, -0.4, 0.6, 0.2)
	B := mat("B", []int{2, 2, 2}, 1, 0, 0.5, 1, 0, 1, -1, 0.5)
	invTau := scalar("invTau", 1.5)
	logSigma := scalar("logSigma", math.Log(0.2))
	logLambda := scalar("logLambda", math.Log(0.1))

	d0, d1, _, err := graphs.MonomialJets(t, B)
	if err != nil {
		fmt.Println(err)
		return
	}
	ld, err := graphs.CoordGaussNewtonLogDet(logits, d0, d1, invTau, logSigma, logLambda)
	if err != nil {
		fmt.Println(err)
		return
	}
	// The evidence's curvature term −½·Σ_r log det(H_r/σ² + λI) and its gradient.
	term := gorgonia.Must(gorgonia.Mul(gorgonia.Must(gorgonia.Sum(ld)), gorgonia.NewConstant(-0.5)))
	grads, err := graphs.Grad(term, invTau, logSigma, logLambda, B)
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
	fmt.Printf("log det per row %.4f\n", ld.Value().Data())
	fmt.Printf("term %.4f\n", term.Value().Data())
	fmt.Printf("∂/∂invTau %.4f  ∂/∂logσ %.4f  ∂/∂logλ %.4f\n",
		grads[0].Value().Data(), grads[1].Value().Data(), grads[2].Value().Data())
	fmt.Printf("∂/∂B %.4f\n", grads[3].Value().Data())
	// With A_r = H_r/σ² + λI, ∂/∂log σ = Σ_r (2K − λ·tr A_r⁻¹) and ∂/∂log λ = −½·Σ_r λ·tr A_r⁻¹,
	// so ∂/∂log σ − 2·∂/∂log λ = 2K·N = 8, whatever the slabs.
	fmt.Printf("∂/∂logσ − 2·∂/∂logλ %.4f\n", grads[1].Value().Data().(float64)-2*grads[2].Value().Data().(float64))
	// Output:
	// log det per row [0.1147 0.8712]
	// term -0.4929
	// ∂/∂invTau -0.7680  ∂/∂logσ 3.9667  ∂/∂logλ -2.0166
	// ∂/∂B [-0.9909 0.5362 -1.1904 -1.3749 0.9909 -0.5362 0.3949 -0.1493]
	// ∂/∂logσ − 2·∂/∂logλ 8.0000
}

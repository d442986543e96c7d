package graphs_test

import (
	"fmt"
	"math"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/gatejet/gatejet/graphs"
)

// runGraph runs the graph once on a TapeMachine.
func runGraph(g *G.ExprGraph) {
	vm := G.NewTapeMachine(g)
	defer vm.Close()
	if err := vm.RunAll(); err != nil {
		panic(err)
	}
}

// onGateRow builds one row gating K = 2 atoms with P = 1 column: logits (0, ln 3), so that
// softmax gives ζ = (¼, ¾), and decoded values (1, 3); first = (−0.375, 0.375). It passes
// them to build, runs the graph and returns the node that build made.
func onGateRow(build func(logits, decoded *G.Node) (*G.Node, error)) *G.Node {
	g := G.NewGraph()
	logits := G.NewMatrix(g, tensor.Float64, G.WithShape(1, 2), G.WithName("logits"),
		G.WithValue(tensor.New(tensor.WithShape(1, 2), tensor.WithBacking([]float64{0, math.Log(3)}))))
	decoded := G.NewTensor(g, tensor.Float64, 3, G.WithShape(1, 2, 1), G.WithName("decoded"),
		G.WithValue(tensor.New(tensor.WithShape(1, 2, 1), tensor.WithBacking([]float64{1, 3}))))
	n, err := build(logits, decoded)
	if err != nil {
		panic(err)
	}
	runGraph(g)
	return n
}

// The Gauss-Newton slab first·firstᵀ of a row: singular (its rows sum to 0).
func ExampleGaussNewtonSlabs() {
	h := onGateRow(func(logits, decoded *G.Node) (*G.Node, error) {
		return graphs.GaussNewtonSlabs(logits, decoded, 1)
	})
	fmt.Printf("%.6f\n", h.Value().Data())
	// Output:
	// [0.140625 -0.140625 -0.140625 0.140625]
}

// log det(H + λI) of the slab, the Laplace-evidence term: its eigenvalues are 0 and
// 2·0.140625, so it is log(λ) + log(0.28125 + λ).
func ExampleGaussNewtonLogDet() {
	ld := onGateRow(func(logits, decoded *G.Node) (*G.Node, error) {
		return graphs.GaussNewtonLogDet(logits, decoded, 1, 0.5)
	})
	fmt.Printf("%.6f %.6f\n", ld.Value().Data(), []float64{math.Log(0.5) + math.Log(0.78125)})
	// Output:
	// [-0.940007] [-0.940007]
}

// weight·mean_r trace(H[r]) = weight·‖first‖² = 0.1·0.28125.
func ExampleCurvaturePenalty() {
	p := onGateRow(func(logits, decoded *G.Node) (*G.Node, error) {
		return graphs.CurvaturePenalty(logits, decoded, 1, 0.1)
	})
	fmt.Printf("%.6f\n", p.Value().Data())
	// Output:
	// 0.028125
}

// Grad differentiates a gradient: for c = Σ x³, ∇c = 3x², and the gradient of the penalty
// Σ (∇c)² = 9Σ x⁴ is 36x³, which gorgonia.Grad would not give (it returns ∇c again).
func ExampleGrad() {
	g := G.NewGraph()
	x := G.NewVector(g, tensor.Float64, G.WithShape(2), G.WithName("x"),
		G.WithValue(tensor.New(tensor.WithShape(2), tensor.WithBacking([]float64{1, 2}))))
	c := G.Must(G.Sum(G.Must(G.Mul(x, G.Must(G.Square(x))))))
	grad, err := graphs.Grad(c, x)
	if err != nil {
		panic(err)
	}
	penalty := G.Must(G.Sum(G.Must(G.Square(grad[0]))))
	again, err := graphs.Grad(penalty, x)
	if err != nil {
		panic(err)
	}
	var v G.Value
	G.Read(again[0], &v)
	runGraph(g)
	fmt.Println(v.Data())
	// Output:
	// [36 288]
}

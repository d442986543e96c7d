package graphs_test

import (
	"errors"
	"fmt"
	"log"

	"github.com/gatejet/gatejet/graphs"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// gradOf adds the gradient of cost with respect to wrt to cost's graph with gorgonia.Grad,
// runs the graph (runGraph) and returns the gradient nodes, which then hold values.
func gradOf(cost *gorgonia.Node, wrt ...*gorgonia.Node) gorgonia.Nodes {
	grads, err := gorgonia.Grad(cost, wrt...)
	if err != nil {
		log.Fatal(err)
	}
	runGraph(cost.Graph())
	return grads
}

// GradCheck differentiates cost = Σ tanh(W·x)² with graphs.Grad and compares the result
// with central finite differences.
func ExampleGradCheck() {
	g := gorgonia.NewGraph()
	W := gorgonia.NewMatrix(g, tensor.Float64, gorgonia.WithShape(2, 3), gorgonia.WithName("W"),
		gorgonia.WithValue(tensor.New(tensor.WithShape(2, 3), tensor.WithBacking([]float64{0.1, -0.2, 0.3, 0.4, 0.5, -0.6}))))
	x := gorgonia.NewVector(g, tensor.Float64, gorgonia.WithShape(3), gorgonia.WithName("x"),
		gorgonia.WithValue(tensor.New(tensor.WithBacking([]float64{1, 2, 3}))))
	h := gorgonia.Must(gorgonia.Tanh(gorgonia.Must(gorgonia.Mul(W, x))))
	cost := gorgonia.Must(gorgonia.Sum(gorgonia.Must(gorgonia.Square(h))))

	rep, err := graphs.GradCheck(cost, gorgonia.Nodes{W, x})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("cost %.6f, all within tolerance: %v\n", rep.Cost, rep.OK())
	for _, n := range rep.Nodes {
		fmt.Printf("%s: %d of %d elements checked, max abs error below 1e-8: %v\n",
			n.Name, n.Checked, n.Size, n.MaxAbsErr < 1e-8)
	}

	// The same check on a LispMachine, which differentiates with each Op's DoDiff.
	_, err = graphs.GradCheck(cost, gorgonia.Nodes{W, x}, graphs.WithMachine(graphs.Lisp))
	fmt.Println("lisp machine:", err)

	// A mismatch is an error matching graphs.ErrGradient; an argument error is not.
	_, err = graphs.GradCheck(h, gorgonia.Nodes{W})
	fmt.Println(errors.Is(err, graphs.ErrGradient), err)
	// Output:
	// cost 0.432783, all within tolerance: true
	// W: 6 of 6 elements checked, max abs error below 1e-8: true
	// x: 3 of 3 elements checked, max abs error below 1e-8: true
	// lisp machine: <nil>
	// false graphs.GradCheck: cost: wrong rank: want a scalar cost, got shape (2)
}

// SoftArgmin turns the costs of three candidate configurations into probabilities that
// favour the cheapest; its gradient flows back to the costs.
func ExampleSoftArgmin() {
	g := gorgonia.NewGraph()
	costs := gorgonia.NewVector(g, tensor.Float64, gorgonia.WithShape(3), gorgonia.WithName("costs"),
		gorgonia.WithValue(tensor.New(tensor.WithBacking([]float64{3, 1, 2}))))
	p, err := graphs.SoftArgmin(costs, 2) // temperature τ = 1/2
	if err != nil {
		log.Fatal(err)
	}
	// expected cost under p
	expected := gorgonia.Must(gorgonia.Sum(gorgonia.Must(gorgonia.HadamardProd(p, costs))))
	grads := gradOf(expected, costs)
	fmt.Printf("p = %.4f\n", p.Value().Data())
	fmt.Printf("E[cost] = %.4f\n", expected.Value().Data())
	fmt.Printf("dE/dcosts = %.4f\n", grads[0].Value().Data())

	// The same numbers on plain slices.
	c := []float64{3, 1, 2}
	probs, err := graphs.SoftArgminProbs(c, 2)
	if err != nil {
		panic(err)
	}
	vjp, err := graphs.SoftArgminVJP(probs, c, 2) // (∂p/∂c)ᵀ·c; add p for dE/dc
	if err != nil {
		panic(err)
	}
	fmt.Printf("argmin %d, p = %.4f, dE/dc = %.4f\n", graphs.Argmin(c), probs,
		[]float64{probs[0] + vjp[0], probs[1] + vjp[1], probs[2] + vjp[2]})
	// Output:
	// p = [0.0159 0.8668 0.1173]
	// E[cost] = 1.1491
	// dE/dcosts = [-0.0429 1.1252 -0.0823]
	// argmin 1, p = [0.0159 0.8668 0.1173], dE/dc = [-0.0429 1.1252 -0.0823]
}

// NaturalGradient preconditions a gradient with respect to the logits of a categorical
// distribution by the inverse of its Fisher information diag(p) − ppᵀ.
func ExampleNaturalGradient() {
	p := []float64{0.5, 0.25, 0.25}
	grad := []float64{0.1, -0.3, 0.2}           // sums to 0: it lies in the range of F
	for _, lambda := range []float64{0, 1e-3} { // 0: pseudo-inverse, orthogonal to 1; >0: (F + λI)⁻¹·grad
		x, err := graphs.NaturalGradient(p, grad, lambda)
		if err != nil {
			panic(err)
		}
		fmt.Printf("%.4f\n", x)
	}
	// Output:
	// [0.2667 -1.1333 0.8667]
	// [0.2660 -1.1290 0.8630]
}

// LogDetPlusRidge computes log det(H + λI) per row of a batch of matrices.
func ExampleLogDetPlusRidge() {
	g := gorgonia.NewGraph()
	H := gorgonia.NewTensor(g, tensor.Float64, 3, gorgonia.WithShape(2, 2, 2), gorgonia.WithName("H"),
		gorgonia.WithValue(tensor.New(tensor.WithShape(2, 2, 2), tensor.WithBacking([]float64{
			2, 0, 0, 3, // det 6
			2, 1, 1, 2, // det 3
		}))))
	ld, err := graphs.LogDetPlusRidge(H, 0)
	if err != nil {
		log.Fatal(err)
	}
	grads := gradOf(gorgonia.Must(gorgonia.Sum(ld)), H)
	fmt.Printf("log det = %.4f\n", ld.Value().Data())
	fmt.Printf("gradient (H⁻¹) = %.4f\n", grads[0].Value().Data())
	// Output:
	// log det = [1.7918 1.0986]
	// gradient (H⁻¹) = [0.5000 0.0000 0.0000 0.3333 0.6667 -0.3333 -0.3333 0.6667]
}

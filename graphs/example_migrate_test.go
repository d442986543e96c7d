package graphs_test

import (
	"errors"
	"fmt"
	"log"
	"strings"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/gatejet/gatejet/graphs"
	"github.com/gatejet/gatejet/ops"
)

// softmaxModel builds loss = Σ softmax(X·W) ⊙ T over rows, with the softmax that softmax
// makes, and returns the graph's W and loss.
func softmaxModel(softmax func(z *G.Node) (*G.Node, error)) (W, loss *G.Node) {
	g := G.NewGraph()
	X := G.NewMatrix(g, tensor.Float64, G.WithShape(2, 3), G.WithName("X"),
		G.WithValue(tensor.New(tensor.WithShape(2, 3), tensor.WithBacking([]float64{0.5, -1, 2, 1.5, 0.25, -0.5}))))
	W = G.NewMatrix(g, tensor.Float64, G.WithShape(3, 2), G.WithName("W"),
		G.WithValue(tensor.New(tensor.WithShape(3, 2), tensor.WithBacking([]float64{0.1, -0.2, 0.3, 0.4, -0.5, 0.6}))))
	T := G.NewMatrix(g, tensor.Float64, G.WithShape(2, 2), G.WithName("T"),
		G.WithValue(tensor.New(tensor.WithShape(2, 2), tensor.WithBacking([]float64{1, 0, 0, 1}))))
	p, err := softmax(G.Must(G.Mul(X, W)))
	if err != nil {
		log.Fatal(err)
	}
	return W, G.Must(G.Sum(G.Must(G.HadamardProd(p, T))))
}

// Moving a second-order graph off gorgonia.SoftMax and gorgonia.Grad: a gradient penalty
// ‖∇_W loss‖² needs the gradient of the softmax's gradient. Gorgonia's softmax gradient
// cannot be differentiated again, and gorgonia.Grad, called a second time, returns the
// derivatives it cached the first time; graphs.Grad says which op stops it. With
// ops.Softmax(z, -1) in place of gorgonia.SoftMax(z) and graphs.Grad for both gradients,
// the penalty's gradient is built and checks against finite differences.
func ExampleGrad_fromGorgoniaSoftMax() {
	// Before: gorgonia.SoftMax.
	W, loss := softmaxModel(func(z *G.Node) (*G.Node, error) { return G.SoftMax(z) })
	grad, err := graphs.Grad(loss, W) // first order: fine
	if err != nil {
		log.Fatal(err)
	}
	penalty := G.Must(G.Sum(G.Must(G.Square(grad[0]))))
	_, err = graphs.Grad(penalty, W)
	fmt.Println("gorgonia.SoftMax, second order:", errors.Is(err, graphs.ErrNotDifferentiable),
		strings.Contains(err.Error(), "build the softmax with ops.Softmax"))

	// After: ops.Softmax along the last axis, graphs.Grad for both orders.
	W, loss = softmaxModel(func(z *G.Node) (*G.Node, error) { return ops.Softmax(z, -1) })
	grad, err = graphs.Grad(loss, W)
	if err != nil {
		log.Fatal(err)
	}
	penalty = G.Must(G.Sum(G.Must(G.Square(grad[0]))))
	if _, err := graphs.Grad(penalty, W); err != nil {
		log.Fatal(err)
	}
	rep, err := graphs.GradCheck(penalty, G.Nodes{W})
	fmt.Println("ops.Softmax, second order, checked against finite differences:", rep.OK(), err)
	// Output:
	// gorgonia.SoftMax, second order: true true
	// ops.Softmax, second order, checked against finite differences: true <nil>
}

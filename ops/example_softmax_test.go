package ops_test

import (
	"fmt"
	"math"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/gatejet/gatejet/ops"
)

// Softmax along the last axis (rows) and along the first (columns) of the same matrix, and the
// gradient of the first row's first probability, through gorgonia.Grad: y₀·(e₀ − y).
func ExampleSoftmax() {
	g := G.NewGraph()
	x := G.NewMatrix(g, tensor.Float64, G.WithShape(2, 2), G.WithName("x"),
		G.WithValue(tensor.New(tensor.WithShape(2, 2), tensor.WithBacking([]float64{0, math.Log(3), 1, 1}))))
	rows := G.Must(ops.Softmax(x, -1)) // what gorgonia.SoftMax(x) computes
	cols := G.Must(ops.Softmax(x, 0))
	w := G.NewMatrix(g, tensor.Float64, G.WithShape(2, 2), G.WithName("w"),
		G.WithValue(tensor.New(tensor.WithShape(2, 2), tensor.WithBacking([]float64{1, 0, 0, 0}))))
	cost := G.Must(G.Sum(G.Must(G.HadamardProd(rows, w)))) // rows[0][0]
	dx := gradAfterRun(cost, x)
	fmt.Printf("axis -1 %.4f\n", rows.Value().Data())
	fmt.Printf("axis 0  %.4f\n", cols.Value().Data())
	fmt.Printf("∂y₀₀/∂x %.4f\n", dx.Data())
	// Output:
	// axis -1 [0.2500 0.7500 0.5000 0.5000]
	// axis 0  [0.2689 0.5246 0.7311 0.4754]
	// ∂y₀₀/∂x [0.1875 -0.1875 0.0000 0.0000]
}

// Log-probabilities of a vector with a masked (−Inf) entry, and the gradient of the negative
// log-likelihood of the last class: softmax(x) − e₂ (0 for the masked entry).
func ExampleLogSoftmax() {
	g := G.NewGraph()
	x := G.NewVector(g, tensor.Float64, G.WithShape(3), G.WithName("x"),
		G.WithValue(tensor.New(tensor.WithShape(3), tensor.WithBacking([]float64{0, math.Inf(-1), math.Log(3)}))))
	y := G.Must(ops.LogSoftmax(x, 0))
	pick := G.NewVector(g, tensor.Float64, G.WithShape(3), G.WithName("pick"),
		G.WithValue(tensor.New(tensor.WithShape(3), tensor.WithBacking([]float64{0, 0, -1}))))
	nll := G.Must(G.Sum(G.Must(G.HadamardProd(y, pick)))) // −log p₂
	dx := gradAfterRun(nll, x)
	fmt.Printf("log p %.4f\n", y.Value().Data())
	fmt.Printf("∂nll/∂x %.4f\n", dx.Data())
	// Output:
	// log p [-1.3863 -Inf -0.2877]
	// ∂nll/∂x [0.2500 0.0000 -0.2500]
}

// gradAfterRun adds the gradient of cost with respect to x to their graph (gorgonia.Grad),
// runs the graph once on a TapeMachine that binds x's dual value, and returns that gradient.
func gradAfterRun(cost, x *G.Node) G.Value {
	if _, err := G.Grad(cost, x); err != nil {
		panic(err)
	}
	runTape(x.Graph(), G.BindDualValues(x))
	dx, err := x.Grad()
	if err != nil {
		panic(err)
	}
	return dx
}

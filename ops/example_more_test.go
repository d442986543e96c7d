package ops_test

import (
	"fmt"
	"math"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/gatejet/gatejet/graphs"
	"github.com/gatejet/gatejet/ops"
)

// oneRow is a batch of one row gating K = 2 atoms with P = 1 output column:
// logits (0, ln 3), so that softmax gives ζ = (¼, ¾), and decoded values (1, 3).
func oneRow(g *G.ExprGraph) (logits, decoded *G.Node) {
	logits = G.NewMatrix(g, tensor.Float64, G.WithShape(1, 2), G.WithName("logits"),
		G.WithValue(tensor.New(tensor.WithShape(1, 2), tensor.WithBacking([]float64{0, math.Log(3)}))))
	decoded = G.NewTensor(g, tensor.Float64, 3, G.WithShape(1, 2, 1), G.WithName("decoded"),
		G.WithValue(tensor.New(tensor.WithShape(1, 2, 1), tensor.WithBacking([]float64{1, 3}))))
	return logits, decoded
}

// runTape runs the graph once on a TapeMachine made with opts.
func runTape(g *G.ExprGraph, opts ...G.VMOpt) {
	vm := G.NewTapeMachine(g, opts...)
	defer vm.Close()
	if err := vm.RunAll(); err != nil {
		panic(err)
	}
}

// valueAfterRun runs n's graph once on a TapeMachine and returns n's value, read as it ran.
func valueAfterRun(n *G.Node) G.Value {
	var v G.Value
	G.Read(n, &v)
	runTape(n.Graph())
	return v
}

// The reconstruction ẑ = Σ_k softmax(l)_k·D[k] and, through graphs.Grad, which can
// differentiate a gradient, the Hessian of a loss on it applied to a direction.
func ExampleSoftmaxJetValue() {
	g := G.NewGraph()
	logits, decoded := oneRow(g)
	z := G.Must(ops.SoftmaxJetValue(logits, decoded, 1)) // ẑ = ¼·1 + ¾·3 = 2.5
	loss := G.Must(G.Sum(G.Must(G.Square(z))))           // ẑ²
	grad, err := graphs.Grad(loss, logits)               // 2ẑ·∂ẑ/∂l = 5·(−0.375, 0.375)
	if err != nil {
		panic(err)
	}
	v := G.NewMatrix(g, tensor.Float64, G.WithShape(1, 2), G.WithName("v"),
		G.WithValue(tensor.New(tensor.WithShape(1, 2), tensor.WithBacking([]float64{1, 0}))))
	hv, err := graphs.Grad(G.Must(G.Sum(G.Must(G.HadamardProd(grad[0], v)))), logits)
	if err != nil {
		panic(err)
	}
	var zv, gv, hvv G.Value
	G.Read(z, &zv)
	G.Read(grad[0], &gv)
	G.Read(hv[0], &hvv)
	runTape(g)
	fmt.Printf("ẑ %.4f\n", zv.Data())
	fmt.Printf("∇ %.4f\n", gv.Data())
	fmt.Printf("H·v %.4f\n", hvv.Data())
	// Output:
	// ẑ [2.5000]
	// ∇ [-1.8750 1.8750]
	// H·v [-0.6562 0.6562]
}

// The second channel: the K×K Hessian of each output column in the logits.
func ExampleSoftmaxJetSecond() {
	logits, decoded := oneRow(G.NewGraph())
	second := G.Must(ops.SoftmaxJetSecond(logits, decoded, 1))
	fmt.Println(second.Shape())
	fmt.Printf("%.4f\n", valueAfterRun(second).Data())
	// Output:
	// (1, 2, 2, 1)
	// [-0.1875 0.1875 0.1875 -0.1875]
}

// alpha and beta are the parameters of the per-atom gate σ(α_k·l_k + β_k) in the Logistic*
// examples: on the row of oneRow, ζ = (σ(0), σ(2·ln 3 − 1)) = (0.5, 0.768).
var alpha, beta = []float64{1, 2}, []float64{0, -1}

// The logistic gate's reconstruction ẑ = Σ_k ζ_k·D[k] = 0.5·1 + 0.768·3.
func ExampleLogisticJetValue() {
	logits, decoded := oneRow(G.NewGraph())
	z := G.Must(ops.LogisticJetValue(logits, decoded, alpha, beta))
	fmt.Printf("%.4f\n", valueAfterRun(z).Data())
	// Output:
	// [2.8041]
}

// Each atom's gate depends on its own logit only: first[a] = α_a·σ'_a·D[a].
func ExampleLogisticJetFirst() {
	logits, decoded := oneRow(G.NewGraph())
	first := G.Must(ops.LogisticJetFirst(logits, decoded, alpha, beta))
	fmt.Printf("%.4f\n", valueAfterRun(first).Data())
	// Output:
	// [0.2500 1.0690]
}

// The logistic gate's second channel is diagonal: α_a²·σ″_a·D[a] (σ″ = 0 at σ = ½).
func ExampleLogisticJetSecond() {
	logits, decoded := oneRow(G.NewGraph())
	second := G.Must(ops.LogisticJetSecond(logits, decoded, alpha, beta))
	fmt.Printf("%.4f\n", valueAfterRun(second).Data())
	// Output:
	// [0.0000 0.0000 0.0000 -1.1461]
}

// The Hessian-vector product Σ_b second[a][b]·v_b, without building second.
func ExampleLogisticJetHVP() {
	g := G.NewGraph()
	logits, decoded := oneRow(g)
	v := G.NewMatrix(g, tensor.Float64, G.WithShape(1, 2), G.WithName("v"),
		G.WithValue(tensor.New(tensor.WithShape(1, 2), tensor.WithBacking([]float64{1, 1}))))
	hvp := G.Must(ops.LogisticJetHVP(logits, decoded, v, alpha, beta))
	fmt.Printf("%.4f\n", valueAfterRun(hvp).Data())
	// Output:
	// [0.0000 -1.1461]
}

// The Gauss-Newton slab first·firstᵀ of the logistic gate.
func ExampleLogisticJetGaussNewton() {
	logits, decoded := oneRow(G.NewGraph())
	gn := G.Must(ops.LogisticJetGaussNewton(logits, decoded, alpha, beta))
	fmt.Printf("%.4f\n", valueAfterRun(gn).Data())
	// Output:
	// [0.0625 0.2672 0.2672 1.1427]
}

// LogSoftmaxBackward takes the saved log-softmax output y: dx = dy − exp(y)·Σ dy.
func ExampleLogSoftmaxBackward() {
	g := G.NewGraph()
	y := G.NewVector(g, tensor.Float64, G.WithShape(3), G.WithName("y"),
		G.WithValue(tensor.New(tensor.WithShape(3), tensor.WithBacking([]float64{math.Log(0.2), math.Log(0.3), math.Log(0.5)}))))
	dy := G.NewVector(g, tensor.Float64, G.WithShape(3), G.WithName("dy"),
		G.WithValue(tensor.New(tensor.WithShape(3), tensor.WithBacking([]float64{1, 0, 0}))))
	dx := G.Must(ops.LogSoftmaxBackward(y, dy, -1))
	fmt.Printf("%.2f\n", valueAfterRun(dx).Data())
	// Output:
	// [0.80 -0.30 -0.50]
}

// activationInput is x = (−1, 0, 2) for the activation examples.
func activationInput(g *G.ExprGraph) *G.Node {
	return G.NewVector(g, tensor.Float64, G.WithShape(3), G.WithName("x"),
		G.WithValue(tensor.New(tensor.WithShape(3), tensor.WithBacking([]float64{-1, 0, 2}))))
}

// ReLU, GELU and SiLU are differentiable twice: their gradients are the *Backward ops.
func ExampleReLU() {
	y := G.Must(ops.ReLU(activationInput(G.NewGraph())))
	fmt.Printf("%.4f\n", valueAfterRun(y).Data())
	// Output:
	// [0.0000 0.0000 2.0000]
}

// SiLU(x) = x·σ(x).
func ExampleSiLU() {
	y := G.Must(ops.SiLU(activationInput(G.NewGraph())))
	fmt.Printf("%.4f\n", valueAfterRun(y).Data())
	// Output:
	// [-0.2689 0.0000 1.7616]
}

// The backward ops take the forward input x and the upstream gradient dy: dx = dy·f'(x).
func ExampleReLUBackward() {
	x := activationInput(G.NewGraph())
	dx := G.Must(ops.ReLUBackward(x, G.NewConstant(tensor.New(tensor.WithShape(3), tensor.WithBacking([]float64{1, 1, 1})))))
	fmt.Printf("%.4f\n", valueAfterRun(dx).Data())
	// Output:
	// [0.0000 0.0000 1.0000]
}

// GELU'(x) in the tanh form; GELU'(0) = ½.
func ExampleGELUBackward() {
	x := activationInput(G.NewGraph())
	dx := G.Must(ops.GELUBackward(x, G.NewConstant(tensor.New(tensor.WithShape(3), tensor.WithBacking([]float64{1, 1, 1})))))
	fmt.Printf("%.4f\n", valueAfterRun(dx).Data())
	// Output:
	// [-0.0830 0.5000 1.0861]
}

// SiLU'(x) = σ(x)·(1 + x·(1 − σ(x))).
func ExampleSiLUBackward() {
	x := activationInput(G.NewGraph())
	dx := G.Must(ops.SiLUBackward(x, G.NewConstant(tensor.New(tensor.WithShape(3), tensor.WithBacking([]float64{1, 1, 1})))))
	fmt.Printf("%.4f\n", valueAfterRun(dx).Data())
	// Output:
	// [0.0723 0.5000 1.0908]
}

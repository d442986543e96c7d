package ops_test

import (
	"fmt"
	"math"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/gatejet/gatejet/ops"
)

// A batch of one row gating K = 2 atoms with P = 1 output column: the first channel is the
// Jacobian of the reconstruction with respect to the logits, and its gradient (for a cost
// built on it) comes from gorgonia.Grad like that of any other node.
func ExampleSoftmaxJetFirst() {
	g := G.NewGraph()
	logits, decoded := oneRow(g)

	// ζ = softmax(0, ln 3) = (¼, ¾), ẑ = 2.5, first[a] = ζ_a·(D_a − ẑ) = (−0.375, 0.375).
	first := G.Must(ops.SoftmaxJetFirst(logits, decoded, 1))
	cost := G.Must(G.Sum(G.Must(G.Square(first)))) // Σ first² = 0.28125
	if _, err := G.Grad(cost, logits, decoded); err != nil {
		panic(err)
	}
	runTape(g, G.BindDualValues(logits, decoded), G.TraceExec())
	gl, _ := logits.Grad()
	gd, _ := decoded.Grad()
	p, _ := ops.LastPath(first)
	fmt.Printf("first %.4f\n", first.Value().Data())
	fmt.Printf("cost %.5f\n", cost.Value().Data())
	fmt.Printf("d/dlogits %.5f\n", gl.Data())
	fmt.Printf("d/ddecoded %.5f\n", gd.Data())
	fmt.Println("path", p)
	// Output:
	// first [-0.3750 0.3750]
	// cost 0.28125
	// d/dlogits [0.28125 -0.28125]
	// d/ddecoded [-0.28125 0.28125]
	// path cpu
}

// The Gauss-Newton slab H = first·firstᵀ of each row, computed without building first.
func ExampleSoftmaxJetGaussNewton() {
	g := G.NewGraph()
	logits := G.NewMatrix(g, tensor.Float64, G.WithShape(1, 2), G.WithName("logits"),
		G.WithValue(tensor.New(tensor.WithShape(1, 2), tensor.WithBacking([]float64{0, 0}))))
	decoded := G.NewTensor(g, tensor.Float64, 3, G.WithShape(1, 2, 1), G.WithName("decoded"),
		G.WithValue(tensor.New(tensor.WithShape(1, 2, 1), tensor.WithBacking([]float64{1, 3}))))
	gn := G.Must(ops.SoftmaxJetGaussNewton(logits, decoded, 1))
	fmt.Println(gn.Shape())
	fmt.Printf("%.2f\n", valueAfterRun(gn).Data())
	// Output:
	// (1, 2, 2)
	// [0.25 -0.25 -0.25 0.25]
}

// SoftmaxBackward from a saved softmax output y, on a LispMachine: its gradient with respect
// to both y and dy (the double backward) comes from the op's DoDiff.
func ExampleSoftmaxBackward() {
	g := G.NewGraph()
	y := G.NewVector(g, tensor.Float64, G.WithShape(3), G.WithName("y"),
		G.WithValue(tensor.New(tensor.WithShape(3), tensor.WithBacking([]float64{0.2, 0.3, 0.5}))))
	dy := G.NewVector(g, tensor.Float64, G.WithShape(3), G.WithName("dy"),
		G.WithValue(tensor.New(tensor.WithShape(3), tensor.WithBacking([]float64{1, 0, 0}))))
	dx := G.Must(ops.SoftmaxBackward(y, dy, 0)) // dx = y⊙(dy − ⟨y,dy⟩)
	cost := G.Must(G.Sum(G.Must(G.Square(dx))))
	vm := G.NewLispMachine(g)
	defer vm.Close()
	if err := vm.RunAll(); err != nil {
		panic(err)
	}
	gy, _ := y.Grad()
	gdy, _ := dy.Grad()
	fmt.Printf("dx %.2f\n", dx.Value().Data())
	fmt.Printf("Σdx² %.4f\n", cost.Value().Data())
	fmt.Printf("d/dy %.4f\n", gy.Data())
	fmt.Printf("d/ddy %.4f\n", gdy.Data())
	// Output:
	// dx [0.16 -0.06 -0.10]
	// Σdx² 0.0392
	// d/dy [0.3280 0.0240 0.0400]
	// d/ddy [0.0784 -0.0144 -0.0640]
}

// GELU's gradient is the GELUBackward op, itself differentiable.
func ExampleGELU() {
	g := G.NewGraph()
	x := G.NewVector(g, tensor.Float32, G.WithShape(3), G.WithName("x"),
		G.WithValue(tensor.New(tensor.WithShape(3), tensor.WithBacking([]float32{-1, 0, 1}))))
	y := G.Must(ops.GELU(x))
	grads, err := G.Grad(G.Must(G.Sum(y)), x)
	if err != nil {
		panic(err)
	}
	runTape(g, G.TraceExec())
	fmt.Printf("gelu %.4f\n", y.Value().Data())
	fmt.Printf("gelu' %.4f (%v)\n", grads[0].Value().Data(), grads[0].Op())
	// Output:
	// gelu [-0.1588 0.0000 0.8412]
	// gelu' [-0.0830 0.5000 1.0830] (ops.GELUBackward)
}

// The Hessian-vector product along v equals the second channel contracted with v, without
// building the second channel (O(K·P) per row instead of O(K²·P)).
func ExampleSoftmaxJetHVP() {
	g := G.NewGraph()
	logits, decoded := oneRow(g)
	v := G.NewMatrix(g, tensor.Float64, G.WithShape(1, 2), G.WithName("v"),
		G.WithValue(tensor.New(tensor.WithShape(1, 2), tensor.WithBacking([]float64{1, 0}))))
	second := G.Must(ops.SoftmaxJetSecond(logits, decoded, 1))
	hvp := G.Must(ops.SoftmaxJetHVP(logits, decoded, v, 1))
	runTape(g, G.TraceExec())
	fmt.Println("second", second.Shape())
	fmt.Printf("%.4f\n", second.Value().Data())
	fmt.Println("hvp", hvp.Shape())
	fmt.Printf("%.4f\n", hvp.Value().Data())
	// Output:
	// second (1, 2, 2, 1)
	// [-0.1875 0.1875 0.1875 -0.1875]
	// hvp (1, 2, 1)
	// [-0.1875 0.1875]
}

// A training loop that runs one TapeMachine many times: with ReuseOutput the second channel
// is written into the same buffer every run instead of a new 4-D tensor, so a value that must
// outlive the next run is copied first.
func ExampleReuseOutput() {
	g := G.NewGraph()
	logits := G.NewMatrix(g, tensor.Float64, G.WithShape(1, 2), G.WithName("logits")) // set before each run
	decoded := G.NewTensor(g, tensor.Float64, 3, G.WithShape(1, 2, 1), G.WithName("decoded"),
		G.WithValue(tensor.New(tensor.WithShape(1, 2, 1), tensor.WithBacking([]float64{1, 3}))))
	second := G.Must(ops.SoftmaxJetSecond(logits, decoded, 1, ops.ReuseOutput()))
	vm := G.NewTapeMachine(g)
	defer vm.Close()

	var kept []float64
	var last G.Value
	for step, l := range [][]float64{{0, math.Log(3)}, {math.Log(3), 0}} {
		if err := G.Let(logits, tensor.New(tensor.WithShape(1, 2), tensor.WithBacking(l))); err != nil {
			panic(err)
		}
		if err := vm.RunAll(); err != nil {
			panic(err)
		}
		vm.Reset()
		if step == 0 {
			kept = append(kept, second.Value().Data().([]float64)...) // a copy survives the next run
			last = second.Value()                                     // the value itself does not
		}
	}
	// second[a][b] = δ_ab·ζ_a·e_a − ζ_a·ζ_b·(e_a + e_b), e = D − ẑ: with ζ = (¼, ¾) at step 0,
	// e = (−1.5, 0.5); with ζ = (¾, ¼) at step 1, e = (−0.5, 1.5).
	fmt.Printf("step 0, copied:     %.4f\n", kept)
	fmt.Printf("step 0 value, now:  %.4f\n", last.Data())
	fmt.Printf("step 1:             %.4f\n", second.Value().Data())
	// Output:
	// step 0, copied:     [-0.1875 0.1875 0.1875 -0.1875]
	// step 0 value, now:  [0.1875 -0.1875 -0.1875 0.1875]
	// step 1:             [0.1875 -0.1875 -0.1875 0.1875]
}

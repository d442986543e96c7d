package readme_test

import (
	"errors"
	"fmt"
	"log"
	"math"

	"github.com/gatejet/gatejet"
	"github.com/gatejet/gatejet/cudaops"
	"github.com/gatejet/gatejet/graphs"
	"github.com/gatejet/gatejet/ops"
	"github.com/gatejet/gatejet/softmaxjet"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// docs/tour.md: "Plain slices".
func Example_slices() {
	sh := softmaxjet.Shape{N: 1, K: 3, P: 2} // one row, 3 atoms, 2 output columns
	logits := []float64{0.2, -0.4, 1.0}
	decoded := []float64{
		1, 0, // atom 0
		0, 1, // atom 1
		-1, 2, // atom 2
	}
	invTau := 1.0 // s = 1/τ

	value := make([]float64, sh.ValueLen())   // ẑ_c              [N,P]
	first := make([]float64, sh.FirstLen())   // ∂ẑ_c/∂l_a         [N,K,P]
	second := make([]float64, sh.SecondLen()) // ∂²ẑ_c/∂l_a∂l_b    [N,K,K,P]
	hvp := make([]float64, sh.FirstLen())     // second·v, without building second
	gn := make([]float64, sh.GNLen())         // Gauss-Newton slab [N,K,K]
	v := []float64{1, 0, 0}                   // a direction in logit space
	gate := softmaxjet.Softmax[float64]{InvTau: invTau}
	for _, err := range []error{
		gate.Value(value, logits, decoded, sh),
		gate.First(first, logits, decoded, sh),
		gate.Second(second, logits, decoded, sh),
		gate.HVP(hvp, logits, decoded, v, sh),
		gate.GaussNewton(gn, logits, decoded, sh),
	} {
		if err != nil {
			log.Fatal(err)
		}
	}
	fmt.Printf("value  %.4f\n", value)
	fmt.Printf("first  %.4f\n", first)
	fmt.Printf("hvp    %.4f\n", hvp)
	fmt.Printf("gn     %.4f\n", gn)
	// Output:
	// value  [-0.3247 1.3247]
	// first  [0.3510 -0.3510 0.0472 -0.0472 -0.3982 0.3982]
	// hvp    [0.1650 -0.1650 -0.0635 0.0635 -0.1015 0.1015]
	// gn     [0.2464 0.0331 -0.2795 0.0331 0.0045 -0.0376 -0.2795 -0.0376 0.3171]
}

// docs/tour.md: "In a Gorgonia graph".
func Example_graph() {
	g := gorgonia.NewGraph()
	logits := gorgonia.NewMatrix(g, gorgonia.Float64, gorgonia.WithShape(2, 3), gorgonia.WithName("logits"),
		gorgonia.WithValue(tensor.New(tensor.WithShape(2, 3), tensor.WithBacking([]float64{
			0.2, -0.4, 1.0,
			0.5, 0.5, -1.0,
		}))))
	decoded := gorgonia.NewTensor(g, gorgonia.Float64, 3, gorgonia.WithShape(2, 3, 2), gorgonia.WithName("decoded"),
		gorgonia.WithValue(tensor.New(tensor.WithShape(2, 3, 2), tensor.WithBacking([]float64{
			1, 0, 0, 1, -1, 2,
			2, 1, 0, -1, 1, 1,
		}))))
	target := gorgonia.NewMatrix(g, gorgonia.Float64, gorgonia.WithShape(2, 2), gorgonia.WithName("y"),
		gorgonia.WithValue(tensor.New(tensor.WithShape(2, 2), tensor.WithBacking([]float64{0, 1, 1, 0}))))

	invTau, lambda := 1.0, 0.1
	value, err := ops.SoftmaxJetValue(logits, decoded, invTau) // ẑ [2,2]
	if err != nil {
		log.Fatal(err)
	}
	logdet, err := graphs.GaussNewtonLogDet(logits, decoded, invTau, lambda) // log det(H + λI) [2]
	if err != nil {
		log.Fatal(err)
	}
	// loss = mean((ẑ − y)²) + ½·mean(log det(H + λI)), built with Gorgonia's own ops
	fit := gorgonia.Must(gorgonia.Mean(gorgonia.Must(gorgonia.Square(gorgonia.Must(gorgonia.Sub(value, target))))))
	occam := gorgonia.Must(gorgonia.Mul(gorgonia.Must(gorgonia.Mean(logdet)), gorgonia.NewConstant(0.5)))
	loss := gorgonia.Must(gorgonia.Add(fit, occam))

	if _, err := gorgonia.Grad(loss, logits, decoded); err != nil {
		log.Fatal(err)
	}
	var lossValue gorgonia.Value
	gorgonia.Read(loss, &lossValue) // copy the value out as the tape runs
	vm := gorgonia.NewTapeMachine(g, gorgonia.BindDualValues(logits, decoded))
	defer vm.Close()
	if err := vm.RunAll(); err != nil {
		log.Fatal(err)
	}
	dLogits, _ := logits.Grad()
	fmt.Printf("loss %.4f\n", lossValue)
	fmt.Printf("∂loss/∂logits %.4f\n", dLogits.Data())
	// Output:
	// loss -2.3556
	// ∂loss/∂logits [0.0287 -0.0643 0.0355 0.0162 -0.0017 -0.0145]
}

// docs/tour.md: "In a Gorgonia graph", ReuseOutput.
func Example_reuseOutput() {
	g := gorgonia.NewGraph()
	logits := gorgonia.NewMatrix(g, gorgonia.Float64, gorgonia.WithShape(1, 2), gorgonia.WithName("logits"))
	decoded := gorgonia.NewTensor(g, gorgonia.Float64, 3, gorgonia.WithShape(1, 2, 1), gorgonia.WithName("decoded"),
		gorgonia.WithValue(tensor.New(tensor.WithShape(1, 2, 1), tensor.WithBacking([]float64{1, 3}))))
	second, err := ops.SoftmaxJetSecond(logits, decoded, 1, ops.ReuseOutput())
	if err != nil {
		log.Fatal(err)
	}
	vm := gorgonia.NewTapeMachine(g)
	defer vm.Close()
	var kept [][]float64
	for _, l1 := range []float64{-1, 1} {
		if err := gorgonia.Let(logits, tensor.New(tensor.WithShape(1, 2), tensor.WithBacking([]float64{0, l1}))); err != nil {
			log.Fatal(err)
		}
		if err := vm.RunAll(); err != nil {
			log.Fatal(err)
		}
		vm.Reset()
		// The same memory every run: copy what must outlive the next one.
		kept = append(kept, append([]float64(nil), second.Value().Data().([]float64)...))
	}
	fmt.Printf("%.4f\n", kept)
	// Output:
	// [[0.1817 -0.1817 -0.1817 0.1817] [-0.1817 0.1817 0.1817 -0.1817]]
}

// docs/tour.md: "Softmax and log-softmax", replacing gorgonia.SoftMax.
func Example_softmax() {
	g := gorgonia.NewGraph()
	x := gorgonia.NewMatrix(g, gorgonia.Float64, gorgonia.WithShape(2, 3), gorgonia.WithName("x"),
		gorgonia.WithValue(tensor.New(tensor.WithShape(2, 3), tensor.WithBacking([]float64{
			1, 2, 3,
			0, 1, math.Inf(-1), // a masked entry: probability 0
		}))))
	w := gorgonia.NewMatrix(g, gorgonia.Float64, gorgonia.WithShape(2, 3), gorgonia.WithName("w"),
		gorgonia.WithValue(tensor.New(tensor.WithShape(2, 3), tensor.WithBacking([]float64{1, 0, 0, 0, 1, 0}))))
	p, err := ops.Softmax(x, -1) // was: gorgonia.SoftMax(x)
	if err != nil {
		log.Fatal(err)
	}
	loss := gorgonia.Must(gorgonia.Sum(gorgonia.Must(gorgonia.HadamardProd(p, w))))
	grad, err := graphs.Grad(loss, x) // through ops.SoftmaxBackward, which is differentiable
	if err != nil {
		log.Fatal(err)
	}
	penalty := gorgonia.Must(gorgonia.Sum(gorgonia.Must(gorgonia.Square(grad[0])))) // ‖∇loss‖²
	dPenalty, err := graphs.Grad(penalty, x)
	if err != nil {
		log.Fatal(err)
	}
	var pv, penv, dpv gorgonia.Value
	gorgonia.Read(p, &pv)
	gorgonia.Read(penalty, &penv)
	gorgonia.Read(dPenalty[0], &dpv)
	vm := gorgonia.NewTapeMachine(g)
	defer vm.Close()
	if err := vm.RunAll(); err != nil {
		log.Fatal(err)
	}
	fmt.Printf("softmax %.4f\n", pv.Data())
	fmt.Printf("‖∇loss‖² %.4f\n", penv.Data())
	fmt.Printf("∂‖∇loss‖²/∂x %.4f\n", dpv.Data())
	// Output:
	// softmax [0.0900 0.2447 0.6652 0.2689 0.7311 0.0000]
	// ‖∇loss‖² 0.0881
	// ∂‖∇loss‖²/∂x [0.0177 -0.0060 -0.0117 0.0715 -0.0715 -0.0000]
}

// docs/tour.md: "Checking gradients".
func Example_gradCheck() {
	g := gorgonia.NewGraph()
	x := gorgonia.NewMatrix(g, gorgonia.Float64, gorgonia.WithShape(4, 3), gorgonia.WithName("x"),
		gorgonia.WithInit(gorgonia.Uniform(-1, 1)))
	w := gorgonia.NewMatrix(g, gorgonia.Float64, gorgonia.WithShape(3, 5), gorgonia.WithName("w"),
		gorgonia.WithInit(gorgonia.Uniform(-1, 1)))
	decoded := gorgonia.NewTensor(g, gorgonia.Float64, 3, gorgonia.WithShape(4, 5, 2), gorgonia.WithName("decoded"),
		gorgonia.WithInit(gorgonia.Uniform(-1, 1)))
	logits, err := ops.GELU(gorgonia.Must(gorgonia.Mul(x, w))) // Gorgonia matmul, gatejet GELU
	if err != nil {
		log.Fatal(err)
	}
	penalty, err := graphs.CurvaturePenalty(logits, decoded, 2.0, 0.1) // 0.1·mean trace(H)
	if err != nil {
		log.Fatal(err)
	}
	second, err := ops.SoftmaxJetSecond(logits, decoded, 2.0)
	if err != nil {
		log.Fatal(err)
	}
	cost := gorgonia.Must(gorgonia.Add(penalty, gorgonia.Must(gorgonia.Sum(gorgonia.Must(gorgonia.Square(second))))))

	for _, m := range []graphs.Machine{graphs.Tape, graphs.Lisp} {
		rep, err := graphs.GradCheck(cost, gorgonia.Nodes{x, w, decoded}, graphs.WithMachine(m))
		if err != nil { // errors.Is(err, graphs.ErrGradient) on a mismatch; rep.String() has the details
			log.Fatal(err)
		}
		fmt.Printf("%s: ok=%v, %d+%d+%d elements\n", m, rep.OK(), rep.Nodes[0].Checked, rep.Nodes[1].Checked, rep.Nodes[2].Checked)
	}
	// Output:
	// tape: ok=true, 12+15+40 elements
	// lisp: ok=true, 12+15+40 elements
}

// docs/tour.md: "Picking a configuration".
func Example_softArgmin() {
	costs := []float64{1.30, 1.00, 1.04, 2.10} // measured costs of 4 configurations
	invTau := 1 / 0.05                         // temperature τ = 0.05

	p, err := graphs.SoftArgminProbs(costs, invTau) // softmax(−c/τ)
	if err != nil {
		log.Fatal(err)
	}
	// Gradient of the expected cost Σ p·c̄ in the costs (c̄ held fixed): J·c̄, J = −(1/τ)(diag p − ppᵀ)
	dc, err := graphs.SoftArgminVJP(p, costs, invTau)
	if err != nil {
		log.Fatal(err)
	}
	// The same in the logits θ = −c/τ, and preconditioned by the Fisher information diag p − ppᵀ
	dTheta := make([]float64, len(dc))
	for i := range dc {
		dTheta[i] = -dc[i] / invTau
	}
	natural, err := graphs.NaturalGradient(p, dTheta, 0)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("hard pick:", graphs.Argmin(costs))
	fmt.Printf("soft pick: %.4f\n", p)
	fmt.Printf("∂E/∂c:     %.4f\n", dc)
	fmt.Printf("natural:   %.4f\n", natural)
	// Output:
	// hard pick: 1
	// soft pick: [0.0017 0.6888 0.3095 0.0000]
	// ∂E/∂c:     [-0.0098 0.1776 -0.1678 -0.0000]
	// natural:   [-0.0600 -0.3600 -0.3200 0.7400]
}

// docs/errors.md.
func Example_errors() {
	g := gorgonia.NewGraph()
	logits := gorgonia.NewMatrix(g, gorgonia.Float64, gorgonia.WithShape(4, 3), gorgonia.WithName("logits"))
	decoded := gorgonia.NewTensor(g, gorgonia.Float64, 3, gorgonia.WithShape(4, 5, 2), gorgonia.WithName("decoded"))
	_, err := ops.SoftmaxJetValue(logits, decoded, 1) // K = 3 against K = 5
	fmt.Println(errors.Is(err, gatejet.ErrShape))
	var ge *gatejet.Error
	if errors.As(err, &ge) {
		fmt.Println(ge.Op, ge.Arg)
	}

	// Non-finite data are not errors: they stay in their own row.
	sh := softmaxjet.Shape{N: 2, K: 2, P: 1}
	value := make([]float64, sh.ValueLen())
	err = softmaxjet.Softmax[float64]{InvTau: 1}.Value(value, []float64{math.NaN(), 0, 1, 2}, []float64{1, 2, 3, 4}, sh)
	fmt.Printf("%.4f %v\n", value, err)

	// An op's error inside a Gorgonia machine's error: graphs.OpError digs it out.
	g = gorgonia.NewGraph()
	h := gorgonia.NewTensor(g, gorgonia.Float64, 3, gorgonia.WithShape(1, 2, 2), gorgonia.WithName("H"),
		gorgonia.WithValue(tensor.New(tensor.WithShape(1, 2, 2), tensor.WithBacking([]float64{-1, 0, 0, -1}))))
	if _, err := graphs.LogDetPlusRidge(h, 0); err != nil {
		log.Fatal(err)
	}
	vm := gorgonia.NewTapeMachine(g)
	defer vm.Close()
	err = vm.RunAll()
	fmt.Println(errors.Is(err, graphs.ErrNotSPD)) // false: Gorgonia's wrapper has no Unwrap
	if opErr := graphs.OpError(err); opErr != nil {
		fmt.Println(errors.Is(opErr, graphs.ErrNotSPD), opErr.Op)
	}
	// Output:
	// true
	// ops.SoftmaxJetValue decoded
	// [NaN 3.7311] <nil>
	// false
	// true graphs.LogDetPlusRidge
}

// docs/tour.md: "Where it runs: CPU or GPU".
func Example_gpu() {
	prev := cudaops.SetMode(cudaops.ModeOff) // ModeAuto is the default; ModeRequired never falls back
	defer cudaops.SetMode(prev)

	g := gorgonia.NewGraph()
	logits := gorgonia.NewMatrix(g, gorgonia.Float64, gorgonia.WithShape(8, 4), gorgonia.WithName("logits"),
		gorgonia.WithInit(gorgonia.Zeroes()))
	decoded := gorgonia.NewTensor(g, gorgonia.Float64, 3, gorgonia.WithShape(8, 4, 3), gorgonia.WithName("decoded"),
		gorgonia.WithInit(gorgonia.Ones()))
	value, err := ops.SoftmaxJetValue(logits, decoded, 1)
	if err != nil {
		log.Fatal(err)
	}
	vm := gorgonia.NewTapeMachine(g)
	defer vm.Close()
	if err := vm.RunAll(); err != nil {
		log.Fatal(err)
	}
	path, _ := ops.LastPath(value)
	fmt.Println(cudaops.CurrentMode(), path)
	// Output:
	// off cpu
}

// docs/tour.md: "Learning the temperature".
func Example_learnTemperature() {
	// Targets made by a gate at τ = 0.5 (s = 1/τ = 2); the model starts at s = 1.
	sh := softmaxjet.Shape{N: 4, K: 3, P: 2}
	l := []float64{0.3, -0.2, 0.8, 1.0, 0.1, -0.5, -0.7, 0.4, 0.2, 0.6, 0.9, -0.3}
	d := []float64{1, 0, 0, 1, -1, 2, 2, 1, 0, -1, 1, 1, 0.5, 0.5, 1, -2, -1, 0, 0, 3, 1, 1, -2, 0}
	target := make([]float64, sh.ValueLen())
	if err := (softmaxjet.Softmax[float64]{InvTau: 2}).Value(target, l, d, sh); err != nil {
		log.Fatal(err)
	}

	g := gorgonia.NewGraph()
	logits := gorgonia.NewMatrix(g, gorgonia.Float64, gorgonia.WithShape(4, 3), gorgonia.WithName("logits"),
		gorgonia.WithValue(tensor.New(tensor.WithShape(4, 3), tensor.WithBacking(l))))
	decoded := gorgonia.NewTensor(g, gorgonia.Float64, 3, gorgonia.WithShape(4, 3, 2), gorgonia.WithName("decoded"),
		gorgonia.WithValue(tensor.New(tensor.WithShape(4, 3, 2), tensor.WithBacking(d))))
	y := gorgonia.NewConstant(tensor.New(tensor.WithShape(4, 2), tensor.WithBacking(target)))
	s := gorgonia.NewScalar(g, gorgonia.Float64, gorgonia.WithName("s"), gorgonia.WithValue(1.0))

	// softmax(s·l) is the gate of the logits s·l at invTau = 1: scale them in the graph, and
	// the gradient reaches s (and l) by the chain rule.
	scaled := gorgonia.Must(gorgonia.Mul(logits, s))
	z, err := ops.SoftmaxJetValue(scaled, decoded, 1)
	if err != nil {
		log.Fatal(err)
	}
	loss := gorgonia.Must(gorgonia.Mean(gorgonia.Must(gorgonia.Square(gorgonia.Must(gorgonia.Sub(z, y))))))

	// Check ∂loss/∂s and ∂loss/∂l against finite differences before training.
	report, err := graphs.GradCheck(loss, gorgonia.Nodes{s, logits})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("gradient check ok:", report.OK())

	// Train s alone with a Gorgonia solver.
	if _, err := gorgonia.Grad(loss, s); err != nil {
		log.Fatal(err)
	}
	vm := gorgonia.NewTapeMachine(g, gorgonia.BindDualValues(s))
	defer vm.Close()
	solver := gorgonia.NewVanillaSolver(gorgonia.WithLearnRate(2))
	for step := 0; step < 300; step++ {
		if err := vm.RunAll(); err != nil {
			log.Fatal(err)
		}
		if err := solver.Step(gorgonia.NodesToValueGrads(gorgonia.Nodes{s})); err != nil {
			log.Fatal(err)
		}
		vm.Reset()
	}
	fmt.Printf("learned τ = %.4f\n", 1/s.Value().Data().(float64))
	// Output:
	// gradient check ok: true
	// learned τ = 0.5000
}

// docs/tour.md: "Second order: a gradient of a gradient".
func Example_hessianVectorProduct() {
	g := gorgonia.NewGraph()
	logits := gorgonia.NewMatrix(g, gorgonia.Float64, gorgonia.WithShape(3, 4), gorgonia.WithName("logits"),
		gorgonia.WithValue(tensor.New(tensor.WithShape(3, 4), tensor.WithBacking([]float64{
			0.5, 0.2, -0.1, 0.3, 0.9, -2, 0.4, 0.1, -0.3, 0.8, 0, 0.6}))))
	decoded := gorgonia.NewTensor(g, gorgonia.Float64, 3, gorgonia.WithShape(3, 4, 2), gorgonia.WithName("decoded"),
		gorgonia.WithInit(gorgonia.Uniform(-1, 1)))
	target := gorgonia.NewMatrix(g, gorgonia.Float64, gorgonia.WithShape(3, 2), gorgonia.WithName("target"),
		gorgonia.WithInit(gorgonia.Uniform(-1, 1)))
	v := gorgonia.NewMatrix(g, gorgonia.Float64, gorgonia.WithShape(3, 4), gorgonia.WithName("v"),
		gorgonia.WithInit(gorgonia.Uniform(-1, 1)))

	z, err := ops.SoftmaxJetValue(logits, decoded, 1.5)
	if err != nil {
		log.Fatal(err)
	}
	loss := gorgonia.Must(gorgonia.Sum(gorgonia.Must(gorgonia.Square(gorgonia.Must(gorgonia.Sub(z, target))))))

	// ∇loss, then the gradient of ⟨∇loss, v⟩: the Hessian of the whole loss times v.
	grad, err := graphs.Grad(loss, logits)
	if err != nil {
		log.Fatal(err)
	}
	directional := gorgonia.Must(gorgonia.Sum(gorgonia.Must(gorgonia.HadamardProd(grad[0], v))))
	hv, err := graphs.Grad(directional, logits)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("H·v shape", hv[0].Shape())

	// Check it: GradCheck differentiates ⟨∇loss, v⟩ again and compares with central
	// differences of it, which hold the second derivatives of the loss.
	rep, err := graphs.GradCheck(directional, gorgonia.Nodes{logits, decoded})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("checked:", rep.OK())
	// Output:
	// H·v shape (3, 4)
	// checked: true
}

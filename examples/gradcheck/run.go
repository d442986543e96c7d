package main

import (
	"fmt"
	"math/rand/v2"
	"strings"

	"github.com/gatejet/gatejet/graphs"
	"github.com/gatejet/gatejet/internal/exampleutil"
	"github.com/gatejet/gatejet/internal/floats"
	"github.com/gatejet/gatejet/ops"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// Sizes of the checked graph: every element of every input is perturbed, twice.
const (
	rows   = 3 // n
	inDim  = 3 // d
	atoms  = 4 // K
	cols   = 2 // P
	invTau = 1.4
	lambda = 0.1
)

// ratioLegend explains the ratio column of GradCheck's reports (graphs.Element.Ratio).
const ratioLegend = "ratio = |analytic − numeric| / (atol + rtol·max(|analytic|, |numeric|)), " +
	"rtol and atol as in each report's header; an element passes when ratio ≤ 1"

// run builds the graph once per machine, checks it and prints the reports. It returns an
// error matching graphs.ErrGradient when a gradient is wrong.
func run(cfg Config) error {
	cfg.Out = exampleutil.OrDiscard(cfg.Out)
	var machines []graphs.Machine
	switch cfg.Machines {
	case "tape":
		machines = []graphs.Machine{graphs.Tape}
	case "lisp":
		machines = []graphs.Machine{graphs.Lisp}
	case "both":
		machines = []graphs.Machine{graphs.Tape, graphs.Lisp}
	default:
		return exampleutil.BadFlag(op, "-machine", "want tape, lisp or both, got %q", cfg.Machines)
	}
	var dt tensor.Dtype
	switch cfg.DType {
	case "float64":
		dt = tensor.Float64
	case "float32":
		dt = tensor.Float32
	default:
		return exampleutil.BadFlag(op, "-dtype", "want float64 or float32, got %q", cfg.DType)
	}

	var failed []string
	fmt.Fprintln(cfg.Out, ratioLegend)
	for _, m := range machines {
		// A fresh graph per machine: the tape check adds gradient nodes to its graph.
		cost, wrt, err := build(dt, cfg.Seed, cfg.Bug)
		if err != nil {
			return err
		}
		rep, err := graphs.GradCheck(cost, wrt, graphs.WithMachine(m))
		if rep == nil { // invalid arguments or a machine that failed: no report
			return err
		}
		fmt.Fprint(cfg.Out, rep)
		if err != nil {
			fmt.Fprintf(cfg.Out, "  MISMATCH: %v\n", err)
			failed = append(failed, m.String())
		}
	}
	if len(failed) > 0 {
		return fmt.Errorf("%w on the %s machine(s) (the report above names the elements)",
			graphs.ErrGradient, strings.Join(failed, " and "))
	}
	fmt.Fprintln(cfg.Out, "all gradients match finite differences")
	return nil
}

// build returns the scalar cost and the input nodes to check:
//
//	logits = GELU(X·W)                                   Gorgonia Mul, ops.GELU      [n,K]
//	value  = SoftmaxJetValue(logits, D, s)               ẑ                           [n,P]
//	first  = SoftmaxJetFirst(logits, D, s)               ∂ẑ/∂l                       [n,K,P]
//	second = SoftmaxJetSecond(logits, D, s)              ∂²ẑ/∂l²                     [n,K,K,P]
//	hvp    = SoftmaxJetHVP(logits, D, V, s)              second·V                    [n,K,P]
//	logdet = GaussNewtonLogDet(logits, D, s, λ)          log det(H + λI)             [n]
//	gate   = SoftArgmin(−logits, 1) = softmax(logits)    Gorgonia Neg, gatejet op    [n,K]
//	dgate  = SoftmaxBackward(gate, V, 1)                 y⊙(V − ⟨y,V⟩)               [n,K]
//
//	cost = mean((value − Y)²) + Σ first⊙hvp + ½·mean(second²) + mean(logdet) + Σ dgate²
//	       [+ Σ wrongSquare(value) with -bug]
//
// X, W, D and V are checked; Y is a fixed target.
func build(dt tensor.Dtype, seed uint64, bug bool) (*G.Node, G.Nodes, error) {
	rng := rand.New(rand.NewPCG(seed, 2))
	g := G.NewGraph()
	input := func(name string, lo, hi float64, shape ...int) *G.Node {
		return G.NewTensor(g, dt, len(shape), G.WithShape(shape...), G.WithName(name),
			G.WithValue(uniform(dt, rng, lo, hi, shape...)))
	}
	X := input("X", -1, 1, rows, inDim)
	W := input("W", -1, 1, inDim, atoms)
	D := input("D", -1, 1, rows, atoms, cols)
	V := input("V", -1, 1, rows, atoms)
	Y := input("Y", -1, 1, rows, cols)

	var err error
	must := func(n *G.Node, e error) *G.Node {
		if err == nil && e != nil {
			err = e
		}
		return n
	}
	half := G.NewConstant(0.5)
	if dt == tensor.Float32 {
		half = G.NewConstant(float32(0.5))
	}

	logits := must(ops.GELU(must(G.Mul(X, W))))
	if err != nil {
		return nil, nil, err
	}
	value := must(ops.SoftmaxJetValue(logits, D, invTau))
	first := must(ops.SoftmaxJetFirst(logits, D, invTau))
	second := must(ops.SoftmaxJetSecond(logits, D, invTau))
	hvp := must(ops.SoftmaxJetHVP(logits, D, V, invTau))
	logdet := must(graphs.GaussNewtonLogDet(logits, D, invTau, lambda))
	// softmax(logits) as graphs.SoftArgmin(−logits, 1). Gorgonia's own SoftMax is fine on the
	// tape machine, but its LispMachine gradient (DoDiff, v0.9.18) stores the input's
	// gradient tensor as the output's gradient, and with more consumers of logits that
	// aliasing corrupts tensors on the lisp machine.
	gate := must(graphs.SoftArgmin(must(G.Neg(logits)), 1))
	dgate := must(ops.SoftmaxBackward(gate, V, 1))
	if err != nil {
		return nil, nil, err
	}
	terms := []*G.Node{
		must(G.Mean(must(G.Square(must(G.Sub(value, Y)))))),
		must(G.Sum(must(G.HadamardProd(first, hvp)))),
		must(G.Mul(must(G.Mean(must(G.Square(second)))), half)),
		must(G.Mean(logdet)),
		must(G.Sum(must(G.Square(dgate)))),
	}
	if bug {
		terms = append(terms, must(G.Sum(must(wrongSquare(value)))))
	}
	cost := terms[0]
	for _, t := range terms[1:] {
		cost = must(G.Add(cost, t))
	}
	if err != nil {
		return nil, nil, err
	}
	return cost, G.Nodes{X, W, D, V}, nil
}

// uniform returns a Dense of dtype dt with entries uniform in [lo, hi).
func uniform(dt tensor.Dtype, rng *rand.Rand, lo, hi float64, shape ...int) *tensor.Dense {
	v := make([]float64, tensor.Shape(shape).TotalSize())
	for i := range v {
		v[i] = lo + (hi-lo)*rng.Float64()
	}
	if dt == tensor.Float32 {
		return tensor.New(tensor.WithShape(shape...), tensor.WithBacking(floats.To32(v)))
	}
	return tensor.New(tensor.WithShape(shape...), tensor.WithBacking(v))
}

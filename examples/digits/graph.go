package main

import (
	"fmt"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/gatejet/gatejet/graphs"
	"github.com/gatejet/gatejet/internal/exampleutil"
	"github.com/gatejet/gatejet/ops"
)

// graph is the reconstruction as a Gorgonia graph, for the gradient steps:
//
//	d0, d1, d2 = graphs.BSplineJets(t, B, knots)          [n,K,P]
//	ẑ          = ops.SoftmaxJetValue(ℓ, d0, 1/τ)          [n,P]
//	fit        = ½·Σ(ẑ − x)² / n
//	loss       = fit + ½σ²λ·(Σℓ² + Σ(t − ½)²) / n      (the prior only when the codes learn)
//
// differentiated with gorgonia.Grad in the learned nodes (the decoder B, the codes ℓ and t, or
// both) and run by a TapeMachine, built once per fit. ẑ's op writes every run into one buffer
// (ops.ReuseOutput). The inputs' tensors share their memory with the caller's slices, so
// the caller's updates of the codes (the Gauss-Newton steps) are what the graph reads.
//
// The values gorgonia.Read writes (fitV) live outside the struct: the machine holds the
// pointer it is given, and a pointer into the struct that holds the machine would make the
// machine reach itself. A TapeMachine carries a runtime finalizer, and Go never frees a cycle
// through an object with a finalizer, so every graph, with its last run's values, would stay
// in memory until the process ends.
type graph struct {
	g          *G.ExprGraph
	l, t, B, x *G.Node
	learn      G.Nodes
	fit        *G.Node
	fitV       *G.Value
	vm         G.VM
	n          int
}

// newGraph builds the graph over the n rows x [n,P] with codes c and decoder B [K,L,P];
// learnCodes and learnB say which of them the gradient is taken in.
func newGraph(m *model, x []float64, c codes, B []float64, learnCodes, learnB bool) (*graph, error) {
	n, K, L, P := c.n, m.K, m.L, m.P
	gr := &graph{g: G.NewGraph(), n: n}
	g := gr.g
	dense := func(v []float64, shape ...int) *tensor.Dense {
		return tensor.New(tensor.WithShape(shape...), tensor.WithBacking(v))
	}
	gr.l = G.NewMatrix(g, G.Float64, G.WithShape(n, K), G.WithName("l"), G.WithValue(dense(c.l, n, K)))
	gr.t = G.NewMatrix(g, G.Float64, G.WithShape(n, K), G.WithName("t"), G.WithValue(dense(c.t, n, K)))
	gr.B = G.NewTensor(g, G.Float64, 3, G.WithShape(K, L, P), G.WithName("B"), G.WithValue(dense(B, K, L, P)))
	gr.x = G.NewMatrix(g, G.Float64, G.WithShape(n, P), G.WithName("x"), G.WithValue(dense(x, n, P)))

	var err error
	must := func(nd *G.Node, e error) *G.Node {
		if err == nil && e != nil {
			err = e
		}
		return nd
	}
	d0, _, _, e := graphs.BSplineJets(gr.t, gr.B, m.knots)
	if e != nil {
		return nil, e
	}
	z := must(ops.SoftmaxJetValue(gr.l, d0, m.s, ops.ReuseOutput()))
	gr.fit = must(G.Mul(must(G.Sum(must(G.Square(must(G.Sub(z, gr.x)))))), G.NewConstant(0.5/float64(n))))
	loss := gr.fit
	if learnCodes {
		half := G.NewConstant(dense(exampleutil.Filled(n*K, m.tCentre), n, K), G.WithName("centre"))
		prior := must(G.Add(must(G.Sum(must(G.Square(gr.l)))), must(G.Sum(must(G.Square(must(G.Sub(gr.t, half))))))))
		loss = must(G.Add(loss, must(G.Mul(prior, G.NewConstant(0.5*m.ridge()/float64(n))))))
		gr.learn = append(gr.learn, gr.l, gr.t)
	}
	if learnB {
		gr.learn = append(gr.learn, gr.B)
	}
	if err != nil {
		return nil, err
	}
	grads, err := G.Grad(loss, gr.learn...)
	if err != nil {
		return nil, fmt.Errorf("differentiating the loss: %v", err)
	}
	read, fitV := exampleutil.Read(gr.fit)
	gr.fitV = fitV
	// The machine runs what the error and the gradients need: graphs.BSplineJets also builds
	// d1 and d2, which this graph does not read.
	sub := g.ExactSubgraphRoots(append(G.Nodes{read}, grads...)...)
	gr.vm = G.NewTapeMachine(sub, G.BindDualValues(gr.learn...))
	return gr, nil
}

// run evaluates the graph and its gradients and returns the mean squared error per pixel.
func (gr *graph) run(P int) (float64, error) {
	gr.vm.Reset()
	if err := gr.vm.RunAll(); err != nil {
		if oe := graphs.OpError(err); oe != nil {
			return 0, oe
		}
		return 0, err
	}
	return 2 * exampleutil.Scalar(*gr.fitV) / float64(P), nil
}

// data returns the float64 slice behind a node's value.
func data(n *G.Node) []float64 { return n.Value().Data().([]float64) }

// syncValue copies src into the node's value unless they are the same memory (a solver may have
// given the node a new tensor).
func syncValue(n *G.Node, src []float64) {
	if dst := data(n); &dst[0] != &src[0] {
		copy(dst, src)
	}
}

func (gr *graph) close() { gr.vm.Close() }

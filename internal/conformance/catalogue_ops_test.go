package conformance

import (
	"testing"

	G "gorgonia.org/gorgonia"

	"github.com/gatejet/gatejet"
	"github.com/gatejet/gatejet/internal/dispatch"
	"github.com/gatejet/gatejet/ops"
)

// The ops and cudaops part of the catalogue: outputs over gatejet.MaxBytes, an op built with
// ReuseOutput applied to make a second node, and careless calls with nil arguments.
func init() {
	moreCatalogues = append(moreCatalogues, opsCatalogue)
}

// lowerMaxBytes is a case setup: CPU only, and gatejet.MaxBytes lowered to n bytes until the
// case ends.
func lowerMaxBytes(n int64) func(t *testing.T) {
	return func(t *testing.T) {
		cpuOnly(t)
		prev := gatejet.SetMaxBytes(n)
		t.Cleanup(func() { gatejet.SetMaxBytes(prev) })
	}
}

func opsCatalogue() []badCase {
	P, S := gatejet.ErrParam, gatejet.ErrSize
	mk := func(g *G.ExprGraph, name string, s ...int) *G.Node {
		return G.NewTensor(g, f64, len(s), G.WithShape(s...), G.WithName(name))
	}
	// Logits [1, 2²¹] and decoded [1, 2²¹, 1]: valid nodes whose second channel and
	// Gauss-Newton slab are 2⁴² elements (32 TiB); nothing is allocated for them.
	huge := func(build func(l, d *G.Node) (*G.Node, error)) func() (any, error) {
		return func() (any, error) {
			g := G.NewGraph()
			return node(build(mk(g, "l", 1, 1<<21), mk(g, "d", 1, 1<<21, 1)))
		}
	}
	// applyAgain builds a ReuseOutput value node in one graph and applies its op to the inputs
	// of a second node, in the same graph or another.
	applyAgain := func(sameGraph bool) func() (any, error) {
		return func() (any, error) {
			g := G.NewGraph()
			v1, err := ops.SoftmaxJetValue(mk(g, "l1", 2, 3), mk(g, "d1", 2, 3, 2), 1.3, ops.ReuseOutput())
			if err != nil {
				return nil, err
			}
			g2 := g
			if !sameGraph {
				g2 = G.NewGraph()
			}
			return node(G.ApplyOp(v1.Op(), mk(g2, "l2", 2, 3), mk(g2, "d2", 2, 3, 2)))
		}
	}
	// jetNode is a first-channel node of a fresh graph, n=4, K=3, P=16 (1536 B of output).
	jetNode := func(opts ...ops.Option) (*G.Node, []G.Value, error) {
		g := G.NewGraph()
		n, err := ops.SoftmaxJetFirst(mk(g, "l", 4, 3), mk(g, "d", 4, 3, 16), 1, opts...)
		vals := []G.Value{dense(f64, []int{4, 3}, make([]float64, 12)), dense(f64, []int{4, 3, 16}, make([]float64, 192))}
		return n, vals, err
	}
	// doAfterLowering builds the node under the default limit, lowers it, then runs Do.
	doAfterLowering := func(opts ...ops.Option) (func(t *testing.T), func() (any, error)) {
		var n *G.Node
		var vals []G.Value
		var err error
		setup := func(t *testing.T) {
			cpuOnly(t)
			n, vals, err = jetNode(opts...)
			lowerMaxBytes(1024)(t)
		}
		return setup, func() (any, error) {
			if err != nil {
				return nil, err
			}
			return n.Op().Do(vals...)
		}
	}
	doSetup, doCall := doAfterLowering()
	reuseSetup, reuseCall := doAfterLowering(ops.ReuseOutput())
	// symDiff calls SymDiff of the op of n (built with err) on inputs, n as the output and
	// grad; a nil result comes back as a nil any.
	symDiff := func(n *G.Node, err error, inputs G.Nodes, grad *G.Node) (any, error) {
		if err != nil {
			return nil, err
		}
		r, err := n.Op().(G.SDOp).SymDiff(inputs, n, grad)
		if r == nil {
			return nil, err
		}
		return r, err
	}
	adop := func(n *G.Node) G.ADOp { return n.Op().(G.ADOp) }

	return []badCase{
		// ---- ops: outputs over gatejet.MaxBytes, refused when the node is built ----
		{name: "ops second channel 32 TiB", call: huge(func(l, d *G.Node) (*G.Node, error) { return ops.SoftmaxJetSecond(l, d, 1) }),
			kind: S, op: "ops.SoftmaxJetSecond", arg: "output"},
		{name: "ops gauss-newton 32 TiB", call: huge(func(l, d *G.Node) (*G.Node, error) { return ops.SoftmaxJetGaussNewton(l, d, 1) }),
			kind: S, op: "ops.SoftmaxJetGaussNewton", arg: "output"},
		{name: "ops logistic second 32 TiB reuse", call: huge(func(l, d *G.Node) (*G.Node, error) {
			return ops.LogisticJetSecond(l, d, make([]float64, 1<<21), make([]float64, 1<<21), ops.ReuseOutput())
		}), kind: S, op: "ops.LogisticJetSecond", arg: "output"},
		{name: "ops first over lowered limit", setup: lowerMaxBytes(1024), call: func() (any, error) {
			n, _, err := jetNode()
			return node(n, err)
		}, kind: S, op: "ops.SoftmaxJetFirst", arg: "output"},
		{name: "ops relu over lowered limit", setup: lowerMaxBytes(1024), call: func() (any, error) {
			return node(ops.ReLU(mk(G.NewGraph(), "x", 129)))
		}, kind: S, op: "ops.ReLU", arg: "output"},
		{name: "ops silu backward over lowered limit", setup: lowerMaxBytes(1024), call: func() (any, error) {
			g := G.NewGraph()
			return node(ops.SiLUBackward(mk(g, "x", 3, 43), mk(g, "dy", 3, 43)))
		}, kind: S, op: "ops.SiLUBackward", arg: "output"},
		{name: "ops log-softmax backward over lowered limit", setup: lowerMaxBytes(1024), call: func() (any, error) {
			g := G.NewGraph()
			return node(ops.LogSoftmaxBackward(mk(g, "y", 129), mk(g, "dy", 129), 0))
		}, kind: S, op: "ops.LogSoftmaxBackward", arg: "output"},
		// ---- ops: the limit lowered after the node was built, seen when it runs ----
		{name: "ops Do after the limit was lowered", setup: doSetup, call: doCall, kind: S, op: "ops.SoftmaxJetFirst", arg: "output"},
		{name: "ops reuse buffer after the limit was lowered", setup: reuseSetup, call: reuseCall, kind: S, op: "ops.SoftmaxJetFirst", arg: "output"},

		// ---- ops: an op built with ReuseOutput makes one node ----
		{name: "ops reuse op applied again", call: applyAgain(true), kind: P, op: "ops.SoftmaxJetValue", arg: ""},
		{name: "ops reuse op applied in another graph", call: applyAgain(false), kind: P, op: "ops.SoftmaxJetValue", arg: ""},

		// ---- ops: careless calls of the ops' methods ----
		{name: "ops SymDiff nil grad", call: func() (any, error) {
			g := G.NewGraph()
			l, d := mk(g, "l", 2, 3), mk(g, "d", 2, 3, 2)
			n, err := ops.SoftmaxJetSecond(l, d, 1)
			return symDiff(n, err, G.Nodes{l, d}, nil)
		}, kind: P, op: "ops.SoftmaxJetSecond", arg: ""},
		{name: "ops SymDiff nil input", call: func() (any, error) {
			g := G.NewGraph()
			y := mk(g, "y", 2, 3)
			n, err := ops.SoftmaxBackward(y, y, 1)
			return symDiff(n, err, G.Nodes{y, nil}, n)
		}, kind: P, op: "ops.SoftmaxBackward", arg: "inputs"},
		{name: "ops DoDiff nil output", call: func() (any, error) {
			g := G.NewGraph()
			x := mk(g, "x", 5)
			n, err := ops.GELU(x)
			if err != nil {
				return nil, err
			}
			return only(adop(n).DoDiff(G.ExecutionContext{}, G.Nodes{x}, nil))
		}, kind: P, op: "ops.GELU", arg: ""},

		// ---- cudaops: nil receivers and arguments ----
		{name: "cudaops nil Call Lengths", call: func() (any, error) {
			in, out, err := (*dispatch.Call)(nil).Lengths()
			if in != nil || out != nil {
				return [][]int{in, out}, err
			}
			return nil, err
		}, kind: P, op: "cudaops.Call", arg: ""},
	}
}

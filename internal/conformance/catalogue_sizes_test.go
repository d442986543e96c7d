package conformance

import (
	"testing"

	G "gorgonia.org/gorgonia"

	"github.com/gatejet/gatejet"
	"github.com/gatejet/gatejet/graphs"
	"github.com/gatejet/gatejet/ops"
)

// Size refusals through every constructor of ops, every builder of graphs and every
// gradient: a shape whose element count overflows int is ErrSize when the node is built
// (as gatejet.ErrSize documents), and so is a gradient op — first or second order, built by
// graphs.Grad or run by a machine's DoDiff — whose output exceeds gatejet.MaxBytes.
func init() {
	moreCatalogues = append(moreCatalogues, sizesCatalogue)
}

func sizesCatalogue() []badCase {
	S := gatejet.ErrSize
	const (
		grad = "graphs.Grad"
		gc   = "graphs.GradCheck"
	)
	mk := func(g *G.ExprGraph, name string, s ...int) *G.Node {
		return G.NewTensor(g, f64, len(s), G.WithShape(s...), G.WithName(name))
	}
	// Shapes whose element count overflows int; nothing is allocated for the input nodes.
	const big = 1 << 62
	x2 := func(build func(x, y *G.Node) (*G.Node, error)) func() (any, error) {
		return func() (any, error) {
			g := G.NewGraph()
			return node(build(mk(g, "x", big, 4), mk(g, "y", big, 4)))
		}
	}
	// Logits [2⁴⁰, 2²⁰] and decoded [2⁴⁰, 2²⁰, 4]: N·K·K·P overflows int.
	jet := func(build func(l, d, v *G.Node) (*G.Node, error)) func() (any, error) {
		return func() (any, error) {
			g := G.NewGraph()
			return node(build(mk(g, "l", 1<<40, 1<<20), mk(g, "d", 1<<40, 1<<20, 4), mk(g, "v", 1<<40, 1<<20)))
		}
	}
	ab := make([]float64, 1<<20)

	// jetInputs are bound logits [4,3] and decoded [4,3,16]: the forward outputs of the
	// value ([4,16], 512 B) and Gauss-Newton ([4,3,3], 288 B) channels fit in 1 KiB, their
	// gradients with respect to decoded ([4,3,16], 1.5 KiB) do not.
	jetInputs := func() (*G.ExprGraph, *G.Node, *G.Node) {
		g := G.NewGraph()
		return g, input(g, f64, "l", []int{4, 3}, seq(1, 12, -1, 1)), input(g, f64, "d", []int{4, 3, 16}, seq(2, 192, -1, 1))
	}
	alpha, beta := []float64{1, 0.5, 2}, []float64{0, 0.1, -0.1}
	// gradOf builds a forward node under the lowered limit of the case and differentiates
	// the sum of it with graphs.Grad with respect to logits and decoded.
	gradOf := func(build func(l, d *G.Node) (*G.Node, error)) func() (any, error) {
		return func() (any, error) {
			_, l, d := jetInputs()
			out, err := build(l, d)
			if err != nil {
				return nil, err
			}
			return nodes(graphs.Grad(G.Must(G.Sum(out)), l, d))
		}
	}
	// afterLowering builds under the default limit (prepare, in the case's setup), lowers
	// the limit to 1 KiB, then calls then: what a user meets who lowers gatejet.SetMaxBytes
	// after building, or builds a gradient of a gradient later.
	afterLowering := func(prepare func() func() (any, error)) (func(t *testing.T), func() (any, error)) {
		var then func() (any, error)
		return func(t *testing.T) {
				cpuOnly(t)
				then = prepare()
				lowerMaxBytes(1024)(t)
			}, func() (any, error) {
				return then()
			}
	}
	// The gradient of ‖value‖² with respect to logits ([4,3]) is built under the default
	// limit; its gradient with respect to decoded, a second-order op of [4,3,16], is not.
	secondSetup, secondCall := afterLowering(func() func() (any, error) {
		_, l, d := jetInputs()
		out, err := ops.SoftmaxJetValue(l, d, 1)
		if err != nil {
			return func() (any, error) { return nil, err }
		}
		gl, err := graphs.Grad(G.Must(G.Sum(G.Must(G.Square(out)))), l)
		if err != nil {
			return func() (any, error) { return nil, err }
		}
		return func() (any, error) {
			return nodes(graphs.Grad(G.Must(G.Sum(G.Must(G.Square(gl[0])))), l, d))
		}
	})
	logDetSetup, logDetCall := afterLowering(func() func() (any, error) {
		g := G.NewGraph()
		h := input(g, f64, "H", []int{2, 12, 12}, make([]float64, 2*12*12))
		ld, err := graphs.LogDetPlusRidge(h, 1)
		return func() (any, error) {
			if err != nil {
				return nil, err
			}
			return nodes(graphs.Grad(G.Must(G.Sum(ld)), h))
		}
	})
	// The Gauss-Newton slabs' cost built under the default limit, then run: a LispMachine's
	// DoDiff computes the [4,3,16] gradient with respect to decoded.
	gnCost := func() (*G.ExprGraph, G.Nodes, *G.Node, error) {
		g, l, d := jetInputs()
		gn, err := graphs.GaussNewtonSlabs(l, d, 1)
		if err != nil {
			return nil, nil, nil, err
		}
		return g, G.Nodes{l, d}, G.Must(G.Sum(gn)), nil
	}
	lispSetup, lispCall := afterLowering(func() func() (any, error) {
		g, _, _, err := gnCost()
		return func() (any, error) {
			if err != nil {
				return nil, err
			}
			m := G.NewLispMachine(g)
			defer m.Close()
			return nil, m.RunAll()
		}
	})
	checkSetup, checkCall := afterLowering(func() func() (any, error) {
		_, wrt, cost, err := gnCost()
		return func() (any, error) {
			if err != nil {
				return nil, err
			}
			return report(graphs.GradCheck(cost, wrt, graphs.WithMachine(graphs.Lisp)))
		}
	})
	// A TapeMachine's run of a second channel built under the default limit.
	tapeSetup, tapeCall := afterLowering(func() func() (any, error) {
		g, l, d := jetInputs()
		n, err := ops.SoftmaxJetSecond(l, d, 1)
		return func() (any, error) {
			if err != nil {
				return nil, err
			}
			_, err := runTape(g, n)
			return nil, err
		}
	})

	return []badCase{
		// ---- element counts that overflow int, refused when the node is built ----
		{name: "size Softmax overflows", call: x2(func(x, _ *G.Node) (*G.Node, error) { return ops.Softmax(x, -1) }), kind: S, op: "ops.Softmax", arg: "x"},
		{name: "size LogSoftmax overflows", call: x2(func(x, _ *G.Node) (*G.Node, error) { return ops.LogSoftmax(x, 0) }), kind: S, op: "ops.LogSoftmax", arg: "x"},
		{name: "size SoftmaxBackward overflows", call: x2(func(x, y *G.Node) (*G.Node, error) { return ops.SoftmaxBackward(x, y, 0) }), kind: S, op: "ops.SoftmaxBackward", arg: "y"},
		{name: "size LogSoftmaxBackward overflows", call: x2(func(x, y *G.Node) (*G.Node, error) { return ops.LogSoftmaxBackward(x, y, 1) }), kind: S, op: "ops.LogSoftmaxBackward", arg: "y"},
		{name: "size GELU overflows", call: x2(func(x, _ *G.Node) (*G.Node, error) { return ops.GELU(x) }), kind: S, op: "ops.GELU", arg: "output"},
		{name: "size SiLUBackward overflows", call: x2(func(x, y *G.Node) (*G.Node, error) { return ops.SiLUBackward(x, y) }), kind: S, op: "ops.SiLUBackward", arg: "output"},
		{name: "size SoftmaxJetValue overflows", call: jet(func(l, d, _ *G.Node) (*G.Node, error) { return ops.SoftmaxJetValue(l, d, 1) }), kind: S, op: "ops.SoftmaxJetValue", arg: "shape"},
		{name: "size SoftmaxJetFirst overflows", call: jet(func(l, d, _ *G.Node) (*G.Node, error) { return ops.SoftmaxJetFirst(l, d, 1) }), kind: S, op: "ops.SoftmaxJetFirst", arg: "shape"},
		{name: "size SoftmaxJetSecond overflows", call: jet(func(l, d, _ *G.Node) (*G.Node, error) { return ops.SoftmaxJetSecond(l, d, 1) }), kind: S, op: "ops.SoftmaxJetSecond", arg: "shape"},
		{name: "size SoftmaxJetHVP overflows", call: jet(func(l, d, v *G.Node) (*G.Node, error) { return ops.SoftmaxJetHVP(l, d, v, 1) }), kind: S, op: "ops.SoftmaxJetHVP", arg: "shape"},
		{name: "size SoftmaxJetGaussNewton overflows", call: jet(func(l, d, _ *G.Node) (*G.Node, error) { return ops.SoftmaxJetGaussNewton(l, d, 1) }), kind: S, op: "ops.SoftmaxJetGaussNewton", arg: "shape"},
		{name: "size LogisticJetValue overflows", call: jet(func(l, d, _ *G.Node) (*G.Node, error) { return ops.LogisticJetValue(l, d, ab, ab) }), kind: S, op: "ops.LogisticJetValue", arg: "shape"},
		{name: "size LogisticJetFirst overflows", call: jet(func(l, d, _ *G.Node) (*G.Node, error) { return ops.LogisticJetFirst(l, d, ab, ab) }), kind: S, op: "ops.LogisticJetFirst", arg: "shape"},
		{name: "size LogisticJetSecond overflows", call: jet(func(l, d, _ *G.Node) (*G.Node, error) { return ops.LogisticJetSecond(l, d, ab, ab) }), kind: S, op: "ops.LogisticJetSecond", arg: "shape"},
		{name: "size LogisticJetHVP overflows", call: jet(func(l, d, v *G.Node) (*G.Node, error) { return ops.LogisticJetHVP(l, d, v, ab, ab) }), kind: S, op: "ops.LogisticJetHVP", arg: "shape"},
		{name: "size LogisticJetGaussNewton overflows", call: jet(func(l, d, _ *G.Node) (*G.Node, error) { return ops.LogisticJetGaussNewton(l, d, ab, ab) }), kind: S, op: "ops.LogisticJetGaussNewton", arg: "shape"},
		{name: "size graphs SoftArgmin overflows", call: x2(func(x, _ *G.Node) (*G.Node, error) { return graphs.SoftArgmin(x, 1) }), kind: S, op: "graphs.SoftArgmin", arg: "output"},
		{name: "size graphs LogDetPlusRidge overflows", call: func() (any, error) {
			return node(graphs.LogDetPlusRidge(mk(G.NewGraph(), "H", 1<<40, 1<<20, 1<<20), 1))
		}, kind: S, op: "graphs.LogDetPlusRidge", arg: "output"},
		{name: "size graphs GaussNewtonSlabs overflows", call: jet(func(l, d, _ *G.Node) (*G.Node, error) { return graphs.GaussNewtonSlabs(l, d, 1) }), kind: S, op: "ops.SoftmaxJetGaussNewton", arg: "shape"},
		{name: "size graphs GaussNewtonLogDet overflows", call: jet(func(l, d, _ *G.Node) (*G.Node, error) { return graphs.GaussNewtonLogDet(l, d, 1, 1) }), kind: S, op: "ops.SoftmaxJetGaussNewton", arg: "shape"},
		{name: "size graphs CurvaturePenalty overflows", call: jet(func(l, d, _ *G.Node) (*G.Node, error) { return graphs.CurvaturePenalty(l, d, 1, 1) }), kind: S, op: "ops.SoftmaxJetFirst", arg: "shape"},

		// ---- gradient ops over gatejet.MaxBytes: graphs.Grad, first order ----
		{name: "size Grad of the value channel", setup: lowerMaxBytes(1024), call: gradOf(func(l, d *G.Node) (*G.Node, error) { return ops.SoftmaxJetValue(l, d, 1) }),
			kind: S, op: grad, arg: "ops.SoftmaxJetValue{invTau=1}(%0, %1)"},
		{name: "size Grad of the logistic value channel", setup: lowerMaxBytes(1024), call: gradOf(func(l, d *G.Node) (*G.Node, error) { return ops.LogisticJetValue(l, d, alpha, beta) }),
			kind: S, op: grad, arg: "ops.LogisticJetValue{alpha=[1 0.5 2] beta=[0 0.1 -0.1]}(%0, %1)"},
		{name: "size Grad of the Gauss-Newton slabs", setup: lowerMaxBytes(1024), call: gradOf(func(l, d *G.Node) (*G.Node, error) { return graphs.GaussNewtonSlabs(l, d, 1) }),
			kind: S, op: grad, arg: "ops.SoftmaxJetGaussNewton{invTau=1}(%0, %1)"},
		{name: "size Grad of GaussNewtonLogDet", setup: lowerMaxBytes(1024), call: gradOf(func(l, d *G.Node) (*G.Node, error) { return graphs.GaussNewtonLogDet(l, d, 1, 0.1) }),
			kind: S, op: grad, arg: "ops.SoftmaxJetGaussNewton{invTau=1}(%0, %1)"},
		// LogDetPlusRidge checks its gradient's [n,K,K] when it is built, and Grad again
		// when the limit was lowered after that.
		{name: "size LogDetPlusRidge gradient when built", setup: lowerMaxBytes(1024), call: func() (any, error) {
			return node(graphs.LogDetPlusRidge(mk(G.NewGraph(), "H", 2, 12, 12), 1)) // [2] out, [2,12,12] gradient
		}, kind: S, op: "graphs.LogDetPlusRidge", arg: "output"},
		{name: "size Grad of LogDetPlusRidge", setup: logDetSetup, call: logDetCall, kind: S, op: grad, arg: "LogDetPlusRidge{λ=1}(%0)"},
		{name: "size GradCheck tape of the value channel", setup: lowerMaxBytes(1024), call: func() (any, error) {
			_, l, d := jetInputs()
			out, err := ops.SoftmaxJetValue(l, d, 1)
			if err != nil {
				return nil, err
			}
			return report(graphs.GradCheck(G.Must(G.Sum(out)), G.Nodes{l, d}))
		}, kind: S, op: gc, arg: "wrt"},

		// ---- second order: a gradient of a gradient, the limit lowered in between ----
		{name: "size Grad of a gradient", setup: secondSetup, call: secondCall,
			kind: S, op: grad, arg: "ops.SoftmaxJetValueVJP{invTau=1, wrt logits}(%0, %1, %d)"},

		// ---- at run time: DoDiff on a LispMachine, Do on a TapeMachine ----
		{name: "size LispMachine DoDiff", setup: lispSetup, call: lispCall, viaMachine: true,
			kind: S, op: "ops.SoftmaxJetGaussNewton", arg: "output"},
		{name: "size GradCheck lisp DoDiff", setup: checkSetup, call: checkCall, kind: S, op: gc, arg: "cost"},
		{name: "size TapeMachine Do", setup: tapeSetup, call: tapeCall, viaMachine: true,
			kind: S, op: "ops.SoftmaxJetSecond", arg: "output"},
	}
}

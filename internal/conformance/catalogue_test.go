package conformance

import (
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/gatejet/gatejet"
	"github.com/gatejet/gatejet/backward"
	"github.com/gatejet/gatejet/cudaops"
	"github.com/gatejet/gatejet/graphs"
	"github.com/gatejet/gatejet/internal/dispatch"
	"github.com/gatejet/gatejet/internal/tower"
	"github.com/gatejet/gatejet/ops"
	"github.com/gatejet/gatejet/softmaxjet"
)

// badCase is one entry of the error catalogue: a call with a bad input and what its error
// must be.
type badCase struct {
	name string
	// call makes the call; res is its other result (a node, a mode...), which must be the
	// zero value when err is not nil.
	call func() (res any, err error)
	// anyResult: the other result need not be the zero value (cudaops.ParseMode documents
	// ModeAuto with its error).
	anyResult bool
	kind      error  // sentinel the error must match (errors.Is)
	op        string // the *gatejet.Error's Op, exactly
	arg       string // the *gatejet.Error's Arg, exactly
	// viaMachine: the error comes out of a Gorgonia machine, whose wrapper has no Unwrap;
	// the *gatejet.Error is reached with graphs.OpError (as documented there).
	viaMachine bool
	// setup, when not nil, runs first (inside the case's subtest, so t.Cleanup restores what
	// it changes).
	setup func(t *testing.T)
}

func node(n *G.Node, err error) (any, error)          { return n, err }
func only(err error) (any, error)                     { return nil, err }
func mode(m cudaops.Mode, err error) (any, error)     { return m, err }
func report(r *graphs.Report, err error) (any, error) { return r, err }
func nodes(ns G.Nodes, err error) (any, error)        { return ns, err }

// layout is check.AxisLayout's result: nil when outer, n and inner are all zero.
func layout(outer, n, inner int, err error) (any, error) {
	if outer == 0 && n == 0 && inner == 0 {
		return nil, err
	}
	return []int{outer, n, inner}, err
}

// doWith builds a node, then calls its Op's Do (reachable through the public gorgonia.Op
// interface) with values that do not match the node.
func doWith(build func() (*G.Node, error), vals ...G.Value) func() (any, error) {
	return func() (any, error) {
		n, err := build()
		if err != nil {
			return nil, err
		}
		return n.Op().Do(vals...)
	}
}

func prod(s []int) int {
	p := 1
	for _, d := range s {
		p *= d
	}
	return p
}

// isZero reports whether a result is the zero value of its type (a nil node, for example).
func isZero(v any) bool {
	if v == nil {
		return true
	}
	rv := reflect.ValueOf(v)
	return rv.IsZero()
}

// catalogue returns the error catalogue. Everything it builds lives in fresh graphs, so the
// cases are independent.
func catalogue() []badCase {
	g := G.NewGraph()
	other := G.NewGraph()
	mk := func(gr *G.ExprGraph, dt tensor.Dtype, name string, s ...int) *G.Node {
		if len(s) == 0 {
			return G.NewScalar(gr, dt, G.WithName(name))
		}
		return G.NewTensor(gr, dt, len(s), G.WithShape(s...), G.WithName(name))
	}
	// A consistent set n=4, K=3, P=2, and one wrong thing at a time.
	l := mk(g, f64, "l", 4, 3)
	d := mk(g, f64, "d", 4, 3, 2)
	v := mk(g, f64, "v", 4, 3)
	l32 := mk(g, f32, "l32", 4, 3)
	d32 := mk(g, f32, "d32", 4, 3, 2)
	v32 := mk(g, f32, "v32", 4, 3)
	lInt := mk(g, tensor.Int, "lInt", 4, 3)
	dInt := mk(g, tensor.Int, "dInt", 4, 3, 2)
	scalar := mk(g, f64, "scalar")
	vec := mk(g, f64, "vec", 12)
	d4 := mk(g, f64, "d4", 4, 3, 2, 1)
	dN := mk(g, f64, "dN", 5, 3, 2)
	dK := mk(g, f64, "dK", 4, 2, 2)
	vK := mk(g, f64, "vK", 4, 4)
	vN := mk(g, f64, "vN", 3, 3)
	l9 := mk(g, f64, "l9", 1, 1, 1, 1, 1, 1, 1, 4, 3)
	lOther := mk(other, f64, "lOther", 4, 3)
	dOther := mk(other, f64, "dOther", 4, 3, 2)
	vOther := mk(other, f64, "vOther", 4, 3)
	lZero := mk(g, f64, "lZero", 0, 3)
	dZero := mk(g, f64, "dZero", 0, 3, 2)
	y := mk(g, f64, "y", 2, 3, 4)
	dy := mk(g, f64, "dy", 2, 3, 4)
	dyT := mk(g, f64, "dyT", 2, 4, 3)
	y32 := mk(g, f32, "y32", 2, 3, 4)
	yInt := mk(g, tensor.Int, "yInt", 2, 3, 4)
	y9 := mk(g, f64, "y9", 1, 1, 1, 1, 1, 1, 1, 1, 2)
	yZero := mk(g, f64, "yZero", 2, 0, 4)
	dyOther := mk(other, f64, "dyOther", 2, 3, 4)
	x := mk(g, f64, "x", 5)
	x4 := mk(g, f64, "x4", 4)
	xOther := mk(other, f64, "xOther", 5)
	h := mk(g, f64, "h", 2, 3, 3)
	hRect := mk(g, f64, "hRect", 2, 3, 4)
	hInt := mk(g, tensor.Int, "hInt", 2, 3, 3)
	costs := mk(g, f64, "costs", 2, 5)
	cost := mk(g, f64, "cost")
	in64 := G.NewMatrix(g, f64, G.WithShape(2, 2), G.WithName("in64"),
		G.WithValue(dense(f64, []int{2, 2}, []float64{1, 2, 3, 4})))
	in32 := G.NewMatrix(g, f32, G.WithShape(2, 2), G.WithName("in32"),
		G.WithValue(dense(f32, []int{2, 2}, []float64{1, 2, 3, 4})))
	sq := G.Must(G.Sum(G.Must(G.Square(in64))))
	alpha, beta := []float64{1, 2, 3}, []float64{0, 0, 0}
	nan, inf := math.NaN(), math.Inf(1)
	sh := softmaxjet.Shape{N: 2, K: 3, P: 2}
	buf := func(n int) []float64 { return make([]float64, n) }
	l6, d12, v6 := buf(6), buf(12), buf(6)

	// A machine whose SoftmaxJetSecond node must run on a device that is not there.
	requiredNoBackend := func() (any, error) {
		g := G.NewGraph()
		l := input(g, f64, "l", []int{2, 3}, seq(1, 6, -1, 1))
		d := input(g, f64, "d", []int{2, 3, 2}, seq(2, 12, -1, 1))
		n, err := ops.SoftmaxJetSecond(l, d, 1)
		if err != nil {
			return nil, err
		}
		_, err = runTape(g, n)
		return nil, err
	}
	notSPD := func() (any, error) {
		g := G.NewGraph()
		// Row 1 is symmetric with eigenvalues 3 and −1: not positive definite with λ = 0.5.
		hv := input(g, f64, "H", []int{2, 2, 2}, []float64{2, 0, 0, 2, 1, 2, 2, 1})
		n, err := graphs.LogDetPlusRidge(hv, 0.5)
		if err != nil {
			return nil, err
		}
		_, err = runTape(g, n)
		return nil, err
	}

	// noBackend sets the mode for a case that needs no backend registered (a cuda build
	// registers its device backend at start, which cannot be removed from outside).
	noBackend := func(m dispatch.Mode) func(t *testing.T) {
		return func(t *testing.T) {
			if b := dispatch.Active(); b != nil {
				t.Skipf("backend %q is registered; this case needs none", b.Name())
			}
			setMode(t, m)
		}
	}

	const (
		sjV  = "ops.SoftmaxJetValue"
		sjF  = "ops.SoftmaxJetFirst"
		sjS  = "ops.SoftmaxJetSecond"
		sjH  = "ops.SoftmaxJetHVP"
		sjG  = "ops.SoftmaxJetGaussNewton"
		ljV  = "ops.LogisticJetValue"
		ljF  = "ops.LogisticJetFirst"
		ljS  = "ops.LogisticJetSecond"
		ljH  = "ops.LogisticJetHVP"
		ljG  = "ops.LogisticJetGaussNewton"
		sb   = "ops.SoftmaxBackward"
		lsb  = "ops.LogSoftmaxBackward"
		gc   = "graphs.GradCheck"
		ld   = "graphs.LogDetPlusRidge"
		sa   = "graphs.SoftArgmin"
		call = "cudaops.Call"
	)
	E := gatejet.ErrShape
	R := gatejet.ErrRank
	D := gatejet.ErrDType
	A := gatejet.ErrAxis
	T := gatejet.ErrTemperature
	S := gatejet.ErrSize
	P := gatejet.ErrParam
	NF := gatejet.ErrNonFinite
	DV := gatejet.ErrDevice

	jetCall := func(k dispatch.Kernel, ints []int, floats []float64, in, out []any) func() (any, error) {
		return func() (any, error) {
			return only(anyCall(k, ints, floats, in, out).Check())
		}
	}

	return []badCase{
		// ---- ops: softmax-gate jets ----
		{name: "jet logits rank 1", call: func() (any, error) { return node(ops.SoftmaxJetValue(vec, d, 1)) }, kind: R, op: sjV, arg: "logits"},
		{name: "jet logits scalar", call: func() (any, error) { return node(ops.SoftmaxJetFirst(scalar, d, 1)) }, kind: R, op: sjF, arg: "logits"},
		{name: "jet logits rank 9", call: func() (any, error) { return node(ops.SoftmaxJetSecond(l9, d, 1)) }, kind: R, op: sjS, arg: "logits"},
		{name: "jet decoded rank 2", call: func() (any, error) { return node(ops.SoftmaxJetGaussNewton(l, v, 1)) }, kind: R, op: sjG, arg: "decoded"},
		{name: "jet decoded rank 4", call: func() (any, error) { return node(ops.SoftmaxJetSecond(l, d4, 1)) }, kind: R, op: sjS, arg: "decoded"},
		{name: "jet decoded scalar", call: func() (any, error) { return node(ops.SoftmaxJetValue(l, scalar, 1)) }, kind: R, op: sjV, arg: "decoded"},
		{name: "jet n mismatch", call: func() (any, error) { return node(ops.SoftmaxJetFirst(l, dN, 1)) }, kind: E, op: sjF, arg: "decoded"},
		{name: "jet K mismatch", call: func() (any, error) { return node(ops.SoftmaxJetValue(l, dK, 1)) }, kind: E, op: sjV, arg: "decoded"},
		{name: "jet n = 0", call: func() (any, error) { return node(ops.SoftmaxJetValue(lZero, dZero, 1)) }, kind: E, op: sjV, arg: "logits"},
		{name: "hvp v K mismatch", call: func() (any, error) { return node(ops.SoftmaxJetHVP(l, d, vK, 1)) }, kind: E, op: sjH, arg: "v"},
		{name: "hvp v n mismatch", call: func() (any, error) { return node(ops.SoftmaxJetHVP(l, d, vN, 1)) }, kind: E, op: sjH, arg: "v"},
		{name: "hvp v rank 3", call: func() (any, error) { return node(ops.SoftmaxJetHVP(l, d, d, 1)) }, kind: R, op: sjH, arg: "v"},
		{name: "hvp v nil", call: func() (any, error) { return node(ops.SoftmaxJetHVP(l, d, nil, 1)) }, kind: P, op: sjH, arg: "v"},
		{name: "hvp v float32", call: func() (any, error) { return node(ops.SoftmaxJetHVP(l, d, v32, 1)) }, kind: D, op: sjH, arg: "v"},
		{name: "hvp v other graph", call: func() (any, error) { return node(ops.SoftmaxJetHVP(l, d, vOther, 1)) }, kind: P, op: sjH, arg: "v"},
		{name: "jet logits nil", call: func() (any, error) { return node(ops.SoftmaxJetSecond(nil, d, 1)) }, kind: P, op: sjS, arg: "logits"},
		{name: "jet nil option", call: func() (any, error) { return node(ops.SoftmaxJetSecond(l, d, 1, nil)) }, kind: P, op: sjS, arg: "opts"},
		{name: "jet nil option after reuse", call: func() (any, error) { return node(ops.SoftmaxJetSecond(l, d, 1, ops.ReuseOutput(), nil)) }, kind: P, op: sjS, arg: "opts"},
		{name: "jet decoded nil", call: func() (any, error) { return node(ops.SoftmaxJetGaussNewton(l, nil, 1)) }, kind: P, op: sjG, arg: "decoded"},
		{name: "jet both nil", call: func() (any, error) { return node(ops.SoftmaxJetFirst(nil, nil, 1)) }, kind: P, op: sjF, arg: "logits"},
		{name: "jet f64 logits f32 decoded", call: func() (any, error) { return node(ops.SoftmaxJetFirst(l, d32, 1)) }, kind: D, op: sjF, arg: "decoded"},
		{name: "jet f32 logits f64 decoded", call: func() (any, error) { return node(ops.SoftmaxJetSecond(l32, d, 1)) }, kind: D, op: sjS, arg: "decoded"},
		{name: "jet int logits", call: func() (any, error) { return node(ops.SoftmaxJetValue(lInt, d, 1)) }, kind: D, op: sjV, arg: "logits"},
		{name: "jet int decoded", call: func() (any, error) { return node(ops.SoftmaxJetGaussNewton(l, dInt, 1)) }, kind: D, op: sjG, arg: "decoded"},
		{name: "jet two graphs", call: func() (any, error) { return node(ops.SoftmaxJetFirst(l, dOther, 1)) }, kind: P, op: sjF, arg: "decoded"},
		{name: "jet two graphs (logits foreign)", call: func() (any, error) { return node(ops.SoftmaxJetValue(lOther, d, 1)) }, kind: P, op: sjV, arg: "decoded"},
		{name: "invTau 0", call: func() (any, error) { return node(ops.SoftmaxJetValue(l, d, 0)) }, kind: T, op: sjV, arg: "invTau"},
		{name: "invTau -0", call: func() (any, error) { return node(ops.SoftmaxJetFirst(l, d, math.Copysign(0, -1))) }, kind: T, op: sjF, arg: "invTau"},
		{name: "invTau -1", call: func() (any, error) { return node(ops.SoftmaxJetSecond(l, d, -1)) }, kind: T, op: sjS, arg: "invTau"},
		{name: "invTau NaN", call: func() (any, error) { return node(ops.SoftmaxJetHVP(l, d, v, nan)) }, kind: T, op: sjH, arg: "invTau"},
		{name: "invTau +Inf", call: func() (any, error) { return node(ops.SoftmaxJetGaussNewton(l, d, inf)) }, kind: T, op: sjG, arg: "invTau"},
		{name: "invTau -Inf", call: func() (any, error) { return node(ops.SoftmaxJetValue(l, d, -inf)) }, kind: T, op: sjV, arg: "invTau"},

		// ---- ops: logistic-gate jets ----
		{name: "alpha short", call: func() (any, error) { return node(ops.LogisticJetValue(l, d, alpha[:2], beta)) }, kind: P, op: ljV, arg: "alpha"},
		{name: "beta long", call: func() (any, error) { return node(ops.LogisticJetFirst(l, d, alpha, append(beta, 0))) }, kind: P, op: ljF, arg: "beta"},
		{name: "alpha nil", call: func() (any, error) { return node(ops.LogisticJetSecond(l, d, nil, beta)) }, kind: P, op: ljS, arg: "alpha"},
		{name: "alpha NaN", call: func() (any, error) { return node(ops.LogisticJetHVP(l, d, v, []float64{1, nan, 3}, beta)) }, kind: NF, op: ljH, arg: "alpha"},
		{name: "alpha -Inf", call: func() (any, error) { return node(ops.LogisticJetValue(l, d, []float64{-inf, 1, 1}, beta)) }, kind: NF, op: ljV, arg: "alpha"},
		{name: "beta +Inf", call: func() (any, error) { return node(ops.LogisticJetGaussNewton(l, d, alpha, []float64{0, inf, 0})) }, kind: NF, op: ljG, arg: "beta"},
		{name: "logistic K mismatch", call: func() (any, error) { return node(ops.LogisticJetFirst(l, dK, alpha, beta)) }, kind: E, op: ljF, arg: "decoded"},
		{name: "logistic logits rank 9", call: func() (any, error) { return node(ops.LogisticJetValue(l9, d, alpha, beta)) }, kind: R, op: ljV, arg: "logits"},
		{name: "logistic dtype mismatch", call: func() (any, error) { return node(ops.LogisticJetSecond(l32, d, alpha, beta)) }, kind: D, op: ljS, arg: "decoded"},
		{name: "logistic hvp v nil", call: func() (any, error) { return node(ops.LogisticJetHVP(l, d, nil, alpha, beta)) }, kind: P, op: ljH, arg: "v"},
		{name: "logistic two graphs", call: func() (any, error) { return node(ops.LogisticJetGaussNewton(lOther, d, alpha, beta)) }, kind: P, op: ljG, arg: "decoded"},

		// ---- ops: softmax-family backward ----
		{name: "backward axis = rank", call: func() (any, error) { return node(ops.SoftmaxBackward(y, dy, 3)) }, kind: A, op: sb, arg: "axis"},
		{name: "backward axis = -rank-1", call: func() (any, error) { return node(ops.LogSoftmaxBackward(y, dy, -4)) }, kind: A, op: lsb, arg: "axis"},
		{name: "backward axis huge", call: func() (any, error) { return node(ops.SoftmaxBackward(y, dy, math.MaxInt)) }, kind: A, op: sb, arg: "axis"},
		{name: "backward axis min int", call: func() (any, error) { return node(ops.LogSoftmaxBackward(y, dy, math.MinInt)) }, kind: A, op: lsb, arg: "axis"},
		{name: "backward dy transposed", call: func() (any, error) { return node(ops.SoftmaxBackward(y, dyT, 0)) }, kind: E, op: sb, arg: "dy"},
		{name: "backward dy float32", call: func() (any, error) { return node(ops.LogSoftmaxBackward(y, y32, 0)) }, kind: D, op: lsb, arg: "dy"},
		{name: "backward y int", call: func() (any, error) { return node(ops.SoftmaxBackward(yInt, yInt, 0)) }, kind: D, op: sb, arg: "y"},
		{name: "backward scalar", call: func() (any, error) { return node(ops.SoftmaxBackward(scalar, scalar, 0)) }, kind: R, op: sb, arg: "y"},
		{name: "backward rank 9", call: func() (any, error) { return node(ops.LogSoftmaxBackward(y9, y9, 0)) }, kind: R, op: lsb, arg: "y"},
		{name: "backward rank 9 (softmax)", call: func() (any, error) { return node(ops.SoftmaxBackward(y9, y9, -1)) }, kind: R, op: sb, arg: "y"},
		{name: "backward zero dim", call: func() (any, error) { return node(ops.SoftmaxBackward(yZero, yZero, 0)) }, kind: E, op: sb, arg: "y"},
		{name: "backward y nil", call: func() (any, error) { return node(ops.SoftmaxBackward(nil, dy, 0)) }, kind: P, op: sb, arg: "y"},
		{name: "backward dy nil", call: func() (any, error) { return node(ops.LogSoftmaxBackward(y, nil, 0)) }, kind: P, op: lsb, arg: "dy"},
		{name: "backward two graphs", call: func() (any, error) { return node(ops.SoftmaxBackward(y, dyOther, 1)) }, kind: P, op: sb, arg: "dy"},

		// ---- ops: activations ----
		{name: "relu scalar", call: func() (any, error) { return node(ops.ReLU(scalar)) }, kind: R, op: "ops.ReLU", arg: "x"},
		{name: "gelu nil", call: func() (any, error) { return node(ops.GELU(nil)) }, kind: P, op: "ops.GELU", arg: "x"},
		{name: "silu int", call: func() (any, error) { return node(ops.SiLU(lInt)) }, kind: D, op: "ops.SiLU", arg: "x"},
		{name: "relu zero dim", call: func() (any, error) { return node(ops.ReLU(yZero)) }, kind: E, op: "ops.ReLU", arg: "x"},
		{name: "relu backward shape", call: func() (any, error) { return node(ops.ReLUBackward(x, x4)) }, kind: E, op: "ops.ReLUBackward", arg: "dy"},
		{name: "gelu backward dtype", call: func() (any, error) { return node(ops.GELUBackward(y, y32)) }, kind: D, op: "ops.GELUBackward", arg: "dy"},
		{name: "silu backward two graphs", call: func() (any, error) { return node(ops.SiLUBackward(x, xOther)) }, kind: P, op: "ops.SiLUBackward", arg: "dy"},
		{name: "silu backward dy nil", call: func() (any, error) { return node(ops.SiLUBackward(x, nil)) }, kind: P, op: "ops.SiLUBackward", arg: "dy"},
		{name: "gelu backward scalar", call: func() (any, error) { return node(ops.GELUBackward(scalar, scalar)) }, kind: R, op: "ops.GELUBackward", arg: "x"},

		// ---- ops: values that do not match the node, seen when the machine runs ----
		{name: "Do logits of another shape", call: doWith(func() (*G.Node, error) { return ops.SoftmaxJetSecond(l, d, 1) },
			dense(f64, []int{3, 4}, buf(12)), dense(f64, []int{4, 3, 2}, buf(24))), kind: E, op: sjS, arg: "logits"},
		{name: "Do decoded float32", call: doWith(func() (*G.Node, error) { return ops.SoftmaxJetHVP(l, d, v, 1) },
			dense(f64, []int{4, 3}, buf(12)), dense(f32, []int{4, 3, 2}, buf(24)), dense(f64, []int{4, 3}, buf(12))), kind: D, op: sjH, arg: "decoded"},
		{name: "Do missing input", call: doWith(func() (*G.Node, error) { return ops.LogisticJetValue(l, d, alpha, beta) },
			dense(f64, []int{4, 3}, buf(12))), kind: P, op: ljV, arg: ""},
		{name: "Do dy of another shape", call: doWith(func() (*G.Node, error) { return ops.SoftmaxBackward(y, dy, 1) },
			dense(f64, []int{2, 3, 4}, buf(24)), dense(f64, []int{2, 4, 3}, buf(24))), kind: E, op: sb, arg: "dy"},
		{name: "Do scalar input to activation", call: doWith(func() (*G.Node, error) { return ops.GELU(x) },
			G.NewF64(1)), kind: P, op: "ops.GELU", arg: "x"},
		{name: "run LogDet not positive definite", call: notSPD, kind: graphs.ErrNotSPD, op: ld, arg: "H", viaMachine: true},

		// ---- softmaxjet kernels ----
		{name: "kernel K = 0", call: func() (any, error) {
			return only(softmaxjet.Softmax[float64]{InvTau: 1}.Value(buf(0), buf(0), buf(0), softmaxjet.Shape{N: 2, K: 0, P: 2}))
		}, kind: E, op: "softmaxjet.Softmax.Value", arg: "shape"},
		{name: "kernel P = 0", call: func() (any, error) {
			return only(softmaxjet.Softmax[float64]{InvTau: 1}.First(buf(0), l6, buf(0), softmaxjet.Shape{N: 2, K: 3, P: 0}))
		}, kind: E, op: "softmaxjet.Softmax.First", arg: "shape"},
		{name: "kernel N < 0", call: func() (any, error) {
			return only(softmaxjet.Softmax[float64]{InvTau: 1}.Second(buf(0), buf(0), buf(0), softmaxjet.Shape{N: -1, K: 3, P: 2}))
		}, kind: E, op: "softmaxjet.Softmax.Second", arg: "shape"},
		{name: "kernel overflow", call: func() (any, error) {
			return only(softmaxjet.Softmax[float64]{InvTau: 1}.Second(buf(0), buf(0), buf(0), softmaxjet.Shape{N: 1 << 20, K: 1 << 20, P: 1 << 30}))
		}, kind: S, op: "softmaxjet.Softmax.Second", arg: "shape"},
		{name: "kernel dst short", call: func() (any, error) {
			return only(softmaxjet.Softmax[float64]{InvTau: 1}.Second(buf(2*3*3*2-1), l6, d12, sh))
		}, kind: S, op: "softmaxjet.Softmax.Second", arg: "dst"},
		{name: "kernel logits long", call: func() (any, error) {
			return only(softmaxjet.Softmax[float64]{InvTau: 1}.Value(buf(4), buf(7), d12, sh))
		}, kind: S, op: "softmaxjet.Softmax.Value", arg: "logits"},
		{name: "kernel decoded short", call: func() (any, error) {
			return only(softmaxjet.Softmax[float64]{InvTau: 1}.GaussNewton(buf(18), l6, buf(11), sh))
		}, kind: S, op: "softmaxjet.Softmax.GaussNewton", arg: "decoded"},
		{name: "kernel hvp v short", call: func() (any, error) {
			return only(softmaxjet.Softmax[float64]{InvTau: 1}.HVP(d12, l6, d12, buf(5), sh))
		}, kind: S, op: "softmaxjet.Softmax.HVP", arg: "v"},
		{name: "kernel invTau NaN", call: func() (any, error) {
			return only(softmaxjet.Softmax[float64]{InvTau: nan}.First(d12, l6, d12, sh))
		}, kind: T, op: "softmaxjet.Softmax.First", arg: "invTau"},
		{name: "kernel vjp grad short", call: func() (any, error) {
			return only(softmaxjet.Softmax[float64]{InvTau: 1}.SecondVJP(l6, d12, l6, d12, buf(23), sh))
		}, kind: S, op: "softmaxjet.Softmax.SecondVJP", arg: "g"},
		{name: "kernel logistic alpha length", call: func() (any, error) {
			return only(softmaxjet.Logistic[float64]{Alpha: alpha[:1], Beta: beta}.Value(buf(4), l6, d12, sh))
		}, kind: P, op: "softmaxjet.Logistic.Value", arg: "alpha"},
		{name: "kernel logistic beta NaN", call: func() (any, error) {
			return only(softmaxjet.Logistic[float64]{Alpha: alpha, Beta: []float64{0, nan, 0}}.HVP(d12, l6, d12, v6, sh))
		}, kind: NF, op: "softmaxjet.Logistic.HVP", arg: "beta"},
		{name: "program K = 0", call: func() (any, error) {
			p, err := tower.NewProgram[float64](tower.ProgramSpec{K: 0, P: 1, Gate: tower.Softmax(1)})
			return p, err
		}, kind: E, op: "tower.NewProgram", arg: "shape"},
		{name: "program invTau 0", call: func() (any, error) {
			p, err := tower.NewProgram[float32](tower.ProgramSpec{K: 2, P: 1, Gate: tower.Softmax(0)})
			return p, err
		}, kind: T, op: "tower.NewProgram", arg: "invTau"},

		// ---- backward kernels ----
		{name: "kernel backward rank 0", call: func() (any, error) {
			return only(backward.SoftmaxBackward(buf(1), buf(1), buf(1), []int{}, 0))
		}, kind: R, op: "backward.SoftmaxBackward", arg: "shape"},
		{name: "kernel backward rank 9", call: func() (any, error) {
			s := []int{1, 1, 1, 1, 1, 1, 1, 1, 2}
			return only(backward.LogSoftmaxBackward(buf(2), buf(2), buf(2), s, 0))
		}, kind: R, op: "backward.LogSoftmaxBackward", arg: "shape"},
		{name: "kernel backward negative dim", call: func() (any, error) {
			return only(backward.SoftmaxBackward(buf(0), buf(0), buf(0), []int{2, -3}, 0))
		}, kind: E, op: "backward.SoftmaxBackward", arg: "shape"},
		{name: "kernel backward axis 2 of 2", call: func() (any, error) {
			return only(backward.SoftmaxBackward(l6, l6, l6, []int{2, 3}, 2))
		}, kind: A, op: "backward.SoftmaxBackward", arg: "axis"},
		{name: "kernel backward axis -3 of 2", call: func() (any, error) {
			return only(backward.SoftmaxBackwardGrad(l6, l6, l6, l6, l6, []int{2, 3}, -3))
		}, kind: A, op: "backward.SoftmaxBackwardGrad", arg: "axis"},
		{name: "kernel backward dx short", call: func() (any, error) {
			return only(backward.SoftmaxBackward(buf(5), l6, l6, []int{2, 3}, 1))
		}, kind: S, op: "backward.SoftmaxBackward", arg: "dx"},
		{name: "kernel backward dy long", call: func() (any, error) {
			return only(backward.LogSoftmaxBackward(l6, l6, buf(7), []int{2, 3}, -1))
		}, kind: S, op: "backward.LogSoftmaxBackward", arg: "dy"},
		{name: "kernel backward grad gy short", call: func() (any, error) {
			return only(backward.LogSoftmaxBackwardGrad(buf(1), nil, l6, l6, l6, []int{2, 3}, 0))
		}, kind: S, op: "backward.LogSoftmaxBackwardGrad", arg: "gy"},
		{name: "kernel relu length", call: func() (any, error) {
			return only(backward.ReLU(buf(3), buf(4)))
		}, kind: S, op: "backward.ReLU", arg: "y"},
		{name: "kernel gelu backward dy length", call: func() (any, error) {
			return only(backward.GELUBackward(buf(4), buf(4), buf(3)))
		}, kind: S, op: "backward.GELUBackward", arg: "dy"},
		{name: "kernel silu backward grad g length", call: func() (any, error) {
			return only(backward.SiLUBackwardGrad(buf(4), buf(4), buf(4), buf(4), buf(5)))
		}, kind: S, op: "backward.SiLUBackwardGrad", arg: "g"},

		// ---- cudaops ----
		{name: "ParseMode gpu", call: func() (any, error) { return mode(cudaops.ParseMode("gpu")) }, anyResult: true, kind: P, op: "cudaops.ParseMode", arg: "mode"},
		{name: "ParseMode empty", call: func() (any, error) { return mode(cudaops.ParseMode("")) }, anyResult: true, kind: P, op: "cudaops.ParseMode", arg: "mode"},
		{name: "Run required no backend", setup: noBackend(dispatch.ModeRequired), call: func() (any, error) {
			out := make([]float64, 4)
			p, err := dispatch.Run(dispatch.NewCall(dispatch.KernelReLUForward, [][]float64{make([]float64, 4)}, [][]float64{out}, []int{4}, nil))
			if p != dispatch.PathGPU {
				return p, err // a non-GPU path with the error would be a silent CPU run
			}
			return nil, err
		}, kind: DV, op: "cudaops", arg: ""},
		{name: "op run required no backend", setup: noBackend(dispatch.ModeRequired), call: requiredNoBackend,
			kind: DV, op: "cudaops", arg: "", viaMachine: true},
		{name: "Run auto no sizes", setup: noBackend(dispatch.ModeAuto), call: func() (any, error) {
			_, err := dispatch.Run(&dispatch.Call{Kernel: dispatch.KernelReLUForward, DType: dispatch.Float64})
			return nil, err
		}, kind: P, op: "cudaops", arg: "Ints"},
		{name: "Run required failing backend", setup: func(t *testing.T) {
			setMode(t, dispatch.ModeRequired)
			register(t, &fakeBackend{name: "failing", fail: true})
		}, call: func() (any, error) {
			_, err := dispatch.Run(dispatch.NewCall(dispatch.KernelReLUForward, [][]float32{make([]float32, 2)}, [][]float32{make([]float32, 2)}, []int{2}, nil))
			return nil, err
		}, kind: DV, op: "cudaops", arg: ""},
		{name: "Run required nil call", setup: func(t *testing.T) {
			setMode(t, dispatch.ModeRequired)
			register(t, &fakeBackend{name: "ok"})
		}, call: func() (any, error) {
			_, err := dispatch.Run(nil)
			return nil, err
		}, kind: P, op: "cudaops", arg: ""},
		{name: "Call unknown kernel", call: jetCall(60000, []int{1, 1, 1}, nil, nil, nil), kind: P, op: call, arg: "Kernel"},
		{name: "Call ints count", call: jetCall(dispatch.KernelJetValue, []int{1, 1}, []float64{1}, nil, nil), kind: P, op: call, arg: "Ints"},
		{name: "Call negative size", call: jetCall(dispatch.KernelJetValue, []int{-1, 1, 1}, []float64{1}, nil, nil), kind: E, op: call, arg: "Ints"},
		{name: "Call K = 0", call: jetCall(dispatch.KernelJetFirst, []int{1, 0, 1}, []float64{1}, nil, nil), kind: E, op: call, arg: "Ints"},
		{name: "Call mixed dtypes", call: jetCall(dispatch.KernelJetValue, []int{1, 1, 1}, []float64{1},
			[]any{make([]float64, 1), make([]float32, 1)}, []any{make([]float64, 1)}), kind: D, op: call, arg: "F32"},
		{name: "Call input length", call: jetCall(dispatch.KernelJetValue, []int{2, 3, 2}, []float64{1},
			[]any{buf(5), d12}, []any{buf(4)}), kind: S, op: call, arg: "In[0]"},
		{name: "Call invTau 0", call: jetCall(dispatch.KernelJetValue, []int{2, 3, 2}, []float64{0},
			[]any{l6, d12}, []any{buf(4)}), kind: T, op: call, arg: "invTau"},
		{name: "Call alpha NaN", call: jetCall(dispatch.KernelLogisticValue, []int{2, 3, 2}, []float64{1, nan, 1, 0, 0, 0},
			[]any{l6, d12}, []any{buf(4)}), kind: NF, op: call, arg: "alpha"},

		// ---- graphs ----
		{name: "SoftArgmin nil", call: func() (any, error) { return node(graphs.SoftArgmin(nil, 1)) }, kind: P, op: sa, arg: "costs"},
		{name: "SoftArgmin invTau 0", call: func() (any, error) { return node(graphs.SoftArgmin(costs, 0)) }, kind: T, op: sa, arg: "invTau"},
		{name: "SoftArgmin int", call: func() (any, error) { return node(graphs.SoftArgmin(lInt, 1)) }, kind: D, op: sa, arg: "costs"},
		{name: "SoftArgmin scalar", call: func() (any, error) { return node(graphs.SoftArgmin(scalar, 1)) }, kind: R, op: sa, arg: "costs"},
		{name: "SoftArgmin rank 9", call: func() (any, error) { return node(graphs.SoftArgmin(y9, 1)) }, kind: R, op: sa, arg: "costs"},
		{name: "SoftArgmin zero dim", call: func() (any, error) { return node(graphs.SoftArgmin(lZero, 1)) }, kind: E, op: sa, arg: "costs"},
		{name: "LogDet nil", call: func() (any, error) { return node(graphs.LogDetPlusRidge(nil, 1)) }, kind: P, op: ld, arg: "H"},
		{name: "LogDet lambda -1", call: func() (any, error) { return node(graphs.LogDetPlusRidge(h, -1)) }, kind: P, op: ld, arg: "lambda"},
		{name: "LogDet lambda NaN", call: func() (any, error) { return node(graphs.LogDetPlusRidge(h, nan)) }, kind: P, op: ld, arg: "lambda"},
		{name: "LogDet lambda +Inf", call: func() (any, error) { return node(graphs.LogDetPlusRidge(h, inf)) }, kind: P, op: ld, arg: "lambda"},
		{name: "LogDet rank 2", call: func() (any, error) { return node(graphs.LogDetPlusRidge(l, 1)) }, kind: R, op: ld, arg: "H"},
		{name: "LogDet not square", call: func() (any, error) { return node(graphs.LogDetPlusRidge(hRect, 1)) }, kind: E, op: ld, arg: "H"},
		{name: "LogDet int", call: func() (any, error) { return node(graphs.LogDetPlusRidge(hInt, 1)) }, kind: D, op: ld, arg: "H"},
		{name: "GaussNewtonLogDet lambda 0", call: func() (any, error) { return node(graphs.GaussNewtonLogDet(l, d, 1, 0)) }, kind: P, op: "graphs.GaussNewtonLogDet", arg: "lambda"},
		{name: "GaussNewtonLogDet two graphs", call: func() (any, error) { return node(graphs.GaussNewtonLogDet(l, dOther, 1, 1)) }, kind: P, op: sjG, arg: "decoded"},
		{name: "GaussNewtonSlabs invTau -1", call: func() (any, error) { return node(graphs.GaussNewtonSlabs(l, d, -1)) }, kind: T, op: sjG, arg: "invTau"},
		{name: "CurvaturePenalty weight NaN", call: func() (any, error) { return node(graphs.CurvaturePenalty(l, d, 1, nan)) }, kind: P, op: "graphs.CurvaturePenalty", arg: "weight"},
		{name: "CurvaturePenalty logits nil", call: func() (any, error) { return node(graphs.CurvaturePenalty(nil, d, 1, 1)) }, kind: P, op: sjF, arg: "logits"},
		{name: "CurvaturePenalty scalar logits", call: func() (any, error) { return node(graphs.CurvaturePenalty(scalar, d, 1, 1)) }, kind: R, op: sjF, arg: "logits"},
		{name: "SoftArgminProbs invTau 0", call: func() (any, error) { return graphs.SoftArgminProbs([]float64{1, 2}, 0) }, kind: T, op: "graphs.SoftArgminProbs", arg: "invTau"},
		{name: "SoftArgminVJP lengths", call: func() (any, error) { return graphs.SoftArgminVJP([]float64{0.5, 0.5}, []float64{1}, 1) }, kind: S, op: "graphs.SoftArgminVJP", arg: "v"},
		{name: "SoftArgminVJP invTau NaN", call: func() (any, error) { return graphs.SoftArgminVJP([]float64{1}, []float64{1}, nan) }, kind: T, op: "graphs.SoftArgminVJP", arg: "invTau"},
		{name: "NaturalGradient lengths", call: func() (any, error) { return graphs.NaturalGradient([]float64{0.5, 0.5}, []float64{1}, 0) }, kind: S, op: "graphs.NaturalGradient", arg: "grad"},
		{name: "NaturalGradient lambda -1", call: func() (any, error) { return graphs.NaturalGradient([]float64{1}, []float64{1}, -1) }, kind: P, op: "graphs.NaturalGradient", arg: "lambda"},
		{name: "NaturalGradient lambda +Inf", call: func() (any, error) { return graphs.NaturalGradient([]float64{1}, []float64{1}, inf) }, kind: P, op: "graphs.NaturalGradient", arg: "lambda"},
		{name: "NaturalGradient negative probability", call: func() (any, error) {
			return graphs.NaturalGradient([]float64{1.5, -0.5}, []float64{1, 1}, 0.1)
		}, kind: P, op: "graphs.NaturalGradient", arg: "probs"},
		{name: "GradCheck nil cost", call: func() (any, error) { return report(graphs.GradCheck(nil, G.Nodes{in64})) }, kind: P, op: gc, arg: "cost"},
		{name: "GradCheck tensor cost", call: func() (any, error) { return report(graphs.GradCheck(in64, G.Nodes{in64})) }, kind: R, op: gc, arg: "cost"},
		{name: "GradCheck no wrt", call: func() (any, error) { return report(graphs.GradCheck(sq, nil)) }, kind: P, op: gc, arg: "wrt"},
		{name: "GradCheck nil wrt", call: func() (any, error) { return report(graphs.GradCheck(sq, G.Nodes{nil})) }, kind: P, op: gc, arg: "wrt"},
		{name: "GradCheck wrt other graph", call: func() (any, error) { return report(graphs.GradCheck(sq, G.Nodes{lOther})) }, kind: P, op: gc, arg: "wrt"},
		{name: "GradCheck wrt dtype", call: func() (any, error) { return report(graphs.GradCheck(sq, G.Nodes{in32})) }, kind: D, op: gc, arg: "wrt"},
		{name: "GradCheck wrt unbound", call: func() (any, error) { return report(graphs.GradCheck(sq, G.Nodes{cost})) }, kind: P, op: gc, arg: "wrt"},
		{name: "GradCheck step NaN", call: func() (any, error) { return report(graphs.GradCheck(sq, G.Nodes{in64}, graphs.WithStep(nan))) }, kind: P, op: gc, arg: "step"},
	}
}

// moreCatalogues are further parts of the catalogue, each kept in the file of its own topic
// and added there by an init function.
var moreCatalogues []func() []badCase

// TestErrorCatalogue: every bad input in the catalogue gives an error that matches its
// sentinel, is a *gatejet.Error naming the operation and the argument, comes with a zero
// result, and never panics.
func TestErrorCatalogue(t *testing.T) {
	cases := catalogue()
	for _, more := range moreCatalogues {
		cases = append(cases, more()...)
	}
	seen := make(map[string]bool, len(cases))
	for _, tc := range cases {
		if seen[tc.name] {
			t.Fatalf("duplicate case name %q", tc.name)
		}
		seen[tc.name] = true
		t.Run(tc.name, func(t *testing.T) {
			if tc.setup != nil {
				tc.setup(t)
			} else {
				cpuOnly(t)
			}
			var res any
			err, panicked := catch(func() error {
				var err error
				res, err = tc.call()
				return err
			})
			if panicked {
				t.Fatalf("case %q panicked instead of returning %v: %v", tc.name, tc.kind, err)
			}
			if err == nil {
				t.Fatalf("case %q: no error, want %v (result %v)", tc.name, tc.kind, res)
			}
			if !tc.anyResult && !isZero(res) {
				t.Errorf("case %q: got a result %v together with the error %v", tc.name, res, err)
			}
			var ge *gatejet.Error
			if tc.viaMachine {
				ge = graphs.OpError(err)
				if ge == nil {
					t.Fatalf("case %q: machine error carries no *gatejet.Error: %v", tc.name, err)
				}
			} else if !errors.As(err, &ge) {
				t.Fatalf("case %q: error %T is not a *gatejet.Error: %v", tc.name, err, err)
			}
			if !errors.Is(ge, tc.kind) {
				t.Errorf("case %q: want kind %v, got %v (%v)", tc.name, tc.kind, ge.Kind, err)
			}
			if !tc.viaMachine && !errors.Is(err, tc.kind) {
				t.Errorf("case %q: errors.Is(err, %v) is false: %v", tc.name, tc.kind, err)
			}
			if ge.Op != tc.op {
				t.Errorf("case %q: want Op %q, got %q (%v)", tc.name, tc.op, ge.Op, err)
			}
			if ge.Arg != tc.arg {
				t.Errorf("case %q: want Arg %q, got %q (%v)", tc.name, tc.arg, ge.Arg, err)
			}
			if ge.Op == "" || !strings.Contains(err.Error(), ge.Op) {
				t.Errorf("case %q: message %q does not name the operation %q", tc.name, err.Error(), ge.Op)
			}
		})
	}
	if len(cases) < 30 {
		t.Errorf("the catalogue has %d cases, want at least 30", len(cases))
	}
	t.Logf("%d catalogue cases", len(cases))
}

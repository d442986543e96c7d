package conformance

import (
	"math"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/gatejet/gatejet"
	"github.com/gatejet/gatejet/backward"
	"github.com/gatejet/gatejet/internal/dispatch"
	"github.com/gatejet/gatejet/ops"
)

// The softmax-family forward part of the catalogue: ops.Softmax and ops.LogSoftmax, the
// backward.Softmax and backward.LogSoftmax kernels, and Calls of their device kernels.
func init() {
	moreCatalogues = append(moreCatalogues, softmaxCatalogue)
}

func softmaxCatalogue() []badCase {
	g := G.NewGraph()
	mk := func(gr *G.ExprGraph, dt tensor.Dtype, name string, s ...int) *G.Node {
		if len(s) == 0 {
			return G.NewScalar(gr, dt, G.WithName(name))
		}
		return G.NewTensor(gr, dt, len(s), G.WithShape(s...), G.WithName(name))
	}
	x := mk(g, f64, "x", 2, 3, 4)
	xInt := mk(g, tensor.Int, "xInt", 2, 3, 4)
	xScalar := mk(g, f64, "xScalar")
	x9 := mk(g, f64, "x9", 1, 1, 1, 1, 1, 1, 1, 1, 2)
	xZero := mk(g, f64, "xZero", 2, 0, 4)
	free := G.NewConstant(tensor.New(tensor.WithShape(2, 3), tensor.WithBacking(make([]float64, 6))))
	buf := func(n int) []float64 { return make([]float64, n) }
	b12 := buf(12)
	b6 := buf(6)

	const (
		sm  = "ops.Softmax"
		lsm = "ops.LogSoftmax"
		bsm = "backward.Softmax"
		bls = "backward.LogSoftmax"
		cc  = "cudaops.Call"
	)
	E, R, D, A := gatejet.ErrShape, gatejet.ErrRank, gatejet.ErrDType, gatejet.ErrAxis
	S, P := gatejet.ErrSize, gatejet.ErrParam

	call := func(k dispatch.Kernel, ints []int, floats []float64, in, out []any) func() (any, error) {
		return func() (any, error) {
			return only(anyCall(k, ints, floats, in, out).Check())
		}
	}

	return []badCase{
		// ---- ops: softmax-family forward ----
		{name: "softmax axis = rank", call: func() (any, error) { return node(ops.Softmax(x, 3)) }, kind: A, op: sm, arg: "axis"},
		{name: "log-softmax axis = -rank-1", call: func() (any, error) { return node(ops.LogSoftmax(x, -4)) }, kind: A, op: lsm, arg: "axis"},
		{name: "softmax axis huge", call: func() (any, error) { return node(ops.Softmax(x, math.MaxInt)) }, kind: A, op: sm, arg: "axis"},
		{name: "log-softmax axis min int", call: func() (any, error) { return node(ops.LogSoftmax(x, math.MinInt)) }, kind: A, op: lsm, arg: "axis"},
		{name: "softmax x int", call: func() (any, error) { return node(ops.Softmax(xInt, 0)) }, kind: D, op: sm, arg: "x"},
		{name: "softmax scalar", call: func() (any, error) { return node(ops.Softmax(xScalar, 0)) }, kind: R, op: sm, arg: "x"},
		{name: "log-softmax rank 9", call: func() (any, error) { return node(ops.LogSoftmax(x9, 0)) }, kind: R, op: lsm, arg: "x"},
		{name: "softmax zero dim", call: func() (any, error) { return node(ops.Softmax(xZero, 1)) }, kind: E, op: sm, arg: "x"},
		{name: "log-softmax x nil", call: func() (any, error) { return node(ops.LogSoftmax(nil, 0)) }, kind: P, op: lsm, arg: "x"},
		{name: "softmax nil option", call: func() (any, error) { return node(ops.Softmax(x, 0, nil)) }, kind: P, op: sm, arg: "opts"},
		{name: "softmax free constant", call: func() (any, error) { return node(ops.Softmax(free, 1)) }, kind: P, op: sm, arg: "x"},
		{name: "softmax over lowered limit", setup: lowerMaxBytes(1024), call: func() (any, error) {
			return node(ops.Softmax(mk(G.NewGraph(), f64, "x", 3, 43), -1))
		}, kind: S, op: sm, arg: "output"},
		{name: "softmax Do with a wrong shape", call: doWith(func() (*G.Node, error) { return ops.Softmax(x, 1) },
			dense(f64, []int{2, 4, 3}, buf(24))), kind: E, op: sm, arg: "x"},
		{name: "log-softmax Do with a wrong dtype", call: doWith(func() (*G.Node, error) { return ops.LogSoftmax(x, 1) },
			dense(f32, []int{2, 3, 4}, buf(24))), kind: D, op: lsm, arg: "x"},

		// ---- backward: softmax-family forward kernels ----
		{name: "backward.Softmax rank 0", call: func() (any, error) {
			return only(backward.Softmax(buf(1), buf(1), []int{}, 0))
		}, kind: R, op: bsm, arg: "shape"},
		{name: "backward.LogSoftmax rank 9", call: func() (any, error) {
			return only(backward.LogSoftmax(buf(2), buf(2), []int{1, 1, 1, 1, 1, 1, 1, 1, 2}, 0))
		}, kind: R, op: bls, arg: "shape"},
		{name: "backward.Softmax negative dim", call: func() (any, error) {
			return only(backward.Softmax(buf(0), buf(0), []int{2, -3}, 0))
		}, kind: E, op: bsm, arg: "shape"},
		{name: "backward.Softmax dims overflow", call: func() (any, error) {
			return only(backward.Softmax(buf(0), buf(0), []int{1 << 40, 1 << 40}, 0))
		}, kind: S, op: bsm, arg: "shape"},
		{name: "backward.LogSoftmax axis = rank", call: func() (any, error) {
			return only(backward.LogSoftmax(b6, buf(6), []int{2, 3}, 2))
		}, kind: A, op: bls, arg: "axis"},
		{name: "backward.Softmax short y", call: func() (any, error) {
			return only(backward.Softmax(buf(5), buf(6), []int{2, 3}, 1))
		}, kind: S, op: bsm, arg: "y"},
		{name: "backward.LogSoftmax long x (float32)", call: func() (any, error) {
			return only(backward.LogSoftmax(make([]float32, 6), make([]float32, 7), []int{2, 3}, -1))
		}, kind: S, op: bls, arg: "x"},
		{name: "backward.Softmax y shifted over x", call: func() (any, error) {
			return only(backward.Softmax(b12[1:7], b12[:6], []int{2, 3}, 1))
		}, kind: P, op: bsm, arg: "y"},
		{name: "backward.LogSoftmax x shifted over y", call: func() (any, error) {
			return only(backward.LogSoftmax(b12[:6], b12[3:9], []int{6}, 0))
		}, kind: P, op: bls, arg: "y"},

		// ---- cudaops: Calls of the forward kernels ----
		{name: "softmax_forward two inputs", call: call(dispatch.KernelSoftmaxForward, []int{2, 3, 1}, nil,
			[]any{buf(6), buf(6)}, []any{buf(6)}), kind: S, op: cc, arg: "In[1]"},
		{name: "log_softmax_forward short output", call: call(dispatch.KernelLogSoftmaxForward, []int{2, 3, 1}, nil,
			[]any{buf(6)}, []any{buf(5)}), kind: S, op: cc, arg: "Out[0]"},
		{name: "softmax_forward with scalars", call: call(dispatch.KernelSoftmaxForward, []int{2, 3, 1}, []float64{1},
			[]any{buf(6)}, []any{buf(6)}), kind: P, op: cc, arg: "Floats"},
		{name: "softmax_forward negative size", call: call(dispatch.KernelSoftmaxForward, []int{2, -3, 1}, nil,
			[]any{buf(6)}, []any{buf(6)}), kind: E, op: cc, arg: "Ints"},
		{name: "log_softmax_forward mixed dtypes", call: call(dispatch.KernelLogSoftmaxForward, []int{2, 3, 1}, nil,
			[]any{buf(6)}, []any{make([]float32, 6)}), kind: D, op: cc, arg: "F32"},
	}
}

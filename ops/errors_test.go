package ops

import (
	"errors"
	"math"
	"testing"

	"github.com/stretchr/testify/require"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/gatejet/gatejet"
)

// TestBadInputs: every invalid argument is reported when the node is built, as a
// *gatejet.Error matching the right sentinel and naming the argument; nothing panics.
func TestBadInputs(t *testing.T) {
	g := G.NewGraph()
	other := G.NewGraph()
	mat := func(dt tensor.Dtype, name string, s ...int) *G.Node {
		return G.NewTensor(g, dt, len(s), G.WithShape(s...), G.WithName(name))
	}
	f64, f32 := tensor.Float64, tensor.Float32
	l := mat(f64, "l", 4, 3)
	d := mat(f64, "d", 4, 3, 2)
	v := mat(f64, "v", 4, 3)
	l32 := mat(f32, "l32", 4, 3)
	d32 := mat(f32, "d32", 4, 3, 2)
	lInt := mat(tensor.Int, "lint", 4, 3)
	scalar := G.NewScalar(g, f64, G.WithName("s"))
	vec := mat(f64, "vec", 12)
	d4 := mat(f64, "d4", 4, 3, 2, 1)
	dN := mat(f64, "dN", 5, 3, 2)  // n mismatch
	dK := mat(f64, "dK", 4, 2, 2)  // K mismatch
	vBad := mat(f64, "vBad", 4, 2) // v shape
	lOther := G.NewTensor(other, f64, 2, G.WithShape(4, 3), G.WithName("lo"))
	y := mat(f64, "y", 2, 3)
	dy := mat(f64, "dy", 2, 3)
	dyBad := mat(f64, "dyBad", 3, 2)
	y32 := mat(f32, "y32", 2, 3)
	x := mat(f64, "x", 5)
	big := mat(f64, "big", 1, 1, 1, 1, 1, 1, 1, 1, 1)
	alpha, beta := []float64{1, 2, 3}, []float64{0, 0, 0}

	for _, tc := range []struct {
		name  string
		build func() (*G.Node, error)
		kind  error
		arg   string
	}{
		{"logits rank 1", func() (*G.Node, error) { return SoftmaxJetFirst(vec, d, 1) }, gatejet.ErrRank, "logits"},
		{"logits scalar", func() (*G.Node, error) { return SoftmaxJetValue(scalar, d, 1) }, gatejet.ErrRank, "logits"},
		{"decoded rank 4", func() (*G.Node, error) { return SoftmaxJetSecond(l, d4, 1) }, gatejet.ErrRank, "decoded"},
		{"decoded rank 2", func() (*G.Node, error) { return SoftmaxJetGaussNewton(l, v, 1) }, gatejet.ErrRank, "decoded"},
		{"n mismatch", func() (*G.Node, error) { return SoftmaxJetFirst(l, dN, 1) }, gatejet.ErrShape, "decoded"},
		{"K mismatch", func() (*G.Node, error) { return SoftmaxJetFirst(l, dK, 1) }, gatejet.ErrShape, "decoded"},
		{"v shape", func() (*G.Node, error) { return SoftmaxJetHVP(l, d, vBad, 1) }, gatejet.ErrShape, "v"},
		{"v rank", func() (*G.Node, error) { return SoftmaxJetHVP(l, d, d, 1) }, gatejet.ErrRank, "v"},
		{"v nil", func() (*G.Node, error) { return SoftmaxJetHVP(l, d, nil, 1) }, gatejet.ErrParam, "v"},
		{"logits nil", func() (*G.Node, error) { return SoftmaxJetFirst(nil, d, 1) }, gatejet.ErrParam, "logits"},
		{"dtype mismatch", func() (*G.Node, error) { return SoftmaxJetFirst(l, d32, 1) }, gatejet.ErrDType, "decoded"},
		{"dtype mismatch 32/64", func() (*G.Node, error) { return SoftmaxJetFirst(l32, d, 1) }, gatejet.ErrDType, "decoded"},
		{"int dtype", func() (*G.Node, error) { return SoftmaxJetFirst(lInt, d, 1) }, gatejet.ErrDType, "logits"},
		{"other graph", func() (*G.Node, error) { return SoftmaxJetFirst(lOther, d, 1) }, gatejet.ErrParam, "decoded"},
		{"invTau 0", func() (*G.Node, error) { return SoftmaxJetFirst(l, d, 0) }, gatejet.ErrTemperature, "invTau"},
		{"invTau < 0", func() (*G.Node, error) { return SoftmaxJetSecond(l, d, -1) }, gatejet.ErrTemperature, "invTau"},
		{"invTau NaN", func() (*G.Node, error) { return SoftmaxJetValue(l, d, math.NaN()) }, gatejet.ErrTemperature, "invTau"},
		{"invTau +Inf", func() (*G.Node, error) { return SoftmaxJetHVP(l, d, v, math.Inf(1)) }, gatejet.ErrTemperature, "invTau"},
		{"alpha short", func() (*G.Node, error) { return LogisticJetFirst(l, d, alpha[:2], beta) }, gatejet.ErrParam, "alpha"},
		{"beta long", func() (*G.Node, error) { return LogisticJetValue(l, d, alpha, append(beta, 0)) }, gatejet.ErrParam, "beta"},
		{"alpha nil", func() (*G.Node, error) { return LogisticJetSecond(l, d, nil, beta) }, gatejet.ErrParam, "alpha"},
		{"alpha NaN", func() (*G.Node, error) { return LogisticJetHVP(l, d, v, []float64{1, math.NaN(), 3}, beta) }, gatejet.ErrNonFinite, "alpha"},
		{"beta Inf", func() (*G.Node, error) { return LogisticJetGaussNewton(l, d, alpha, []float64{0, math.Inf(-1), 0}) }, gatejet.ErrNonFinite, "beta"},
		{"logistic K mismatch", func() (*G.Node, error) { return LogisticJetFirst(l, dK, alpha, beta) }, gatejet.ErrShape, "decoded"},
		{"axis too large", func() (*G.Node, error) { return SoftmaxBackward(y, dy, 2) }, gatejet.ErrAxis, ""},
		{"axis too negative", func() (*G.Node, error) { return LogSoftmaxBackward(y, dy, -3) }, gatejet.ErrAxis, ""},
		{"softmax shape mismatch", func() (*G.Node, error) { return SoftmaxBackward(y, dyBad, 0) }, gatejet.ErrShape, "dy"},
		{"softmax dtype mismatch", func() (*G.Node, error) { return SoftmaxBackward(y32, dy, 0) }, gatejet.ErrDType, "dy"},
		{"softmax scalar", func() (*G.Node, error) { return SoftmaxBackward(scalar, scalar, 0) }, gatejet.ErrRank, "y"},
		{"softmax rank 9", func() (*G.Node, error) { return SoftmaxBackward(big, big, 0) }, gatejet.ErrRank, ""},
		{"softmax nil dy", func() (*G.Node, error) { return LogSoftmaxBackward(y, nil, 0) }, gatejet.ErrParam, "dy"},
		{"activation scalar", func() (*G.Node, error) { return GELU(scalar) }, gatejet.ErrRank, "x"},
		{"activation nil", func() (*G.Node, error) { return SiLU(nil) }, gatejet.ErrParam, "x"},
		{"activation int", func() (*G.Node, error) { return ReLU(lInt) }, gatejet.ErrDType, "x"},
		{"activation backward shape", func() (*G.Node, error) { return GELUBackward(x, y) }, gatejet.ErrShape, "dy"},
		{"activation backward dtype", func() (*G.Node, error) { return SiLUBackward(y, y32) }, gatejet.ErrDType, "dy"},
		{"activation backward other graph", func() (*G.Node, error) { return ReLUBackward(lOther, l) }, gatejet.ErrParam, "dy"},
		{"only free constants", func() (*G.Node, error) {
			c := G.NewConstant(tensor.New(tensor.WithShape(2, 2), tensor.Of(f64)))
			return SoftmaxBackward(c, c, 0)
		}, gatejet.ErrParam, "y"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var n *G.Node
			var err error
			require.NotPanics(t, func() { n, err = tc.build() })
			require.Error(t, err)
			require.Nil(t, n)
			require.True(t, errors.Is(err, tc.kind), "want %v, got %v", tc.kind, err)
			var ge *gatejet.Error
			require.True(t, errors.As(err, &ge), "want a *gatejet.Error, got %T", err)
			if tc.arg != "" {
				require.Equal(t, tc.arg, ge.Arg, "%v", err)
			}
			require.Contains(t, ge.Op, "ops.")
		})
	}
}

// TestDoRejectsBadValues: an op given values that do not match the node it was built for
// returns an error from Do and UsePreallocDo rather than panicking, and UsePreallocDo
// rejects a buffer it cannot write in place (the TapeMachine then falls back to Do).
func TestDoRejectsBadValues(t *testing.T) {
	g := G.NewGraph()
	l := G.NewMatrix(g, tensor.Float64, G.WithShape(2, 3), G.WithName("l"))
	d := G.NewTensor(g, tensor.Float64, 3, G.WithShape(2, 3, 2), G.WithName("d"))
	n, err := SoftmaxJetSecond(l, d, 1)
	require.NoError(t, err)
	op := n.Op().(*jetOp)
	lv := tensor.New(tensor.WithShape(2, 3), tensor.Of(tensor.Float64))
	dv := tensor.New(tensor.WithShape(2, 3, 2), tensor.Of(tensor.Float64))
	out := tensor.New(tensor.WithShape(2, 3, 3, 2), tensor.Of(tensor.Float64))
	for _, tc := range []struct {
		name string
		run  func() (G.Value, error)
		kind error
	}{
		{"arity", func() (G.Value, error) { return op.Do(lv) }, gatejet.ErrParam},
		{"shape", func() (G.Value, error) { return op.Do(dv, dv) }, gatejet.ErrShape},
		{"dtype", func() (G.Value, error) {
			return op.Do(tensor.New(tensor.WithShape(2, 3), tensor.Of(tensor.Float32)), dv)
		}, gatejet.ErrDType},
		{"scalar", func() (G.Value, error) { return op.Do(G.NewF64(1), dv) }, gatejet.ErrParam},
		{"prealloc shape", func() (G.Value, error) { return op.UsePreallocDo(dv, lv, dv) }, gatejet.ErrShape},
		{"prealloc dtype", func() (G.Value, error) {
			return op.UsePreallocDo(tensor.New(tensor.WithShape(2, 3, 3, 2), tensor.Of(tensor.Float32)), lv, dv)
		}, gatejet.ErrDType},
		{"prealloc not dense", func() (G.Value, error) { return op.UsePreallocDo(G.NewF64(0), lv, dv) }, gatejet.ErrParam},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var err error
			require.NotPanics(t, func() { _, err = tc.run() })
			require.ErrorIs(t, err, tc.kind)
		})
	}
	_, err = op.UsePreallocDo(out, lv, dv)
	require.NoError(t, err)

	// An output that overlaps an input is refused.
	sb := G.NewTensor(g, tensor.Float64, 2, G.WithShape(2, 3), G.WithName("y"))
	sn, err := SoftmaxBackward(sb, sb, 1)
	require.NoError(t, err)
	_, err = sn.Op().(*axisOp).UsePreallocDo(lv, lv, lv)
	require.ErrorIs(t, err, gatejet.ErrParam)
}

// TestInferShapeRejects: InferShape and Type checks hold even when Gorgonia calls them with
// other shapes than the node was built with (no panic, a gatejet error).
func TestInferShapeRejects(t *testing.T) {
	g := G.NewGraph()
	l := G.NewMatrix(g, tensor.Float64, G.WithShape(2, 3), G.WithName("l"))
	d := G.NewTensor(g, tensor.Float64, 3, G.WithShape(2, 3, 2), G.WithName("d"))
	n, err := SoftmaxJetFirst(l, d, 1)
	require.NoError(t, err)
	op := n.Op()
	_, err = op.InferShape(tensor.Shape{2, 3})
	require.ErrorIs(t, err, gatejet.ErrParam)
	_, err = op.InferShape(tensor.Shape{2, 3}, tensor.Shape{2, 4, 2})
	require.ErrorIs(t, err, gatejet.ErrShape)
	s, err := op.InferShape(tensor.Shape{2, 3}, tensor.Shape{2, 3, 2})
	require.NoError(t, err)
	require.Equal(t, tensor.Shape{2, 3, 2}, s)
}

// TestCarelessOpCalls: every op of this package — each constructor's, and the gradient ops
// gorgonia.Grad builds from them — reached through the public gorgonia.Op interfaces and
// called with nil or missing arguments returns an ErrParam error or a safe zero value, never
// panics: WriteHash(nil), DiffWRT(-1), SymDiff and DoDiff with nil nodes, Do and InferShape
// with nothing or nil, UsePreallocDo into nil.
func TestCarelessOpCalls(t *testing.T) {
	for _, c := range reuseCtors() {
		t.Run(c.name, func(t *testing.T) {
			g := G.NewGraph()
			nodes := nodesFor(g, tensor.Float64, c.ins())
			n, err := c.build(nodes)
			require.NoError(t, err)
			gradOf(t, n, nodes)
			built, cs := opsOf[computer](g)
			for i, nd := range built {
				op := cs[i]
				gop := nd.Op()
				arity := gop.Arity()
				require.NotPanics(t, func() {
					gop.WriteHash(nil)
					require.Nil(t, gop.(G.SDOp).DiffWRT(-1))
					_, err := gop.(G.SDOp).SymDiff(make(G.Nodes, arity), nil, nil)
					require.ErrorIs(t, err, gatejet.ErrParam, op.name())
					_, err = gop.(G.SDOp).SymDiff(nodes[:min(arity, len(nodes))], nd, nil)
					require.ErrorIs(t, err, gatejet.ErrParam, op.name())
					err = gop.(G.ADOp).DoDiff(G.ExecutionContext{}, make(G.Nodes, arity), nil)
					require.ErrorIs(t, err, gatejet.ErrParam, op.name())
					err = gop.(G.ADOp).DoDiff(G.ExecutionContext{}, nil, nil)
					require.ErrorIs(t, err, gatejet.ErrParam, op.name())
					_, err = gop.Do()
					require.ErrorIs(t, err, gatejet.ErrParam, op.name())
					_, err = gop.Do(make([]G.Value, arity)...)
					require.ErrorIs(t, err, gatejet.ErrParam, op.name())
					_, err = gop.(G.UsePreallocDoer).UsePreallocDo(nil, make([]G.Value, arity)...)
					require.ErrorIs(t, err, gatejet.ErrParam, op.name())
					_, err = gop.InferShape()
					require.ErrorIs(t, err, gatejet.ErrParam, op.name())
					_, err = gop.InferShape(make([]G.DimSizer, arity)...)
					require.Error(t, err, op.name())
				})
			}
			require.Greater(t, len(built), 1, "the forward op and its gradient ops")
		})
	}
	require.NotPanics(t, func() {
		_, ok := LastPath(nil)
		require.False(t, ok)
		_, ok = LastPath(new(G.Node))
		require.False(t, ok)
	})
}

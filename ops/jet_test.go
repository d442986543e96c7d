package ops

import (
	"math/rand"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/gatejet/gatejet"
	"github.com/gatejet/gatejet/internal/kernel"
)

const (
	tN, tK, tP = 2, 3, 2
	tInvTau    = 1.7
)

// softmaxFloats are the softmax gate's floats for tInvTau.
var softmaxFloats = []float64{tInvTau}

var (
	tAlpha = []float64{1.2, -0.7, 2.1}
	tBeta  = []float64{0.3, -0.4, 0.1}
)

// jetInputsFor returns logits [n,K], decoded [n,K,P] and v [n,K] test inputs.
func jetInputsFor(seed int64, n, k, p int) []input {
	rng := rand.New(rand.NewSource(seed))
	return []input{
		randInput(rng, "logits", tensor.Shape{n, k}, -1.5, 1.5),
		randInput(rng, "decoded", tensor.Shape{n, k, p}, -2, 2),
		randInput(rng, "v", tensor.Shape{n, k}, -1, 1),
	}
}

// coordInputsFor returns logits [n,K], d0, d1, d2 [n,K,P] and v [n,2K] test inputs of the
// coordinate jets.
func coordInputsFor(seed int64, n, k, p int) []input {
	rng := rand.New(rand.NewSource(seed))
	return []input{
		randInput(rng, "logits", tensor.Shape{n, k}, -1.5, 1.5),
		randInput(rng, "d0", tensor.Shape{n, k, p}, -2, 2),
		randInput(rng, "d1", tensor.Shape{n, k, p}, -2, 2),
		randInput(rng, "d2", tensor.Shape{n, k, p}, -2, 2),
		randInput(rng, "v", tensor.Shape{n, 2 * k}, -1, 1),
	}
}

// jetFloats returns the floats the jet cases call gate g with: the built-in gates' fixed
// parameters (tInvTau; tAlpha, tBeta), and for any other gate its sampleFloats for tK atoms.
func jetFloats(g *kernel.Gate) []float64 {
	switch g {
	case kernel.SoftmaxGate:
		return softmaxFloats
	case kernel.LogisticGate:
		return append(append([]float64(nil), tAlpha...), tBeta...)
	}
	return sampleFloats(g, tK)
}

// sampleFloats returns the Sample of gate g for K atoms, drawn from a source seeded by the
// gate's index in kernel.Gates, so that a test gets the same floats on every run.
func sampleFloats(g *kernel.Gate, K int) []float64 {
	rng := rand.New(rand.NewSource(int64(90 + slices.Index(kernel.Gates(), g))))
	return g.Sample(K, rng.Float64, rng.NormFloat64)
}

// fixedParams returns the gateParams that hand the jet constructor floats as they are.
func fixedParams(floats []float64) gateParams {
	return func(string, int) ([]float64, error) { return floats, nil }
}

// jetWith builds channel c of gate g called with floats as they are, through jet.
func jetWith(c channel, g *kernel.Gate, logits, decoded, v *G.Node, floats []float64, opts ...Option) (*G.Node, error) {
	return jet(c, g, logits, decoded, v, fixedParams(floats), opts)
}

// jetCase is one channel of one gate of the table as a graphCase, named <Title><Channel>
// and built through jet from the gate's declaration and jetFloats.
type jetCase struct {
	graphCase
	gate   *kernel.Gate
	c      channel
	floats []float64
}

// newJetCase returns channel c of gate g. Its inputs' seed is 10·c + the gate's index in
// kernel.Gates (softmax 0, logistic 1, then the gates tests register).
func newJetCase(g *kernel.Gate, c channel) jetCase {
	ins := jetInputsFor(int64(10*int(c)+slices.Index(kernel.Gates(), g)), tN, tK, tP)
	if !c.HasV() {
		ins = ins[:2]
	}
	floats := jetFloats(g)
	gc := graphCase{name: g.Title + c.String(), inputs: ins, cpuOnly: !g.Kernel(c, false).OnDevice(),
		build: func(_ *G.ExprGraph, in []*G.Node) (*G.Node, error) {
			var v *G.Node
			if c.HasV() {
				v = in[2]
			}
			return jetWith(c, g, in[0], in[1], v, floats)
		}}
	return jetCase{graphCase: gc, gate: g, c: c, floats: floats}
}

// allJetCases returns every channel of every gate of the table.
func allJetCases() []jetCase {
	var cs []jetCase
	for _, g := range kernel.Gates() {
		for c := kernel.Value; c < kernel.NumChannels; c++ {
			cs = append(cs, newJetCase(g, c))
		}
	}
	return cs
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

func typed[T gatejet.Float](vals []float64) []T {
	out := make([]T, len(vals))
	for i, x := range vals {
		out[i] = T(x)
	}
	return out
}

func widen[T gatejet.Float](vals []T) []float64 {
	out := make([]float64, len(vals))
	for i, x := range vals {
		out[i] = float64(x)
	}
	return out
}

// runKernel runs kernel id of the table directly on the CPU, in T, with the given inputs
// (as many as it takes) and returns every output it writes.
func runKernel[T gatejet.Float](t *testing.T, id kernel.ID, ints []int, floats []float64, in ...[]float64) [][]float64 {
	var o kernel.Operands[T]
	for i := range id.NumIn() {
		o.In[i] = typed[T](in[i])
	}
	for i, d := range id.Spec().Out {
		n, ok := d.Len(ints)
		require.True(t, ok)
		o.Out[i] = make([]T, n)
	}
	require.NoError(t, kernel.Run("test", id, &o, ints, floats))
	out := make([][]float64, id.NumOut())
	for i := range out {
		out[i] = widen(o.Out[i])
	}
	return out
}

// jetInts are the sizes [N, K, P] of jet inputs.
func jetInts(ins []input) []int { return []int{ins[0].shape[0], ins[0].shape[1], ins[1].shape[2]} }

// kernelJet computes channel c of gate g directly with the gate's kernel, in T.
func kernelJet[T gatejet.Float](t *testing.T, g *kernel.Gate, floats []float64, c channel, ins []input) []float64 {
	in := make([][]float64, len(ins))
	for i := range ins {
		in[i] = ins[i].vals
	}
	return runKernel[T](t, g.Kernel(c, false), jetInts(ins), floats, in...)[0]
}

// TestJetForwardMatchesKernels: every channel of every gate of the table returns exactly what
// the gate's kernel computes.
func TestJetForwardMatchesKernels(t *testing.T) {
	for _, jc := range allJetCases() {
		requireKernelValue(t, jc.graphCase,
			func(t *testing.T) []float64 { return kernelJet[float64](t, jc.gate, jc.floats, jc.c, jc.inputs) },
			func(t *testing.T) []float64 { return kernelJet[float32](t, jc.gate, jc.floats, jc.c, jc.inputs) },
			"the op must return exactly what the kernel computes")
	}
}

func TestJetOutputShapes(t *testing.T) {
	g := G.NewGraph()
	l := G.NewMatrix(g, tensor.Float64, G.WithShape(4, 3), G.WithName("l"))
	d := G.NewTensor(g, tensor.Float64, 3, G.WithShape(4, 3, 5), G.WithName("d"))
	v := G.NewMatrix(g, tensor.Float64, G.WithShape(4, 3), G.WithName("v"))
	for _, tc := range []struct {
		build func() (*G.Node, error)
		want  tensor.Shape
	}{
		{func() (*G.Node, error) { return SoftmaxJetValue(l, d, 1) }, tensor.Shape{4, 5}},
		{func() (*G.Node, error) { return SoftmaxJetFirst(l, d, 1) }, tensor.Shape{4, 3, 5}},
		{func() (*G.Node, error) { return SoftmaxJetSecond(l, d, 1) }, tensor.Shape{4, 3, 3, 5}},
		{func() (*G.Node, error) { return SoftmaxJetHVP(l, d, v, 1) }, tensor.Shape{4, 3, 5}},
		{func() (*G.Node, error) { return SoftmaxJetGaussNewton(l, d, 1) }, tensor.Shape{4, 3, 3}},
		{func() (*G.Node, error) { return LogisticJetSecond(l, d, tAlpha, tBeta) }, tensor.Shape{4, 3, 3, 5}},
	} {
		n, err := tc.build()
		require.NoError(t, err)
		require.Equal(t, tc.want, n.Shape())
		require.Equal(t, tensor.Float64, n.Dtype())
	}
}

// TestJetGradients checks Grad (TapeMachine, SymDiff) and DoDiff (LispMachine) through every
// channel of every gate of the table against central finite differences, in float64 and
// float32.
func TestJetGradients(t *testing.T) {
	for _, c := range allJetCases() {
		t.Run(c.name, func(t *testing.T) { checkGradients(t, c.graphCase) })
	}
}

// TestJetHashSeparatesParameters: Gorgonia merges nodes with equal hashes, so nodes that differ
// only in a parameter must stay distinct nodes with their own values.
func TestJetHashSeparatesParameters(t *testing.T) {
	g := G.NewGraph()
	ins := jetInputsFor(1, tN, tK, tP)
	l := G.NewMatrix(g, tensor.Float64, G.WithShape(ins[0].shape...), G.WithName("l"), G.WithValue(toDense(tensor.Float64, ins[0].shape, ins[0].vals)))
	d := G.NewTensor(g, tensor.Float64, 3, G.WithShape(ins[1].shape...), G.WithName("d"), G.WithValue(toDense(tensor.Float64, ins[1].shape, ins[1].vals)))
	a1, err := SoftmaxJetFirst(l, d, 1)
	require.NoError(t, err)
	a1b, err := SoftmaxJetFirst(l, d, 1)
	require.NoError(t, err)
	a2, err := SoftmaxJetFirst(l, d, 1.0000000000000002) // one ulp away
	require.NoError(t, err)
	require.Same(t, a1, a1b, "identical nodes are merged")
	require.NotSame(t, a1, a2)
	require.NotEqual(t, a1.Op().Hashcode(), a2.Op().Hashcode())

	b1, err := LogisticJetFirst(l, d, tAlpha, tBeta)
	require.NoError(t, err)
	alpha2 := append([]float64(nil), tAlpha...)
	alpha2[2] += 1e-9
	b2, err := LogisticJetFirst(l, d, alpha2, tBeta)
	require.NoError(t, err)
	beta2 := append([]float64(nil), tBeta...)
	beta2[0] = -beta2[0]
	b3, err := LogisticJetFirst(l, d, tAlpha, beta2)
	require.NoError(t, err)
	require.NotSame(t, b1, b2)
	require.NotSame(t, b1, b3)
	require.NotSame(t, b2, b3)
	require.NotEqual(t, b1.Op().Hashcode(), b2.Op().Hashcode())
	require.NotEqual(t, b1.Op().Hashcode(), b3.Op().Hashcode())

	// Channels and gates differ too.
	v, err := SoftmaxJetValue(l, d, 1)
	require.NoError(t, err)
	require.NotEqual(t, v.Op().Hashcode(), a1.Op().Hashcode())

	// The caller's alpha may change afterwards without affecting the op.
	alpha3 := append([]float64(nil), tAlpha...)
	b4, err := LogisticJetFirst(l, d, alpha3, tBeta)
	require.NoError(t, err)
	h := b4.Op().Hashcode()
	alpha3[0] = 100
	require.Equal(t, h, b4.Op().Hashcode())

	vm := G.NewTapeMachine(g, G.TraceExec())
	defer vm.Close()
	require.NoError(t, vm.RunAll())
	f1, f2 := floats(t, a1.Value()), floats(t, a2.Value())
	require.NotEqual(t, f1, f2, "different temperatures give different values")
}

// kernelJetVJP computes the VJP of channel c of gate g directly with the gate's VJP kernel,
// in T: dLogits, dDecoded [, dV].
func kernelJetVJP[T gatejet.Float](t *testing.T, g *kernel.Gate, floats []float64, c channel, ins []input, up []float64) [][]float64 {
	var in [][]float64
	for i := range ins {
		in = append(in, ins[i].vals)
	}
	return runKernel[T](t, g.Kernel(c, true), jetInts(ins), floats, append(in, up)...)
}

// TestJetVJPMatchesKernels: with the linear cost Σ W⊙channel the upstream gradient is exactly
// W, so the gradient nodes of gorgonia.Grad (TapeMachine) and DoDiff (LispMachine) must return
// exactly what the gate's VJP kernels compute for W, for every gate of the table.
func TestJetVJPMatchesKernels(t *testing.T) {
	for _, jc := range allJetCases() {
		t.Run(jc.name, func(t *testing.T) {
			w := weights(tensor.Shape(outShape(jc.c, tN, tK, tP)).TotalSize())
			for _, dt := range dtypes {
				var want [][]float64
				if dt == tensor.Float64 {
					want = kernelJetVJP[float64](t, jc.gate, jc.floats, jc.c, jc.inputs, w)
				} else {
					want = kernelJetVJP[float32](t, jc.gate, jc.floats, jc.c, jc.inputs, w)
				}
				require.Equal(t, want, linearGrads(t, jc.graphCase, dt, w), "%s %v tape", jc.name, dt)
				require.Equal(t, want, linearGradsLisp(t, jc.graphCase, dt, w), "%s %v lisp", jc.name, dt)
			}
		})
	}
}

// TestViewInputs: inputs that Gorgonia hands over as views (a column slice, a transpose) are
// laid out row-major before the kernel reads them, on both machines, and gradients flow back
// through the slice.
func TestViewInputs(t *testing.T) {
	ins := jetInputsFor(31, 3, 2, 2)
	wide := input{"wide", tensor.Shape{3, 5}, nil}
	wide.vals = make([]float64, 15)
	for r := 0; r < 3; r++ {
		for c := 0; c < 5; c++ {
			wide.vals[r*5+c] = float64(float32(0.3*float64(c) - 0.2*float64(r*r)))
		}
	}
	// logits = wide[:, 1:3] (a strided view); decoded as is; the transpose of a [2,3] matrix
	// as the v of an HVP.
	vt := input{"vt", tensor.Shape{2, 3}, []float64{0.5, -1, 0.25, 1, 0, -0.5}}
	c := graphCase{name: "views", inputs: []input{wide, ins[1], vt}, build: func(g *G.ExprGraph, in []*G.Node) (*G.Node, error) {
		l, err := G.Slice(in[0], nil, G.S(1, 3))
		if err != nil {
			return nil, err
		}
		v, err := G.Transpose(in[2])
		if err != nil {
			return nil, err
		}
		return SoftmaxJetHVP(l, in[1], v, tInvTau)
	}}
	l := make([]float64, 6)
	for r := 0; r < 3; r++ {
		l[r*2], l[r*2+1] = wide.vals[r*5+1], wide.vals[r*5+2]
	}
	v := []float64{0.5, 1, -1, 0, 0.25, -0.5}
	flat := []input{{"l", tensor.Shape{3, 2}, l}, ins[1], {"v", tensor.Shape{3, 2}, v}}
	for _, dt := range dtypes {
		var want []float64
		if dt == tensor.Float64 {
			want = kernelJet[float64](t, kernel.SoftmaxGate, softmaxFloats, kernel.HVP, flat)
		} else {
			want = kernelJet[float32](t, kernel.SoftmaxGate, softmaxFloats, kernel.HVP, flat)
		}
		for _, m := range machines {
			require.Equal(t, want, forwardValue(t, c, dt, m), "%v %v", dt, m)
		}
	}
	checkGradients(t, c)

	// Gorgonia's Slice and Transpose hand over copies here; a view passed to Do directly is
	// materialised.
	g := G.NewGraph()
	ln := G.NewMatrix(g, tensor.Float64, G.WithShape(3, 2), G.WithName("l"))
	dn := G.NewTensor(g, tensor.Float64, 3, G.WithShape(3, 2, 2), G.WithName("d"))
	vn := G.NewMatrix(g, tensor.Float64, G.WithShape(3, 2), G.WithName("v"))
	node, err := SoftmaxJetHVP(ln, dn, vn, tInvTau)
	require.NoError(t, err)
	lView, err := toDense(tensor.Float64, wide.shape, wide.vals).Slice(nil, tensor.S(1, 3))
	require.NoError(t, err)
	vT := toDense(tensor.Float64, vt.shape, vt.vals)
	require.NoError(t, vT.T())
	got, err := node.Op().Do(lView, toDense(tensor.Float64, ins[1].shape, ins[1].vals), vT)
	require.NoError(t, err)
	require.Equal(t, kernelJet[float64](t, kernel.SoftmaxGate, softmaxFloats, kernel.HVP, flat), floats(t, got))
}

// TestConstantDecoded: decoded may be a constant made by gorgonia.NewConstant (which belongs to
// no graph until used); gradients with respect to the logits still match finite differences.
func TestConstantDecoded(t *testing.T) {
	ins := jetInputsFor(41, tN, tK, tP)
	c := graphCase{name: "constant decoded", inputs: ins[:1], build: func(g *G.ExprGraph, in []*G.Node) (*G.Node, error) {
		return SoftmaxJetFirst(in[0], G.NewConstant(toDense(in[0].Dtype(), ins[1].shape, ins[1].vals)), tInvTau)
	}}
	want := kernelJet[float64](t, kernel.SoftmaxGate, softmaxFloats, kernel.First, ins)
	for _, dt := range dtypes {
		for _, m := range machines {
			requireClose(t, want, forwardValue(t, c, dt, m), gradTol(dt), "%v %v", dt, m)
		}
	}
	checkGradients(t, c)
}

package ops

import (
	"testing"

	"github.com/stretchr/testify/require"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/gatejet/gatejet"
	"github.com/gatejet/gatejet/internal/dispatch"
	"github.com/gatejet/gatejet/internal/testkit"
)

// setMaxBytes lowers gatejet.MaxBytes for one test and restores it when the test ends.
func setMaxBytes(t *testing.T, n int64) {
	t.Helper()
	prev := gatejet.SetMaxBytes(n)
	t.Cleanup(func() { gatejet.SetMaxBytes(prev) })
}

// requireSizeError checks an ErrSize *gatejet.Error of operation op, argument arg, whose
// message contains each of the given strings (the size, the limit).
func requireSizeError(t *testing.T, err error, op, arg string, contains ...string) {
	t.Helper()
	testkit.RequireError(t, err, gatejet.ErrSize, op, arg)
	for _, s := range contains {
		require.Contains(t, err.Error(), s)
	}
}

// TestHugeOutputRefusedAtConstruction: logits [1, 2²¹] and decoded [1, 2²¹, 1] are valid
// nodes (nothing is allocated for them), but the second channel and the Gauss-Newton slab
// would be 2⁴² elements, 32 TiB in float64: the constructor refuses them with an ErrSize
// error naming the size and the limit, instead of a node whose run ends the process with the
// runtime's out-of-memory error. The first channel, [1, 2²¹, 1], is built as before.
func TestHugeOutputRefusedAtConstruction(t *testing.T) {
	const k = 1 << 21
	for _, dt := range dtypes {
		t.Run(dt.String(), func(t *testing.T) {
			g := G.NewGraph()
			l := G.NewMatrix(g, dt, G.WithShape(1, k), G.WithName("l"))
			d := G.NewTensor(g, dt, 3, G.WithShape(1, k, 1), G.WithName("d"))
			v := G.NewMatrix(g, dt, G.WithShape(1, k), G.WithName("v"))
			size := map[tensor.Dtype]string{tensor.Float64: "32.0 TiB", tensor.Float32: "16.0 TiB"}[dt]
			for _, c := range []struct {
				op    string
				build func() (*G.Node, error)
			}{
				{"ops.SoftmaxJetSecond", func() (*G.Node, error) { return SoftmaxJetSecond(l, d, 1) }},
				{"ops.SoftmaxJetGaussNewton", func() (*G.Node, error) { return SoftmaxJetGaussNewton(l, d, 1, ReuseOutput()) }},
				{"ops.LogisticJetSecond", func() (*G.Node, error) {
					return LogisticJetSecond(l, d, make([]float64, k), make([]float64, k))
				}},
				{"ops.LogisticJetGaussNewton", func() (*G.Node, error) {
					return LogisticJetGaussNewton(l, d, make([]float64, k), make([]float64, k))
				}},
			} {
				n, err := c.build()
				require.Nil(t, n, c.op)
				requireSizeError(t, err, c.op, "output", size, "16.0 GiB")
			}
			n, err := SoftmaxJetHVP(l, d, v, 1)
			require.NoError(t, err)
			require.Equal(t, tensor.Shape{1, k, 1}, n.Shape())
		})
	}
}

// TestMaxBytesConfigurable: the limit is gatejet.MaxBytes, read when the node is built. With
// it lowered to 1 KiB, every constructor refuses an output over 1 KiB and builds one under it.
func TestMaxBytesConfigurable(t *testing.T) {
	setMaxBytes(t, 1024)
	g := G.NewGraph()
	f64 := func(name string, s ...int) *G.Node {
		return G.NewTensor(g, tensor.Float64, len(s), G.WithShape(s...), G.WithName(name))
	}
	l, d, v := f64("l", 4, 3), f64("d", 4, 3, 16), f64("v", 4, 3)
	x129, x128 := f64("x129", 129), f64("x128", 128)
	y129 := f64("y129", 3, 43)
	x32 := G.NewVector(g, tensor.Float32, G.WithShape(256), G.WithName("x32"))
	// Value [4,16] is 512 B; First, HVP [4,3,16] 1536 B; GaussNewton [4,3,3] 288 B.
	_, err := SoftmaxJetValue(l, d, 1)
	require.NoError(t, err)
	_, err = SoftmaxJetGaussNewton(l, d, 1)
	require.NoError(t, err)
	_, err = SoftmaxJetFirst(l, d, 1)
	requireSizeError(t, err, "ops.SoftmaxJetFirst", "output", "1.5 KiB", "1.0 KiB")
	_, err = LogisticJetHVP(l, d, v, []float64{1, 1, 1}, []float64{0, 0, 0})
	requireSizeError(t, err, "ops.LogisticJetHVP", "output")
	_, err = ReLU(x128)
	require.NoError(t, err)
	_, err = GELU(x32)
	require.NoError(t, err)
	_, err = SiLU(x129)
	requireSizeError(t, err, "ops.SiLU", "output")
	_, err = ReLUBackward(x129, x129)
	requireSizeError(t, err, "ops.ReLUBackward", "output")
	_, err = SoftmaxBackward(y129, y129, 1)
	requireSizeError(t, err, "ops.SoftmaxBackward", "output")
	_, err = LogSoftmaxBackward(y129, y129, 0)
	requireSizeError(t, err, "ops.LogSoftmaxBackward", "output")
}

// TestGradientOpsRefusedAtConstruction: the gradient ops that gorgonia.Grad builds (SymDiff)
// are checked like the forward ops (SymDiff returns the ErrSize error). The value channel [4,16] fits in 1 KiB but its gradient
// with respect to decoded, [4,3,16], does not: Grad returns the ErrSize error.
func TestGradientOpsRefusedAtConstruction(t *testing.T) {
	setMaxBytes(t, 1024)
	g := G.NewGraph()
	l := G.NewMatrix(g, tensor.Float64, G.WithShape(4, 3), G.WithName("l"))
	d := G.NewTensor(g, tensor.Float64, 3, G.WithShape(4, 3, 16), G.WithName("d"))
	out, err := SoftmaxJetValue(l, d, 1, ReuseOutput())
	require.NoError(t, err)
	cost, err := G.Sum(out)
	require.NoError(t, err)
	_, err = G.Grad(cost, l, d)
	// Grad's error wrapper has no Unwrap: the message carries the ErrSize error.
	require.Error(t, err)
	require.Contains(t, err.Error(), "ops.SoftmaxJetValueVJP: output: ")
	require.Contains(t, err.Error(), "1.5 KiB) exceed the limit of 1.0 KiB")
}

// TestSizeLimitAtRun: a limit lowered after the node was built applies to the buffers its
// run allocates — the output of Do, the ReuseOutput buffer, the gradients of DoDiff, the
// row-major copy of an input view and the scratch outputs given to a device backend — as an
// ErrSize error, not an allocation.
func TestSizeLimitAtRun(t *testing.T) {
	const n, k, p = 4, 3, 16
	ins := jetInputsFor(11, n, k, p)
	build := func(opts ...Option) (*G.ExprGraph, *G.Node, *G.Node, *G.Node) {
		g := G.NewGraph()
		l := G.NewMatrix(g, tensor.Float64, G.WithShape(n, k), G.WithName("l"),
			G.WithValue(toDense(tensor.Float64, ins[0].shape, ins[0].vals)))
		d := G.NewTensor(g, tensor.Float64, 3, G.WithShape(n, k, p), G.WithName("d"),
			G.WithValue(toDense(tensor.Float64, ins[1].shape, ins[1].vals)))
		out, err := SoftmaxJetFirst(l, d, 1, opts...)
		require.NoError(t, err)
		return g, l, d, out
	}
	vals := valuesFor(tensor.Float64, ins[:2])

	t.Run("Do", func(t *testing.T) {
		_, _, _, plain := build()
		_, _, _, reused := build(ReuseOutput())
		setMaxBytes(t, 1024) // the first channel is 1536 B
		_, err := plain.Op().Do(vals...)
		requireSizeError(t, err, "ops.SoftmaxJetFirst", "output", "1.5 KiB")
		_, err = reused.Op().Do(vals...)
		requireSizeError(t, err, "ops.SoftmaxJetFirst", "output", "1.5 KiB")
	})

	t.Run("DoDiff", func(t *testing.T) {
		g := G.NewGraph()
		l := G.NewMatrix(g, tensor.Float64, G.WithShape(n, k), G.WithName("l"), G.WithValue(vals[0]))
		d := G.NewTensor(g, tensor.Float64, 3, G.WithShape(n, k, p), G.WithName("d"), G.WithValue(vals[1]))
		gn, err := SoftmaxJetGaussNewton(l, d, 1) // [4,3,3]: 288 B
		require.NoError(t, err)
		_, err = G.Sum(gn)
		require.NoError(t, err)
		setMaxBytes(t, 1024) // DoDiff's gradient with respect to decoded is 1536 B
		m := G.NewLispMachine(g)
		defer m.Close()
		err = m.RunAll()
		// A LispMachine's error wrapper has no Unwrap: the message carries the ErrSize error.
		require.Error(t, err)
		require.Contains(t, err.Error(), "ops.SoftmaxJetGaussNewton: output: ")
		require.Contains(t, err.Error(), "1.5 KiB) exceed the limit of 1.0 KiB")
		_, ok := LastPath(gn)
		require.True(t, ok, "the forward pass ran; the reverse pass refused")
	})

	t.Run("materialise", func(t *testing.T) {
		g := G.NewGraph()
		l := G.NewMatrix(g, tensor.Float64, G.WithShape(n, k), G.WithName("l"))
		d := G.NewTensor(g, tensor.Float64, 3, G.WithShape(n, k, p), G.WithName("d"))
		value, err := SoftmaxJetValue(l, d, 1) // [4,16]: 512 B
		require.NoError(t, err)
		wide := toDense(tensor.Float64, tensor.Shape{n, k, p + 1}, make([]float64, n*k*(p+1)))
		view, err := wide.Slice(nil, nil, tensor.S(0, p))
		require.NoError(t, err)
		setMaxBytes(t, 1024) // a row-major copy of the decoded view is 1536 B
		_, err = value.Op().Do(vals[0], view)
		requireSizeError(t, err, "ops.SoftmaxJetValue", "decoded", "1.5 KiB")
	})

	t.Run("scratch", func(t *testing.T) {
		withFake(t)
		dispatch.SetMode(dispatch.ModeRequired) // in ModeAuto a refused launch falls back to the CPU
		_, l, _, out := build()
		cost, err := G.Sum(out)
		require.NoError(t, err)
		grads, err := G.Grad(cost, l)
		require.NoError(t, err)
		vjp := grads[0].Op() // the gradient with respect to logits: output [4,3], 96 B
		up := toDense(tensor.Float64, tensor.Shape{n, k, p}, make([]float64, n*k*p))
		setMaxBytes(t, 1024) // its scratch gradient with respect to decoded is 1536 B
		_, err = vjp.Do(vals[0], vals[1], up)
		requireSizeError(t, err, "cudaops", "scratch", "1.5 KiB")
	})
}

package dispatch

import (
	"errors"
	"math"
	"testing"

	"github.com/gatejet/gatejet"
	"github.com/gatejet/gatejet/internal/kernel"
	"github.com/stretchr/testify/require"
)

func TestKernelsTable(t *testing.T) {
	ks := Kernels()
	require.GreaterOrEqual(t, len(ks), 10+10+4+2+9+4) // the built-ins: two gates, axis 4+2, activations, batch 4
	for _, k := range ks {
		require.NotEqual(t, FamilyUnknown, k.Family(), k)
		require.NotEmpty(t, k.id().Spec().In, k)
		require.NotEmpty(t, k.id().Spec().Out, k)
	}
	require.Equal(t, FamilyRowJet, KernelJetSecond.Family())
	require.Same(t, kernel.SoftmaxGate, KernelJetSecond.id().Spec().Gate)
	require.Same(t, kernel.LogisticGate, KernelLogisticHVPVJP.id().Spec().Gate)
	require.Equal(t, FamilyAxis, KernelLogSoftmaxBackwardGrad.Family())
	require.Equal(t, FamilyElementwise, KernelSiLUBackwardGrad.Family())
	require.Len(t, KernelJetHVPVJP.id().Spec().In, 4)
	require.Len(t, KernelJetHVPVJP.id().Spec().Out, 3)
	require.Equal(t, FamilyUnknown, Kernel(60000).Family())
	require.Equal(t, "jet_second", KernelJetSecond.String())
	require.Equal(t, "kernel(60000)", Kernel(60000).String())
}

func f64s(n int) []float64 { return make([]float64, n) }

func call64(k Kernel, ints []int, floats []float64, in, out []int) *Call {
	c := &Call{Kernel: k, DType: Float64, Ints: ints, Floats: floats}
	for i, n := range in {
		c.F64.In[i] = f64s(n)
	}
	for i, n := range out {
		c.F64.Out[i] = f64s(n)
	}
	return c
}

func TestCallCheck(t *testing.T) {
	const n, k, p = 3, 4, 5
	good := func() *Call {
		return call64(KernelJetSecond, []int{n, k, p}, []float64{2}, []int{n * k, n * k * p}, []int{n * k * k * p})
	}
	require.NoError(t, good().Check())
	require.Equal(t, n*k*k*p, good().OutputElements())

	cases := []struct {
		name string
		mut  func(c *Call)
		kind error
	}{
		{"unknown kernel", func(c *Call) { c.Kernel = 60000 }, gatejet.ErrParam},
		{"ints count", func(c *Call) { c.Ints = []int{n, k} }, gatejet.ErrParam},
		{"negative", func(c *Call) { c.Ints = []int{-1, k, p} }, gatejet.ErrShape},
		{"K zero", func(c *Call) { c.Ints = []int{n, 0, p} }, gatejet.ErrShape},
		{"P zero", func(c *Call) { c.Ints = []int{n, k, 0}; c.F64.In[1] = f64s(0); c.F64.Out[0] = f64s(0) }, gatejet.ErrShape},
		{"in missing", func(c *Call) { c.F64.In[1] = nil }, gatejet.ErrSize},
		{"extra in", func(c *Call) { c.F64.In[2] = f64s(1) }, gatejet.ErrSize},
		{"extra out", func(c *Call) { c.F64.Out[1] = f64s(1) }, gatejet.ErrSize},
		{"mixed dtype", func(c *Call) { c.F32.Out[0] = make([]float32, n*k*k*p) }, gatejet.ErrDType},
		{"no dtype", func(c *Call) { c.DType = DTypeInvalid }, gatejet.ErrDType},
		{"short input", func(c *Call) { c.F64.In[1] = f64s(n*k*p - 1) }, gatejet.ErrSize},
		{"long output", func(c *Call) { c.F64.Out[0] = f64s(n*k*k*p + 1) }, gatejet.ErrSize},
		{"no invTau", func(c *Call) { c.Floats = nil }, gatejet.ErrParam},
		{"bad invTau", func(c *Call) { c.Floats = []float64{math.Inf(1)} }, gatejet.ErrTemperature},
		{"zero invTau", func(c *Call) { c.Floats = []float64{0} }, gatejet.ErrTemperature},
		{"overflow", func(c *Call) { c.Ints = []int{math.MaxInt / 2, k, p} }, gatejet.ErrSize},
	}
	for _, tc := range cases {
		c := good()
		tc.mut(c)
		err := c.Check()
		require.Error(t, err, tc.name)
		require.True(t, errors.Is(err, tc.kind), "%s: %v", tc.name, err)
	}
	var nilCall *Call
	require.True(t, errors.Is(nilCall.Check(), gatejet.ErrParam))
}

func TestCallCheckFamilies(t *testing.T) {
	const n, k, p = 2, 3, 4
	lg := NewCall(KernelLogisticHVPVJP,
		[][]float32{make([]float32, n*k), make([]float32, n*k*p), make([]float32, n*k), make([]float32, n*k*p)},
		[][]float32{make([]float32, n*k), make([]float32, n*k*p), make([]float32, n*k)},
		[]int{n, k, p}, []float64{1, 2, 3, 0, 0, 0})
	require.NoError(t, lg.Check())
	require.Equal(t, Float32, lg.DType)
	require.Equal(t, n*k+n*k*p+n*k, lg.OutputElements())
	require.Equal(t, lg.OutputElements(), lg.Work)
	lg.Floats[4] = math.NaN()
	require.True(t, errors.Is(lg.Check(), gatejet.ErrNonFinite))
	lg.Floats = lg.Floats[:5]
	require.True(t, errors.Is(lg.Check(), gatejet.ErrParam))

	ax := call64(KernelSoftmaxBackwardGrad, []int{2, 3, 4}, nil, []int{24, 24, 24}, []int{24, 24})
	require.NoError(t, ax.Check())
	require.Equal(t, 48, ax.OutputElements())
	ax.Floats = []float64{1}
	require.True(t, errors.Is(ax.Check(), gatejet.ErrParam))

	empty := call64(KernelSoftmaxBackward, []int{0, 5, 3}, nil, []int{0, 0}, []int{0})
	require.NoError(t, empty.Check(), "n = 0 rows is a valid, empty call")

	ew := call64(KernelGELUBackward, []int{7}, nil, []int{7, 7}, []int{7})
	require.NoError(t, ew.Check())
	require.Equal(t, 7, ew.OutputElements())
	ew.Ints = []int{7, 1, 1}
	require.True(t, errors.Is(ew.Check(), gatejet.ErrParam))
	require.Zero(t, ew.OutputElements())

	jn := call64(KernelJetGaussNewtonVJP, []int{0, 16, 16}, []float64{1}, []int{0, 0, 0}, []int{0, 0})
	require.NoError(t, jn.Check(), "N = 0")
}

func TestDTypeString(t *testing.T) {
	require.Equal(t, "float32", Float32.String())
	require.Equal(t, "float64", Float64.String())
	require.Equal(t, "invalid", DTypeInvalid.String())
	require.Equal(t, 4, Float32.Size())
	require.Equal(t, 8, Float64.Size())
	require.Equal(t, Float32, DTypeOf[float32]())
	require.Equal(t, Float64, DTypeOf[float64]())
}

func TestCallLengths(t *testing.T) {
	in, out, err := (&Call{Kernel: KernelJetHVPVJP, Ints: []int{2, 3, 4}, Floats: []float64{1}}).Lengths()
	require.NoError(t, err)
	require.Equal(t, []int{6, 24, 6, 24}, in)
	require.Equal(t, []int{6, 24, 6}, out)
	in, out, err = (&Call{Kernel: KernelLogSoftmaxBackwardGrad, Ints: []int{2, 3, 4}}).Lengths()
	require.NoError(t, err)
	require.Equal(t, []int{24, 24, 24}, in)
	require.Equal(t, []int{24, 24}, out)
	_, _, err = (&Call{Kernel: KernelReLUForward, Ints: []int{-1}}).Lengths()
	require.True(t, errors.Is(err, gatejet.ErrShape))
	_, _, err = (&Call{Kernel: 60000}).Lengths()
	require.True(t, errors.Is(err, gatejet.ErrParam))
	_, _, err = (&Call{Kernel: KernelJetFirst, Ints: []int{1}}).Lengths()
	require.True(t, errors.Is(err, gatejet.ErrParam))
}

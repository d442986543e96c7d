package cudaops

import (
	"errors"
	"math"
	"testing"

	"github.com/gatejet/gatejet"
	"github.com/stretchr/testify/require"
)

func TestKernelsTable(t *testing.T) {
	ks := Kernels()
	require.Len(t, ks, 10+10+4+2+9) // axis: 4 backward, 2 forward
	for _, k := range ks {
		require.NotEqual(t, FamilyUnknown, k.Family(), k)
		require.Positive(t, k.NumIn(), k)
		require.Positive(t, k.NumOut(), k)
	}
	require.Equal(t, FamilySoftmaxJet, KernelJetSecond.Family())
	require.Equal(t, FamilyLogisticJet, KernelLogisticHVPVJP.Family())
	require.Equal(t, FamilyAxis, KernelLogSoftmaxBackwardGrad.Family())
	require.Equal(t, FamilyElementwise, KernelSiLUBackwardGrad.Family())
	require.Equal(t, 4, KernelJetHVPVJP.NumIn())
	require.Equal(t, 3, KernelJetHVPVJP.NumOut())
	require.Equal(t, FamilyUnknown, Kernel("nope").Family())
}

func f64s(n int) []float64 { return make([]float64, n) }

func TestCallCheck(t *testing.T) {
	const n, k, p = 3, 4, 5
	good := func() *Call {
		return &Call{Kernel: KernelJetSecond, In: []any{f64s(n * k), f64s(n * k * p)},
			Out: []any{f64s(n * k * k * p)}, Ints: []int{n, k, p}, Floats: []float64{2}}
	}
	require.NoError(t, good().Check())
	require.Equal(t, n*k*k*p, good().OutputElements())
	require.Equal(t, Float64, good().DType())

	cases := []struct {
		name string
		mut  func(c *Call)
		kind error
	}{
		{"unknown kernel", func(c *Call) { c.Kernel = "jet_third" }, gatejet.ErrParam},
		{"ints count", func(c *Call) { c.Ints = []int{n, k} }, gatejet.ErrParam},
		{"negative", func(c *Call) { c.Ints = []int{-1, k, p} }, gatejet.ErrShape},
		{"K zero", func(c *Call) { c.Ints = []int{n, 0, p} }, gatejet.ErrShape},
		{"P zero", func(c *Call) { c.Ints = []int{n, k, 0}; c.In[1] = f64s(0); c.Out[0] = f64s(0) }, gatejet.ErrShape},
		{"in count", func(c *Call) { c.In = c.In[:1] }, gatejet.ErrParam},
		{"out count", func(c *Call) { c.Out = append(c.Out, f64s(1)) }, gatejet.ErrParam},
		{"mixed dtype", func(c *Call) { c.Out[0] = make([]float32, n*k*k*p) }, gatejet.ErrDType},
		{"int slice", func(c *Call) { c.In[0] = make([]int, n*k) }, gatejet.ErrDType},
		{"short input", func(c *Call) { c.In[1] = f64s(n*k*p - 1) }, gatejet.ErrSize},
		{"long output", func(c *Call) { c.Out[0] = f64s(n*k*k*p + 1) }, gatejet.ErrSize},
		{"no invTau", func(c *Call) { c.Floats = nil }, gatejet.ErrParam},
		{"bad invTau", func(c *Call) { c.Floats = []float64{math.Inf(1)} }, gatejet.ErrTemperature},
		{"zero invTau", func(c *Call) { c.Floats = []float64{0} }, gatejet.ErrTemperature},
		{"overflow", func(c *Call) { c.Ints = []int{math.MaxInt / 2, k, p} }, gatejet.ErrShape},
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
	lg := &Call{Kernel: KernelLogisticHVPVJP,
		In:     []any{make([]float32, n*k), make([]float32, n*k*p), make([]float32, n*k), make([]float32, n*k*p)},
		Out:    []any{make([]float32, n*k), make([]float32, n*k*p), make([]float32, n*k)},
		Ints:   []int{n, k, p},
		Floats: []float64{1, 2, 3, 0, 0, 0}}
	require.NoError(t, lg.Check())
	require.Equal(t, Float32, lg.DType())
	require.Equal(t, n*k+n*k*p+n*k, lg.OutputElements())
	lg.Floats[4] = math.NaN()
	require.True(t, errors.Is(lg.Check(), gatejet.ErrNonFinite))
	lg.Floats = lg.Floats[:5]
	require.True(t, errors.Is(lg.Check(), gatejet.ErrParam))

	ax := &Call{Kernel: KernelSoftmaxBackwardGrad, In: []any{f64s(24), f64s(24), f64s(24)},
		Out: []any{f64s(24), f64s(24)}, Ints: []int{2, 3, 4}}
	require.NoError(t, ax.Check())
	require.Equal(t, 48, ax.OutputElements())
	ax.Floats = []float64{1}
	require.True(t, errors.Is(ax.Check(), gatejet.ErrParam))

	empty := &Call{Kernel: KernelSoftmaxBackward, In: []any{f64s(0), f64s(0)}, Out: []any{f64s(0)}, Ints: []int{0, 5, 3}}
	require.NoError(t, empty.Check(), "n = 0 rows is a valid, empty call")

	ew := &Call{Kernel: KernelGELUBackward, In: []any{f64s(7), f64s(7)}, Out: []any{f64s(7)}, Ints: []int{7}}
	require.NoError(t, ew.Check())
	require.Equal(t, 7, ew.OutputElements())
	ew.Ints = []int{7, 1, 1}
	require.True(t, errors.Is(ew.Check(), gatejet.ErrParam))
	require.Zero(t, ew.OutputElements())

	jn := &Call{Kernel: KernelJetGaussNewtonVJP, In: []any{f64s(0), f64s(0), f64s(0)},
		Out: []any{f64s(0), f64s(0)}, Ints: []int{0, 16, 16}, Floats: []float64{1}}
	require.NoError(t, jn.Check(), "N = 0")
}

func TestDTypeString(t *testing.T) {
	require.Equal(t, "float32", Float32.String())
	require.Equal(t, "float64", Float64.String())
	require.Equal(t, "invalid", DTypeInvalid.String())
	require.Equal(t, 4, Float32.Size())
	require.Equal(t, 8, Float64.Size())
	require.Equal(t, DTypeInvalid, (&Call{}).DType())
}

func TestCallLengths(t *testing.T) {
	in, out, err := (&Call{Kernel: KernelJetHVPVJP, Ints: []int{2, 3, 4}}).Lengths()
	require.NoError(t, err)
	require.Equal(t, []int{6, 24, 6, 24}, in)
	require.Equal(t, []int{6, 24, 6}, out)
	in, out, err = (&Call{Kernel: KernelLogSoftmaxBackwardGrad, Ints: []int{2, 3, 4}}).Lengths()
	require.NoError(t, err)
	require.Equal(t, []int{24, 24, 24}, in)
	require.Equal(t, []int{24, 24}, out)
	_, _, err = (&Call{Kernel: KernelReLUForward, Ints: []int{-1}}).Lengths()
	require.True(t, errors.Is(err, gatejet.ErrShape))
	_, _, err = (&Call{Kernel: "x"}).Lengths()
	require.True(t, errors.Is(err, gatejet.ErrParam))
	_, _, err = (&Call{Kernel: KernelJetFirst, Ints: []int{1}}).Lengths()
	require.True(t, errors.Is(err, gatejet.ErrParam))
}

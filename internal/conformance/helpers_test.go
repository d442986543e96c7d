package conformance

import (
	"errors"
	"fmt"
	"math"
	"runtime/debug"
	"sync/atomic"
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/gatejet/gatejet"
	"github.com/gatejet/gatejet/backward"
	"github.com/gatejet/gatejet/cudaops"
	"github.com/gatejet/gatejet/internal/par"
	"github.com/gatejet/gatejet/softmaxjet"
)

var (
	f64 = tensor.Float64
	f32 = tensor.Float32
)

// float is the element type of the kernels.
type float interface{ float32 | float64 }

// catch runs f and turns a panic into an error that names it and carries the stack, so a
// table test reports the case that panicked instead of dying.
func catch(f func() error) (err error, panicked bool) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("PANIC: %v\n%s", r, debug.Stack())
			panicked = true
		}
	}()
	return f(), false
}

// --- process-wide state, restored in t.Cleanup ---

// setMode sets the cudaops mode for the rest of the test.
func setMode(t testing.TB, m cudaops.Mode) {
	t.Helper()
	old := cudaops.SetMode(m)
	t.Cleanup(func() { cudaops.SetMode(old) })
}

// register makes b the active backend for the rest of the test (unregistered, then closed,
// in t.Cleanup).
func register(t testing.TB, b *fakeBackend) {
	t.Helper()
	un := cudaops.Register(b)
	t.Cleanup(func() {
		un()
		_ = b.Close()
	})
}

// setBreakEven sets the ModeAuto break-even of the kernels for the rest of the test.
func setBreakEven(t testing.TB, work int, ks ...cudaops.Kernel) {
	t.Helper()
	if len(ks) == 0 {
		ks = cudaops.Kernels()
	}
	for _, k := range ks {
		old := cudaops.BreakEven(k)
		cudaops.SetBreakEven(k, work)
		t.Cleanup(func() { cudaops.SetBreakEven(k, old) })
	}
}

// setPar sets par's goroutine cap and break-even for the rest of the test.
func setPar(t testing.TB, procs int, minWork int64) {
	t.Helper()
	oldP := par.SetMaxProcs(procs)
	oldW := par.SetMinWork(minWork)
	t.Cleanup(func() {
		par.SetMaxProcs(oldP)
		par.SetMinWork(oldW)
	})
}

// cpuOnly pins the CPU path (ModeOff) for the rest of the test, whatever GATEJET_GPU says.
func cpuOnly(t testing.TB) { setMode(t, cudaops.ModeOff) }

// --- a fake device backend ---

// errFakeLaunch is what a failing fake backend's Launch returns.
var errFakeLaunch = errors.New("fake device: launch failed")

// fakeBackend is a cudaops.Backend for tests. With fail set its Launch always fails; otherwise
// it checks the call and computes it on the host with the same kernels as the CPU path, so a
// "GPU" result is bit-identical to the CPU one. It counts launches and closes.
type fakeBackend struct {
	name     string
	fail     bool
	launches atomic.Int64
	closes   atomic.Int64
}

func (b *fakeBackend) Name() string { return b.name }

func (b *fakeBackend) Close() error {
	b.closes.Add(1)
	return nil
}

func (b *fakeBackend) Launch(c *cudaops.Call) error {
	b.launches.Add(1)
	if b.fail {
		return errFakeLaunch
	}
	if err := c.Check(); err != nil {
		return err
	}
	switch c.DType() {
	case cudaops.Float64:
		return hostLaunch[float64](c)
	case cudaops.Float32:
		return hostLaunch[float32](c)
	}
	return fmt.Errorf("fake device: dtype %v", c.DType())
}

// hostLaunch runs a checked call with the softmaxjet and backward kernels.
func hostLaunch[T float](c *cudaops.Call) error {
	in := make([][]T, len(c.In))
	for i, s := range c.In {
		in[i] = s.([]T)
	}
	out := make([][]T, len(c.Out))
	for i, s := range c.Out {
		out[i] = s.([]T)
	}
	switch c.Kernel.Family() {
	case cudaops.FamilySoftmaxJet:
		sh := softmaxjet.Shape{N: c.Ints[0], K: c.Ints[1], P: c.Ints[2]}
		s := c.Floats[0]
		switch c.Kernel {
		case cudaops.KernelJetValue:
			return softmaxjet.Value(out[0], in[0], in[1], sh, s)
		case cudaops.KernelJetFirst:
			return softmaxjet.First(out[0], in[0], in[1], sh, s)
		case cudaops.KernelJetSecond:
			return softmaxjet.Second(out[0], in[0], in[1], sh, s)
		case cudaops.KernelJetHVP:
			return softmaxjet.HVP(out[0], in[0], in[1], in[2], sh, s)
		case cudaops.KernelJetGaussNewton:
			return softmaxjet.GaussNewton(out[0], in[0], in[1], sh, s)
		case cudaops.KernelJetValueVJP:
			return softmaxjet.ValueVJP(out[0], out[1], in[0], in[1], in[2], sh, s)
		case cudaops.KernelJetFirstVJP:
			return softmaxjet.FirstVJP(out[0], out[1], in[0], in[1], in[2], sh, s)
		case cudaops.KernelJetSecondVJP:
			return softmaxjet.SecondVJP(out[0], out[1], in[0], in[1], in[2], sh, s)
		case cudaops.KernelJetHVPVJP:
			return softmaxjet.HVPVJP(out[0], out[1], out[2], in[0], in[1], in[2], in[3], sh, s)
		case cudaops.KernelJetGaussNewtonVJP:
			return softmaxjet.GaussNewtonVJP(out[0], out[1], in[0], in[1], in[2], sh, s)
		}
	case cudaops.FamilyLogisticJet:
		sh := softmaxjet.Shape{N: c.Ints[0], K: c.Ints[1], P: c.Ints[2]}
		a, bt := c.Floats[:sh.K], c.Floats[sh.K:]
		switch c.Kernel {
		case cudaops.KernelLogisticValue:
			return softmaxjet.LogisticValue(out[0], in[0], in[1], sh, a, bt)
		case cudaops.KernelLogisticFirst:
			return softmaxjet.LogisticFirst(out[0], in[0], in[1], sh, a, bt)
		case cudaops.KernelLogisticSecond:
			return softmaxjet.LogisticSecond(out[0], in[0], in[1], sh, a, bt)
		case cudaops.KernelLogisticHVP:
			return softmaxjet.LogisticHVP(out[0], in[0], in[1], in[2], sh, a, bt)
		case cudaops.KernelLogisticGaussNewton:
			return softmaxjet.LogisticGaussNewton(out[0], in[0], in[1], sh, a, bt)
		case cudaops.KernelLogisticValueVJP:
			return softmaxjet.LogisticValueVJP(out[0], out[1], in[0], in[1], in[2], sh, a, bt)
		case cudaops.KernelLogisticFirstVJP:
			return softmaxjet.LogisticFirstVJP(out[0], out[1], in[0], in[1], in[2], sh, a, bt)
		case cudaops.KernelLogisticSecondVJP:
			return softmaxjet.LogisticSecondVJP(out[0], out[1], in[0], in[1], in[2], sh, a, bt)
		case cudaops.KernelLogisticHVPVJP:
			return softmaxjet.LogisticHVPVJP(out[0], out[1], out[2], in[0], in[1], in[2], in[3], sh, a, bt)
		case cudaops.KernelLogisticGaussNewtonVJP:
			return softmaxjet.LogisticGaussNewtonVJP(out[0], out[1], in[0], in[1], in[2], sh, a, bt)
		}
	case cudaops.FamilyAxis:
		shape := []int{c.Ints[0], c.Ints[1], c.Ints[2]}
		switch c.Kernel {
		case cudaops.KernelSoftmaxBackward:
			return backward.SoftmaxBackward(out[0], in[0], in[1], shape, 1)
		case cudaops.KernelLogSoftmaxBackward:
			return backward.LogSoftmaxBackward(out[0], in[0], in[1], shape, 1)
		case cudaops.KernelSoftmaxBackwardGrad:
			return backward.SoftmaxBackwardGrad(out[0], out[1], in[0], in[1], in[2], shape, 1)
		case cudaops.KernelLogSoftmaxBackwardGrad:
			return backward.LogSoftmaxBackwardGrad(out[0], out[1], in[0], in[1], in[2], shape, 1)
		}
	case cudaops.FamilyElementwise:
		switch c.Kernel {
		case cudaops.KernelReLUForward:
			return backward.ReLU(out[0], in[0])
		case cudaops.KernelGELUForward:
			return backward.GELU(out[0], in[0])
		case cudaops.KernelSiLUForward:
			return backward.SiLU(out[0], in[0])
		case cudaops.KernelReLUBackward:
			return backward.ReLUBackward(out[0], in[0], in[1])
		case cudaops.KernelGELUBackward:
			return backward.GELUBackward(out[0], in[0], in[1])
		case cudaops.KernelSiLUBackward:
			return backward.SiLUBackward(out[0], in[0], in[1])
		case cudaops.KernelReLUBackwardGrad:
			return backward.ReLUBackwardGrad(out[0], out[1], in[0], in[1], in[2])
		case cudaops.KernelGELUBackwardGrad:
			return backward.GELUBackwardGrad(out[0], out[1], in[0], in[1], in[2])
		case cudaops.KernelSiLUBackwardGrad:
			return backward.SiLUBackwardGrad(out[0], out[1], in[0], in[1], in[2])
		}
	}
	return fmt.Errorf("fake device: kernel %q not supported", c.Kernel)
}

// --- graphs and values ---

// dense builds a tensor of dtype dt with the given float64 values (rounded for Float32).
func dense(dt tensor.Dtype, shape []int, vals []float64) *tensor.Dense {
	if dt == f64 {
		return tensor.New(tensor.WithShape(shape...), tensor.WithBacking(append([]float64(nil), vals...)))
	}
	f := make([]float32, len(vals))
	for i, x := range vals {
		f[i] = float32(x)
	}
	return tensor.New(tensor.WithShape(shape...), tensor.WithBacking(f))
}

// input adds an input node with a bound value to g.
func input(g *G.ExprGraph, dt tensor.Dtype, name string, shape []int, vals []float64) *G.Node {
	return G.NewTensor(g, dt, len(shape), G.WithShape(shape...), G.WithName(name),
		G.WithValue(dense(dt, shape, vals)))
}

// values returns the elements of a node value as float64.
func values(v G.Value) ([]float64, error) {
	t, ok := v.(*tensor.Dense)
	if !ok {
		return nil, fmt.Errorf("value is %T, want *tensor.Dense", v)
	}
	if t.IsMaterializable() {
		t = t.Materialize().(*tensor.Dense)
	}
	switch d := t.Data().(type) {
	case []float64:
		return append([]float64(nil), d...), nil
	case []float32:
		out := make([]float64, len(d))
		for i, x := range d {
			out[i] = float64(x)
		}
		return out, nil
	}
	return nil, fmt.Errorf("value data is %T", t.Data())
}

// runTape compiles g on a TapeMachine, runs it once and returns the values of outs.
func runTape(g *G.ExprGraph, outs ...*G.Node) ([][]float64, error) {
	m := G.NewTapeMachine(g)
	defer m.Close()
	if err := m.RunAll(); err != nil {
		return nil, err
	}
	res := make([][]float64, len(outs))
	for i, o := range outs {
		v, err := values(o.Value())
		if err != nil {
			return nil, fmt.Errorf("output %d (%v): %w", i, o, err)
		}
		res[i] = v
	}
	return res, nil
}

// seq returns n deterministic pseudo-random values in [lo, hi), rounded to float32 so that
// both dtypes see the same numbers.
func seq(seed uint64, n int, lo, hi float64) []float64 {
	v := make([]float64, n)
	x := seed*0x9E3779B97F4A7C15 + 1
	for i := range v {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		u := float64(x>>11) / (1 << 53)
		v[i] = float64(float32(lo + (hi-lo)*u))
	}
	return v
}

// bitsEqual reports whether a and b hold the same float64 bit patterns (NaNs included).
func bitsEqual(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Float64bits(a[i]) != math.Float64bits(b[i]) {
			return false
		}
	}
	return true
}

// firstDiff returns the first index where a and b differ bitwise, or -1.
func firstDiff(a, b []float64) int {
	for i := range min(len(a), len(b)) {
		if math.Float64bits(a[i]) != math.Float64bits(b[i]) {
			return i
		}
	}
	if len(a) != len(b) {
		return min(len(a), len(b))
	}
	return -1
}

// allFinite reports whether every element is finite.
func allFinite(v []float64) bool {
	for _, x := range v {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return false
		}
	}
	return true
}

// isGatejetError reports whether err is (or wraps) a *gatejet.Error.
func isGatejetError(err error) bool {
	var ge *gatejet.Error
	return errors.As(err, &ge)
}

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

	"github.com/gatejet/gatejet/internal/cpuref"
	"github.com/gatejet/gatejet/internal/dispatch"
	"github.com/gatejet/gatejet/internal/par"
)

var (
	f64 = tensor.Float64
	f32 = tensor.Float32
)

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
func setMode(t testing.TB, m dispatch.Mode) {
	t.Helper()
	old := dispatch.SetMode(m)
	t.Cleanup(func() { dispatch.SetMode(old) })
}

// register makes b the active backend for the rest of the test (unregistered, then closed,
// in t.Cleanup).
func register(t testing.TB, b *fakeBackend) {
	t.Helper()
	un := dispatch.Register(b)
	t.Cleanup(func() {
		un()
		_ = b.Close()
	})
}

// setBreakEven sets the ModeAuto break-even of the kernels for the rest of the test.
func setBreakEven(t testing.TB, work int, ks ...dispatch.Kernel) {
	t.Helper()
	if len(ks) == 0 {
		ks = dispatch.Kernels()
	}
	for _, k := range ks {
		old := dispatch.BreakEven(k)
		dispatch.SetBreakEven(k, work)
		t.Cleanup(func() { dispatch.SetBreakEven(k, old) })
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
func cpuOnly(t testing.TB) { setMode(t, dispatch.ModeOff) }

// --- a fake device backend ---

// errFakeLaunch is what a failing fake backend's Launch returns.
var errFakeLaunch = errors.New("fake device: launch failed")

// fakeBackend is a dispatch.Backend for tests. With fail set its Launch always fails; otherwise
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

func (b *fakeBackend) Launch(c *dispatch.Call) error {
	b.launches.Add(1)
	if b.fail {
		return errFakeLaunch
	}
	// The softmaxjet and backward kernels, through the shared Call → kernel table.
	return cpuref.Run(c)
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

// doThenTape runs each op of outs with Do on this goroutine, on the values of the first Arity
// inputs, so that a panic is caught and reported here (the TapeMachine runs ops on a goroutine
// of its own), then runs g on a TapeMachine and returns the values of outs. Any error is
// fatal, reported with what.
func doThenTape(t testing.TB, what string, g *G.ExprGraph, inputs []*G.Node, outs ...*G.Node) [][]float64 {
	t.Helper()
	for _, nd := range outs {
		var in []G.Value
		for _, c := range inputs[:nd.Op().Arity()] {
			in = append(in, c.Value())
		}
		if err, panicked := catch(func() error { _, err := nd.Op().Do(in...); return err }); err != nil {
			t.Fatalf("%s: %v.Do: panicked=%v: %v", what, nd.Op(), panicked, err)
		}
	}
	out, err := runTape(g, outs...)
	if err != nil {
		t.Fatalf("%s: TapeMachine: %v", what, err)
	}
	return out
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

// requireKernelBits fails the test unless got, the channel name's values through the machine,
// are the kernel's want bit for bit.
func requireKernelBits(t *testing.T, what, name string, want, got []float64) {
	t.Helper()
	if i := firstDiff(want, got); i >= 0 {
		t.Fatalf("%s: %s[%d] = %v through the machine, %v from the kernel", what, name, i, got[i], want[i])
	}
}

// epsilon is the machine epsilon of dt: 2⁻²³ for Float32, 2⁻⁵² for Float64.
func epsilon(dt tensor.Dtype) float64 {
	if dt == f32 {
		return 0x1p-23
	}
	return 0x1p-52
}

// jetSeq returns the inputs of a jet of n rows, k atoms and p columns from seq with seeds
// seed, seed+1 and seed+2: logits in [-lr, lr), decoded values in [-2, 2), v in [-1, 1).
func jetSeq(seed uint64, n, k, p int, lr float64) (l, d, v []float64) {
	return seq(seed, n*k, -lr, lr), seq(seed+1, n*k*p, -2, 2), seq(seed+2, n*k, -1, 1)
}

// diffResults describes where got first differs bitwise from want, output by output ("output
// i element j: got, ref want", ref naming the expected side), or returns "" when every output
// holds the same bits.
func diffResults(want, got [][]float64, ref string) string {
	if len(got) != len(want) {
		return fmt.Sprintf("%d outputs, %s %d", len(got), ref, len(want))
	}
	for i := range want {
		if j := firstDiff(want[i], got[i]); j >= 0 {
			if j >= len(want[i]) || j >= len(got[i]) {
				return fmt.Sprintf("output %d: %d elements, %s %d", i, len(got[i]), ref, len(want[i]))
			}
			return fmt.Sprintf("output %d element %d: %v, %s %v", i, j, got[i][j], ref, want[i][j])
		}
	}
	return ""
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

// anyCall builds a Call of kernel k from slices of any type, as a careless caller might hold
// them: []float64 slices go to F64 and []float32 slices to F32 (DType from the first one);
// other values are dropped, which Check reports as a missing operand.
func anyCall(k dispatch.Kernel, ints []int, floats []float64, in, out []any) *dispatch.Call {
	c := &dispatch.Call{Kernel: k, Ints: ints, Floats: floats}
	put := func(i int, s any, f64 [][]float64, f32 [][]float32) {
		switch v := s.(type) {
		case []float64:
			f64[i] = v
			if c.DType == dispatch.DTypeInvalid {
				c.DType = dispatch.Float64
			}
		case []float32:
			f32[i] = v
			if c.DType == dispatch.DTypeInvalid {
				c.DType = dispatch.Float32
			}
		}
	}
	for i, s := range in {
		put(i, s, c.F64.In[:], c.F32.In[:])
	}
	for i, s := range out {
		var f64 [1][]float64
		var f32 [1][]float32
		put(0, s, f64[:], f32[:])
		c.F64.Out[i], c.F32.Out[i] = f64[0], f32[0]
	}
	return c
}

// Package gatetest is the test suite every gate of the row jet passes, in the manner of
// gonum's blas/testblas: a gate's test file calls Run with the gate, and the suite checks its
// ten kernels (the five channels and their VJPs) in both element types. The checks are the
// ones no gate may skip:
//
//   - the value, first and second channels against the order-2 jet tower (tower.GateChannels)
//     of the gate's jets, an independent route with no chain rule written by hand;
//   - first and second against central differences of the channel below, the HVP against
//     second·v and a difference of first along v, Gauss-Newton against first·firstᵀ;
//   - every VJP against central differences of ⟨g, channel⟩ in the logits, the decoded values
//     and v;
//   - the coordinate jets (softmaxjet.CoordFirst …, the gate's own rows and its methods)
//     against the row program with latent coordinates as primaries;
//   - float32 against float64, the kernels run through the table (kernel.Run, from a call's
//     floats) against the gate's methods, bit for bit;
//   - outputs: every element written, nil VJP outputs skipped without changing the others,
//     short or nil outputs and inputs refused, outputs that overlap an argument refused;
//   - refusals (*gatejet.Error of the documented kinds) for bad shapes, overflowing sizes and
//     non-finite parameters, empty batches accepted;
//   - no allocation once warm, the same bits on any number of cores and with each of the
//     implementation's switches (Gate.Switches) on and off.
package gatetest

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gatejet/gatejet"
	"github.com/gatejet/gatejet/internal/kernel"
	"github.com/gatejet/gatejet/internal/par"
	"github.com/gatejet/gatejet/internal/testkit"
	"github.com/gatejet/gatejet/internal/tower"
	"github.com/gatejet/gatejet/softmaxjet"
)

// Gate is a gate under test: its entry in the kernel table, the constructors of its
// softmaxjet.Gate from a call's floats (as the gate's author states them, so that the suite
// checks that the table reads the floats into the right parameters), and the gate as a
// function of its jets (the oracle's gate).
type Gate struct {
	Table *kernel.Gate
	F64   func(floats []float64, K int) softmaxjet.Gate[float64]
	F32   func(floats []float64, K int) softmaxjet.Gate[float32]
	Jets  func(floats []float64, K int) tower.GateJets[float64]
	// Switches are the implementation's alternative paths (the AVX loops, say), each of which
	// must give the bits of the other; nil for none.
	Switches []Switch
}

// Switch turns one of an implementation's alternative paths on or off: Set sets it and
// returns the previous setting. Available reports whether the machine has the path at all.
type Switch struct {
	Name      string
	Available bool
	Set       func(on bool) (old bool)
}

// Run runs the suite on g, as subtests.
func Run(t *testing.T, g Gate) {
	require.NotNil(t, g.Table, "the gate's table entry")
	require.NotNil(t, g.F64)
	require.NotNil(t, g.F32)
	require.NotNil(t, g.Jets)
	t.Run("Oracle", func(t *testing.T) { testOracle(t, g) })
	t.Run("FiniteDifferences", func(t *testing.T) { testChannelsFD(t, g) })
	t.Run("VJPs", func(t *testing.T) { testVJPsFD(t, g) })
	t.Run("Coordinates", func(t *testing.T) { testCoordinates(t, g) })
	t.Run("Float32", func(t *testing.T) { testFloat32(t, g) })
	t.Run("Table", func(t *testing.T) {
		testTable[float64](t, g, g.F64)
		testTable[float32](t, g, g.F32)
	})
	t.Run("Outputs", func(t *testing.T) {
		testOutputs[float64](t, g, g.F64)
		testOutputs[float32](t, g, g.F32)
	})
	t.Run("Refusals", func(t *testing.T) {
		testRefusals[float64](t, g, g.F64)
		testRefusals[float32](t, g, g.F32)
	})
	t.Run("Allocations", func(t *testing.T) {
		testAllocs[float64](t, g, g.F64)
		testAllocs[float32](t, g, g.F32)
	})
	t.Run("Cores", func(t *testing.T) {
		testCores[float64](t, g, g.F64)
		testCores[float32](t, g, g.F32)
	})
	for _, sw := range g.Switches {
		t.Run("Switch="+sw.Name, func(t *testing.T) {
			if !sw.Available {
				t.Skipf("this machine has no %s path", sw.Name)
			}
			testSwitch[float64](t, g, g.F64, sw)
			testSwitch[float32](t, g, g.F32, sw)
		})
	}
}

// Kernels are the ten kernels of a gate: forward kernels by channel, then their VJPs.
var kernels = func() (ks []kern) {
	for _, vjp := range []bool{false, true} {
		for c := range kernel.NumChannels {
			ks = append(ks, kern{c, vjp})
		}
	}
	return ks
}()

type kern struct {
	c   kernel.Channel
	vjp bool
}

func (k kern) String() string {
	if k.vjp {
		return k.c.String() + "VJP"
	}
	return k.c.String()
}

// outLen is the length of channel c's output.
func outLen(c kernel.Channel, sh softmaxjet.Shape) int {
	switch c {
	case kernel.Value:
		return sh.ValueLen()
	case kernel.First, kernel.HVP:
		return sh.FirstLen()
	case kernel.Second:
		return sh.SecondLen()
	}
	return sh.GNLen()
}

// args are one call's slices: inputs l, d, v, g (the upstream gradient, of the channel's
// length) and outputs: dst for a forward kernel, dl, dd, dv for a VJP (nil: skipped).
type args[T gatejet.Float] struct {
	l, d, v, g []T
	dst        []T
	dl, dd, dv []T
	sh         softmaxjet.Shape
	floats     []float64
	gate       softmaxjet.Gate[T]
}

// call runs kernel k of gate a.gate on a.
func call[T gatejet.Float](k kern, a *args[T]) error {
	g, sh := a.gate, a.sh
	if !k.vjp {
		switch k.c {
		case kernel.Value:
			return g.Value(a.dst, a.l, a.d, sh)
		case kernel.First:
			return g.First(a.dst, a.l, a.d, sh)
		case kernel.Second:
			return g.Second(a.dst, a.l, a.d, sh)
		case kernel.HVP:
			return g.HVP(a.dst, a.l, a.d, a.v, sh)
		}
		return g.GaussNewton(a.dst, a.l, a.d, sh)
	}
	switch k.c {
	case kernel.Value:
		return g.ValueVJP(a.dl, a.dd, a.l, a.d, a.g, sh)
	case kernel.First:
		return g.FirstVJP(a.dl, a.dd, a.l, a.d, a.g, sh)
	case kernel.Second:
		return g.SecondVJP(a.dl, a.dd, a.l, a.d, a.g, sh)
	case kernel.HVP:
		return g.HVPVJP(a.dl, a.dd, a.dv, a.l, a.d, a.v, a.g, sh)
	}
	return g.GaussNewtonVJP(a.dl, a.dd, a.l, a.d, a.g, sh)
}

// outs are the outputs of kernel k in a.
func (a *args[T]) outs(k kern) []*[]T {
	if !k.vjp {
		return []*[]T{&a.dst}
	}
	if k.c.HasV() {
		return []*[]T{&a.dl, &a.dd, &a.dv}
	}
	return []*[]T{&a.dl, &a.dd}
}

// draw returns the floats of the gate for K atoms (its Sample) from rng.
func draw(g Gate, rng *rand.Rand, K int) []float64 {
	return g.Table.Sample(K, rng.Float64, rng.NormFloat64)
}

func randn(rng *rand.Rand, n int, scale float64) []float64 {
	x := make([]float64, n)
	for i := range x {
		x[i] = scale * rng.NormFloat64()
	}
	return x
}

func conv[T, S gatejet.Float](x []S) []T {
	y := make([]T, len(x))
	for i, v := range x {
		y[i] = T(v)
	}
	return y
}

// newArgs returns a call's inputs for shape sh from rng, every output allocated.
func newArgs[T gatejet.Float](g Gate, mk func([]float64, int) softmaxjet.Gate[T], rng *rand.Rand, sh softmaxjet.Shape) *args[T] {
	a := &args[T]{sh: sh, floats: draw(g, rng, sh.K)}
	a.gate = mk(a.floats, sh.K)
	a.l, a.d, a.v = conv[T](randn(rng, sh.LogitsLen(), 1.5)), conv[T](randn(rng, sh.DecodedLen(), 1)), conv[T](randn(rng, sh.LogitsLen(), 1))
	return a
}

// prepare sets a's upstream gradient for kernel k (from rng) and allocates its outputs.
func (a *args[T]) prepare(k kern, rng *rand.Rand) {
	a.g = conv[T](randn(rng, outLen(k.c, a.sh), 1))
	a.dst, a.dl, a.dd, a.dv = nil, nil, nil, nil
	if !k.vjp {
		a.dst = make([]T, outLen(k.c, a.sh))
		return
	}
	a.dl, a.dd = make([]T, a.sh.LogitsLen()), make([]T, a.sh.DecodedLen())
	if k.c.HasV() {
		a.dv = make([]T, a.sh.LogitsLen())
	}
}

// relErr is ‖got − want‖∞ / max(‖want‖∞, floor).
func relErr[T gatejet.Float](got []T, want []float64, floor float64) float64 {
	if len(got) != len(want) {
		return math.Inf(1)
	}
	num, den := 0.0, floor
	for i := range want {
		d := math.Abs(float64(got[i]) - want[i])
		if math.IsNaN(d) {
			return math.Inf(1)
		}
		num = math.Max(num, d)
		den = math.Max(den, math.Abs(want[i]))
	}
	return num / den
}

// channel evaluates channel c of the float64 gate at a's inputs.
func channel(a *args[float64], c kernel.Channel) []float64 {
	b := *a
	b.dst = make([]float64, outLen(c, a.sh))
	if err := call(kern{c: c}, &b); err != nil {
		panic(err)
	}
	return b.dst
}

// testKs are the atom counts the maths is checked on.
var testKs = []int{1, 2, 3, 8, 17}

// testOracle: value, first and second against the jet tower of the gate's jets; the HVP and
// Gauss-Newton channels against second·v and first·firstᵀ of the tower's channels.
func testOracle(t *testing.T, g Gate) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, K := range testKs {
		sh := softmaxjet.Shape{N: 2, K: K, P: 3}
		a := newArgs(g, g.F64, rng, sh)
		val, fst, sec := make([]float64, sh.ValueLen()), make([]float64, sh.FirstLen()), make([]float64, sh.SecondLen())
		tsh := tower.Shape{N: sh.N, K: sh.K, P: sh.P}
		require.NoError(t, tower.GateChannels(val, fst, sec, a.l, a.d, tsh, g.Jets(a.floats, K)))
		for _, c := range []struct {
			ch   kernel.Channel
			want []float64
		}{
			{kernel.Value, val}, {kernel.First, fst}, {kernel.Second, sec},
			{kernel.HVP, secondTimes(sec, a.v, sh)}, {kernel.GaussNewton, firstGram(fst, sh)},
		} {
			require.Less(t, relErr(channel(a, c.ch), c.want, 1e-3), 1e-11, "%s K=%d vs the jet tower", c.ch, K)
		}
	}
}

// testChannelsFD: first and second are central differences of the channel below, the HVP a
// difference of first along v.
func testChannelsFD(t *testing.T, g Gate) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, K := range testKs {
		sh := softmaxjet.Shape{N: 2, K: K, P: 3}
		a := newArgs(g, g.F64, rng, sh)
		J := testkit.FDJacobian(a.l, func() []float64 { return channel(a, kernel.Value) }, 1e-5)
		require.Less(t, relErr(channel(a, kernel.First), jacobianChannel(J, sh, sh.P), 1e-3), 1e-8, "first vs FD of value, K=%d", K)
		J = testkit.FDJacobian(a.l, func() []float64 { return channel(a, kernel.First) }, 1e-5)
		require.Less(t, relErr(channel(a, kernel.Second), jacobianChannel(J, sh, sh.K*sh.P), 1e-3), 1e-8, "second vs FD of first, K=%d", K)
		along := testkit.FDAlong([][]float64{a.l}, [][]float64{a.v}, 1e-5, func() []float64 { return channel(a, kernel.First) })
		require.Less(t, relErr(channel(a, kernel.HVP), along, 1e-3), 1e-8, "hvp vs FD of first along v, K=%d", K)
	}
}

// testVJPsFD: each VJP's outputs are the central-difference gradients of ⟨g, channel⟩ in the
// logits, the decoded values and (HVP) the direction.
func testVJPsFD(t *testing.T, g Gate) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, k := range kernels[kernel.NumChannels:] {
		for _, K := range testKs {
			sh := softmaxjet.Shape{N: 2, K: K, P: 3}
			a := newArgs(g, g.F64, rng, sh)
			a.prepare(k, rng)
			require.NoError(t, call(k, a))
			L := func() []float64 { return []float64{dot(a.g, channel(a, k.c))} }
			grad := func(x []float64) []float64 {
				J := testkit.FDJacobian(x, L, 1e-5)
				out := make([]float64, len(x))
				for i := range out {
					out[i] = J[i][0]
				}
				return out
			}
			require.Less(t, relErr(a.dl, grad(a.l), 1e-3), 1e-7, "%s K=%d: dLogits", k, K)
			require.Less(t, relErr(a.dd, grad(a.d), 1e-3), 1e-7, "%s K=%d: dDecoded", k, K)
			if k.c.HasV() {
				require.Less(t, relErr(a.dv, grad(a.v), 1e-3), 1e-7, "%s K=%d: dV", k, K)
			}
		}
	}
}

// testFloat32: each kernel in float32 is the float64 kernel on the same (float32) inputs, to
// float32's precision.
func testFloat32(t *testing.T, g Gate) {
	rng := rand.New(rand.NewPCG(7, 8))
	for _, K := range []int{1, 4, 9} {
		sh := softmaxjet.Shape{N: 3, K: K, P: 5}
		a32 := newArgs(g, g.F32, rng, sh)
		a64 := &args[float64]{sh: sh, floats: a32.floats, gate: g.F64(a32.floats, K), l: conv[float64](a32.l), d: conv[float64](a32.d), v: conv[float64](a32.v)}
		for _, k := range kernels {
			a32.prepare(k, rng)
			a64.prepare(k, rng)
			a64.g = conv[float64](a32.g)
			require.NoError(t, call(k, a32), "%s", k)
			require.NoError(t, call(k, a64), "%s", k)
			for i, o := range a64.outs(k) {
				require.Less(t, relErr(*a32.outs(k)[i], *o, 1e-3), 1e-4, "%s K=%d output %d: float32 vs float64", k, K, i)
			}
		}
	}
}

// testTable: the table's kernels, run from a call's floats, compute what the gate's methods
// compute, bit for bit.
func testTable[T gatejet.Float](t *testing.T, g Gate, mk func([]float64, int) softmaxjet.Gate[T]) {
	rng := rand.New(rand.NewPCG(9, 10))
	sh := softmaxjet.Shape{N: 3, K: 4, P: 2}
	a := newArgs(g, mk, rng, sh)
	for _, k := range kernels {
		a.prepare(k, rng)
		require.NoError(t, call(k, a), "%s", k)
		var o kernel.Operands[T]
		o.In[0], o.In[1] = a.l, a.d
		n := 2
		if k.c.HasV() {
			o.In[2] = a.v
			n = 3
		}
		if k.vjp {
			o.In[n] = a.g
		}
		for i, out := range a.outs(k) {
			o.Out[i] = make([]T, len(*out))
		}
		id := g.Table.Kernel(k.c, k.vjp)
		require.NoError(t, kernel.Run("gatetest", id, &o, []int{sh.N, sh.K, sh.P}, a.floats), "%s", k)
		for i, out := range a.outs(k) {
			requireSameBits(t, [][]T{*out}, [][]T{o.Out[i]}, "%s output %d: the table's kernel %v vs the gate's method", k, i, id)
		}
	}
}

// sentinel is what outputs hold before a kernel writes them.
var sentinel = math.Float64frombits(0x7ff8_dead_0bad_f00d)

// testOutputs: every element of every output written; each subset of a VJP's outputs may be
// nil, the others unchanged; short and nil buffers, and outputs overlapping an argument,
// refused with the documented kinds.
func testOutputs[T gatejet.Float](t *testing.T, g Gate, mk func([]float64, int) softmaxjet.Gate[T]) {
	rng := rand.New(rand.NewPCG(11, 12))
	sh := softmaxjet.Shape{N: 3, K: 5, P: 4}
	a := newArgs(g, mk, rng, sh)
	for _, k := range kernels {
		a.prepare(k, rng)
		outs := a.outs(k)
		for _, o := range outs {
			for i := range *o {
				(*o)[i] = T(sentinel)
			}
		}
		require.NoError(t, call(k, a), "%s", k)
		full := make([][]T, len(outs))
		for i, o := range outs {
			for j, v := range *o {
				require.False(t, math.IsNaN(float64(v)), "%s output %d: element %d not written", k, i, j)
			}
			full[i] = slices.Clone(*o)
		}
		if k.vjp {
			// Every subset of the outputs: the others the same bits.
			for mask := 0; mask < 1<<len(outs); mask++ {
				b := *a
				bo := b.outs(k)
				for i := range bo {
					if mask&(1<<i) != 0 {
						*bo[i] = nil
					} else {
						*bo[i] = make([]T, len(full[i]))
					}
				}
				require.NoError(t, call(k, &b), "%s nil mask %b", k, mask)
				for i := range bo {
					if mask&(1<<i) == 0 {
						requireSameBits(t, [][]T{full[i]}, [][]T{*bo[i]}, "%s output %d with mask %b nil", k, i, mask)
					}
				}
			}
		}
		// Short and nil buffers: ErrSize (a forward output may not be nil).
		bufs := append(outs, &a.l, &a.d)
		if k.c.HasV() {
			bufs = append(bufs, &a.v)
		}
		if k.vjp {
			bufs = append(bufs, &a.g)
		}
		for i, p := range bufs {
			b := *a
			bp := b.outs(k)
			bp = append(bp, &b.l, &b.d)
			if k.c.HasV() {
				bp = append(bp, &b.v)
			}
			if k.vjp {
				bp = append(bp, &b.g)
			}
			for j, q := range bp[:len(outs)] {
				*q = make([]T, len(*outs[j]))
			}
			*bp[i] = (*p)[:len(*p)-1]
			requireKind(t, call(k, &b), gatejet.ErrSize, "%s buffer %d one short", k, i)
			if !k.vjp || i >= len(outs) {
				*bp[i] = nil
				requireKind(t, call(k, &b), gatejet.ErrSize, "%s buffer %d nil", k, i)
			}
		}
		// An output over an input, or over another output: ErrParam.
		for i := range outs {
			b := *a
			bo := b.outs(k)
			for j := range bo {
				*bo[j] = make([]T, len(*outs[j]))
			}
			arena := make([]T, len(*bo[i])+len(b.l))
			copy(arena, b.l)
			b.l = arena[:len(b.l)]
			*bo[i] = arena[:len(*bo[i])]
			requireKind(t, call(k, &b), gatejet.ErrParam, "%s output %d over the logits", k, i)
			if i > 0 {
				m := max(len(*bo[0]), len(*bo[i]))
				shared := make([]T, m)
				*bo[0], *bo[i] = shared[:len(*bo[0])], shared[:len(*bo[i])]
				b.l = slices.Clone(a.l)
				requireKind(t, call(k, &b), gatejet.ErrParam, "%s outputs 0 and %d overlapping", k, i)
			}
		}
	}
}

// requireSameBits requires want and got to hold the same bits.
func requireSameBits[T gatejet.Float](t *testing.T, want, got [][]T, msg string, args ...any) {
	t.Helper()
	require.Len(t, got, len(want), append([]any{msg}, args...)...)
	for b := range want {
		require.Len(t, got[b], len(want[b]), append([]any{msg}, args...)...)
		for i := range want[b] {
			if math.Float64bits(float64(want[b][i])) != math.Float64bits(float64(got[b][i])) {
				t.Fatalf("%s: buffer %d [%d]: want %v, got %v", fmt.Sprintf(msg, args...), b, i, want[b][i], got[b][i])
			}
		}
	}
}

func requireKind(t *testing.T, err error, kind error, msg string, args ...any) {
	t.Helper()
	require.ErrorIs(t, err, kind, append([]any{msg}, args...)...)
	var ge *gatejet.Error
	require.True(t, errors.As(err, &ge), "want a *gatejet.Error, got %T: %v", err, err)
	require.NotEmpty(t, ge.Op, "%v", err)
}

// testRefusals: bad shapes (ErrShape), sizes that overflow (ErrSize) and non-finite parameters (through the gate's check)
// refused by every kernel, through its method and through the table; empty batches accepted.
func testRefusals[T gatejet.Float](t *testing.T, g Gate, mk func([]float64, int) softmaxjet.Gate[T]) {
	rng := rand.New(rand.NewPCG(13, 14))
	sh := softmaxjet.Shape{N: 2, K: 3, P: 2}
	a := newArgs(g, mk, rng, sh)
	for _, k := range kernels {
		a.prepare(k, rng)
		for _, bad := range []softmaxjet.Shape{{N: -1, K: 3, P: 2}, {N: 2, K: 0, P: 2}, {N: 2, K: 3, P: 0}} {
			b := *a
			b.sh = bad
			requireKind(t, call(k, &b), gatejet.ErrShape, "%s shape %+v", k, bad)
		}
		b := *a
		b.sh = softmaxjet.Shape{N: 1 << 40, K: 1 << 20, P: 1 << 20}
		requireKind(t, call(k, &b), gatejet.ErrSize, "%s shape %+v (sizes overflow)", k, b.sh)
		for i := range a.floats {
			f := slices.Clone(a.floats)
			f[i] = math.NaN()
			b := *a
			b.gate = mk(f, sh.K)
			err := call(k, &b)
			require.Error(t, err, "%s float %d NaN", k, i)
			requireKind(t, err, errorKind(err), "%s float %d NaN", k, i)
			require.Error(t, g.Table.Check("gatetest", sh.K, f), "%s float %d NaN: the table's check", k, i)
		}
		empty := args[T]{sh: softmaxjet.Shape{N: 0, K: 3, P: 2}, gate: a.gate}
		require.NoError(t, call(k, &empty), "%s on an empty batch", k)
	}
}

// errorKind is the sentinel kind of a *gatejet.Error (nil for another error).
func errorKind(err error) error {
	var ge *gatejet.Error
	if errors.As(err, &ge) {
		return ge.Kind
	}
	return nil
}

// testAllocs: once warm, a call of any kernel allocates nothing, on one goroutine and split.
func testAllocs[T gatejet.Float](t *testing.T, g Gate, mk func([]float64, int) softmaxjet.Gate[T]) {
	if testing.CoverMode() != "" || raceEnabled {
		t.Skip("allocation counts are not meaningful under -cover or -race (sync.Pool drops items at random)")
	}
	rng := rand.New(rand.NewPCG(15, 16))
	a := newArgs(g, mk, rng, softmaxjet.Shape{N: 64, K: 8, P: 12})
	for _, split := range []bool{false, true} {
		mw := int64(math.MaxInt64)
		if split {
			mw = 0
		}
		func() {
			defer par.SetMinWork(par.SetMinWork(mw))
			for _, k := range kernels {
				a.prepare(k, rng)
				require.NoError(t, call(k, a), "%s", k)
				allocs := testing.AllocsPerRun(20, func() {
					if err := call(k, a); err != nil {
						panic(err)
					}
				})
				require.Zero(t, allocs, "%s split=%v", k, split)
			}
		}()
	}
}

// testCores: every kernel gives the same bits on one goroutine and split over 1, 2, 3 or 8.
func testCores[T gatejet.Float](t *testing.T, g Gate, mk func([]float64, int) softmaxjet.Gate[T]) {
	rng := rand.New(rand.NewPCG(17, 18))
	a := newArgs(g, mk, rng, softmaxjet.Shape{N: 97, K: 9, P: 7})
	for _, k := range kernels {
		a.prepare(k, rng)
		run := func(mw int64, procs int) [][]T {
			defer par.SetMinWork(par.SetMinWork(mw))
			defer par.SetMaxProcs(par.SetMaxProcs(procs))
			require.NoError(t, call(k, a), "%s", k)
			var res [][]T
			for _, o := range a.outs(k) {
				res = append(res, slices.Clone(*o))
			}
			return res
		}
		one := run(math.MaxInt64, 1)
		for _, p := range []int{1, 2, 3, 8} {
			requireSameBits(t, one, run(0, p), "%s: one goroutine vs split over %d", k, p)
		}
	}
}

// testSwitch: every kernel gives the same bits with the switch on and off, for P a multiple of
// the vector lanes (and of 16) and not.
func testSwitch[T gatejet.Float](t *testing.T, g Gate, mk func([]float64, int) softmaxjet.Gate[T], sw Switch) {
	defer sw.Set(sw.Set(false))
	rng := rand.New(rand.NewPCG(19, 20))
	for _, sh := range []softmaxjet.Shape{{N: 13, K: 9, P: 7}, {N: 11, K: 5, P: 16}, {N: 6, K: 17, P: 37}, {N: 5, K: 1, P: 3}} {
		a := newArgs(g, mk, rng, sh)
		for _, k := range kernels {
			a.prepare(k, rng)
			run := func(on bool) [][]T {
				sw.Set(on)
				require.NoError(t, call(k, a), "%s", k)
				var res [][]T
				for _, o := range a.outs(k) {
					res = append(res, slices.Clone(*o))
				}
				return res
			}
			requireSameBits(t, run(false), run(true), "%s %+v: %s off vs on", k, sh, sw.Name)
		}
	}
}

func dot[T gatejet.Float](a []T, b []float64) float64 {
	s := 0.0
	for i := range b {
		s += float64(a[i]) * b[i]
	}
	return s
}

// jacobianChannel arranges J[i][j] = ∂f_j/∂l_i of a batch channel f with w values per row as
// the next channel [N,K,w] (rows do not mix).
func jacobianChannel(J [][]float64, sh softmaxjet.Shape, w int) []float64 {
	out := make([]float64, 0, sh.N*sh.K*w)
	for n := 0; n < sh.N; n++ {
		for a := 0; a < sh.K; a++ {
			out = append(out, J[n*sh.K+a][n*w:(n+1)*w]...)
		}
	}
	return out
}

// secondTimes is Σ_b second[n][a][b][c]·v[n][b].
func secondTimes(second, v []float64, sh softmaxjet.Shape) []float64 {
	K, P := sh.K, sh.P
	out := make([]float64, sh.FirstLen())
	for n := 0; n < sh.N; n++ {
		for a := 0; a < K; a++ {
			for b := 0; b < K; b++ {
				for c := 0; c < P; c++ {
					out[(n*K+a)*P+c] += second[((n*K+a)*K+b)*P+c] * v[n*K+b]
				}
			}
		}
	}
	return out
}

// firstGram is Σ_c first[n][a][c]·first[n][b][c].
func firstGram(first []float64, sh softmaxjet.Shape) []float64 {
	K, P := sh.K, sh.P
	out := make([]float64, sh.GNLen())
	for n := 0; n < sh.N; n++ {
		for a := 0; a < K; a++ {
			for b := 0; b < K; b++ {
				s := 0.0
				for c := 0; c < P; c++ {
					s += first[(n*K+a)*P+c] * first[(n*K+b)*P+c]
				}
				out[(n*K+a)*K+b] = s
			}
		}
	}
	return out
}

// String names the gate in messages.
func (g Gate) String() string { return fmt.Sprintf("gate %s", g.Table.Name) }

package backward_test

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gatejet/gatejet"
	"github.com/gatejet/gatejet/backward"
	"github.com/stretchr/testify/require"
)

// Naive references for the activations, straight from their textbook forms.

const sqrt2OverPi = 0.7978845608028654

func refGELU(x float64) float64 {
	return 0.5 * x * (1 + math.Tanh(sqrt2OverPi*(x+0.044715*x*x*x)))
}

func refGELUD1(x float64) float64 {
	t := math.Tanh(sqrt2OverPi * (x + 0.044715*x*x*x))
	return 0.5*(1+t) + 0.5*x*(1-t*t)*sqrt2OverPi*(1+3*0.044715*x*x)
}

func refSiLU(x float64) float64 { return x / (1 + math.Exp(-x)) }

func refSiLUD1(x float64) float64 {
	s := 1 / (1 + math.Exp(-x))
	return s * (1 + x*(1-s))
}

func refReLU(x float64) float64 {
	if x > 0 {
		return x
	}
	return 0
}

func refReLUD1(x float64) float64 {
	if x > 0 {
		return 1
	}
	return 0
}

// activation bundles one activation's kernels with its references.
type activation struct {
	name    string
	smooth  bool
	fwd     func(y, x []float64) error
	bw      func(dx, x, dy []float64) error
	grad    func(gx, gdy, x, dy, g []float64) error
	fwd32   func(y, x []float32) error
	bw32    func(dx, x, dy []float32) error
	grad32  func(gx, gdy, x, dy, g []float32) error
	ref     func(x float64) float64
	refD1   func(x float64) float64
	derivs  func(x float64) (float64, float64)
	fdGuard float64 // keep finite-difference points this far from a kink
}

var activations = []activation{
	{
		name: "ReLU", fwd: backward.ReLU[float64], bw: backward.ReLUBackward[float64], grad: backward.ReLUBackwardGrad[float64],
		fwd32: backward.ReLU[float32], bw32: backward.ReLUBackward[float32], grad32: backward.ReLUBackwardGrad[float32],
		ref: refReLU, refD1: refReLUD1, fdGuard: 1e-3,
		derivs: func(x float64) (float64, float64) { return refReLUD1(x), 0 },
	},
	{
		name: "GELU", smooth: true, fwd: backward.GELU[float64], bw: backward.GELUBackward[float64], grad: backward.GELUBackwardGrad[float64],
		fwd32: backward.GELU[float32], bw32: backward.GELUBackward[float32], grad32: backward.GELUBackwardGrad[float32],
		ref: refGELU, refD1: refGELUD1, derivs: backward.GELUDeriv,
	},
	{
		name: "SiLU", smooth: true, fwd: backward.SiLU[float64], bw: backward.SiLUBackward[float64], grad: backward.SiLUBackwardGrad[float64],
		fwd32: backward.SiLU[float32], bw32: backward.SiLUBackward[float32], grad32: backward.SiLUBackwardGrad[float32],
		ref: refSiLU, refD1: refSiLUD1, derivs: backward.SiLUDeriv,
	},
}

// actPoints returns test inputs: a dense grid over [-40, 40] (beyond GELU's cut-off at 30),
// random values, and values around the cut-offs.
func actPoints(r *rand.Rand) []float64 {
	var x []float64
	for v := -40.0; v <= 40; v += 0.0625 {
		x = append(x, v+0.01) // avoid exact zero (ReLU's kink)
	}
	x = append(x, randVec(r, 5000, -8, 8)...)
	x = append(x, 29.999, 30, 30.001, -29.999, -30, -30.001, 21, -21, 1e-9, -1e-9, 700, -700, 1e5, -1e5)
	return x
}

// requireNear checks |got − want| ≤ tol·(1 + |want|) elementwise (mixed absolute/relative).
func requireNear(t *testing.T, want, got []float64, x []float64, tol float64, msg string) {
	t.Helper()
	for i := range want {
		if !(math.Abs(got[i]-want[i]) <= tol*(1+math.Abs(want[i]))) {
			require.Failf(t, "not near", "%s at x=%v: got %v want %v (tol %g)", msg, x[i], got[i], want[i], tol)
		}
	}
}

func TestActivationsAgainstReference(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	x := actPoints(r)
	n := len(x)
	dy, g := randVec(r, n, -2, 2), randVec(r, n, -2, 2)
	for _, a := range activations {
		t.Run(a.name, func(t *testing.T) {
			y := make([]float64, n)
			require.NoError(t, a.fwd(y, x))
			want := make([]float64, n)
			for i, v := range x {
				want[i] = a.ref(v)
			}
			requireNear(t, want, y, x, 1e-14, "forward")

			dx := make([]float64, n)
			require.NoError(t, a.bw(dx, x, dy))
			for i, v := range x {
				want[i] = dy[i] * a.refD1(v)
			}
			requireNear(t, want, dx, x, 1e-14, "backward")

			gx, gdy := make([]float64, n), make([]float64, n)
			require.NoError(t, a.grad(gx, gdy, x, dy, g))
			wgx := make([]float64, n)
			for i, v := range x {
				d1, d2 := a.derivs(v)
				want[i], wgx[i] = g[i]*d1, g[i]*dy[i]*d2
			}
			requireNear(t, want, gdy, x, 1e-14, "gdy")
			requireNear(t, wgx, gx, x, 1e-14, "gx")

			// Skipping an output leaves the other unchanged.
			only := make([]float64, n)
			require.NoError(t, a.grad(only, nil, x, dy, g))
			require.Equal(t, gx, only)
			require.NoError(t, a.grad(nil, only, x, dy, g))
			require.Equal(t, gdy, only)
			require.NoError(t, a.grad(nil, nil, x, dy, g))
		})
	}
}

// TestActivationDerivativesAgainstFiniteDifferences checks f' against central differences of
// the forward kernel and f″ against central differences of f'. The seed claims 1e-5; the
// check here is much tighter.
func TestActivationDerivativesAgainstFiniteDifferences(t *testing.T) {
	r := rand.New(rand.NewPCG(23, 24))
	const h = 1e-5
	for _, a := range activations {
		x := actPoints(r)
		if a.fdGuard > 0 {
			kept := x[:0]
			for _, v := range x {
				if math.Abs(v) > a.fdGuard {
					kept = append(kept, v)
				}
			}
			x = kept
		}
		n := len(x)
		// The step is relative to |x| so that rounding error stays small for large x.
		xp, xm, hs := make([]float64, n), make([]float64, n), make([]float64, n)
		for i, v := range x {
			hs[i] = h * math.Max(1, math.Abs(v))
			xp[i], xm[i] = v+hs[i], v-hs[i]
			hs[i] = (xp[i] - xm[i]) / 2 // the step actually taken
		}
		yp, ym := make([]float64, n), make([]float64, n)
		require.NoError(t, a.fwd(yp, xp))
		require.NoError(t, a.fwd(ym, xm))

		dy := randVec(r, n, -2, 2)
		dx := make([]float64, n)
		require.NoError(t, a.bw(dx, x, dy))
		want := make([]float64, n)
		for i := range x {
			want[i] = dy[i] * (yp[i] - ym[i]) / (2 * hs[i])
		}
		requireNear(t, want, dx, x, 1e-8, a.name+" backward vs FD")
		requireNear(t, want, dx, x, 1e-5, a.name+" backward vs FD (seed claim)")

		// Double backward: L(x, dy) = ⟨g, backward(x, dy)⟩.
		g := randVec(r, n, -2, 2)
		gx, gdy := make([]float64, n), make([]float64, n)
		require.NoError(t, a.grad(gx, gdy, x, dy, g))
		dxp, dxm := make([]float64, n), make([]float64, n)
		require.NoError(t, a.bw(dxp, xp, dy))
		require.NoError(t, a.bw(dxm, xm, dy))
		for i := range x {
			want[i] = g[i] * (dxp[i] - dxm[i]) / (2 * hs[i])
		}
		requireNear(t, want, gx, x, 1e-8, a.name+" gx vs FD")
		dyp, dym := make([]float64, n), make([]float64, n)
		for i := range dy {
			dyp[i], dym[i] = dy[i]+h, dy[i]-h
		}
		require.NoError(t, a.bw(dxp, x, dyp))
		require.NoError(t, a.bw(dxm, x, dym))
		for i := range x {
			want[i] = g[i] * (dxp[i] - dxm[i]) / (2 * h)
		}
		requireNear(t, want, gdy, x, 1e-8, a.name+" gdy vs FD")

		if a.smooth {
			d2s, fd := make([]float64, n), make([]float64, n)
			for i, v := range x {
				d1p, _ := a.derivs(xp[i])
				d1m, _ := a.derivs(xm[i])
				_, d2s[i] = a.derivs(v)
				fd[i] = (d1p - d1m) / (2 * hs[i])
			}
			requireNear(t, fd, d2s, x, 1e-8, a.name+" d2 vs FD of d1")
		}
	}
}

func TestActivationSpecialValues(t *testing.T) {
	inf, nan := math.Inf(1), math.NaN()
	for _, f := range []func(float64) (float64, float64){backward.GELUDeriv, backward.SiLUDeriv} {
		d1, d2 := f(inf)
		require.Equal(t, []float64{1, 0}, []float64{d1, d2})
		d1, d2 = f(-inf)
		require.Equal(t, []float64{0, 0}, []float64{math.Abs(d1), math.Abs(d2)})
		d1, d2 = f(nan)
		require.True(t, math.IsNaN(d1) && math.IsNaN(d2))
		for _, v := range []float64{1e300, -1e300, 1e154, -1e154, 1e103, -1e103, 1e-300, 31, -31, 25, -25} {
			d1, d2 = f(v)
			require.False(t, math.IsNaN(d1) || math.IsInf(d1, 0) || math.IsNaN(d2) || math.IsInf(d2, 0), "x=%v", v)
		}
	}

	// The kernels rely on |f″| < 1 to form dy·f″ without overflow.
	for v := -50.0; v <= 50; v += 1.0 / 64 {
		for _, f := range []func(float64) (float64, float64){backward.GELUDeriv, backward.SiLUDeriv} {
			_, d2 := f(v)
			require.Less(t, math.Abs(d2), 1.0, "x=%v", v)
		}
	}

	x := []float64{inf, -inf, nan, 1e300, -1e300, 0, -0.5, 2}
	y := make([]float64, len(x))
	require.NoError(t, backward.ReLU(y, x))
	require.Equal(t, []float64{inf, 0, 0, 1e300, 0, 0, 0, 2}, nanToZero(y))
	require.True(t, math.IsNaN(y[2]))
	require.NoError(t, backward.GELU(y, x))
	require.Equal(t, inf, y[0])
	require.Zero(t, y[1])
	require.True(t, math.IsNaN(y[2]))
	require.NoError(t, backward.SiLU(y, x))
	require.Equal(t, inf, y[0])
	require.Zero(t, y[1])
	require.True(t, math.IsNaN(y[2]))

	// ReLU backward is a select: dead units give exactly zero even for non-finite dy.
	dy := []float64{1, inf, 3, nan, -inf, 5, nan, 7}
	dx := make([]float64, len(x))
	require.NoError(t, backward.ReLUBackward(dx, x, dy))
	require.Equal(t, 1.0, dx[0])
	require.Equal(t, []float64{0, 0}, dx[4:6])
	require.True(t, math.IsNaN(dx[2]), "NaN x propagates")
	require.Equal(t, 0.0, dx[6])
	require.Equal(t, 7.0, dx[7])
	gx, gdy := make([]float64, len(x)), make([]float64, len(x))
	require.NoError(t, backward.ReLUBackwardGrad(gx, gdy, x, dy, dy))
	require.Equal(t, nanToZero(dx), nanToZero(gdy))
	for i := range dx {
		require.Equal(t, math.IsNaN(dx[i]), math.IsNaN(gdy[i]), "NaN at %d", i)
	}
	for i, v := range gx {
		require.Equal(t, math.IsNaN(x[i]), math.IsNaN(v))
		if !math.IsNaN(v) {
			require.Zero(t, v)
		}
	}
}

func nanToZero(v []float64) []float64 {
	out := append([]float64(nil), v...)
	for i := range out {
		if math.IsNaN(out[i]) {
			out[i] = 0
		}
	}
	return out
}

// TestActivationsInPlace checks that outputs may be the same slices as inputs.
func TestActivationsInPlace(t *testing.T) {
	r := rand.New(rand.NewPCG(29, 30))
	n := 5000
	x, dy, g := randVec(r, n, -5, 5), randVec(r, n, -1, 1), randVec(r, n, -1, 1)
	clone := func(v []float64) []float64 { return append([]float64(nil), v...) }
	for _, a := range activations {
		y := make([]float64, n)
		require.NoError(t, a.fwd(y, x))
		x2 := clone(x)
		require.NoError(t, a.fwd(x2, x2))
		require.Equal(t, y, x2, a.name)

		dx := make([]float64, n)
		require.NoError(t, a.bw(dx, x, dy))
		dy2 := clone(dy)
		require.NoError(t, a.bw(dy2, x, dy2))
		require.Equal(t, dx, dy2, a.name)

		gx, gdy := make([]float64, n), make([]float64, n)
		require.NoError(t, a.grad(gx, gdy, x, dy, g))
		for _, alias := range []string{"gx=g,gdy=dy", "gx=dy,gdy=g", "gx=x,gdy=g"} {
			x3, dy3, g3 := clone(x), clone(dy), clone(g)
			var o0, o1 []float64
			switch alias {
			case "gx=g,gdy=dy":
				o0, o1 = g3, dy3
			case "gx=dy,gdy=g":
				o0, o1 = dy3, g3
			default:
				o0, o1 = x3, g3
			}
			require.NoError(t, a.grad(o0, o1, x3, dy3, g3))
			require.Equal(t, gx, o0, "%s %s gx", a.name, alias)
			require.Equal(t, gdy, o1, "%s %s gdy", a.name, alias)
		}
	}
}

func TestActivationsFloat32MatchFloat64(t *testing.T) {
	r := rand.New(rand.NewPCG(25, 26))
	x32 := to32(actPoints(r))
	n := len(x32)
	dy32, g32 := to32(randVec(r, n, -2, 2)), to32(randVec(r, n, -2, 2))
	x, dy, g := to64(x32), to64(dy32), to64(g32)
	for _, a := range activations {
		y, y32 := make([]float64, n), make([]float32, n)
		require.NoError(t, a.fwd(y, x))
		require.NoError(t, a.fwd32(y32, x32))
		requireRel32(t, y, y32, a.name+" forward")
		require.NoError(t, a.bw(y, x, dy))
		require.NoError(t, a.bw32(y32, x32, dy32))
		requireRel32(t, y, y32, a.name+" backward")
		gdy, gdy32 := make([]float64, n), make([]float32, n)
		require.NoError(t, a.grad(y, gdy, x, dy, g))
		require.NoError(t, a.grad32(y32, gdy32, x32, dy32, g32))
		requireRel32(t, y, y32, a.name+" gx")
		requireRel32(t, gdy, gdy32, a.name+" gdy")
	}
}

// requireRel32 checks a float32 result against float64 elementwise to 1e-5 relative (the
// float32 kernels compute in float64 and round once, so the error is one rounding).
func requireRel32(t *testing.T, want []float64, got []float32, msg string) {
	t.Helper()
	for i := range want {
		w := want[i]
		if math.Abs(w) < 1e-30 || math.Abs(w) > math.MaxFloat32 {
			continue // underflows or overflows float32
		}
		require.LessOrEqual(t, math.Abs(float64(got[i])-w), 1e-5*math.Abs(w), "%s at %d: got %v want %v", msg, i, got[i], w)
	}
}

func TestActivationErrors(t *testing.T) {
	a, b := make([]float64, 4), make([]float64, 3)
	type tc struct {
		name string
		err  error
		arg  string
	}
	cases := []tc{
		{"ReLU", backward.ReLU(b, a), "y"},
		{"GELU", backward.GELU(a, b), "y"},
		{"SiLU", backward.SiLU(nil, a), "y"},
		{"ReLUBackward/dx", backward.ReLUBackward(b, a, a), "dx"},
		{"GELUBackward/dy", backward.GELUBackward(a, a, b), "dy"},
		{"SiLUBackward/x", backward.SiLUBackward(a, b, a), "dx"},
		{"ReLUBackwardGrad/gx", backward.ReLUBackwardGrad(b, a, a, a, a), "gx"},
		{"GELUBackwardGrad/gdy", backward.GELUBackwardGrad(nil, b, a, a, a), "gdy"},
		{"SiLUBackwardGrad/dy", backward.SiLUBackwardGrad(a, nil, a, b, a), "dy"},
		{"SiLUBackwardGrad/g", backward.SiLUBackwardGrad(nil, nil, a, a, b), "g"},
		{"GELUBackwardGrad/empty", backward.GELUBackwardGrad([]float64{}, nil, a, a, a), "gx"},
		{"f32", backward.GELUBackward(make([]float32, 2), make([]float32, 2), nil), "dy"},
	}
	for _, c := range cases {
		require.True(t, errors.Is(c.err, gatejet.ErrSize), "%s: %v", c.name, c.err)
		var ge *gatejet.Error
		require.True(t, errors.As(c.err, &ge), c.name)
		require.Equal(t, c.arg, ge.Arg, c.name)
	}
	// Empty inputs are valid.
	require.NoError(t, backward.ReLU[float64](nil, nil))
	require.NoError(t, backward.GELUBackwardGrad[float32](nil, nil, nil, nil, nil))
	require.NoError(t, backward.SiLUBackward([]float64{}, nil, nil))
}

func TestActivationsDeterministicAcrossCores(t *testing.T) {
	r := rand.New(rand.NewPCG(27, 28))
	n := 3*4096 + 17
	x, dy, g := randVec(r, n, -6, 6), randVec(r, n, -1, 1), randVec(r, n, -1, 1)
	for _, a := range activations {
		run := func() [][]float64 {
			y, dx, gx, gdy := make([]float64, n), make([]float64, n), make([]float64, n), make([]float64, n)
			require.NoError(t, a.fwd(y, x))
			require.NoError(t, a.bw(dx, x, dy))
			require.NoError(t, a.grad(gx, gdy, x, dy, g))
			return [][]float64{y, dx, gx, gdy}
		}
		var want [][]float64
		withPar(math.MaxInt64, 1, func() { want = run() })
		for _, procs := range []int{1, 2, 4} {
			withPar(0, procs, func() { require.Equal(t, want, run(), fmt.Sprintf("%s procs=%d", a.name, procs)) })
		}
	}
}

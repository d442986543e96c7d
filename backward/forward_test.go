package backward_test

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gatejet/gatejet"
	"github.com/gatejet/gatejet/backward"
	"github.com/gatejet/gatejet/internal/axisref"
)

// fwdKernel is Softmax or LogSoftmax with its float64 reference (a plain loop per line).
type fwdKernel struct {
	name string
	f64  func(y, x []float64, shape []int, axis int) error
	f32  func(y, x []float32, shape []int, axis int) error
	ref  func(x []float64, shape []int, axis int) []float64
}

// abs is the absolute part of the tolerance of the kernel's results on x (see requireElemClose).
func (k fwdKernel) abs(x []float64) float64 {
	if k.name == "Softmax" {
		return 0
	}
	var m float64
	for _, v := range x {
		if !math.IsInf(v, 0) && !math.IsNaN(v) {
			m = math.Max(m, math.Abs(v))
		}
	}
	return m
}

var fwdKernels = []fwdKernel{
	{"Softmax", backward.Softmax[float64], backward.Softmax[float32], axisref.Softmax},
	{"LogSoftmax", backward.LogSoftmax[float64], backward.LogSoftmax[float32], axisref.LogSoftmax},
}

// requireElemClose checks every element to a relative tolerance of its own magnitude (small
// probabilities included), NaN matching NaN and infinities matching exactly.
// For log-softmax, whose values near 0 come from a difference x − max x, the tolerance is
// relative to |want| + max|x| instead (abs).
func requireElemClose[T ~float32 | ~float64](t testing.TB, want []float64, got []T, tol, abs float64, msg string, args ...any) {
	t.Helper()
	require.Len(t, got, len(want))
	for i, w := range want {
		g := float64(got[i])
		var ok bool
		switch {
		case math.IsNaN(w) || math.IsNaN(g):
			ok = math.IsNaN(w) && math.IsNaN(g)
		case math.IsInf(w, 0) || math.IsInf(g, 0):
			ok = w == g
		default:
			ok = math.Abs(g-w) <= tol*(math.Abs(w)+abs)+1e-300
		}
		if !ok {
			t.Fatalf("%s: [%d] want %v got %v (tol %g, abs %g)", fmt.Sprintf(msg, args...), i, w, g, tol, abs)
		}
	}
}

// TestForwardMatchesReference: every case of refCases (ranks 1 to 4 and 8, every kind of
// axis, empty tensors, long axes reduced in several chunks), both dtypes, elementwise against
// the float64 reference.
func TestForwardMatchesReference(t *testing.T) {
	r := rand.New(rand.NewPCG(41, 42))
	for _, k := range fwdKernels {
		for _, c := range refCases {
			x := randVec(r, prod(c.shape), -6, 6)
			want := k.ref(x, c.shape, c.axis)
			y := make([]float64, len(x))
			require.NoError(t, k.f64(y, x, c.shape, c.axis))
			requireElemClose(t, want, y, 1e-13, k.abs(x), "%s f64 %v", k.name, c)

			x32 := to32(x)
			want32 := k.ref(to64(x32), c.shape, c.axis)
			y32 := make([]float32, len(x))
			require.NoError(t, k.f32(y32, x32, c.shape, c.axis))
			requireElemClose(t, want32, y32, 2e-7, k.abs(x), "%s f32 %v", k.name, c)
		}
	}
}

// TestForwardEveryAxisRank1To4 runs every axis, positive and negative, of shapes of rank 1 to
// 4 with dims that are not multiples of 4.
func TestForwardEveryAxisRank1To4(t *testing.T) {
	r := rand.New(rand.NewPCG(43, 44))
	shapes := [][]int{{7}, {5, 6}, {3, 5, 7}, {2, 3, 5, 6}}
	for _, k := range fwdKernels {
		for _, sh := range shapes {
			for axis := -len(sh); axis < len(sh); axis++ {
				x := randVec(r, prod(sh), -30, 30)
				y := make([]float64, len(x))
				require.NoError(t, k.f64(y, x, sh, axis))
				requireElemClose(t, k.ref(x, sh, axis), y, 1e-13, k.abs(x), "%s %v axis %d", k.name, sh, axis)
				x32 := to32(x)
				y32 := make([]float32, len(x))
				require.NoError(t, k.f32(y32, x32, sh, axis))
				requireElemClose(t, k.ref(to64(x32), sh, axis), y32, 2e-7, k.abs(x), "%s f32 %v axis %d", k.name, sh, axis)
			}
		}
	}
}

// TestForwardNonFinite: NaN, +Inf and an all −Inf slice make their own slice NaN, −Inf beside
// finite values is a mask (probability 0, log-probability −Inf), and no other slice changes.
// Short slices (one chunk), long ones (several chunks, including a chunk of all −Inf beside
// finite chunks) and strided ones.
func TestForwardNonFinite(t *testing.T) {
	inf := math.Inf(1)
	type poison struct {
		name string
		set  func(line []int, x []float64)
		nan  bool // the poisoned slice is all NaN
	}
	poisons := []poison{
		{"NaN", func(ln []int, x []float64) { x[ln[len(ln)/2]] = math.NaN() }, true},
		{"+Inf", func(ln []int, x []float64) { x[ln[1]] = inf }, true},
		{"all -Inf", func(ln []int, x []float64) {
			for _, i := range ln {
				x[i] = -inf
			}
		}, true},
		{"masked", func(ln []int, x []float64) { x[ln[0]], x[ln[len(ln)-1]] = -inf, -inf }, false},
		{"first half -Inf", func(ln []int, x []float64) { // whole chunks of −Inf in long slices
			for _, i := range ln[:len(ln)/2] {
				x[i] = -inf
			}
		}, false},
		{"NaN among -Inf", func(ln []int, x []float64) {
			for _, i := range ln[:len(ln)/2] {
				x[i] = -inf
			}
			x[ln[3]] = math.NaN()
		}, true},
	}
	cases := []axisCase{{[]int{3, 9}, 1}, {[]int{9, 3}, 0}, {[]int{2, 5, 6}, 1}, {[]int{2, 70000}, 1}, {[]int{70000, 3}, 0}}
	r := rand.New(rand.NewPCG(45, 46))
	for _, k := range fwdKernels {
		for _, c := range cases {
			for _, p := range poisons {
				x := randVec(r, prod(c.shape), -5, 5)
				lns := axisref.Lines(c.shape, c.axis)
				bad := lns[1]
				p.set(bad, x)
				want := k.ref(x, c.shape, c.axis)
				y := make([]float64, len(x))
				require.NoError(t, k.f64(y, x, c.shape, c.axis))
				for li, ln := range lns {
					for _, i := range ln {
						v, bad := y[i], ""
						switch {
						case li != 1:
							if math.IsNaN(v) || math.IsInf(v, 0) {
								bad = "clean slice not finite"
							}
						case p.nan:
							if !math.IsNaN(v) {
								bad = "want NaN"
							}
						case x[i] == -inf:
							if (k.name == "Softmax" && v != 0) || (k.name != "Softmax" && v != -inf) {
								bad = "masked entry: want 0 (softmax) or −Inf (log-softmax)"
							}
						default:
							if math.IsNaN(v) || math.IsInf(v, 0) {
								bad = "not finite"
							}
						}
						if bad != "" {
							t.Fatalf("%s %s %v: slice %d [%d] = %v: %s", k.name, p.name, c, li, i, v, bad)
						}
					}
				}
				if !p.nan {
					requireElemClose(t, want, y, 1e-13, k.abs(x), "%s %s %v", k.name, p.name, c)
				}
				y32 := make([]float32, len(x))
				require.NoError(t, k.f32(y32, to32(x), c.shape, c.axis))
				for i := range y {
					if math.IsNaN(y[i]) != math.IsNaN(float64(y32[i])) {
						t.Fatalf("%s %s %v f32 [%d]: %v, f64 %v", k.name, p.name, c, i, y32[i], y[i])
					}
				}
			}
		}
	}
}

// TestForwardExtremeFinite: max-subtraction keeps softmax finite (and summing to 1) for
// logits near ±MaxFloat64, and log-softmax finite wherever x_k − max x is.
func TestForwardExtremeFinite(t *testing.T) {
	x := []float64{1e308, -1e308, 0, 1e308, 7e307, -7e307, 3, 2, 1, -1e300, 1e300, 0}
	shape := []int{3, 4}
	y := make([]float64, len(x))
	require.NoError(t, backward.Softmax(y, x, shape, 1))
	for r := 0; r < 3; r++ {
		var s float64
		for _, v := range y[4*r : 4*r+4] {
			require.False(t, math.IsNaN(v) || math.IsInf(v, 0))
			s += v
		}
		require.InDelta(t, 1, s, 1e-15)
	}
	require.Equal(t, []float64{0.5, 0, 0, 0.5}, y[:4])
	require.NoError(t, backward.LogSoftmax(y, x, shape, 1))
	require.Equal(t, -math.Ln2, y[0])
	require.Equal(t, []float64{-2e300, 0}, y[9:11])
	for _, v := range y[4:] {
		require.False(t, math.IsNaN(v) || math.IsInf(v, 0))
	}
	require.Equal(t, math.Inf(-1), y[1]) // −1e308 − 1e308 overflows: the true value is below −MaxFloat64
	x32 := []float32{3e38, -3e38, 0, 1}
	y32 := make([]float32, 4)
	require.NoError(t, backward.Softmax(y32, x32, []int{4}, 0))
	require.Equal(t, []float32{1, 0, 0, 0}, y32)
}

// TestForwardInPlace: y may be x itself, with the same bits as out of place, on one-chunk and
// several-chunk layouts.
func TestForwardInPlace(t *testing.T) {
	r := rand.New(rand.NewPCG(47, 48))
	for _, k := range fwdKernels {
		for _, c := range []axisCase{{[]int{4, 33}, 1}, {[]int{33, 4}, 0}, {[]int{2, 70000}, 1}, {[]int{70000, 2}, 0}} {
			x := randVec(r, prod(c.shape), -4, 4)
			want := make([]float64, len(x))
			require.NoError(t, k.f64(want, x, c.shape, c.axis))
			require.NoError(t, k.f64(x, x, c.shape, c.axis))
			require.Equal(t, want, x, "%s %v", k.name, c)
		}
	}
}

// TestForwardErrors: bad shapes, axes and lengths, and y overlapping x other than exactly,
// are typed errors naming the argument.
func TestForwardErrors(t *testing.T) {
	buf := make([]float64, 13)
	for _, k := range fwdKernels {
		for _, c := range []struct {
			y, x  []float64
			shape []int
			axis  int
			want  error
			arg   string
		}{
			{buf[:6], make([]float64, 6), nil, 0, gatejet.ErrRank, "shape"},
			{buf[:6], make([]float64, 6), []int{1, 1, 1, 1, 1, 1, 1, 1, 6}, 0, gatejet.ErrRank, "shape"},
			{buf[:6], make([]float64, 6), []int{2, -3}, 0, gatejet.ErrShape, "shape"},
			{buf[:6], make([]float64, 6), []int{2, 3}, 2, gatejet.ErrAxis, "axis"},
			{buf[:6], make([]float64, 6), []int{2, 3}, -3, gatejet.ErrAxis, "axis"},
			{buf[:5], make([]float64, 6), []int{2, 3}, 1, gatejet.ErrSize, "y"},
			{buf[:6], make([]float64, 7), []int{2, 3}, 1, gatejet.ErrSize, "x"},
			{buf[1:7], buf[:6], []int{2, 3}, 1, gatejet.ErrParam, "y"},
			{buf[:6], buf[5:11], []int{2, 3}, 1, gatejet.ErrParam, "y"},
		} {
			err := k.f64(c.y, c.x, c.shape, c.axis)
			require.ErrorIs(t, err, c.want, "%s %+v", k.name, c)
			var ge *gatejet.Error
			require.True(t, errors.As(err, &ge))
			require.Equal(t, c.arg, ge.Arg, "%s: %v", k.name, err)
		}
		// Empty tensors are valid and write nothing.
		require.NoError(t, k.f64(nil, nil, []int{3, 0}, 1))
		require.NoError(t, k.f32(nil, nil, []int{0}, 0))
	}
}

// TestForwardDeterministicAcrossCores: bit-identical outputs whatever the number of goroutines.
func TestForwardDeterministicAcrossCores(t *testing.T) {
	r := rand.New(rand.NewPCG(49, 50))
	for _, k := range fwdKernels {
		for _, c := range []axisCase{{[]int{64, 33}, 1}, {[]int{3, 40, 600}, 1}, {[]int{300, 300}, 0}, {[]int{2, 70000}, -1}, {[]int{2, 40, 1500}, 1}} {
			x := randVec(r, prod(c.shape), -8, 8)
			want := make([]float64, len(x))
			want32 := make([]float32, len(x))
			withPar(math.MaxInt64, 1, func() {
				require.NoError(t, k.f64(want, x, c.shape, c.axis))
				require.NoError(t, k.f32(want32, to32(x), c.shape, c.axis))
			})
			for _, procs := range []int{1, 2, 4} {
				withPar(0, procs, func() {
					got := make([]float64, len(x))
					got32 := make([]float32, len(x))
					require.NoError(t, k.f64(got, x, c.shape, c.axis))
					require.NoError(t, k.f32(got32, to32(x), c.shape, c.axis))
					require.Equal(t, want, got, "%s %v procs=%d", k.name, c, procs)
					require.Equal(t, want32, got32, "%s %v f32 procs=%d", k.name, c, procs)
				})
			}
		}
	}
}

// TestForwardThenBackwardIsGradient: SoftmaxBackward applied to Softmax's own output is the
// gradient of ⟨dy, softmax(x)⟩ by central differences (the same for the log forms), along a
// middle axis.
func TestForwardThenBackwardIsGradient(t *testing.T) {
	r := rand.New(rand.NewPCG(51, 52))
	shape, axis := []int{2, 5, 3}, 1
	pairs := []struct {
		fwd  func(y, x []float64, shape []int, axis int) error
		bwd  func(dx, y, dy []float64, shape []int, axis int) error
		name string
	}{
		{backward.Softmax[float64], backward.SoftmaxBackward[float64], "softmax"},
		{backward.LogSoftmax[float64], backward.LogSoftmaxBackward[float64], "log-softmax"},
	}
	for _, p := range pairs {
		x, dy := randVec(r, 30, -2, 2), randVec(r, 30, -1, 1)
		y, dx := make([]float64, 30), make([]float64, 30)
		require.NoError(t, p.fwd(y, x, shape, axis))
		require.NoError(t, p.bwd(dx, y, dy, shape, axis))
		f := func() float64 {
			require.NoError(t, p.fwd(y, x, shape, axis))
			var s float64
			for i := range y {
				s += dy[i] * y[i]
			}
			return s
		}
		for i := range x {
			x0, h := x[i], 1e-6
			x[i] = x0 + h
			fp := f()
			x[i] = x0 - h
			fm := f()
			x[i] = x0
			require.InDelta(t, (fp-fm)/(2*h), dx[i], 1e-8, "%s [%d]", p.name, i)
		}
	}
}

package backward_test

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/gatejet/gatejet"
	"github.com/gatejet/gatejet/backward"
	"github.com/gatejet/gatejet/internal/axisref"
	"github.com/gatejet/gatejet/internal/check"
	"github.com/gatejet/gatejet/internal/par"
	"github.com/gatejet/gatejet/internal/testkit"
	"github.com/stretchr/testify/require"
)

// axisKernel runs one of the four axis kernels on fresh outputs; out1 is nil for the single-
// output kernels.
type axisKernel struct {
	name string
	log  bool // y is a log-softmax output rather than a softmax output
	run  func(y, dy, g []float64, shape []int, axis int) (out0, out1 []float64, err error)
	run2 func(y, dy, g []float32, shape []int, axis int) (out0, out1 []float32, err error)
	ref  func(y, dy, g []float64, shape []int, axis int) (out0, out1 []float64)
}

func single[T gatejet.Float](f func(dx, y, dy []T, shape []int, axis int) error) func(y, dy, g []T, shape []int, axis int) ([]T, []T, error) {
	return func(y, dy, _ []T, shape []int, axis int) ([]T, []T, error) {
		dx := make([]T, len(y))
		return dx, nil, f(dx, y, dy, shape, axis)
	}
}

func double[T gatejet.Float](f func(gy, gdy, y, dy, g []T, shape []int, axis int) error) func(y, dy, g []T, shape []int, axis int) ([]T, []T, error) {
	return func(y, dy, g []T, shape []int, axis int) ([]T, []T, error) {
		gy, gdy := make([]T, len(y)), make([]T, len(y))
		return gy, gdy, f(gy, gdy, y, dy, g, shape, axis)
	}
}

var axisKernels = []axisKernel{
	{
		name: "SoftmaxBackward",
		run:  single(backward.SoftmaxBackward[float64]),
		run2: single(backward.SoftmaxBackward[float32]),
		ref: func(y, dy, _ []float64, shape []int, axis int) ([]float64, []float64) {
			return refSoftmaxBackward(y, dy, shape, axis), nil
		},
	},
	{
		name: "LogSoftmaxBackward", log: true,
		run:  single(backward.LogSoftmaxBackward[float64]),
		run2: single(backward.LogSoftmaxBackward[float32]),
		ref: func(y, dy, _ []float64, shape []int, axis int) ([]float64, []float64) {
			return refLogSoftmaxBackward(y, dy, shape, axis), nil
		},
	},
	{
		name: "SoftmaxBackwardGrad",
		run:  double(backward.SoftmaxBackwardGrad[float64]),
		run2: double(backward.SoftmaxBackwardGrad[float32]),
		ref:  refSoftmaxBackwardGrad,
	},
	{
		name: "LogSoftmaxBackwardGrad", log: true,
		run:  double(backward.LogSoftmaxBackwardGrad[float64]),
		run2: double(backward.LogSoftmaxBackwardGrad[float32]),
		ref:  refLogSoftmaxBackwardGrad,
	},
}

// axisInputs returns a saved forward output y (softmax or log-softmax of random logits along
// the axis) and random dy and g.
func axisInputs(r *rand.Rand, c axisCase, log bool) (y, dy, g []float64) {
	n := prod(c.shape)
	x := randVec(r, n, -3, 3)
	if log {
		y = axisref.LogSoftmax(x, c.shape, c.axis)
	} else {
		y = axisref.Softmax(x, c.shape, c.axis)
	}
	return y, randVec(r, n, -1, 1), randVec(r, n, -1, 1)
}

func TestAxisKernelsAgainstReference(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, k := range axisKernels {
		for _, c := range refCases {
			t.Run(fmt.Sprintf("%s/%v/axis=%d", k.name, c.shape, c.axis), func(t *testing.T) {
				y, dy, g := axisInputs(r, c, k.log)
				want0, want1 := k.ref(y, dy, g, c.shape, c.axis)
				got0, got1, err := k.run(y, dy, g, c.shape, c.axis)
				require.NoError(t, err)
				// Both sides sum along the axis in different orders: allow the usual error bound
				// of a sum of n terms, γ_n ≈ n·ε (ε = 2^-53), which is ~1e-15 for short axes.
				tol := 0x1p-53 * float64(axisLen(c)+50)
				requireClose(t, want0, got0, tol, 1e-300, "out0")
				if want1 != nil {
					requireClose(t, want1, got1, tol, 1e-300, "out1")
				}
			})
		}
	}
}

// TestGradOptionalOutputs checks that skipping one output of a double-backward kernel leaves
// the other bit-for-bit unchanged, and that both nil is valid.
func TestGradOptionalOutputs(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	fns := map[string]func(gy, gdy, y, dy, g []float64, shape []int, axis int) error{
		"SoftmaxBackwardGrad":    backward.SoftmaxBackwardGrad[float64],
		"LogSoftmaxBackwardGrad": backward.LogSoftmaxBackwardGrad[float64],
	}
	for name, f := range fns {
		for _, c := range []axisCase{{[]int{3, 37}, 1}, {[]int{2, 11, 600}, 1}, {[]int{4, 5}, 0}} {
			y, dy, g := axisInputs(r, c, name == "LogSoftmaxBackwardGrad")
			n := len(y)
			gy, gdy := make([]float64, n), make([]float64, n)
			require.NoError(t, f(gy, gdy, y, dy, g, c.shape, c.axis))
			onlyGy, onlyGdy := make([]float64, n), make([]float64, n)
			require.NoError(t, f(onlyGy, nil, y, dy, g, c.shape, c.axis))
			require.NoError(t, f(nil, onlyGdy, y, dy, g, c.shape, c.axis))
			require.NoError(t, f(nil, nil, y, dy, g, c.shape, c.axis))
			require.Equal(t, gy, onlyGy, "%s %v gy", name, c)
			require.Equal(t, gdy, onlyGdy, "%s %v gdy", name, c)
		}
	}
}

// TestInPlace checks that an output may be the same slice as an input.
func TestInPlace(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, c := range []axisCase{{[]int{3, 37}, 1}, {[]int{2, 11, 600}, 1}, {[]int{300, 300}, 0}, {[]int{2, 70000}, 1}} {
		y, dy, g := axisInputs(r, c, false)
		want := make([]float64, len(y))
		require.NoError(t, backward.SoftmaxBackward(want, y, dy, c.shape, c.axis))
		dy2 := append([]float64(nil), dy...)
		require.NoError(t, backward.SoftmaxBackward(dy2, y, dy2, c.shape, c.axis))
		require.Equal(t, want, dy2)
		y2 := append([]float64(nil), y...)
		require.NoError(t, backward.SoftmaxBackward(y2, y2, dy, c.shape, c.axis))
		require.Equal(t, want, y2)

		for _, grad := range []func(gy, gdy, y, dy, g []float64, shape []int, axis int) error{
			backward.SoftmaxBackwardGrad[float64], backward.LogSoftmaxBackwardGrad[float64],
		} {
			wgy, wgdy := make([]float64, len(y)), make([]float64, len(y))
			require.NoError(t, grad(wgy, wgdy, y, dy, g, c.shape, c.axis))
			y3, g3 := append([]float64(nil), y...), append([]float64(nil), g...)
			require.NoError(t, grad(y3, g3, y3, dy, g3, c.shape, c.axis))
			require.Equal(t, wgy, y3)
			require.Equal(t, wgdy, g3)
			g4, dy4 := append([]float64(nil), g...), append([]float64(nil), dy...)
			require.NoError(t, grad(g4, dy4, y, dy4, g4, c.shape, c.axis))
			require.Equal(t, wgy, g4)
			require.Equal(t, wgdy, dy4)
		}
	}
}

// fdCases are small enough for central finite differences over every element.
var fdCases = []axisCase{
	{[]int{5}, 0}, {[]int{3, 4}, 0}, {[]int{3, 4}, -1}, {[]int{2, 3, 4}, 1},
	{[]int{2, 1, 3, 5}, -3}, {[]int{2, 1, 3, 5}, 3}, {[]int{7, 1}, 1}, {[]int{1, 2, 1, 2, 1, 2, 1, 3}, 7},
	{[]int{1, 2, 1, 2, 1, 2, 1, 3}, 1},
}

// centralDiff returns (f(v+h e_i) − f(v−h e_i))/(2h) for every i, restoring v.
func centralDiff(v []float64, h float64, f func() float64) []float64 {
	J := testkit.FDJacobian(v, func() []float64 { return []float64{f()} }, h)
	d := make([]float64, len(v))
	for i, Ji := range J {
		d[i] = Ji[0]
	}
	return d
}

func dotf(a, b []float64) float64 {
	var s float64
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}

// TestBackwardAgainstFiniteDifferences checks dx against central differences of
// L(x) = ⟨dy, forward(x)⟩, the forward computed here.
func TestBackwardAgainstFiniteDifferences(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for _, c := range fdCases {
		n := prod(c.shape)
		x := randVec(r, n, -2, 2)
		dy := randVec(r, n, -1, 1)

		dx := make([]float64, n)
		require.NoError(t, backward.SoftmaxBackward(dx, axisref.Softmax(x, c.shape, c.axis), dy, c.shape, c.axis))
		fd := centralDiff(x, 1e-5, func() float64 { return dotf(dy, axisref.Softmax(x, c.shape, c.axis)) })
		requireClose(t, fd, dx, 1e-6, 1e-3, "softmax %v", c)

		require.NoError(t, backward.LogSoftmaxBackward(dx, axisref.LogSoftmax(x, c.shape, c.axis), dy, c.shape, c.axis))
		fd = centralDiff(x, 1e-5, func() float64 { return dotf(dy, axisref.LogSoftmax(x, c.shape, c.axis)) })
		requireClose(t, fd, dx, 1e-6, 1e-3, "log-softmax %v", c)
	}
}

// TestDoubleBackwardAgainstFiniteDifferences checks gy and gdy against central differences of
// ⟨g, backward(y, dy)⟩, the backward being the package's own kernel.
func TestDoubleBackwardAgainstFiniteDifferences(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	type pair struct {
		name string
		log  bool
		bw   func(dx, y, dy []float64, shape []int, axis int) error
		grad func(gy, gdy, y, dy, g []float64, shape []int, axis int) error
	}
	for _, p := range []pair{
		{"softmax", false, backward.SoftmaxBackward[float64], backward.SoftmaxBackwardGrad[float64]},
		{"log-softmax", true, backward.LogSoftmaxBackward[float64], backward.LogSoftmaxBackwardGrad[float64]},
	} {
		for _, c := range fdCases {
			y, dy, g := axisInputs(r, c, p.log)
			n := len(y)
			gy, gdy := make([]float64, n), make([]float64, n)
			require.NoError(t, p.grad(gy, gdy, y, dy, g, c.shape, c.axis))
			dx := make([]float64, n)
			loss := func() float64 {
				require.NoError(t, p.bw(dx, y, dy, c.shape, c.axis))
				return dotf(g, dx)
			}
			requireClose(t, centralDiff(y, 1e-5, loss), gy, 1e-6, 1e-3, "%s gy %v", p.name, c)
			requireClose(t, centralDiff(dy, 1e-5, loss), gdy, 1e-6, 1e-3, "%s gdy %v", p.name, c)
		}
	}
}

// TestFloat32MatchesFloat64 runs every kernel on float32 data and on the same values widened
// to float64: float32 accumulates in float64, so only the final rounding differs.
func TestFloat32MatchesFloat64(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	for _, k := range axisKernels {
		for _, c := range refCases {
			y, dy, g := axisInputs(r, c, k.log)
			y32, dy32, g32 := to32(y), to32(dy), to32(g)
			want0, want1, err := k.run(to64(y32), to64(dy32), to64(g32), c.shape, c.axis)
			require.NoError(t, err)
			got0, got1, err := k.run2(y32, dy32, g32, c.shape, c.axis)
			require.NoError(t, err)
			requireClose(t, want0, got0, 1e-5, 1e-30, "%s %v out0", k.name, c)
			if want1 != nil {
				requireClose(t, want1, got1, 1e-5, 1e-30, "%s %v out1", k.name, c)
			}
		}
	}
}

// withPar runs f with the given par settings and GOMAXPROCS, restoring them afterwards.
func withPar(minWork int64, procs int, f func()) {
	defer par.SetMinWork(par.SetMinWork(minWork))
	defer par.SetMaxProcs(par.SetMaxProcs(procs))
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(max(runtime.GOMAXPROCS(0), procs)))
	f()
}

// TestDeterministicAcrossCores checks bit-identical outputs whatever the number of goroutines.
func TestDeterministicAcrossCores(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	cases := []axisCase{
		{[]int{64, 33}, 1}, {[]int{3, 40, 600}, 1}, {[]int{40, 700}, 0}, {[]int{5, 6, 7, 8}, -2},
		{[]int{300, 300}, 0}, {[]int{2, 70000}, -1}, {[]int{2, 40, 1500}, 1},
	}
	for _, k := range axisKernels {
		for _, c := range cases {
			y, dy, g := axisInputs(r, c, k.log)
			var want0, want1 []float64
			var want320 []float32
			withPar(math.MaxInt64, 1, func() {
				var err error
				want0, want1, err = k.run(y, dy, g, c.shape, c.axis)
				require.NoError(t, err)
				want320, _, err = k.run2(to32(y), to32(dy), to32(g), c.shape, c.axis)
				require.NoError(t, err)
			})
			for _, procs := range []int{1, 2, 4} {
				withPar(0, procs, func() {
					got0, got1, err := k.run(y, dy, g, c.shape, c.axis)
					require.NoError(t, err)
					require.Equal(t, want0, got0, "%s %v procs=%d", k.name, c, procs)
					require.Equal(t, want1, got1, "%s %v procs=%d", k.name, c, procs)
					got320, _, err := k.run2(to32(y), to32(dy), to32(g), c.shape, c.axis)
					require.NoError(t, err)
					require.Equal(t, want320, got320, "%s %v f32 procs=%d", k.name, c, procs)
				})
			}
		}
	}
}

// TestSerialCallsDoNotAllocate checks that steady-state calls on the serial path allocate
// nothing (scratch and jobs come from pools).
func TestSerialCallsDoNotAllocate(t *testing.T) {
	if raceEnabled {
		t.Skip("sync.Pool drops items at random under the race detector")
	}
	defer par.SetMinWork(par.SetMinWork(math.MaxInt64))
	for _, c := range []axisCase{{[]int{8, 100}, 1}, {[]int{8, 100, 300}, 1}, {[]int{300, 300}, 0}, {[]int{2, 70000}, 1}} {
		n := prod(c.shape)
		y, dy, g := make([]float64, n), make([]float64, n), make([]float64, n)
		o0, o1 := make([]float64, n), make([]float64, n)
		y32, dy32, g32, p0, p1 := make([]float32, n), make([]float32, n), make([]float32, n), make([]float32, n), make([]float32, n)
		calls := map[string]func(){
			"SoftmaxBackward/f64":        func() { _ = backward.SoftmaxBackward(o0, y, dy, c.shape, c.axis) },
			"LogSoftmaxBackward/f64":     func() { _ = backward.LogSoftmaxBackward(o0, y, dy, c.shape, c.axis) },
			"SoftmaxBackwardGrad/f64":    func() { _ = backward.SoftmaxBackwardGrad(o0, o1, y, dy, g, c.shape, c.axis) },
			"LogSoftmaxBackwardGrad/f64": func() { _ = backward.LogSoftmaxBackwardGrad(o0, o1, y, dy, g, c.shape, c.axis) },
			"SoftmaxBackward/f32":        func() { _ = backward.SoftmaxBackward(p0, y32, dy32, c.shape, c.axis) },
			"SoftmaxBackwardGrad/f32":    func() { _ = backward.SoftmaxBackwardGrad(p0, p1, y32, dy32, g32, c.shape, c.axis) },
			"GELUBackward/f64":           func() { _ = backward.GELUBackward(o0, y, dy) },
			"SiLUBackwardGrad/f32":       func() { _ = backward.SiLUBackwardGrad(p0, p1, y32, dy32, g32) },
			"ReLU/f64":                   func() { _ = backward.ReLU(o0, y) },
			"Softmax/f64":                func() { _ = backward.Softmax(o0, y, c.shape, c.axis) },
			"Softmax/f32":                func() { _ = backward.Softmax(p0, y32, c.shape, c.axis) },
			"LogSoftmax/f64":             func() { _ = backward.LogSoftmax(o0, y, c.shape, c.axis) },
		}
		for name, f := range calls {
			f() // warm the pools
			require.Zero(t, testing.AllocsPerRun(20, f), "%s %v", name, c)
		}
	}
}

func TestAxisLayout(t *testing.T) {
	for _, tc := range []struct {
		shape           []int
		axis            int
		outer, n, inner int
	}{
		{[]int{5}, 0, 1, 5, 1},
		{[]int{5}, -1, 1, 5, 1},
		{[]int{2, 3, 4}, 0, 1, 2, 12},
		{[]int{2, 3, 4}, 1, 2, 3, 4},
		{[]int{2, 3, 4}, -1, 6, 4, 1},
		{[]int{2, 0, 4}, 2, 0, 4, 1},
		{[]int{2, 0, 4}, 1, 2, 0, 4},
		{[]int{1, 2, 1, 2, 1, 2, 1, 3}, 5, 4, 2, 3},
	} {
		outer, n, inner, err := check.AxisLayout("test", tc.shape, tc.axis)
		require.NoError(t, err)
		require.Equal(t, []int{tc.outer, tc.n, tc.inner}, []int{outer, n, inner}, "%v axis %d", tc.shape, tc.axis)
	}
}

// TestAxisErrors checks that every structural error is reported with the right sentinel and
// argument, and that nothing panics.
func TestAxisErrors(t *testing.T) {
	ok := make([]float64, 6)
	short := make([]float64, 5)
	shape := []int{2, 3}
	type tc struct {
		name string
		err  error
		kind error
		arg  string
	}
	layoutErr := func(shape []int, axis int) error {
		_, _, _, err := check.AxisLayout("op", shape, axis)
		return err
	}
	cases := []tc{
		{"rank0", backward.SoftmaxBackward(ok, ok, ok, []int{}, 0), gatejet.ErrRank, "shape"},
		{"rank0nil", backward.SoftmaxBackward(ok, ok, ok, nil, 0), gatejet.ErrRank, "shape"},
		{"rank9", backward.LogSoftmaxBackward(ok, ok, ok, []int{1, 1, 1, 1, 1, 1, 1, 2, 3}, 0), gatejet.ErrRank, "shape"},
		{"negdim", backward.SoftmaxBackward(ok, ok, ok, []int{2, -3}, 0), gatejet.ErrShape, "shape"},
		{"overflow", backward.SoftmaxBackward(ok, ok, ok, []int{1 << 40, 1 << 40}, 0), gatejet.ErrSize, "shape"},
		{"overflowEmpty", backward.SoftmaxBackward(ok, ok, ok, []int{1 << 40, 0, 1 << 40}, 0), gatejet.ErrSize, "shape"},
		{"axisHigh", backward.SoftmaxBackward(ok, ok, ok, shape, 2), gatejet.ErrAxis, "axis"},
		{"axisLow", backward.SoftmaxBackward(ok, ok, ok, shape, -3), gatejet.ErrAxis, "axis"},
		{"axisHuge", backward.SoftmaxBackward(ok, ok, ok, shape, math.MinInt), gatejet.ErrAxis, "axis"},
		{"dx", backward.SoftmaxBackward(short, ok, ok, shape, 0), gatejet.ErrSize, "dx"},
		{"y", backward.SoftmaxBackward(ok, short, ok, shape, 0), gatejet.ErrSize, "y"},
		{"dy", backward.LogSoftmaxBackward(ok, ok, short, shape, 0), gatejet.ErrSize, "dy"},
		{"dxNil", backward.LogSoftmaxBackward(nil, ok, ok, shape, 0), gatejet.ErrSize, "dx"},
		{"gy", backward.SoftmaxBackwardGrad(short, ok, ok, ok, ok, shape, 1), gatejet.ErrSize, "gy"},
		{"gyEmpty", backward.SoftmaxBackwardGrad([]float64{}, ok, ok, ok, ok, shape, 1), gatejet.ErrSize, "gy"},
		{"gdy", backward.LogSoftmaxBackwardGrad(ok, short, ok, ok, ok, shape, 1), gatejet.ErrSize, "gdy"},
		{"gradY", backward.SoftmaxBackwardGrad(nil, nil, short, ok, ok, shape, 1), gatejet.ErrSize, "y"},
		{"gradDy", backward.LogSoftmaxBackwardGrad(ok, nil, ok, short, ok, shape, 1), gatejet.ErrSize, "dy"},
		{"gradG", backward.SoftmaxBackwardGrad(nil, ok, ok, ok, short, shape, 1), gatejet.ErrSize, "g"},
		{"gradAxis", backward.LogSoftmaxBackwardGrad(ok, ok, ok, ok, ok, shape, 7), gatejet.ErrAxis, "axis"},
		{"f32", backward.SoftmaxBackward(make([]float32, 6), make([]float32, 6), make([]float32, 7), shape, 0), gatejet.ErrSize, "dy"},
		{"layoutRank", layoutErr(nil, 0), gatejet.ErrRank, "shape"},
		{"layoutShape", layoutErr([]int{-1}, 0), gatejet.ErrShape, "shape"},
		{"layoutAxis", layoutErr([]int{3}, 1), gatejet.ErrAxis, "axis"},
	}
	for _, c := range cases {
		require.Error(t, c.err, c.name)
		require.True(t, errors.Is(c.err, c.kind), "%s: %v", c.name, c.err)
		var ge *gatejet.Error
		require.True(t, errors.As(c.err, &ge), c.name)
		require.Equal(t, c.arg, ge.Arg, c.name)
		require.NotEmpty(t, ge.Op, c.name)
	}
}

// TestEmptyTensors checks that tensors with a zero dim are valid, with nil or empty buffers.
func TestEmptyTensors(t *testing.T) {
	for _, shape := range [][]int{{0}, {3, 0}, {0, 3}, {2, 0, 5}} {
		for axis := -len(shape); axis < len(shape); axis++ {
			require.NoError(t, backward.SoftmaxBackward[float64](nil, nil, nil, shape, axis))
			require.NoError(t, backward.LogSoftmaxBackward([]float32{}, []float32{}, nil, shape, axis))
			require.NoError(t, backward.SoftmaxBackwardGrad[float64](nil, nil, nil, nil, nil, shape, axis))
			require.NoError(t, backward.LogSoftmaxBackwardGrad([]float64{}, nil, nil, []float64{}, nil, shape, axis))
		}
	}
}

// TestNonFinitePropagateAlongRow checks that a NaN stays within its row.
func TestNonFinitePropagateAlongRow(t *testing.T) {
	r := rand.New(rand.NewPCG(15, 16))
	c := axisCase{[]int{3, 4, 5}, 1}
	y, dy, _ := axisInputs(r, c, false)
	dy[5*1+2] = math.NaN() // outer 0, k 1, column 2
	dx := make([]float64, len(y))
	require.NoError(t, backward.SoftmaxBackward(dx, y, dy, c.shape, c.axis))
	for i, v := range dx {
		onLine := i < 20 && i%5 == 2
		require.Equal(t, onLine, math.IsNaN(v), "index %d", i)
	}
}

// TestNamedFloatTypes checks types defined on float32/float64, which bypass the job pools.
func TestNamedFloatTypes(t *testing.T) {
	type f64 float64
	r := rand.New(rand.NewPCG(17, 18))
	c := axisCase{[]int{2, 5, 300}, 1}
	y, dy, _ := axisInputs(r, c, false)
	yy, dyy := make([]f64, len(y)), make([]f64, len(y))
	for i := range y {
		yy[i], dyy[i] = f64(y[i]), f64(dy[i])
	}
	dx := make([]f64, len(y))
	require.NoError(t, backward.SoftmaxBackward(dx, yy, dyy, c.shape, c.axis))
	requireClose(t, refSoftmaxBackward(y, dy, c.shape, c.axis), dx, 1e-14, 1e-300, "named type")
	gx := make([]f64, len(y))
	require.NoError(t, backward.GELUBackward(gx, yy, dyy))
}

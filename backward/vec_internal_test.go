package backward

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gatejet/gatejet"
	"github.com/gatejet/gatejet/internal/par"
	"github.com/gatejet/gatejet/internal/testkit"
)

// TestVectorLoopsEqualGo: the AVX loops of the softmax backward give the very bits of the Go
// loops, for every axis kind (contiguous rows, strided slabs, several chunks), lengths that
// are and are not multiples of four, float64 and float32, on one goroutine and split.
func TestVectorLoopsEqualGo(t *testing.T) {
	testkit.RequireAVX(t, "loops", hasAVX, &useAVX)
	rng := rand.New(rand.NewPCG(21, 22))
	shapes := []struct {
		shape []int
		axis  int
	}{{[]int{7, 13}, 1}, {[]int{5, 1024}, -1}, {[]int{3, 70001}, 1}, {[]int{33, 9}, 0}, {[]int{4, 50, 31}, 1}, {[]int{4097, 6}, 0}, {[]int{2, 9, 1030}, 1}}
	for _, c := range shapes {
		n := 1
		for _, d := range c.shape {
			n *= d
		}
		y, dy := make([]float64, n), make([]float64, n)
		for i := range y {
			y[i], dy[i] = math.Exp(rng.NormFloat64())/float64(n), rng.NormFloat64()
		}
		y32, dy32 := make([]float32, n), make([]float32, n)
		for i := range y {
			y32[i], dy32[i] = float32(y[i]), float32(dy[i])
		}
		for _, mw := range []int64{math.MaxInt64, 0} {
			name := fmt.Sprintf("%v/axis=%d/minWork=%d", c.shape, c.axis, mw)
			run := func(vec bool) ([]float64, []float32) {
				defer par.SetMinWork(par.SetMinWork(mw))
				useAVX = vec
				dx, dx32 := make([]float64, n), make([]float32, n)
				if err := SoftmaxBackward(dx, y, dy, c.shape, c.axis); err != nil {
					t.Fatal(err)
				}
				if err := SoftmaxBackward(dx32, y32, dy32, c.shape, c.axis); err != nil {
					t.Fatal(err)
				}
				return dx, dx32
			}
			want, want32 := run(false)
			got, got32 := run(true)
			for i := range want {
				if math.Float64bits(want[i]) != math.Float64bits(got[i]) {
					t.Fatalf("%s f64 [%d]: Go %v, AVX %v", name, i, want[i], got[i])
				}
				if math.Float32bits(want32[i]) != math.Float32bits(got32[i]) {
					t.Fatalf("%s f32 [%d]: Go %v, AVX %v", name, i, want32[i], got32[i])
				}
			}
		}
	}
}

// TestForwardVectorLoopsEqualGo: the AVX2 loops of the last-axis softmax forward (maxLanes,
// expSumLanes, scaleLanes; and expLanes, under expOf) give the bits of the Go loops, for
// Softmax and LogSoftmax, float64 and float32, rows whose lengths are and are not multiples of
// four, one chunk or several, on one goroutine and split; with values whose x − max leaves
// the vector loop's range (−Inf, −1e300, a spread of 800 around −708: subnormal results), and
// NaN and +Inf rows. NaNs are compared as NaN: their payloads are not specified.
func TestForwardVectorLoopsEqualGo(t *testing.T) {
	testkit.RequireAVX(t, "forward loops", hasAVX && hasAVX2, &useAVX)
	rng := rand.New(rand.NewPCG(23, 24))
	shapes := []struct {
		shape []int
		axis  int
	}{{[]int{7, 13}, 1}, {[]int{5, 1024}, -1}, {[]int{9, 1023}, -1}, {[]int{3, 70001}, 1}, {[]int{2, 9, 1030}, -1}, {[]int{33, 9}, 0}, {[]int{64, 3}, -1}}
	for _, c := range shapes {
		n := 1
		for _, d := range c.shape {
			n *= d
		}
		x := make([]float64, n)
		for i := range x {
			switch k := rng.IntN(40); {
			case k == 0:
				x[i] = math.Inf(-1)
			case k == 1:
				x[i] = -1e300
			case k < 6:
				x[i] = -800 * rng.Float64()
			default:
				x[i] = 3 * rng.NormFloat64()
			}
		}
		// A few rows hold a NaN or a +Inf (rows along the last axis; elsewhere, slices).
		if len(x) > 100 {
			x[17], x[len(x)-5] = math.NaN(), math.Inf(1)
		}
		x32 := make([]float32, n)
		for i, v := range x {
			x32[i] = float32(v)
		}
		for _, log := range []bool{false, true} {
			f64, f32 := Softmax[float64], Softmax[float32]
			if log {
				f64, f32 = LogSoftmax[float64], LogSoftmax[float32]
			}
			for _, mw := range []int64{math.MaxInt64, 0} {
				name := fmt.Sprintf("%v/axis=%d/log=%v/minWork=%d", c.shape, c.axis, log, mw)
				run := func(vec bool) ([]float64, []float32) {
					defer par.SetMinWork(par.SetMinWork(mw))
					useAVX = vec
					y, y32 := make([]float64, n), make([]float32, n)
					if err := f64(y, x, c.shape, c.axis); err != nil {
						t.Fatal(err)
					}
					if err := f32(y32, x32, c.shape, c.axis); err != nil {
						t.Fatal(err)
					}
					return y, y32
				}
				want, want32 := run(false)
				got, got32 := run(true)
				for i := range want {
					if w, g := want[i], got[i]; math.Float64bits(w) != math.Float64bits(g) && !(math.IsNaN(w) && math.IsNaN(g)) {
						t.Fatalf("%s f64 [%d]: Go %v, AVX %v", name, i, w, g)
					}
					if w, g := want32[i], got32[i]; math.Float32bits(w) != math.Float32bits(g) && !(w != w && g != g) {
						t.Fatalf("%s f32 [%d]: Go %v, AVX %v", name, i, w, g)
					}
				}
			}
		}
	}
}

// TestForwardLoopsStayInBounds: the vector loops of the last-axis softmax forward (maxLanes,
// expSumLanes, expLanes, scaleLanes) read and write nothing outside their slices: each slice
// ends at a page that cannot be read or written, or starts just after one, for every length
// from 0 to 70, float64 and float32; their results are the Go loops' bits.
func TestForwardLoopsStayInBounds(t *testing.T) {
	testkit.RequireAVX(t, "forward loops", hasAVX && hasAVX2, &useAVX)
	g := testkit.GuardedPages(t, 3) // e, x and y
	rng := rand.New(rand.NewPCG(61, 62))
	for n := 0; n <= 70; n++ {
		for _, end := range []bool{true, false} {
			e := testkit.GuardedSlice[float64](g, 0, end, n)
			x64 := testkit.GuardedSlice[float64](g, 1, end, n)
			x32 := testkit.GuardedSlice[float32](g, 1, end, n)
			y64 := testkit.GuardedSlice[float64](g, 2, end, n)
			y32 := testkit.GuardedSlice[float32](g, 2, end, n)
			name := fmt.Sprintf("n=%d end=%v", n, end)
			for i := range n {
				x64[i] = 3 * rng.NormFloat64()
			}
			forwardInBounds(t, e, x64, y64, name+" f64")
			for i := range n {
				x32[i] = float32(3 * rng.NormFloat64())
			}
			forwardInBounds(t, e, x32, y32, name+" f32")
		}
	}
}

func forwardInBounds[T gatejet.Float](t *testing.T, e []float64, x, y []T, name string) {
	t.Helper()
	n := len(x)
	run := func(vec bool) (m [4]float64, s float64, ex []float64, ys []T) {
		useAVX = vec
		defer func() { useAVX = true }()
		m[0], m[1], m[2], m[3] = maxLanes(x)
		s = expSum(e, x, 0.5)
		ex = append([]float64(nil), e...)
		for i := range e {
			e[i] = float64(x[i])
		}
		expOf(e, e)
		ex = append(ex, e...)
		for i := scaleLanes(y, e, 0.7); i < n; i++ {
			y[i] = T(e[i] * 0.7)
		}
		return m, s, ex, append([]T(nil), y...)
	}
	m0, s0, e0, y0 := run(false)
	m1, s1, e1, y1 := run(true)
	if m0 != m1 || math.Float64bits(s0) != math.Float64bits(s1) {
		t.Fatalf("%s: max lanes %v / %v, sums %v / %v", name, m0, m1, s0, s1)
	}
	for i := range e0 {
		if math.Float64bits(e0[i]) != math.Float64bits(e1[i]) {
			t.Fatalf("%s: exp [%d] %v / %v", name, i, e0[i], e1[i])
		}
	}
	for i := range y0 {
		if y0[i] != y1[i] {
			t.Fatalf("%s: y [%d] %v / %v", name, i, y0[i], y1[i])
		}
	}
}

// TestSplitCallsDoNotAllocate: steady-state calls split over the cores allocate nothing
// either (par.For's bookkeeping is pooled, the jobs' bodies are bound once).
func TestSplitCallsDoNotAllocate(t *testing.T) {
	if raceOn || testing.CoverMode() != "" {
		t.Skip("allocation counts are not meaningful under -race or -cover")
	}
	defer par.SetMinWork(par.SetMinWork(0))
	for _, c := range []struct {
		shape []int
		axis  int
	}{{[]int{64, 100}, 1}, {[]int{300, 300}, 0}, {[]int{2, 70000}, 1}} {
		n := c.shape[0] * c.shape[1]
		y, dy, g, o0, o1 := make([]float64, n), make([]float64, n), make([]float64, n), make([]float64, n), make([]float64, n)
		y32, dy32, p0 := make([]float32, n), make([]float32, n), make([]float32, n)
		calls := map[string]func(){
			"SoftmaxBackward/f64":     func() { _ = SoftmaxBackward(o0, y, dy, c.shape, c.axis) },
			"SoftmaxBackward/f32":     func() { _ = SoftmaxBackward(p0, y32, dy32, c.shape, c.axis) },
			"LogSoftmaxBackward/f64":  func() { _ = LogSoftmaxBackward(o0, y, dy, c.shape, c.axis) },
			"SoftmaxBackwardGrad/f64": func() { _ = SoftmaxBackwardGrad(o0, o1, y, dy, g, c.shape, c.axis) },
			"GELUBackward/f64":        func() { _ = GELUBackward(o0, y, dy) },
			"Softmax/f64":             func() { _ = Softmax(o0, y, c.shape, c.axis) },
			"Softmax/f32":             func() { _ = Softmax(p0, y32, c.shape, c.axis) },
		}
		for name, f := range calls {
			f()
			if a := testing.AllocsPerRun(20, f); a != 0 {
				t.Errorf("%s %v axis %d: %v allocations per call", name, c.shape, c.axis, a)
			}
		}
	}
}

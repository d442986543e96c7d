package basis

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gatejet/gatejet"
)

func near(a, b, tol float64) bool { return math.Abs(a-b) <= tol*(1+math.Abs(b)) }

func TestMonomial(t *testing.T) {
	dst := make([]float64, 6)
	for _, x := range []float64{0, 1, -0.7, 2.5} {
		for m := 0; m <= 7; m++ {
			Monomial(dst, x, m)
			for b := range dst {
				// d^m t^b / dt^m written out: b(b−1)…(b−m+1)·t^(b−m).
				want := 0.0
				if b >= m {
					want = math.Pow(x, float64(b-m))
					for i := 0; i < m; i++ {
						want *= float64(b - i)
					}
				}
				if !near(dst[b], want, 1e-14) {
					t.Errorf("t=%v m=%d b=%d: got %v, want %v", x, m, b, dst[b], want)
				}
			}
		}
	}
	Monomial(dst, math.NaN(), 0)
	if dst[0] != 1 || !math.IsNaN(dst[1]) {
		t.Errorf("NaN t: %v", dst)
	}
}

// bernstein is the clamped cubic basis on [0,0,0,0,1,1,1,1] and its derivatives, written out.
func bernstein(x float64, m int) [4]float64 {
	y := 1 - x
	switch m {
	case 0:
		return [4]float64{y * y * y, 3 * x * y * y, 3 * x * x * y, x * x * x}
	case 1:
		return [4]float64{-3 * y * y, 3*y*y - 6*x*y, 6*x*y - 3*x*x, 3 * x * x}
	case 2:
		return [4]float64{6 * y, -12*y + 6*x, 6*y - 12*x, 6 * x}
	case 3:
		return [4]float64{-6, 18, -18, 6}
	}
	return [4]float64{}
}

func TestSplineKnownValues(t *testing.T) {
	s, err := NewSpline("test", []float64{0, 0, 0, 0, 1, 1, 1, 1})
	if err != nil {
		t.Fatal(err)
	}
	dst := make([]float64, 4)
	for _, x := range []float64{0, 0.2, 0.5, 0.999, 1} {
		for m := 0; m <= 5; m++ {
			s.Eval(dst, x, m)
			want := bernstein(x, m)
			for b := range dst {
				if !near(dst[b], want[b], 1e-14) {
					t.Errorf("clamped t=%v m=%d b=%d: got %v, want %v", x, m, b, dst[b], want[b])
				}
			}
		}
	}
	// Uniform knots 0..7: at the knot 3 the values are 1/6, 2/3, 1/6, 0; at u = t − 3 the
	// four pieces are (1−u)³/6, (3u³−6u²+4)/6, (−3u³+3u²+3u+1)/6, u³/6.
	u, err := NewSpline("test", []float64{0, 1, 2, 3, 4, 5, 6, 7})
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range []float64{3, 3.25, 3.5, 4} {
		v := x - 3
		want := [4]float64{math.Pow(1-v, 3) / 6, (3*v*v*v - 6*v*v + 4) / 6, (-3*v*v*v + 3*v*v + 3*v + 1) / 6, v * v * v / 6}
		dwant := [4]float64{-(1 - v) * (1 - v) / 2, (9*v*v - 12*v) / 6, (-9*v*v + 6*v + 3) / 6, v * v / 2}
		u.Eval(dst, x, 0)
		d1 := make([]float64, 4)
		u.Eval(d1, x, 1)
		for b := range dst {
			if !near(dst[b], want[b], 1e-14) || !near(d1[b], dwant[b], 1e-14) {
				t.Errorf("uniform t=%v b=%d: got %v %v, want %v %v", x, b, dst[b], d1[b], want[b], dwant[b])
			}
		}
	}
}

func randomKnots(r *rand.Rand, clamped bool) []float64 {
	inner := 2 + r.IntN(6)
	var k []float64
	x := r.Float64()*4 - 2
	if clamped {
		k = append(k, x, x, x)
	}
	for i := 0; i < inner; i++ {
		k = append(k, x)
		x += 0.1 + r.Float64()
		if r.IntN(5) == 0 {
			k = append(k, k[len(k)-1]) // a double knot now and then
		}
	}
	k = append(k, x)
	if clamped {
		k = append(k, x, x, x)
	} else {
		for len(k) < 8 {
			x += 0.5
			k = append(k, x)
		}
	}
	return k
}

// TestSplinePartitionAndDerivatives: on random knot vectors, clamped and not, the basis sums to
// 1 over the span and its derivatives to 0, each is non-negative, and each derivative order is
// the central difference of the order below.
func TestSplinePartitionAndDerivatives(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	accepted := 0
	defer func() {
		if accepted < 150 {
			t.Errorf("only %d of 200 knot vectors accepted", accepted)
		}
	}()
	for trial := 0; trial < 200; trial++ {
		k := randomKnots(r, trial%2 == 0)
		s, err := NewSpline("test", k)
		if errors.Is(err, gatejet.ErrParam) {
			continue // an empty span, made by double knots; counted below
		}
		if err != nil {
			t.Fatalf("%v: %v", k, err)
		}
		accepted++
		lo, hi := s.Span()
		nb := s.Len()
		cur, plus, minus := make([]float64, nb), make([]float64, nb), make([]float64, nb)
		for j := 0; j < 10; j++ {
			x := lo + (hi-lo)*r.Float64()
			if j == 0 {
				x = lo
			} else if j == 1 {
				x = hi
			}
			for m := 0; m <= 4; m++ {
				s.Eval(cur, x, m)
				sum := 0.0
				for b, v := range cur {
					sum += v
					if m == 0 && v < -1e-15 {
						t.Fatalf("negative basis %d at %v: %v", b, x, v)
					}
				}
				want := 0.0
				if m == 0 {
					want = 1
				}
				scale := math.Pow(1/minGap(k), float64(m))
				if math.Abs(sum-want) > 1e-12*(1+scale) {
					t.Fatalf("knots %v t=%v m=%d: Σ = %v, want %v", k, x, m, sum, want)
				}
				// Central differences inside an interval only (derivatives jump at knots).
				h := 1e-6
				if j < 2 || nearKnot(k, x, 2*h) {
					continue
				}
				s.Eval(plus, x+h, m)
				s.Eval(minus, x-h, m)
				next := make([]float64, nb)
				s.Eval(next, x, m+1)
				for b := range cur {
					fd := (plus[b] - minus[b]) / (2 * h)
					if math.Abs(fd-next[b]) > 1e-6*(1+scale/minGap(k)) {
						t.Fatalf("knots %v t=%v m=%d b=%d: derivative %v, central difference %v", k, x, m, b, next[b], fd)
					}
				}
			}
		}
	}
}

func minGap(k []float64) float64 {
	g := math.Inf(1)
	for i := 1; i < len(k); i++ {
		if d := k[i] - k[i-1]; d > 0 {
			g = min(g, d)
		}
	}
	return g
}

func nearKnot(k []float64, x, h float64) bool {
	for _, u := range k {
		if math.Abs(u-x) < h {
			return true
		}
	}
	return false
}

func TestSplineOutside(t *testing.T) {
	s, err := NewSpline("test", []float64{0, 1, 2, 3, 4, 5, 6, 7})
	if err != nil {
		t.Fatal(err)
	}
	dst := make([]float64, 4)
	for _, x := range []float64{2.999, 4.001, math.NaN(), math.Inf(1), math.Inf(-1)} {
		if s.In(x) {
			t.Errorf("%v in the span [3, 4]", x)
		}
		s.Eval(dst, x, 0)
		for _, v := range dst {
			if !math.IsNaN(v) {
				t.Errorf("t=%v: %v, want NaN", x, dst)
			}
		}
	}
}

func TestNewSplineErrors(t *testing.T) {
	for _, c := range []struct {
		knots []float64
		kind  error
	}{
		{nil, gatejet.ErrParam},
		{[]float64{0, 1, 2, 3}, gatejet.ErrParam},
		{[]float64{0, 1, 2, 3, 4, 5, 6}, gatejet.ErrParam},
		{[]float64{0, 1, 2, 1, 4, 5, 6, 7}, gatejet.ErrParam},
		{[]float64{0, 1, 2, math.NaN(), 4, 5, 6, 7}, gatejet.ErrNonFinite},
		{[]float64{0, 1, 2, 3, 4, 5, 6, math.Inf(1)}, gatejet.ErrNonFinite},
		{[]float64{0, 0, 0, 0, 0, 1, 1, 1, 1}, gatejet.ErrParam},    // five copies
		{[]float64{0, 1, 2, 3, 3, 3, 3, 5, 6, 7}, gatejet.ErrParam}, // span [3,3]... empty
		{[]float64{1, 1, 1, 1, 1, 1, 1, 1}, gatejet.ErrParam},
		{[]float64{-1e308, -1e308, -1e308, -1e308, 1e308, 1e308, 1e308, 1e308}, gatejet.ErrParam}, // range overflows
	} {
		_, err := NewSpline("test", c.knots)
		var ge *gatejet.Error
		if !errors.Is(err, c.kind) || !errors.As(err, &ge) || ge.Arg != "knots" {
			t.Errorf("%v: got %v, want %v naming knots", c.knots, err, c.kind)
		}
	}
	// The smallest basis: eight knots, four functions, the span one interval.
	s, err := NewSpline("test", []float64{0, 1, 2, 3, 4, 5, 6, 7})
	if err != nil || s.Len() != 4 {
		t.Fatalf("%v %v", s, err)
	}
}

// FuzzSpline: any knots and coordinate give an error from NewSpline or a basis that never
// panics, and that inside its span is non-negative and sums to 1.
func FuzzSpline(f *testing.F) {
	f.Add(0.0, 0.0, 0.0, 0.0, 0.3, 0.5, 1.0, 1.0, 1.0, 0.25, uint8(0))
	f.Add(0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 4.0, uint8(2))
	f.Fuzz(func(t *testing.T, u0, u1, u2, u3, u4, u5, u6, u7, u8, x float64, m uint8) {
		knots := []float64{u0, u1, u2, u3, u4, u5, u6, u7, u8}
		s, err := NewSpline("fuzz", knots)
		if err != nil {
			return
		}
		dst := make([]float64, s.Len())
		s.Eval(dst, x, int(m%6))
		if !s.In(x) || m%6 != 0 {
			return
		}
		sum := 0.0
		for _, v := range dst {
			if v < -1e-12 || math.IsNaN(v) {
				t.Fatalf("knots %v t=%v: basis %v", knots, x, dst)
			}
			sum += v
		}
		if math.Abs(sum-1) > 1e-9 {
			t.Fatalf("knots %v t=%v: Σ = %v", knots, x, sum)
		}
	})
}

// Package basis evaluates the bases of a latent-coordinate decoder, d(t) = Σ_b Φ_b(t)·B_b, and
// their derivatives in t, on plain values: monomials Φ_b(t) = t^b and cubic B-splines on a
// knot vector. It is free of Gorgonia; package graphs wraps it in ops (graphs.MonomialJets,
// graphs.BSplineJets).
package basis

import (
	"math"

	"github.com/gatejet/gatejet"
	"github.com/gatejet/gatejet/internal/check"
)

// Degree is the degree of the B-splines (cubic): a spline on knots u_0 ≤ … ≤ u_{M−1} has
// M − Degree − 1 basis functions.
const Degree = 3

// Monomials is the basis Φ_b(t) = t^b, b < nb = int(m), of one coordinate, in the form of
// internal/tower's Basis (Len, Dim, Eval): the tests' route from coordinates to decoded rows.
type Monomials int

// Len is the number of basis functions.
func (m Monomials) Len() int { return int(m) }

// Dim is the dimension of the coordinate: 1.
func (Monomials) Dim() int { return 1 }

// Eval writes Φ(t[0]) into phi and, where they are not nil, its first and second derivatives
// into dphi and d2phi.
func (m Monomials) Eval(t []float64, phi, dphi, d2phi []float64) {
	Monomial(phi, t[0], 0)
	if dphi != nil {
		Monomial(dphi, t[0], 1)
	}
	if d2phi != nil {
		Monomial(d2phi, t[0], 2)
	}
}

// Monomial writes the m-th derivative of the monomials Φ_b(t) = t^b, b = 0..len(dst)−1, at t
// into dst: b!/(b−m)!·t^(b−m) for b ≥ m, 0 for b < m (so t^0 = 1, also at t = 0). m ≥ 0.
// Non-finite t propagates.
func Monomial(dst []float64, t float64, m int) {
	p := 1.0 // t^(b−m)
	for b := range dst {
		if b < m {
			dst[b] = 0
			continue
		}
		f := 1.0 // b!/(b−m)!
		for i := b - m + 1; i <= b; i++ {
			f *= float64(i)
		}
		dst[b] = f * p
		p *= t
	}
}

// Spline is a cubic B-spline basis on a knot vector u_0 ≤ … ≤ u_{M−1}: Len() = M − 4 basis
// functions B_0..B_{M−5}, each a piecewise cubic supported on [u_b, u_{b+4}], defined by the
// Cox–de Boor recursion. Its span is [u_3, u_{M−4}], where the functions sum to 1. A clamped
// vector (the first four knots equal, and the last four) makes the span the whole knot range;
// any other vector is used as given. A Spline is read-only after New and safe for concurrent
// use.
type Spline struct {
	u []float64
}

// NewSpline checks knots and returns the basis on a copy of them. The knots must be finite and
// non-decreasing, at least 8 of them (four basis functions: fewer have no span), no value
// repeated more than 4 times (a fifth copy would make a basis function that is 0 everywhere),
// with a span of positive length, u_3 < u_{M−4}, and a range u_{M−1} − u_0 that is finite.
// Errors are *gatejet.Error values of kind ErrParam or ErrNonFinite, naming "knots"; op names
// the caller.
func NewSpline(op string, knots []float64) (*Spline, error) {
	if len(knots) < 2*(Degree+1) {
		return nil, check.Errorf(gatejet.ErrParam, op, "knots", "want at least %d knots (four cubic basis functions, the fewest that have a span), got %d", 2*(Degree+1), len(knots))
	}
	run := 0
	for i, u := range knots {
		if math.IsNaN(u) || math.IsInf(u, 0) {
			return nil, check.Errorf(gatejet.ErrNonFinite, op, "knots", "knots[%d] = %v", i, u)
		}
		if i > 0 && u < knots[i-1] {
			return nil, check.Errorf(gatejet.ErrParam, op, "knots", "want non-decreasing knots, got knots[%d] = %v < knots[%d] = %v", i, u, i-1, knots[i-1])
		}
		if i > 0 && u == knots[i-1] {
			run++
		} else {
			run = 1
		}
		if run > Degree+1 {
			return nil, check.Errorf(gatejet.ErrParam, op, "knots", "knot %v repeated more than %d times", u, Degree+1)
		}
	}
	if w := knots[len(knots)-1] - knots[0]; math.IsInf(w, 0) {
		// Differences of knots enter every ratio of the recursion.
		return nil, check.Errorf(gatejet.ErrParam, op, "knots", "the knots' range %v..%v overflows float64", knots[0], knots[len(knots)-1])
	}
	s := &Spline{u: append([]float64(nil), knots...)}
	if lo, hi := s.Span(); !(lo < hi) {
		return nil, check.Errorf(gatejet.ErrParam, op, "knots", "empty span: want knots[%d] < knots[%d], got %v and %v", Degree, len(knots)-Degree-1, lo, hi)
	}
	return s, nil
}

// Len returns the number of basis functions, M − 4.
func (s *Spline) Len() int { return len(s.u) - Degree - 1 }

// Knots returns the knots (do not modify them).
func (s *Spline) Knots() []float64 { return s.u }

// Span returns [u_3, u_{M−4}], the interval on which the basis is evaluated.
func (s *Spline) Span() (lo, hi float64) { return s.u[Degree], s.u[s.Len()] }

// In reports whether t lies in the span. NaN is not in it.
func (s *Spline) In(t float64) bool {
	lo, hi := s.Span()
	return t >= lo && t <= hi
}

// Eval writes the m-th derivative (m ≥ 0) of every basis function at t into dst, which has
// Len() elements. At most four are non-zero: those of the knot interval [u_i, u_{i+1}) that
// holds t (at the span's right end, the last interval of positive length). Inside an
// interval the derivatives are exact: those of the cubic pieces, down to the constant third
// derivative; every derivative of order 4 or more is 0. At a knot a derivative that jumps
// takes its value from the right (at the right end, from the left).
//
// t outside the span is the caller's to reject (In): Eval then writes NaN, as it does for NaN t.
func (s *Spline) Eval(dst []float64, t float64, m int) {
	clear(dst)
	if !s.In(t) {
		for i := range dst {
			dst[i] = math.NaN()
		}
		return
	}
	if m > Degree {
		return
	}
	i := s.interval(t)
	// n[q][j] = B_{i−q+j, q}(t), j = 0..q: the degree-q functions that are non-zero on
	// [u_i, u_{i+1}), by the Cox–de Boor recursion
	// B_{a,q} = (t−u_a)/(u_{a+q}−u_a)·B_{a,q−1} + (u_{a+q+1}−t)/(u_{a+q+1}−u_{a+1})·B_{a+1,q−1}.
	var n [Degree + 1][Degree + 1]float64
	n[0][0] = 1
	for q := 1; q <= Degree; q++ {
		for j := 0; j <= q; j++ {
			a := i - q + j
			v := 0.0
			if j > 0 {
				v += ratio(t-s.u[a], s.u[a+q]-s.u[a]) * n[q-1][j-1]
			}
			if j < q {
				v += ratio(s.u[a+q+1]-t, s.u[a+q+1]-s.u[a+1]) * n[q-1][j]
			}
			n[q][j] = v
		}
	}
	for j := 0; j <= Degree; j++ {
		dst[i-Degree+j] = s.deriv(&n, i, i-Degree+j, Degree, m)
	}
}

// deriv returns the m-th derivative of B_{a,q} at the point whose table n was built on
// interval i, by D B_{a,q} = q·(B_{a,q−1}/(u_{a+q}−u_a) − B_{a+1,q−1}/(u_{a+q+1}−u_{a+1})),
// a term with a zero-length support dropped.
func (s *Spline) deriv(n *[Degree + 1][Degree + 1]float64, i, a, q, m int) float64 {
	if m == 0 {
		j := a - (i - q)
		if j < 0 || j > q {
			return 0
		}
		return n[q][j]
	}
	if q == 0 {
		return 0
	}
	v := 0.0
	if d := s.u[a+q] - s.u[a]; d > 0 {
		v += s.deriv(n, i, a, q-1, m-1) / d
	}
	if d := s.u[a+q+1] - s.u[a+1]; d > 0 {
		v -= s.deriv(n, i, a+1, q-1, m-1) / d
	}
	return float64(q) * v
}

// interval returns i with u_i ≤ t < u_{i+1}, Degree ≤ i < Len(), for t in the span; at the
// right end (and for t in a zero-length last interval) the last interval of positive length.
func (s *Spline) interval(t float64) int {
	lo, hi := Degree, s.Len() // u_lo ≤ t, and i < hi
	// The largest i in [Degree, Len()) with u_i ≤ t and u_i < u_{i+1}.
	for hi-lo > 1 {
		mid := (lo + hi) / 2
		if s.u[mid] <= t {
			lo = mid
		} else {
			hi = mid
		}
	}
	for lo > Degree && !(s.u[lo] < s.u[lo+1]) {
		lo--
	}
	return lo
}

// ratio is x/d with 0/0 = 0: the Cox–de Boor convention for a zero-length support.
func ratio(x, d float64) float64 {
	if d == 0 {
		return 0
	}
	return x / d
}

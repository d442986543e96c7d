package basis

import (
	"math"
	"math/rand/v2"
	"testing"
)

// A reference for the coordinate jet of docs/math.md ("Latent coordinates"): the row
// ẑ_c(p) = Σ_k ζ_k(ℓ)·d_kc(t_k), p = (ℓ_1..ℓ_K, t_1..t_K), with d decoded by cubic B-splines,
// and the closed forms of its first and second channels, Gauss-Newton slab and Hessian-vector
// product for the softmax and the logistic gate, checked against central differences.

type coordRow struct {
	K, P     int
	spline   *Spline
	B        []float64 // [K,nb,P]
	logistic bool
	s        float64   // softmax: inverse temperature
	alpha    []float64 // logistic: ζ_k = σ(α_k ℓ_k + β_k)
	beta     []float64
}

// decode returns d^(m)_k(t_k) [K][P].
func (r *coordRow) decode(t []float64, m int) [][]float64 {
	nb := r.spline.Len()
	phi := make([]float64, nb)
	d := make([][]float64, r.K)
	for k := range d {
		r.spline.Eval(phi, t[k], m)
		d[k] = make([]float64, r.P)
		for c := range d[k] {
			for b, v := range phi {
				d[k][c] += v * r.B[(k*nb+b)*r.P+c]
			}
		}
	}
	return d
}

// gate returns ζ, ∂ζ_k/∂ℓ_a as J[k][a], and for the logistic gate α_k²σ”_k (diagonal).
func (r *coordRow) gate(l []float64) (z []float64, J [][]float64, dd []float64) {
	K := r.K
	z, dd = make([]float64, K), make([]float64, K)
	J = make([][]float64, K)
	for k := range J {
		J[k] = make([]float64, K)
	}
	if r.logistic {
		for k := range z {
			z[k] = 1 / (1 + math.Exp(-(r.alpha[k]*l[k] + r.beta[k])))
			sp := z[k] * (1 - z[k])
			J[k][k] = r.alpha[k] * sp
			dd[k] = r.alpha[k] * r.alpha[k] * sp * (1 - 2*z[k])
		}
		return z, J, dd
	}
	mx, sum := math.Inf(-1), 0.0
	for _, v := range l {
		mx = math.Max(mx, v)
	}
	for k := range z {
		z[k] = math.Exp(r.s * (l[k] - mx))
		sum += z[k]
	}
	for k := range z {
		z[k] /= sum
	}
	for k := range J {
		for a := range J[k] {
			delta := 0.0
			if a == k {
				delta = 1
			}
			J[k][a] = r.s * z[k] * (delta - z[a])
		}
	}
	return z, J, dd
}

func (r *coordRow) value(p []float64) []float64 {
	z, _, _ := r.gate(p[:r.K])
	d0 := r.decode(p[r.K:], 0)
	out := make([]float64, r.P)
	for k := range d0 {
		for c := range out {
			out[c] += z[k] * d0[k][c]
		}
	}
	return out
}

// first is the closed form [2K][P]: rows a < K today's first channel over d0 (softmax
// s·ζ_a·(d0[a] − ẑ), logistic α_a σ'_a d0[a]), rows K+k ζ_k·d1[k].
func (r *coordRow) first(p []float64) [][]float64 {
	K, P := r.K, r.P
	z, J, _ := r.gate(p[:K])
	d0, d1 := r.decode(p[K:], 0), r.decode(p[K:], 1)
	zhat := r.value(p)
	f := make([][]float64, 2*K)
	for a := 0; a < K; a++ {
		f[a], f[K+a] = make([]float64, P), make([]float64, P)
		for c := 0; c < P; c++ {
			if r.logistic {
				f[a][c] = J[a][a] * d0[a][c]
			} else {
				f[a][c] = r.s * z[a] * (d0[a][c] - zhat[c])
			}
			f[K+a][c] = z[a] * d1[a][c]
		}
	}
	return f
}

// second is the closed form [2K][2K][P]: the ℓℓ block today's second channel over d0, the ℓt
// block ∂ζ_k/∂ℓ_a·d1[k] (softmax s·ζ_k(δ_ak − ζ_a)·d1[k], logistic δ_ak·α_k·ζ_k(1−ζ_k)·d1[k]),
// its transpose, and the diagonal tt block ζ_k·d2[k].
func (r *coordRow) second(p []float64) [][][]float64 {
	K, P := r.K, r.P
	z, _, dd := r.gate(p[:K])
	d0, d1, d2 := r.decode(p[K:], 0), r.decode(p[K:], 1), r.decode(p[K:], 2)
	zhat := r.value(p)
	h := make([][][]float64, 2*K)
	for i := range h {
		h[i] = make([][]float64, 2*K)
		for j := range h[i] {
			h[i][j] = make([]float64, P)
		}
	}
	for a := 0; a < K; a++ {
		for b := 0; b < K; b++ {
			delta := 0.0
			if a == b {
				delta = 1
			}
			for c := 0; c < P; c++ {
				var ll, lt float64
				if r.logistic {
					ll = delta * dd[a] * d0[a][c]
					lt = delta * r.alpha[b] * z[b] * (1 - z[b]) * d1[b][c]
				} else {
					ea, eb := d0[a][c]-zhat[c], d0[b][c]-zhat[c]
					ll = r.s * r.s * (delta*z[a]*ea - z[a]*z[b]*(ea+eb))
					lt = r.s * z[b] * (delta - z[a]) * d1[b][c]
				}
				h[a][b][c] = ll
				h[a][K+b][c] = lt
				h[K+b][a][c] = lt
				h[K+a][K+b][c] = delta * z[a] * d2[a][c]
			}
		}
	}
	return h
}

// gaussNewton is the closed form [2K][2K]: ℓℓ today's slab, ℓ_a t_k ⟨first[a], ζ_k d1[k]⟩,
// t_k t_j ζ_k ζ_j ⟨d1[k], d1[j]⟩.
func (r *coordRow) gaussNewton(p []float64) [][]float64 {
	K := r.K
	z, _, _ := r.gate(p[:K])
	d1 := r.decode(p[K:], 1)
	f := r.first(p)
	dot := func(x, y []float64) float64 {
		s := 0.0
		for i := range x {
			s += x[i] * y[i]
		}
		return s
	}
	H := make([][]float64, 2*K)
	for i := range H {
		H[i] = make([]float64, 2*K)
	}
	for a := 0; a < K; a++ {
		for b := 0; b < K; b++ {
			H[a][b] = dot(f[a], f[b])
			H[a][K+b] = z[b] * dot(f[a], d1[b])
			H[K+b][a] = H[a][K+b]
			H[K+a][K+b] = z[a] * z[b] * dot(d1[a], d1[b])
		}
	}
	return H
}

// hvp is the closed form of second·v [2K][P] for v = (vl, vt) without building second:
// softmax, rows a < K: s²ζ_a(e[a]·u_a − w) + s·ζ_a·(vt_a·d1[a] − m), with u = vl − ⟨ζ, vl⟩,
// w = Σ_b ζ_b u_b e[b], m = Σ_k ζ_k vt_k d1[k]; rows K+k: s·ζ_k·u_k·d1[k] + ζ_k·vt_k·d2[k].
// Logistic, rows a: α_a²σ”_a vl_a d0[a] + α_a σ'_a vt_a d1[a]; rows K+k: α_k σ'_k vl_k d1[k] +
// ζ_k vt_k d2[k].
func (r *coordRow) hvp(p, v []float64) [][]float64 {
	K, P := r.K, r.P
	z, J, dd := r.gate(p[:K])
	d0, d1, d2 := r.decode(p[K:], 0), r.decode(p[K:], 1), r.decode(p[K:], 2)
	zhat := r.value(p)
	vl, vt := v[:K], v[K:]
	out := make([][]float64, 2*K)
	for i := range out {
		out[i] = make([]float64, P)
	}
	if r.logistic {
		for a := 0; a < K; a++ {
			for c := 0; c < P; c++ {
				out[a][c] = dd[a]*vl[a]*d0[a][c] + J[a][a]*vt[a]*d1[a][c]
				out[K+a][c] = J[a][a]*vl[a]*d1[a][c] + z[a]*vt[a]*d2[a][c]
			}
		}
		return out
	}
	vbar := 0.0
	for k := range z {
		vbar += z[k] * vl[k]
	}
	for c := 0; c < P; c++ {
		w, m := 0.0, 0.0
		for b := 0; b < K; b++ {
			w += z[b] * (vl[b] - vbar) * (d0[b][c] - zhat[c])
			m += z[b] * vt[b] * d1[b][c]
		}
		for a := 0; a < K; a++ {
			u := vl[a] - vbar
			out[a][c] = r.s*r.s*z[a]*((d0[a][c]-zhat[c])*u-w) + r.s*z[a]*(vt[a]*d1[a][c]-m)
			out[K+a][c] = r.s*z[a]*u*d1[a][c] + z[a]*vt[a]*d2[a][c]
		}
	}
	return out
}

// central returns the central difference of f along coordinate i (or direction dir when i < 0).
func central(p []float64, i int, dir []float64, h float64, f func([]float64) []float64) []float64 {
	q := append([]float64(nil), p...)
	move := func(s float64) []float64 {
		copy(q, p)
		if i >= 0 {
			q[i] += s
		} else {
			for j := range q {
				q[j] += s * dir[j]
			}
		}
		return f(q)
	}
	plus, minus := move(h), move(-h)
	out := make([]float64, len(plus))
	for j := range out {
		out[j] = (plus[j] - minus[j]) / (2 * h)
	}
	return out
}

func flat(x [][]float64) []float64 {
	var out []float64
	for _, r := range x {
		out = append(out, r...)
	}
	return out
}

func TestCoordinateJetClosedForms(t *testing.T) {
	knots := []float64{0, 0, 0, 0, 0.3, 0.55, 1, 1, 1, 1}
	sp, err := NewSpline("test", knots)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(3, 4))
	for trial := 0; trial < 8; trial++ {
		K, P := 1+trial%4, 1+trial%3
		r := &coordRow{K: K, P: P, spline: sp, logistic: trial%2 == 1, s: 0.3 + 2*rng.Float64()}
		r.B = make([]float64, K*sp.Len()*P)
		for i := range r.B {
			r.B[i] = rng.NormFloat64()
		}
		for k := 0; k < K; k++ {
			r.alpha = append(r.alpha, 0.5+rng.Float64())
			r.beta = append(r.beta, rng.NormFloat64()*0.5)
		}
		p := make([]float64, 2*K)
		for k := 0; k < K; k++ {
			p[k] = rng.NormFloat64()
			for {
				p[K+k] = 0.05 + 0.9*rng.Float64()
				if math.Abs(p[K+k]-0.3) > 0.01 && math.Abs(p[K+k]-0.55) > 0.01 {
					break
				}
			}
		}
		const h, tol = 1e-6, 1e-7
		check := func(what string, got, want []float64) {
			t.Helper()
			for j := range got {
				if math.Abs(got[j]-want[j]) > tol*(1+math.Abs(want[j])) {
					t.Fatalf("trial %d (logistic=%v K=%d P=%d) %s[%d]: closed form %v, central difference %v", trial, r.logistic, K, P, what, j, got[j], want[j])
				}
			}
		}
		f := r.first(p)
		sec := r.second(p)
		for i := 0; i < 2*K; i++ {
			check("first", f[i], central(p, i, nil, h, r.value))
			check("second", flat(sec[i]), central(p, i, nil, h, func(q []float64) []float64 { return flat(r.first(q)) }))
		}
		// Gauss-Newton: the closed-form blocks against J·Jᵀ of the central-difference Jacobian.
		H := r.gaussNewton(p)
		jac := make([][]float64, 2*K)
		for i := range jac {
			jac[i] = central(p, i, nil, h, r.value)
		}
		for i := range H {
			for j := range H[i] {
				want := 0.0
				for c := 0; c < P; c++ {
					want += jac[i][c] * jac[j][c]
				}
				check("gaussNewton", []float64{H[i][j]}, []float64{want})
			}
		}
		v := make([]float64, 2*K)
		for i := range v {
			v[i] = rng.NormFloat64()
		}
		check("hvp", flat(r.hvp(p, v)), central(p, -1, v, h, func(q []float64) []float64 { return flat(r.first(q)) }))
	}
}

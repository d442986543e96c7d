package main

import (
	"fmt"
	"math"
	"runtime"
	"sync"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/lapack/lapack64"

	"github.com/gatejet/gatejet/internal/basis"
	"github.com/gatejet/gatejet/softmaxjet"
)

// model is the reconstruction's constants: K atoms, each decoded by L cubic B-splines on
// [0, 1] into P pixels, at inverse temperature s, with the codes' prior precision λ and the
// pixel noise σ.
type model struct {
	K, L, P  int
	knots    []float64
	spline   *basis.Spline
	s        float64 // inverse temperature 1/τ
	lambda   float64 // prior precision λ of every code
	sigma2   float64 // noise variance σ²
	tCentre  float64 // prior mean of the coordinates (the middle of the span)
	gate     softmaxjet.Softmax[float64]
	parallel int // row workers of the per-row solves
}

// newModel returns the model for K atoms, L basis functions on clamped uniform knots over
// [0, 1], P pixels, temperature τ, prior precision λ and noise σ.
func newModel(K, L, P int, tau, lambda, sigma float64) (*model, error) {
	knots := make([]float64, L+basis.Degree+1)
	inner := L - basis.Degree // knot intervals
	for i := range knots {
		j := min(max(i-basis.Degree, 0), inner)
		knots[i] = float64(j) / float64(inner)
	}
	sp, err := basis.NewSpline(op, knots)
	if err != nil {
		return nil, err
	}
	return &model{
		K: K, L: L, P: P, knots: knots, spline: sp,
		s: 1 / tau, lambda: lambda, sigma2: sigma * sigma, tCentre: 0.5,
		gate:     softmaxjet.Softmax[float64]{InvTau: 1 / tau},
		parallel: runtime.GOMAXPROCS(0),
	}, nil
}

// ridge is σ²λ: the prior's weight in the objective ½‖ẑ − x‖² + ½σ²λ‖p − p₀‖².
func (m *model) ridge() float64 { return m.sigma2 * m.lambda }

// codes are the per-row primaries p = (ℓ, t): logits l [N,K] and coordinates t [N,K] in [0, 1].
type codes struct {
	n    int
	l, t []float64
}

// newCodes returns n rows of codes: logits drawn from N(0, 0.1²), coordinates ½ (-init plain;
// initCodes overwrites them for -init match).
func newCodes(n, K int, rng interface{ NormFloat64() float64 }) codes {
	c := codes{n: n, l: make([]float64, n*K), t: make([]float64, n*K)}
	for i := range c.l {
		c.l[i] = 0.1 * rng.NormFloat64()
		c.t[i] = 0.5
	}
	return c
}

func (c codes) clone() codes {
	return codes{n: c.n, l: append([]float64(nil), c.l...), t: append([]float64(nil), c.t...)}
}

// clampT keeps the coordinates in the spline's span [0, 1] (the decoder is not defined outside
// it); a step that leaves the span stops at its end.
func clampT(t []float64) {
	for i, v := range t {
		t[i] = min(max(v, 0), 1)
	}
}

// work is the buffers of one fit over n rows.
type work struct {
	n             int
	phi0, phi1    []float64 // [n,K,L] basis values and first derivatives
	d0, d1        []float64 // [n,K,P] decoded rows and their derivatives in t
	z             []float64 // [n,P] reconstruction
	first         []float64 // [n,2K,P] coordinate jet, first channel
	gn            []float64 // [n,2K,2K] Gauss-Newton slabs
	trial         codes
	obj, trialObj []float64 // per-row objective ½‖r‖² + ½σ²λ‖p − p₀‖²
	sse, trialSSE []float64 // per-row ‖r‖²
	mu            []float64 // per-row Levenberg–Marquardt damping
	lmFirst       []float64 // [n,K,P] first channel over the logits (softmaxjet)
	solver        []*rowSolver
}

func newWork(m *model, n int) *work {
	K, L, P := m.K, m.L, m.P
	w := &work{
		n:    n,
		phi0: make([]float64, n*K*L), phi1: make([]float64, n*K*L),
		d0: make([]float64, n*K*P), d1: make([]float64, n*K*P),
		z:     make([]float64, n*P),
		first: make([]float64, n*2*K*P), gn: make([]float64, n*4*K*K),
		trial: codes{n: n, l: make([]float64, n*K), t: make([]float64, n*K)},
		obj:   make([]float64, n), trialObj: make([]float64, n),
		sse: make([]float64, n), trialSSE: make([]float64, n),
		mu: make([]float64, n),
	}
	for i := range w.mu {
		w.mu[i] = 1e-3
	}
	for range m.parallel {
		w.solver = append(w.solver, newRowSolver(2*K))
	}
	return w
}

// decode writes the decoded rows d0 = d(t) [n,K,P], and d1 = ∂d/∂t unless withD1 is false,
// from the coordinates t [n,K] and the coefficients B [K,L,P].
func (m *model) decode(w *work, t, B []float64, withD1 bool) {
	K, L, P := m.K, m.L, m.P
	parallelRows(w.n, m.parallel, func(_, lo, hi int) {
		for i := lo * K; i < hi*K; i++ {
			m.spline.Eval(w.phi0[i*L:(i+1)*L], t[i], 0)
			if withD1 {
				m.spline.Eval(w.phi1[i*L:(i+1)*L], t[i], 1)
			}
		}
		n := hi - lo
		basis.Decode(w.d0[lo*K*P:hi*K*P], w.phi0[lo*K*L:hi*K*L], B, n, K, L, P)
		if withD1 {
			basis.Decode(w.d1[lo*K*P:hi*K*P], w.phi1[lo*K*L:hi*K*L], B, n, K, L, P)
		}
	})
}

// objectives writes each row's squared error ‖ẑ − x‖² into sse and its objective
// ½‖ẑ − x‖² + ½σ²λ(‖ℓ‖² + ‖t − ½‖²) into obj, for codes c whose reconstruction is z [n,P].
func (m *model) objectives(sse, obj, x, z []float64, c codes) {
	P, rho := m.P, m.ridge()
	for r := 0; r < c.n; r++ {
		var e float64
		xr, zr := x[r*P:(r+1)*P], z[r*P:(r+1)*P]
		for j, v := range zr {
			d := v - xr[j]
			e += d * d
		}
		sse[r] = e
		obj[r] = 0.5*e + 0.5*rho*m.priorSq(c, r)
	}
}

// priorSq is ‖p − p₀‖² of row r: the logits' squares and the coordinates' distances from the
// middle of the span.
func (m *model) priorSq(c codes, r int) float64 {
	K := m.K
	var s float64
	for k := 0; k < K; k++ {
		l, t := c.l[r*K+k], c.t[r*K+k]-m.tCentre
		s += l*l + t*t
	}
	return s
}

// jets writes the coordinate jet's first channel w.first [n,2K,P] (row a < K: ∂ẑ/∂ℓ_a; row
// K+k: ∂ẑ/∂t_k) and the Gauss-Newton slabs w.gn [n,2K,2K] = first·firstᵀ over the pixels, at
// codes c with w.d0 and w.d1 decoded for them (softmaxjet.CoordFirst, CoordGaussNewton).
func (m *model) jets(w *work, c codes) error {
	sh := softmaxjet.Shape{N: c.n, K: m.K, P: m.P}
	if err := softmaxjet.CoordFirst[float64](m.gate, w.first, c.l, w.d0, w.d1, sh); err != nil {
		return err
	}
	return softmaxjet.CoordGaussNewton[float64](m.gate, w.gn, c.l, w.d0, w.d1, sh)
}

// rowSolver factors and solves one row's 2K×2K symmetric positive definite system with
// LAPACK's Cholesky routines (gonum's lapack64: no condition estimate, which the step does
// not need).
type rowSolver struct {
	D   int
	a   []float64 // D×D, upper triangle used; the factor U after factor
	b   []float64 // right-hand side, then the solution
	tri blas64.Triangular
	sym blas64.Symmetric
	rhs blas64.General
}

func newRowSolver(D int) *rowSolver {
	rs := &rowSolver{D: D, a: make([]float64, D*D), b: make([]float64, D)}
	rs.sym = blas64.Symmetric{Uplo: blas.Upper, N: D, Stride: D, Data: rs.a}
	rs.rhs = blas64.General{Rows: D, Cols: 1, Stride: 1, Data: rs.b}
	return rs
}

// factor computes A = UᵀU, reporting false when A is not positive definite in float64.
func (rs *rowSolver) factor() bool {
	var ok bool
	rs.tri, ok = lapack64.Potrf(rs.sym)
	return ok
}

// solve overwrites b with A⁻¹b.
func (rs *rowSolver) solve() { lapack64.Potrs(rs.tri, rs.rhs) }

// logDet is log det A from the factor.
func (rs *rowSolver) logDet() float64 {
	var s float64
	for i := 0; i < rs.D; i++ {
		s += math.Log(rs.a[i*rs.D+i])
	}
	return 2 * s
}

// parallelRows runs fn over [0, n) split into one contiguous range per worker.
func parallelRows(n, workers int, fn func(worker, lo, hi int)) {
	workers = max(1, min(workers, n))
	if workers == 1 {
		fn(0, 0, n)
		return
	}
	var wg sync.WaitGroup
	for i := 0; i < workers; i++ {
		lo, hi := i*n/workers, (i+1)*n/workers
		wg.Add(1)
		go func() {
			defer wg.Done()
			fn(i, lo, hi)
		}()
	}
	wg.Wait()
}

// lmStep takes one damped Gauss-Newton (Levenberg–Marquardt) step on every row's codes with the
// decoder B fixed. Per row it solves
//
//	(H + (σ²λ + μ)·I)·δ = −(Fᵀ·r + σ²λ·(p − p₀)),   H = F·Fᵀ, r = ẑ − x,
//
// with F the coordinate jet's first channel [2K,P], keeps p + δ (its coordinates clamped to the
// span) when it lowers the row's objective, dividing the damping μ by 3, and otherwise keeps p
// and multiplies μ by 4. It returns the rows' summed squared error after the step.
func (m *model) lmStep(w *work, x []float64, c codes, B []float64) (float64, error) {
	K, P, D, rho := m.K, m.P, 2*m.K, m.ridge()
	sh := softmaxjet.Shape{N: c.n, K: K, P: P}
	m.decode(w, c.t, B, true)
	if err := m.gate.Value(w.z, c.l, w.d0, sh); err != nil {
		return 0, err
	}
	m.objectives(w.sse, w.obj, x, w.z, c)
	if err := m.jets(w, c); err != nil {
		return 0, err
	}
	var failed error
	var mu sync.Mutex
	parallelRows(c.n, m.parallel, func(worker, lo, hi int) {
		rs := w.solver[worker]
		r := make([]float64, P)
		for n := lo; n < hi; n++ {
			zr, xr := w.z[n*P:(n+1)*P], x[n*P:(n+1)*P]
			for j := range r {
				r[j] = zr[j] - xr[j]
			}
			f, h := w.first[n*D*P:(n+1)*D*P], w.gn[n*D*D:(n+1)*D*D]
			for a := 0; a < D; a++ {
				var g float64
				for j, v := range f[a*P : (a+1)*P] {
					g += v * r[j]
				}
				p := c.l[n*K+a%K]
				if a >= K {
					p = c.t[n*K+a-K] - m.tCentre
				}
				rs.b[a] = -(g + rho*p)
				copy(rs.a[a*D+a:(a+1)*D], h[a*D+a:(a+1)*D])
				rs.a[a*D+a] += rho + w.mu[n]
			}
			ok := rs.factor()
			if ok {
				rs.solve()
			}
			for k := 0; k < K; k++ {
				dl, dt := 0.0, 0.0
				if ok {
					dl, dt = rs.b[k], rs.b[K+k]
				}
				w.trial.l[n*K+k] = c.l[n*K+k] + dl
				w.trial.t[n*K+k] = min(max(c.t[n*K+k]+dt, 0), 1)
			}
			if !ok {
				// H + (σ²λ + μ)I is positive definite in exact arithmetic; a failed factorisation
				// means rounding won: more damping.
				w.mu[n] = min(w.mu[n]*4, 1e12)
				if math.IsNaN(h[0]) {
					mu.Lock()
					failed = fmt.Errorf("row %d: the Gauss-Newton slab is NaN", n)
					mu.Unlock()
				}
			}
		}
	})
	if failed != nil {
		return 0, failed
	}
	m.decode(w, w.trial.t, B, false)
	if err := m.gate.Value(w.z, w.trial.l, w.d0, sh); err != nil {
		return 0, err
	}
	m.objectives(w.trialSSE, w.trialObj, x, w.z, w.trial)
	var sse float64
	for n := 0; n < c.n; n++ {
		if w.trialObj[n] < w.obj[n] {
			copy(c.l[n*K:(n+1)*K], w.trial.l[n*K:(n+1)*K])
			copy(c.t[n*K:(n+1)*K], w.trial.t[n*K:(n+1)*K])
			w.obj[n], w.sse[n] = w.trialObj[n], w.trialSSE[n]
			w.mu[n] = max(w.mu[n]/3, 1e-12)
		} else {
			w.mu[n] = min(w.mu[n]*4, 1e12)
		}
		sse += w.sse[n]
	}
	return sse, nil
}

// evidence is the Laplace approximation of log p(x | τ, λ, σ, B) per row, averaged over the
// rows, with the codes c at their fitted values:
//
//	log Z = −‖r‖²/2σ² − (P/2)·log 2πσ² − ½λ‖p − p₀‖² + K·log λ − ½·log det(H/σ² + λI)
//
// (the prior N(p₀, I/λ) over the 2K codes, and the Gauss-Newton curvature H = F·Fᵀ for the
// Hessian of the fit). It also returns the mean of ½·log det(H/σ² + λI), the Occam term.
func (m *model) evidence(w *work, x []float64, c codes, B []float64) (logZ, occam float64, err error) {
	K, P, D := m.K, m.P, 2*m.K
	sh := softmaxjet.Shape{N: c.n, K: K, P: P}
	m.decode(w, c.t, B, true)
	if err := m.gate.Value(w.z, c.l, w.d0, sh); err != nil {
		return 0, 0, err
	}
	m.objectives(w.sse, w.obj, x, w.z, c)
	if err := m.jets(w, c); err != nil {
		return 0, 0, err
	}
	logdet := make([]float64, c.n)
	bad := make([]bool, c.n)
	parallelRows(c.n, m.parallel, func(worker, lo, hi int) {
		rs := w.solver[worker]
		for n := lo; n < hi; n++ {
			h := w.gn[n*D*D : (n+1)*D*D]
			for a := 0; a < D; a++ {
				for b := a; b < D; b++ {
					rs.a[a*D+b] = h[a*D+b] / m.sigma2
				}
				rs.a[a*D+a] += m.lambda
			}
			if !rs.factor() {
				bad[n] = true
				continue
			}
			logdet[n] = rs.logDet()
		}
	})
	constant := -0.5*float64(P)*math.Log(2*math.Pi*m.sigma2) + float64(K)*math.Log(m.lambda)
	for n := 0; n < c.n; n++ {
		if bad[n] {
			return 0, 0, fmt.Errorf("row %d: H/σ² + λI is not positive definite in float64 (λ = %g too small against the rounding of H)", n, m.lambda)
		}
		logZ += -w.sse[n]/(2*m.sigma2) - 0.5*m.lambda*m.priorSq(c, n) + constant - 0.5*logdet[n]
		occam += 0.5 * logdet[n]
	}
	return logZ / float64(c.n), occam / float64(c.n), nil
}

// initGrid is the number of coordinates at which initCodes tries each atom.
const initGrid = 9

// initCodes starts every row's codes from its best match per atom: t_k the coordinate on a
// grid of initGrid points in [0, 1] at which atom k's decoded image is nearest the row, and the
// logits the atoms' standardised distances at those points, negated, so that the gate
// starts on the atoms that match. Both ways of fitting start from these codes.
func (m *model) initCodes(x []float64, c codes, B []float64) {
	K, L, P := m.K, m.L, m.P
	// The atoms' images at the grid points: [K, initGrid, P].
	phi := make([]float64, initGrid*K*L)
	for j := 0; j < initGrid; j++ {
		for k := 0; k < K; k++ {
			m.spline.Eval(phi[(j*K+k)*L:(j*K+k+1)*L], float64(j)/(initGrid-1), 0)
		}
	}
	atoms := make([]float64, initGrid*K*P) // [initGrid, K, P]
	basis.Decode(atoms, phi, B, initGrid, K, L, P)
	parallelRows(c.n, m.parallel, func(_, lo, hi int) {
		dist := make([]float64, K)
		for r := lo; r < hi; r++ {
			xr := x[r*P : (r+1)*P]
			for k := 0; k < K; k++ {
				best := math.Inf(1)
				for j := 0; j < initGrid; j++ {
					var e float64
					for i, v := range atoms[(j*K+k)*P : (j*K+k+1)*P] {
						d := v - xr[i]
						e += d * d
					}
					if e < best {
						best, c.t[r*K+k] = e, float64(j)/(initGrid-1)
					}
				}
				dist[k] = best
			}
			var mean, sq float64
			for _, d := range dist {
				mean += d / float64(K)
			}
			for _, d := range dist {
				sq += (d - mean) * (d - mean) / float64(K)
			}
			sd := math.Sqrt(sq)
			for k, d := range dist {
				l := 0.0
				if sd > 0 {
					l = -(d - mean) / sd
				}
				c.l[r*K+k] = l
			}
		}
	})
}

package softmaxjet

import "github.com/gatejet/gatejet"

// The vector-Jacobian products below give, for an upstream gradient g on a channel, the
// gradients of the scalar ⟨g, channel⟩ with respect to the logits and the decoded values.
// Outputs are overwritten, never accumulated; a nil output is skipped.
//
// Each one follows the same pattern. With the gate ζ treated as free variables, the scalar is
// a function L(ζ, D); its gradient in D is explicit, and its gradient in the logits is the
// softmax pull-back of Z_k = ∂L/∂ζ_k:
//
//	dl_d = s·ζ_d·( Z_d − Σ_k ζ_k Z_k ).
//
// Terms of Z that do not depend on k cancel in that centring, which is why D can be replaced
// by the centred e wherever it is contracted with something that does not depend on k.

// pullBack turns Z (in place) into the logit gradient dl = f·ζ⊙(Z − ⟨ζ,Z⟩) and stores it.
func pullBack[T gatejet.Float](dl []T, z, Z []float64, f float64) {
	zbar := 0.0
	for k := range Z {
		zbar += z[k] * Z[k]
	}
	for k := range Z {
		dl[k] = T(f * z[k] * (Z[k] - zbar))
	}
}

// ValueVJP writes the gradients of ⟨g, Value⟩ for g [N,P]: dLogits [N,K] and dDecoded
// [N,K,P] (either may be nil):
//
//	dl_a = s·ζ_a·Σ_c g_c e[a][c],   dD[k][c] = ζ_k g_c.
func (sm Softmax[T]) ValueVJP(dLogits, dDecoded, logits, decoded, g []T, sh Shape) error {
	return vjp("softmaxjet.Softmax.ValueVJP", sh, softmaxParam(sm.InvTau), softmaxRows[T, valueVJPRows[T]]{}, sh.K*sh.P, dLogits, dDecoded, logits, decoded, g, sh.ValueLen())
}

type valueVJPRows[T gatejet.Float] struct{}

func (valueVJPRows[T]) carve(c *carver, K, P int) (Z []float64) {
	return c.f64(K, 1)
}

func (k valueVJPRows[T]) count(c carver, K, P int) carver {
	k.carve(&c, K, P)
	return c
}

func (k valueVJPRows[T]) row(j *job[T], r *rowSoftmax, n int) {
	K, P, z, e := j.K, j.P, r.z, r.e
	gn := j.g[n*P : n*P+P]
	if j.o1 != nil {
		out := j.o1[n*K*P : (n+1)*K*P]
		for k := 0; k < K; k++ {
			ok := out[k*P : k*P+P]
			gk := gn[:len(ok)]
			for c := range ok {
				ok[c] = T(z[k] * float64(gk[c]))
			}
		}
	}
	if j.o0 != nil {
		cut := r.rest
		Z := k.carve(&cut, K, P)
		for a := 0; a < K; a++ {
			ea := e[a*P : a*P+P]
			ga := gn[:len(ea)]
			acc := 0.0
			for c := range ea {
				acc += float64(ga[c]) * ea[c]
			}
			Z[a] = acc
		}
		pullBack(j.o0[n*K:n*K+K], z, Z, j.s)
	}
}

// FirstVJP writes the gradients of ⟨G, First⟩ for G [N,K,P]: dLogits [N,K] and dDecoded
// [N,K,P] (either may be nil). With γ_c = Σ_a ζ_a G[a][c]:
//
//	dD[k][c] = s·ζ_k·(G[k][c] − γ_c),   dl = s²·ζ⊙(Z − ⟨ζ,Z⟩),  Z_k = Σ_c e[k][c]·(G[k][c] − γ_c).
//
// This is the second channel contracted with G, at O(K·P) per row, never materialised.
func (sm Softmax[T]) FirstVJP(dLogits, dDecoded, logits, decoded, g []T, sh Shape) error {
	return vjp("softmaxjet.Softmax.FirstVJP", sh, softmaxParam(sm.InvTau), softmaxRows[T, firstVJPRows[T]]{}, sh.K*sh.P, dLogits, dDecoded, logits, decoded, g, sh.FirstLen())
}

type firstVJPRows[T gatejet.Float] struct{}

func (firstVJPRows[T]) carve(c *carver, K, P int) (Z, gamma, G []float64) {
	return c.f64(K, 1), c.f64(P, 1), c.f64(K, P)
}

func (k firstVJPRows[T]) count(c carver, K, P int) carver {
	k.carve(&c, K, P)
	return c
}

func (k firstVJPRows[T]) row(j *job[T], r *rowSoftmax, n int) {
	K, P := j.K, j.P
	cut := r.rest
	Z, gamma, G := k.carve(&cut, K, P)
	for i, v := range j.g[n*K*P : (n+1)*K*P] {
		G[i] = float64(v)
	}
	firstVJPRow(j.o0, j.o1, n, r.z, r.e, G, Z, gamma, j.s, K, P)
}

// firstVJPRow is FirstVJP on one row whose upstream gradient G is already float64; it is
// shared with GaussNewtonVJP, whose upstream reaches first through (S+Sᵀ)·first.
func firstVJPRow[T gatejet.Float](dLogits, dDecoded []T, n int, z, e, G, Z, gamma []float64, s float64, K, P int) {
	gamma = gamma[:P]
	gateSum(gamma, z, G, K)
	// G ← G − γ (per column), then dD = s·ζ_k·G and Z_k = Σ_c e[k][c]·G[k][c].
	centredDots(Z, G, e, nil, gamma, K)
	if dDecoded != nil {
		gateScaled(dDecoded[n*K*P:(n+1)*K*P], z, G, s, P)
	}
	if dLogits != nil {
		pullBack(dLogits[n*K:n*K+K], z, Z, s*s)
	}
}

// gateSum writes m_c = Σ_a ζ_a X[a][c] (len(m) = P), the terms added in atom order.
func gateSum(m, z, X []float64, K int) {
	P := len(m)
	for c := range m {
		m[c] = 0
	}
	for a := 0; a < K; a++ {
		xa := X[a*P : a*P+P]
		xa = xa[:len(m)]
		for c := range m {
			m[c] += z[a] * xa[c]
		}
	}
}

// centredDots subtracts m from every row of X (X[k][c] −= m_c, len(m) = P) and writes
// Z_k = Σ_c e[k][c]·X[k][c], less Σ_c Y[k][c] where Y is not nil, the terms added in order.
func centredDots(Z, X, e, Y, m []float64, K int) {
	P := len(m)
	for k := 0; k < K; k++ {
		xk := X[k*P : k*P+P]
		xk = xk[:len(m)]
		ek := e[k*P : k*P+P]
		ek = ek[:len(m)]
		acc := 0.0
		if Y == nil {
			for c := range m {
				xk[c] -= m[c]
				acc += ek[c] * xk[c]
			}
		} else {
			yk := Y[k*P : k*P+P]
			yk = yk[:len(m)]
			for c := range m {
				xk[c] -= m[c]
				acc += ek[c]*xk[c] - yk[c]
			}
		}
		Z[k] = acc
	}
}

// gateScaled writes out[k][c] = f·ζ_k·X[k][c] ((f·ζ_k) first) for the K rows of P of out.
func gateScaled[T gatejet.Float](out []T, z, X []float64, f float64, P int) {
	for k, zk := range z {
		fk := f * zk
		ok := out[k*P : k*P+P]
		xk := X[k*P : k*P+P]
		xk = xk[:len(ok)]
		for c := range ok {
			ok[c] = T(fk * xk[c])
		}
	}
}

// SecondVJP writes the gradients of ⟨G, Second⟩ for G [N,K,K,P]: dLogits [N,K] and dDecoded
// [N,K,P] (either may be nil). It is the third-order contraction of the jet, done at
// O(K²·P) per row (one pass over G) with nothing of size K³:
//
//	T[a][c] = Σ_b (G[a][b][c] + G[b][a][c])·ζ_b,   M[a][c] = G[a][a][c] − T[a][c],   μ_c = Σ_a ζ_a M[a][c],
//	Y[k][c] = Σ_a ζ_a e[a][c]·(G[a][k][c] + G[k][a][c]),
//	dD[k][c] = s²·ζ_k·(M[k][c] − μ_c),
//	dl = s³·ζ⊙(Z − ⟨ζ,Z⟩),   Z_k = Σ_c ( e[k][c]·(M[k][c] − μ_c) − Y[k][c] ).
func (sm Softmax[T]) SecondVJP(dLogits, dDecoded, logits, decoded, g []T, sh Shape) error {
	return vjp("softmaxjet.Softmax.SecondVJP", sh, softmaxParam(sm.InvTau), softmaxRows[T, secondVJPRows[T]]{}, 2*sh.K*sh.K*sh.P, dLogits, dDecoded, logits, decoded, g, sh.SecondLen())
}

type secondVJPRows[T gatejet.Float] struct{}

func (secondVJPRows[T]) carve(c *carver, K, P int) (M, Y, mu, Z []float64) {
	return c.f64(K, P), c.f64(K, P), c.f64(P, 1), c.f64(K, 1)
}

func (k secondVJPRows[T]) count(c carver, K, P int) carver {
	k.carve(&c, K, P)
	return c
}

func (k secondVJPRows[T]) row(j *job[T], r *rowSoftmax, n int) {
	K, P := j.K, j.P
	cut := r.rest
	M, Y, mu, Z := k.carve(&cut, K, P)
	secondVJPRow(j.o0, j.o1, n, j.g[n*K*K*P:(n+1)*K*K*P], r.z, r.e, M, Y, mu, Z, j.s, K, P)
}

func secondVJPRow[T gatejet.Float](dLogits, dDecoded []T, n int, gn []T, z, e, M, Y, mu, Z []float64, s float64, K, P int) {
	secondVJPSums(M, Y, gn, z, e, K, P)
	mu = mu[:P]
	gateSum(mu, z, M, K)
	s2 := s * s
	centredDots(Z, M, e, Y, mu, K)
	if dDecoded != nil {
		gateScaled(dDecoded[n*K*P:(n+1)*K*P], z, M, s2, P)
	}
	if dLogits != nil {
		pullBack(dLogits[n*K:n*K+K], z, Z, s2*s)
	}
}

// secondVJPSums fills M[a][c] = G[a][a][c] − T[a][c] and Y (see SecondVJP) in one pass over
// the row's G. It is a function of its own so that its loop keeps its slices in registers.
func secondVJPSums[T gatejet.Float](M, Y []float64, gn []T, z, e []float64, K, P int) {
	for i := range M {
		M[i] = 0 // holds −T until the diagonal is added
		Y[i] = 0
	}
	// One pass over G: G[a][b][c] feeds T[a] (weight ζ_b), T[b] (weight ζ_a),
	// Y[b] (weight ζ_a e[a][c]) and Y[a] (weight ζ_b e[b][c]).
	for a := 0; a < K; a++ {
		za := z[a]
		ea := e[a*P : a*P+P]
		Ma := M[a*P : a*P+P]
		Ya := Y[a*P : a*P+P]
		for bb := 0; bb < K; bb++ {
			zb := z[bb]
			gab := gn[(a*K+bb)*P : (a*K+bb)*P+P]
			gab = gab[:len(ea)]
			eb := e[bb*P : bb*P+P]
			eb = eb[:len(ea)]
			Mb := M[bb*P : bb*P+P]
			Mb = Mb[:len(ea)]
			Yb := Y[bb*P : bb*P+P]
			Yb = Yb[:len(ea)]
			Ma, Ya := Ma[:len(ea)], Ya[:len(ea)]
			for c := range ea {
				g := float64(gab[c])
				Ma[c] -= zb * g
				Mb[c] -= za * g
				Yb[c] += za * ea[c] * g
				Ya[c] += zb * eb[c] * g
			}
		}
	}
	for a := 0; a < K; a++ {
		gaa := gn[(a*K+a)*P : (a*K+a)*P+P]
		Ma := M[a*P : a*P+P]
		gaa = gaa[:len(Ma)]
		for c := range Ma {
			Ma[c] += float64(gaa[c])
		}
	}
}

// HVPVJP writes the gradients of ⟨G, HVP(v)⟩ for G [N,K,P] with respect to the logits, the
// decoded values and the direction v (each output may be nil), at O(K·P) per row. With
// u = v − ⟨ζ,v⟩, w_c = Σ_b ζ_b u_b e[b][c], A_a = Σ_c G[a][c] e[a][c], Ā = ⟨ζ,A⟩,
// γ_c = Σ_a ζ_a G[a][c], β_c = Σ_a ζ_a u_a G[a][c] and Γ_k = Σ_c γ_c e[k][c]:
//
//	dv_k = s²·ζ_k·(A_k − Ā − Γ_k),
//	dD[k][c] = s²·ζ_k·( u_k·(G[k][c] − γ_c) − β_c ),
//	dl = s³·ζ⊙(Z − ⟨ζ,Z⟩),   Z_k = u_k·(A_k − Ā − Γ_k) − Σ_c e[k][c] β_c − Σ_c G[k][c] w_c.
func (sm Softmax[T]) HVPVJP(dLogits, dDecoded, dV, logits, decoded, v, g []T, sh Shape) error {
	return hvpVJP("softmaxjet.Softmax.HVPVJP", sh, softmaxParam(sm.InvTau), softmaxRows[T, hvpVJPRows[T]]{}, 3*sh.K*sh.P, dLogits, dDecoded, dV, logits, decoded, v, g)
}

type hvpVJPRows[T gatejet.Float] struct{}

func (hvpVJPRows[T]) carve(c *carver, K, P int) (u, w, zu, A, Z, gamma, beta []float64) {
	return c.f64(K, 1), c.f64(P, 1), c.f64(K, 1), c.f64(K, 1), c.f64(K, 1), c.f64(P, 1), c.f64(P, 1)
}

func (k hvpVJPRows[T]) count(c carver, K, P int) carver {
	k.carve(&c, K, P)
	return c
}

func (k hvpVJPRows[T]) row(j *job[T], r *rowSoftmax, n int) {
	K, P, s := j.K, j.P, j.s
	s2 := s * s
	cut := r.rest
	u, w, zu, A, Z, gamma, beta := k.carve(&cut, K, P)
	z, e := r.z, r.e
	centredDirection(u, w, zu, z, e, j.v[n*K:n*K+K], K, P)
	gn := j.g[n*K*P : (n+1)*K*P]
	for c := 0; c < P; c++ {
		gamma[c], beta[c] = 0, 0
	}
	Abar := 0.0
	for a := 0; a < K; a++ {
		ga := gn[a*P : a*P+P]
		ea := e[a*P : a*P+P]
		ea = ea[:len(ga)]
		gm, bt := gamma[:len(ga)], beta[:len(ga)]
		za, zu := z[a], z[a]*u[a]
		acc := 0.0
		for c := range ga {
			gv := float64(ga[c])
			acc += gv * ea[c]
			gm[c] += za * gv
			bt[c] += zu * gv
		}
		A[a] = acc
		Abar += za * acc
	}
	for k := 0; k < K; k++ {
		ek := e[k*P : k*P+P]
		gk := gn[k*P : k*P+P]
		gk = gk[:len(ek)]
		gm, bt, ww := gamma[:len(ek)], beta[:len(ek)], w[:len(ek)]
		var Gam, eb, gw float64
		for c := range ek {
			Gam += gm[c] * ek[c]
			eb += ek[c] * bt[c]
			gw += float64(gk[c]) * ww[c]
		}
		q := A[k] - Abar - Gam
		if j.o2 != nil {
			j.o2[n*K+k] = T(s2 * z[k] * q)
		}
		Z[k] = u[k]*q - eb - gw
	}
	if j.o1 != nil {
		out := j.o1[n*K*P : (n+1)*K*P]
		for k := 0; k < K; k++ {
			f, uk := s2*z[k], u[k]
			ok := out[k*P : k*P+P]
			gk := gn[k*P : k*P+P]
			gk = gk[:len(ok)]
			gm, bt := gamma[:len(ok)], beta[:len(ok)]
			for c := range ok {
				ok[c] = T(f * (uk*(float64(gk[c])-gm[c]) - bt[c]))
			}
		}
	}
	if j.o0 != nil {
		pullBack(j.o0[n*K:n*K+K], z, Z, s2*s)
	}
}

// GaussNewtonVJP writes the gradients of ⟨S, GaussNewton⟩ for S [N,K,K]: dLogits [N,K] and
// dDecoded [N,K,P] (either may be nil). Since H = F·Fᵀ with F = first, the upstream reaching
// first is (S + Sᵀ)·F, and the rest is FirstVJP. Cost O(K²·P) per row.
func (sm Softmax[T]) GaussNewtonVJP(dLogits, dDecoded, logits, decoded, g []T, sh Shape) error {
	return vjp("softmaxjet.Softmax.GaussNewtonVJP", sh, softmaxParam(sm.InvTau), softmaxRows[T, gaussNewtonVJPRows[T]]{}, 2*sh.K*sh.K*sh.P, dLogits, dDecoded, logits, decoded, g, sh.GNLen())
}

type gaussNewtonVJPRows[T gatejet.Float] struct{}

func (gaussNewtonVJPRows[T]) carve(c *carver, K, P int) (Z, gamma, G []float64) {
	return c.f64(K, 1), c.f64(P, 1), c.f64(K, P)
}

func (k gaussNewtonVJPRows[T]) count(c carver, K, P int) carver {
	k.carve(&c, K, P)
	return c
}

func (k gaussNewtonVJPRows[T]) row(j *job[T], r *rowSoftmax, n int) {
	K, P, s := j.K, j.P, j.s
	cut := r.rest
	Z, gamma, G := k.carve(&cut, K, P)
	symTimesFirst(G, j.g[n*K*K:(n+1)*K*K], r.z, r.e, s, K, P)
	firstVJPRow(j.o0, j.o1, n, r.z, r.e, G, Z, gamma, s, K, P)
}

// symTimesFirst writes G[a][c] = Σ_b (S[a][b] + S[b][a])·f_b·e[b][c], with f_b = s·ζ_b (the
// first channel is f_b·e[b][c]).
func symTimesFirst[T gatejet.Float](G []float64, S []T, z, e []float64, s float64, K, P int) {
	for i := range G {
		G[i] = 0
	}
	for a := 0; a < K; a++ {
		ga := G[a*P : a*P+P]
		for b := 0; b < K; b++ {
			f := (float64(S[a*K+b]) + float64(S[b*K+a])) * s * z[b]
			eb := e[b*P : b*P+P]
			eb = eb[:len(ga)]
			for c := range ga {
				ga[c] += f * eb[c]
			}
		}
	}
}

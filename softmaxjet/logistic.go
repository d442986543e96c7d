package softmaxjet

import (
	"math"

	"github.com/gatejet/gatejet"
	"github.com/gatejet/gatejet/internal/check"
)

// The per-atom logistic gate: ζ_k = σ(α_k·l_k + β_k), each atom gated on its own. Its jet is
// diagonal in the logits:
//
//	first[a][c] = α_a σ'_a D[a][c],   second[a][b][c] = δ_ab α_a² σ''_a D[a][c],
//
// with σ' = σ(1−σ), σ'' = σ'(1−2σ), σ''' = σ'(1−6σ(1−σ)). alpha and beta have one entry per
// atom (length K) and must be finite (ErrNonFinite), and |α| ≤ gatejet.MaxLogisticAlpha = 1e100
// (ErrParam): the reverse mode of the second channel scales as α³, which then stays below
// 1e300, so a saturated atom (σ' = 0) gives its exact zero derivatives, never ∞·0 = NaN.

// logisticKind is the logistic gate, of parameters α and β (the job's vecs) and row state
// rowLogistic. Never written.
var logisticKind = gateKind{vecNames: [2]string{"alpha", "beta"}, check: checkLogistic}

// logisticParams is the logistic gate of parameters alpha and beta. Inlined, so that the gate
// stays on its caller's stack.
func logisticParams(alpha, beta []float64) *gate {
	return &gate{&logisticKind, gateParams{vecs: [2][]float64{alpha, beta}}}
}

func checkLogistic(op string, K int, _ float64, alpha, beta []float64) error {
	return check.LogisticGate(op, K, alpha, beta)
}

// logisticDerivs returns σ(x), σ'(x), σ”(x), σ”'(x), using q = σ(−x) = 1−σ(x) computed
// without cancellation.
func logisticDerivs(x float64) (s0, s1, s2, s3 float64) {
	var q float64
	if x >= 0 {
		ex := math.Exp(-x)
		s0, q = 1/(1+ex), ex/(1+ex)
	} else {
		ex := math.Exp(x)
		s0, q = ex/(1+ex), 1/(1+ex)
	}
	s1 = s0 * q
	s2 = s1 * (q - s0)
	s3 = s1 * (1 - 6*s0*q)
	return
}

// rowLogistic holds one row's gate value z = σ and its scaled derivatives d1 = α σ',
// d2 = α² σ”, d3 = α³ σ”'.
type rowLogistic struct {
	z, d1, d2, d3 []float64
	rest          carver // the remaining scratch
	sc            *scratch[rowLogistic]
}

// carve is the row state's workspace: z, d1, d2 and d3.
func (r *rowLogistic) carve(c *carver, K, _ int) {
	r.z, r.d1, r.d2, r.d3 = c.f64(K, 1), c.f64(K, 1), c.f64(K, 1), c.f64(K, 1)
}

// logisticScratch is the pool of the logistic kernels' scratch.
var logisticScratch scratchPool[rowLogistic]

// newRowLogistic carves the row state from pooled scratch of n float64s (the job's
// scratchLen, checked by newJob); rest holds what the kernel carves beyond it.
func newRowLogistic(n, K int) *rowLogistic {
	sc := logisticScratch.get(n)
	r := &sc.row
	r.sc, r.rest = sc, carver{b: sc.buf}
	r.carve(&r.rest, K, 0)
	return r
}

func fillLogistic[T gatejet.Float](r *rowLogistic, l []T, alpha, beta []float64) {
	for k, a := range alpha {
		s0, s1, s2, s3 := logisticDerivs(a*float64(l[k]) + beta[k])
		r.z[k], r.d1[k], r.d2[k], r.d3[k] = s0, a*s1, a*a*s2, a*a*a*s3
	}
}

// logisticKernel is a logistic-gate kernel's work on row n, from the row state r that
// fillLogistic filled (the rest of the scratch in r.rest).
type logisticKernel[T gatejet.Float] interface {
	count(c carver, K, P int) carver // its workspace beyond r (noPieces: none)
	row(j *job[T], r *rowLogistic, n int)
}

// logisticRows is the kernel that runs logistic-gate kernel R on rows [lo, hi): it carves the
// row state once, then on each row computes the gate and its derivatives (fillLogistic) and
// R's row.
type logisticRows[T gatejet.Float, R logisticKernel[T]] struct{}

func (logisticRows[T, R]) count(c carver, K, P int) carver {
	var r rowLogistic
	var k R
	r.carve(&c, K, P)
	return k.count(c, K, P)
}

func (logisticRows[T, R]) rows(j *job[T], lo, hi int) {
	K, alpha, beta := j.K, j.vecs[0], j.vecs[1]
	r := newRowLogistic(j.scratch, K)
	defer r.sc.release()
	var k R
	for n := lo; n < hi; n++ {
		fillLogistic(r, j.l[n*K:n*K+K], alpha, beta)
		k.row(j, r, n)
	}
}

// scaledRows writes out[a][c] = f[a]·D[a][c] for a K×P row, the rows of out stride elements
// apart.
func scaledRows[T gatejet.Float](out []T, stride int, d []T, f []float64, P int) {
	for a, fa := range f {
		oa := out[a*stride : a*stride+P]
		da := d[a*P : a*P+P]
		da = da[:len(oa)]
		for c := range oa {
			oa[c] = T(fa * float64(da[c]))
		}
	}
}

// dotRow returns Σ_c x[c]·D[c] for two length-P rows.
func dotRow[T gatejet.Float](x, d []T) float64 {
	d = d[:len(x)]
	acc := 0.0
	for c := range x {
		acc += float64(x[c]) * float64(d[c])
	}
	return acc
}

// Value writes ẑ[n][c] = Σ_k σ(α_k l_k + β_k)·D[n][k][c] into dst [N,P].
func (lg Logistic[T]) Value(dst, logits, decoded []T, sh Shape) error {
	return forward("softmaxjet.Logistic.Value", sh, logisticParams(lg.Alpha, lg.Beta), logisticRows[T, logisticValueRows[T]]{}, sh.K*sh.P, dst, sh.ValueLen(), logits, decoded)
}

type logisticValueRows[T gatejet.Float] struct{}

func (logisticValueRows[T]) carve(c *carver, K, P int) (m []float64) {
	return c.f64(P, 1)
}

func (k logisticValueRows[T]) count(c carver, K, P int) carver {
	k.carve(&c, K, P)
	return c
}

func (k logisticValueRows[T]) row(j *job[T], r *rowLogistic, n int) {
	K, P, z := j.K, j.P, r.z
	cut := r.rest
	m := k.carve(&cut, K, P)
	for c := range m {
		m[c] = 0
	}
	for k := 0; k < K; k++ {
		dk := j.d[(n*K+k)*P : (n*K+k)*P+P]
		dk = dk[:len(m)]
		for c := range m {
			m[c] += z[k] * float64(dk[c])
		}
	}
	out := j.o0[n*P : n*P+P]
	for c := range out {
		out[c] = T(m[c])
	}
}

// First writes first[n][a][c] = α_a σ'_a D[n][a][c] into dst [N,K,P].
func (lg Logistic[T]) First(dst, logits, decoded []T, sh Shape) error {
	return forward("softmaxjet.Logistic.First", sh, logisticParams(lg.Alpha, lg.Beta), logisticRows[T, logisticFirstRows[T]]{}, sh.K*sh.P, dst, sh.FirstLen(), logits, decoded)
}

type logisticFirstRows[T gatejet.Float] struct{ noPieces }

func (logisticFirstRows[T]) row(j *job[T], r *rowLogistic, n int) {
	KP := j.K * j.P
	scaledRows(j.o0[n*KP:(n+1)*KP], j.P, j.d[n*KP:(n+1)*KP], r.d1, j.P)
}

// Second writes second[n][a][b][c] = δ_ab α_a² σ”_a D[n][a][c] into dst [N,K,K,P]
// (the off-diagonal blocks are written as zeros).
func (lg Logistic[T]) Second(dst, logits, decoded []T, sh Shape) error {
	return forward("softmaxjet.Logistic.Second", sh, logisticParams(lg.Alpha, lg.Beta), logisticRows[T, logisticSecondRows[T]]{}, sh.K*sh.K*sh.P, dst, sh.SecondLen(), logits, decoded)
}

type logisticSecondRows[T gatejet.Float] struct{ noPieces }

func (logisticSecondRows[T]) row(j *job[T], r *rowLogistic, n int) {
	K, P := j.K, j.P
	out := j.o0[n*K*K*P : (n+1)*K*K*P]
	clear(out)
	// Block (a,a) starts at (a·K + a)·P = a·(K+1)·P within the row.
	scaledRows(out, (K+1)*P, j.d[n*K*P:(n+1)*K*P], r.d2, P)
}

// HVP writes hvp[n][a][c] = α_a² σ”_a v_a D[n][a][c] into dst [N,K,P]; v is [N,K].
func (lg Logistic[T]) HVP(dst, logits, decoded, v []T, sh Shape) error {
	return hvp("softmaxjet.Logistic.HVP", sh, logisticParams(lg.Alpha, lg.Beta), logisticRows[T, logisticHVPRows[T]]{}, dst, logits, decoded, v)
}

type logisticHVPRows[T gatejet.Float] struct{}

func (logisticHVPRows[T]) carve(c *carver, K, P int) (f []float64) {
	return c.f64(K, 1)
}

func (k logisticHVPRows[T]) count(c carver, K, P int) carver {
	k.carve(&c, K, P)
	return c
}

func (k logisticHVPRows[T]) row(j *job[T], r *rowLogistic, n int) {
	K, P, d2 := j.K, j.P, r.d2
	cut := r.rest
	f, v := k.carve(&cut, K, P), j.v[n*K:n*K+K]
	for k := range f {
		f[k] = d2[k] * float64(v[k])
	}
	scaledRows(j.o0[n*K*P:(n+1)*K*P], P, j.d[n*K*P:(n+1)*K*P], f, P)
}

// GaussNewton writes H[n][a][b] = α_aα_b σ'_aσ'_b Σ_c D[a][c]D[b][c] into dst [N,K,K].
func (lg Logistic[T]) GaussNewton(dst, logits, decoded []T, sh Shape) error {
	return forward("softmaxjet.Logistic.GaussNewton", sh, logisticParams(lg.Alpha, lg.Beta), logisticRows[T, logisticGaussNewtonRows[T]]{}, sh.K*sh.K*sh.P, dst, sh.GNLen(), logits, decoded)
}

type logisticGaussNewtonRows[T gatejet.Float] struct{}

func (logisticGaussNewtonRows[T]) carve(c *carver, K, P int) (D []float64) {
	return c.f64(K, P)
}

func (k logisticGaussNewtonRows[T]) count(c carver, K, P int) carver {
	k.carve(&c, K, P)
	return c
}

func (k logisticGaussNewtonRows[T]) row(j *job[T], r *rowLogistic, n int) {
	K, P := j.K, j.P
	cut := r.rest
	D := k.carve(&cut, K, P)
	for i, x := range j.d[n*K*P : (n+1)*K*P] {
		D[i] = float64(x)
	}
	gramRow(j.o0[n*K*K:(n+1)*K*K], r.d1, D, K, P)
}

// ValueVJP writes the gradients of ⟨g, Value⟩ for g [N,P]:
// dl_a = α_a σ'_a Σ_c g_c D[a][c] and dD[k][c] = σ_k g_c (either output may be nil).
func (lg Logistic[T]) ValueVJP(dLogits, dDecoded, logits, decoded, g []T, sh Shape) error {
	return vjp("softmaxjet.Logistic.ValueVJP", sh, logisticParams(lg.Alpha, lg.Beta), logisticRows[T, logisticValueVJPRows[T]]{}, sh.K*sh.P, dLogits, dDecoded, logits, decoded, g, sh.ValueLen())
}

type logisticValueVJPRows[T gatejet.Float] struct{ noPieces }

func (logisticValueVJPRows[T]) row(j *job[T], r *rowLogistic, n int) {
	K, P := j.K, j.P
	diagVJPRow(j.o0, j.o1, n, K, P, j.g[n*P:n*P+P], 0, j.d[n*K*P:(n+1)*K*P], r.z, r.d1, nil)
}

// FirstVJP writes the gradients of ⟨G, First⟩ for G [N,K,P]:
// dl_a = α_a² σ”_a Σ_c G[a][c] D[a][c] and dD[a][c] = α_a σ'_a G[a][c].
func (lg Logistic[T]) FirstVJP(dLogits, dDecoded, logits, decoded, g []T, sh Shape) error {
	return vjp("softmaxjet.Logistic.FirstVJP", sh, logisticParams(lg.Alpha, lg.Beta), logisticRows[T, logisticFirstVJPRows[T]]{}, sh.K*sh.P, dLogits, dDecoded, logits, decoded, g, sh.FirstLen())
}

type logisticFirstVJPRows[T gatejet.Float] struct{ noPieces }

func (logisticFirstVJPRows[T]) row(j *job[T], r *rowLogistic, n int) {
	K, P := j.K, j.P
	rows := n * K * P
	diagVJPRow(j.o0, j.o1, n, K, P, j.g[rows:rows+K*P], P, j.d[rows:rows+K*P], r.d1, r.d2, nil)
}

// diagVJPRow serves the logistic VJPs, whose Jacobians are diagonal in the atoms: for each
// atom a with upstream row ga (taken from g at stride gStride; 0 for the value channel, whose
// one row serves every atom), dD[a][c] = fD_a·ga[c] and dl_a = fL_a·Σ_c ga[c]·D[a][c]; a
// non-nil w multiplies both (the HVP direction). g and D are in the element type, or in
// float64 where the kernel computed them.
func diagVJPRow[T, E gatejet.Float](dLogits, dDecoded []T, n, K, P int, g []E, gStride int, d []E, fD, fL []float64, w []float64) {
	for a := 0; a < K; a++ {
		ga := g[a*gStride : a*gStride+P]
		da := d[a*P : a*P+P]
		wa := 1.0
		if w != nil {
			wa = w[a]
		}
		if dLogits != nil {
			dLogits[n*K+a] = T(wa * fL[a] * dotRow(ga, da))
		}
		if dDecoded != nil {
			ok := dDecoded[(n*K+a)*P : (n*K+a)*P+P]
			f := wa * fD[a]
			ga := ga[:len(ok)]
			for c := range ok {
				ok[c] = T(f * float64(ga[c]))
			}
		}
	}
}

// SecondVJP writes the gradients of ⟨G, Second⟩ for G [N,K,K,P]: only the
// diagonal blocks G[a][a] matter: dl_a = α_a³ σ”'_a Σ_c G[a][a][c] D[a][c] and
// dD[a][c] = α_a² σ”_a G[a][a][c].
func (lg Logistic[T]) SecondVJP(dLogits, dDecoded, logits, decoded, g []T, sh Shape) error {
	return vjp("softmaxjet.Logistic.SecondVJP", sh, logisticParams(lg.Alpha, lg.Beta), logisticRows[T, logisticSecondVJPRows[T]]{}, sh.K*sh.P, dLogits, dDecoded, logits, decoded, g, sh.SecondLen())
}

type logisticSecondVJPRows[T gatejet.Float] struct{ noPieces }

func (logisticSecondVJPRows[T]) row(j *job[T], r *rowLogistic, n int) {
	K, P := j.K, j.P
	// G[a][a] starts at (a·K + a)·P = a·(K+1)·P within the row.
	diagVJPRow(j.o0, j.o1, n, K, P, j.g[n*K*K*P:(n+1)*K*K*P], (K+1)*P, j.d[n*K*P:(n+1)*K*P], r.d2, r.d3, nil)
}

// HVPVJP writes the gradients of ⟨G, HVP(v)⟩ for G [N,K,P] with respect to the
// logits, the decoded values and v (each may be nil): dv_a = α_a² σ”_a Σ_c G[a][c] D[a][c],
// dD[a][c] = α_a² σ”_a v_a G[a][c], dl_a = α_a³ σ”'_a v_a Σ_c G[a][c] D[a][c].
func (lg Logistic[T]) HVPVJP(dLogits, dDecoded, dV, logits, decoded, v, g []T, sh Shape) error {
	return hvpVJP("softmaxjet.Logistic.HVPVJP", sh, logisticParams(lg.Alpha, lg.Beta), logisticRows[T, logisticHVPVJPRows[T]]{}, sh.K*sh.P, dLogits, dDecoded, dV, logits, decoded, v, g)
}

type logisticHVPVJPRows[T gatejet.Float] struct{}

func (logisticHVPVJPRows[T]) carve(c *carver, K, P int) (w []float64) {
	return c.f64(K, 1)
}

func (k logisticHVPVJPRows[T]) count(c carver, K, P int) carver {
	k.carve(&c, K, P)
	return c
}

func (k logisticHVPVJPRows[T]) row(j *job[T], r *rowLogistic, n int) {
	K, P := j.K, j.P
	rows := n * K * P
	gn, dn := j.g[rows:rows+K*P], j.d[rows:rows+K*P]
	diagVJPRow(j.o2, nil, n, K, P, gn, P, dn, nil, r.d2, nil) // dv_a = α_a² σ”_a Σ_c G[a][c] D[a][c]
	cut := r.rest
	w := k.carve(&cut, K, P)
	for a := range w {
		w[a] = float64(j.v[n*K+a])
	}
	diagVJPRow(j.o0, j.o1, n, K, P, gn, P, dn, r.d2, r.d3, w)
}

// GaussNewtonVJP writes the gradients of ⟨S, GaussNewton⟩ for S [N,K,K]; the
// upstream reaching first is (S + Sᵀ)·first, and the rest is FirstVJP.
func (lg Logistic[T]) GaussNewtonVJP(dLogits, dDecoded, logits, decoded, g []T, sh Shape) error {
	return vjp("softmaxjet.Logistic.GaussNewtonVJP", sh, logisticParams(lg.Alpha, lg.Beta), logisticRows[T, logisticGaussNewtonVJPRows[T]]{}, 2*sh.K*sh.K*sh.P, dLogits, dDecoded, logits, decoded, g, sh.GNLen())
}

type logisticGaussNewtonVJPRows[T gatejet.Float] struct{}

func (logisticGaussNewtonVJPRows[T]) carve(c *carver, K, P int) (D, G []float64) {
	return c.f64(K, P), c.f64(K, P)
}

func (k logisticGaussNewtonVJPRows[T]) count(c carver, K, P int) carver {
	k.carve(&c, K, P)
	return c
}

func (k logisticGaussNewtonVJPRows[T]) row(j *job[T], r *rowLogistic, n int) {
	K, P := j.K, j.P
	cut := r.rest
	D, G := k.carve(&cut, K, P)
	for i, x := range j.d[n*K*P : (n+1)*K*P] {
		D[i] = float64(x)
	}
	// G[a][c] = Σ_b (S[a][b] + S[b][a])·d1_b·D[b][c]  (first[b][c] = d1_b·D[b][c]);
	// symTimesFirst with s = 1 and ζ → d1 computes exactly that. The rest is
	// FirstVJP's row on G and D in float64.
	symTimesFirst(G, j.g[n*K*K:(n+1)*K*K], r.d1, D, 1, K, P)
	diagVJPRow(j.o0, j.o1, n, K, P, G, P, D, r.d1, r.d2, nil)
}

// Logistic is the per-atom logistic gate ζ_k = σ(Alpha_k·l_k + Beta_k) as a Gate: its methods
// Value … GaussNewtonVJP are the channels and their VJPs at these parameters (Alpha and Beta
// of length K).
type Logistic[T gatejet.Float] struct{ Alpha, Beta []float64 }

var _ Gate[float32] = Logistic[float32]{}

package softmaxjet

import (
	"math"

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

// checkGate validates the gate parameters (check.LogisticGate: lengths, finite values,
// |α| ≤ gatejet.MaxLogisticAlpha).
func checkGate(op string, K int, alpha, beta []float64) error {
	return check.LogisticGate(op, K, alpha, beta)
}

// validateLogistic checks the shape, the buffer lengths and the gate, then that no output
// overlaps an input (α and β included) or another output.
func validateLogistic(op string, sh Shape, alpha, beta []float64, bufs ...buf) error {
	if err := validate(op, sh, bufs...); err != nil {
		return err
	}
	if err := checkGate(op, sh.K, alpha, beta); err != nil {
		return err
	}
	if err := checkOverlap(op, bufs...); err != nil {
		return err
	}
	return checkParamOverlap(op, alpha, beta, bufs...)
}

// checkParamOverlap reports an ErrParam error naming an output of bufs that overlaps alpha or
// beta, which the kernels read while they write.
func checkParamOverlap(op string, alpha, beta []float64, bufs ...buf) error {
	a, c := bytesOf(alpha), bytesOf(beta)
	for i := range bufs {
		b := &bufs[i]
		if !b.out {
			continue
		}
		if check.Overlap(b.mem, a) {
			return overlapError(op, b.name, "alpha")
		}
		if check.Overlap(b.mem, c) {
			return overlapError(op, b.name, "beta")
		}
	}
	return nil
}

// rowLogistic holds one row's gate value z = σ and its scaled derivatives d1 = α σ',
// d2 = α² σ”, d3 = α³ σ”'.
type rowLogistic struct {
	z, d1, d2, d3, rest []float64
	sc                  *scratch
}

// newRowLogistic carves the row state from pooled scratch of n float64s (the job's
// scratchLen, checked by newJob); rest holds what the kernel carves beyond it.
func newRowLogistic(n, K int) rowLogistic {
	sc := getScratch(n)
	b := sc.buf
	return rowLogistic{z: carve(&b, K), d1: carve(&b, K), d2: carve(&b, K), d3: carve(&b, K), rest: b, sc: sc}
}

func fillLogistic[T Float](r *rowLogistic, l []T, alpha, beta []float64) {
	for k, a := range alpha {
		s0, s1, s2, s3 := logisticDerivs(a*float64(l[k]) + beta[k])
		r.z[k], r.d1[k], r.d2[k], r.d3[k] = s0, a*s1, a*a*s2, a*a*a*s3
	}
}

// scaledRows writes out[a][c] = f[a]·D[a][c] for a K×P row.
func scaledRows[T Float](out, d []T, f []float64, P int) {
	for a, fa := range f {
		oa := out[a*P : a*P+P]
		da := d[a*P : a*P+P]
		da = da[:len(oa)]
		for c := range oa {
			oa[c] = T(fa * float64(da[c]))
		}
	}
}

// dotRow returns Σ_c x[c]·D[c] for two length-P rows.
func dotRow[T Float](x, d []T) float64 {
	d = d[:len(x)]
	acc := 0.0
	for c := range x {
		acc += float64(x[c]) * float64(d[c])
	}
	return acc
}

// LogisticValue writes ẑ[n][c] = Σ_k σ(α_k l_k + β_k)·D[n][k][c] into dst [N,P].
func LogisticValue[T Float](dst, logits, decoded []T, sh Shape, alpha, beta []float64) error {
	const op = "softmaxjet.LogisticValue"
	if err := validateLogistic(op, sh, alpha, beta, out("dst", dst, sh.ValueLen()), need("logits", logits, sh.LogitsLen()), need("decoded", decoded, sh.DecodedLen())); err != nil {
		return err
	}
	j, err := newJob[T](op, logisticValueRows[T]{}, workspace{logistic: true, p: 1}, sh)
	if err != nil {
		return err
	}
	j.o0, j.l, j.d, j.alpha, j.beta = dst, logits, decoded, alpha, beta
	j.forRows(sh.N, sh.K*sh.P)
	return nil
}

type logisticValueRows[T Float] struct{}

func (logisticValueRows[T]) rows(j *job[T], lo, hi int) {
	K, P := j.K, j.P
	r := newRowLogistic(j.scratch, K)
	defer r.sc.release()
	m := r.rest[:P]
	for n := lo; n < hi; n++ {
		fillLogistic(&r, j.l[n*K:n*K+K], j.alpha, j.beta)
		for c := range m {
			m[c] = 0
		}
		for k := 0; k < K; k++ {
			dk := j.d[(n*K+k)*P : (n*K+k)*P+P]
			dk = dk[:len(m)]
			for c := range m {
				m[c] += r.z[k] * float64(dk[c])
			}
		}
		out := j.o0[n*P : n*P+P]
		for c := range out {
			out[c] = T(m[c])
		}
	}
}

// LogisticFirst writes first[n][a][c] = α_a σ'_a D[n][a][c] into dst [N,K,P].
func LogisticFirst[T Float](dst, logits, decoded []T, sh Shape, alpha, beta []float64) error {
	const op = "softmaxjet.LogisticFirst"
	if err := validateLogistic(op, sh, alpha, beta, out("dst", dst, sh.FirstLen()), need("logits", logits, sh.LogitsLen()), need("decoded", decoded, sh.DecodedLen())); err != nil {
		return err
	}
	j, err := newJob[T](op, logisticFirstRows[T]{}, workspace{logistic: true}, sh)
	if err != nil {
		return err
	}
	j.o0, j.l, j.d, j.alpha, j.beta = dst, logits, decoded, alpha, beta
	j.forRows(sh.N, sh.K*sh.P)
	return nil
}

type logisticFirstRows[T Float] struct{}

func (logisticFirstRows[T]) rows(j *job[T], lo, hi int) {
	K, P := j.K, j.P
	r := newRowLogistic(j.scratch, K)
	defer r.sc.release()
	for n := lo; n < hi; n++ {
		fillLogistic(&r, j.l[n*K:n*K+K], j.alpha, j.beta)
		scaledRows(j.o0[n*K*P:(n+1)*K*P], j.d[n*K*P:(n+1)*K*P], r.d1, P)
	}
}

// LogisticSecond writes second[n][a][b][c] = δ_ab α_a² σ”_a D[n][a][c] into dst [N,K,K,P]
// (the off-diagonal blocks are written as zeros).
func LogisticSecond[T Float](dst, logits, decoded []T, sh Shape, alpha, beta []float64) error {
	const op = "softmaxjet.LogisticSecond"
	if err := validateLogistic(op, sh, alpha, beta, out("dst", dst, sh.SecondLen()), need("logits", logits, sh.LogitsLen()), need("decoded", decoded, sh.DecodedLen())); err != nil {
		return err
	}
	j, err := newJob[T](op, logisticSecondRows[T]{}, workspace{logistic: true}, sh)
	if err != nil {
		return err
	}
	j.o0, j.l, j.d, j.alpha, j.beta = dst, logits, decoded, alpha, beta
	j.forRows(sh.N, sh.K*sh.K*sh.P)
	return nil
}

type logisticSecondRows[T Float] struct{}

func (logisticSecondRows[T]) rows(j *job[T], lo, hi int) {
	K, P := j.K, j.P
	r := newRowLogistic(j.scratch, K)
	defer r.sc.release()
	for n := lo; n < hi; n++ {
		fillLogistic(&r, j.l[n*K:n*K+K], j.alpha, j.beta)
		out := j.o0[n*K*K*P : (n+1)*K*K*P]
		clear(out)
		for a := 0; a < K; a++ {
			oa := out[(a*K+a)*P : (a*K+a)*P+P]
			da := j.d[(n*K+a)*P : (n*K+a)*P+P]
			da = da[:len(oa)]
			for c := range oa {
				oa[c] = T(r.d2[a] * float64(da[c]))
			}
		}
	}
}

// LogisticHVP writes hvp[n][a][c] = α_a² σ”_a v_a D[n][a][c] into dst [N,K,P]; v is [N,K].
func LogisticHVP[T Float](dst, logits, decoded, v []T, sh Shape, alpha, beta []float64) error {
	const op = "softmaxjet.LogisticHVP"
	if err := validateLogistic(op, sh, alpha, beta, out("dst", dst, sh.FirstLen()), need("logits", logits, sh.LogitsLen()), need("decoded", decoded, sh.DecodedLen()), need("v", v, sh.LogitsLen())); err != nil {
		return err
	}
	j, err := newJob[T](op, logisticHVPRows[T]{}, workspace{logistic: true, k: 1}, sh)
	if err != nil {
		return err
	}
	j.o0, j.l, j.d, j.v, j.alpha, j.beta = dst, logits, decoded, v, alpha, beta
	j.forRows(sh.N, sh.K*sh.P)
	return nil
}

type logisticHVPRows[T Float] struct{}

func (logisticHVPRows[T]) rows(j *job[T], lo, hi int) {
	K, P := j.K, j.P
	r := newRowLogistic(j.scratch, K)
	defer r.sc.release()
	f := r.rest[:K]
	for n := lo; n < hi; n++ {
		fillLogistic(&r, j.l[n*K:n*K+K], j.alpha, j.beta)
		for k := range f {
			f[k] = r.d2[k] * float64(j.v[n*K+k])
		}
		scaledRows(j.o0[n*K*P:(n+1)*K*P], j.d[n*K*P:(n+1)*K*P], f, P)
	}
}

// LogisticGaussNewton writes H[n][a][b] = α_aα_b σ'_aσ'_b Σ_c D[a][c]D[b][c] into dst [N,K,K].
func LogisticGaussNewton[T Float](dst, logits, decoded []T, sh Shape, alpha, beta []float64) error {
	const op = "softmaxjet.LogisticGaussNewton"
	if err := validateLogistic(op, sh, alpha, beta, out("dst", dst, sh.GNLen()), need("logits", logits, sh.LogitsLen()), need("decoded", decoded, sh.DecodedLen())); err != nil {
		return err
	}
	j, err := newJob[T](op, logisticGaussNewtonRows[T]{}, workspace{logistic: true, kp: 1}, sh)
	if err != nil {
		return err
	}
	j.o0, j.l, j.d, j.alpha, j.beta = dst, logits, decoded, alpha, beta
	j.forRows(sh.N, sh.K*sh.K*sh.P)
	return nil
}

type logisticGaussNewtonRows[T Float] struct{}

func (logisticGaussNewtonRows[T]) rows(j *job[T], lo, hi int) {
	K, P := j.K, j.P
	r := newRowLogistic(j.scratch, K)
	defer r.sc.release()
	D := r.rest[:K*P]
	for n := lo; n < hi; n++ {
		fillLogistic(&r, j.l[n*K:n*K+K], j.alpha, j.beta)
		for i, x := range j.d[n*K*P : (n+1)*K*P] {
			D[i] = float64(x)
		}
		gramRow(j.o0[n*K*K:(n+1)*K*K], r.d1, D, K, P)
	}
}

// LogisticValueVJP writes the gradients of ⟨g, LogisticValue⟩ for g [N,P]:
// dl_a = α_a σ'_a Σ_c g_c D[a][c] and dD[k][c] = σ_k g_c (either output may be nil).
func LogisticValueVJP[T Float](dLogits, dDecoded, logits, decoded, g []T, sh Shape, alpha, beta []float64) error {
	const op = "softmaxjet.LogisticValueVJP"
	if err := validateLogistic(op, sh, alpha, beta, opt("dLogits", dLogits, sh.LogitsLen()), opt("dDecoded", dDecoded, sh.DecodedLen()),
		need("logits", logits, sh.LogitsLen()), need("decoded", decoded, sh.DecodedLen()), need("g", g, sh.ValueLen())); err != nil {
		return err
	}
	j, err := newJob[T](op, logisticValueVJPRows[T]{}, workspace{logistic: true}, sh)
	if err != nil {
		return err
	}
	j.o0, j.o1, j.l, j.d, j.g, j.alpha, j.beta = dLogits, dDecoded, logits, decoded, g, alpha, beta
	j.forRows(sh.N, sh.K*sh.P)
	return nil
}

type logisticValueVJPRows[T Float] struct{}

func (logisticValueVJPRows[T]) rows(j *job[T], lo, hi int) {
	K, P := j.K, j.P
	r := newRowLogistic(j.scratch, K)
	defer r.sc.release()
	for n := lo; n < hi; n++ {
		fillLogistic(&r, j.l[n*K:n*K+K], j.alpha, j.beta)
		gn := j.g[n*P : n*P+P]
		for k := 0; k < K; k++ {
			dk := j.d[(n*K+k)*P : (n*K+k)*P+P]
			if j.o0 != nil {
				j.o0[n*K+k] = T(r.d1[k] * dotRow(gn, dk))
			}
			if j.o1 != nil {
				ok := j.o1[(n*K+k)*P : (n*K+k)*P+P]
				for c := range ok {
					ok[c] = T(r.z[k] * float64(gn[c]))
				}
			}
		}
	}
}

// LogisticFirstVJP writes the gradients of ⟨G, LogisticFirst⟩ for G [N,K,P]:
// dl_a = α_a² σ”_a Σ_c G[a][c] D[a][c] and dD[a][c] = α_a σ'_a G[a][c].
func LogisticFirstVJP[T Float](dLogits, dDecoded, logits, decoded, g []T, sh Shape, alpha, beta []float64) error {
	const op = "softmaxjet.LogisticFirstVJP"
	if err := validateLogistic(op, sh, alpha, beta, opt("dLogits", dLogits, sh.LogitsLen()), opt("dDecoded", dDecoded, sh.DecodedLen()),
		need("logits", logits, sh.LogitsLen()), need("decoded", decoded, sh.DecodedLen()), need("g", g, sh.FirstLen())); err != nil {
		return err
	}
	j, err := newJob[T](op, logisticFirstVJPRows[T]{}, workspace{logistic: true}, sh)
	if err != nil {
		return err
	}
	j.o0, j.o1, j.l, j.d, j.g, j.alpha, j.beta = dLogits, dDecoded, logits, decoded, g, alpha, beta
	j.forRows(sh.N, sh.K*sh.P)
	return nil
}

type logisticFirstVJPRows[T Float] struct{}

func (logisticFirstVJPRows[T]) rows(j *job[T], lo, hi int) {
	K, P := j.K, j.P
	r := newRowLogistic(j.scratch, K)
	defer r.sc.release()
	for n := lo; n < hi; n++ {
		fillLogistic(&r, j.l[n*K:n*K+K], j.alpha, j.beta)
		rows := n * K * P
		diagVJPRow(j.o0, j.o1, n, K, P, j.g[rows:rows+K*P], P, j.d[rows:rows+K*P], r.d1, r.d2, nil)
	}
}

// diagVJPRow serves the logistic VJPs, whose Jacobians are diagonal in the atoms: for each
// atom a with upstream row ga (taken from g at stride gStride), dD[a][c] = fD_a·ga[c] and
// dl_a = fL_a·Σ_c ga[c]·D[a][c]; a non-nil w multiplies both (the HVP direction).
func diagVJPRow[T Float](dLogits, dDecoded []T, n, K, P int, g []T, gStride int, d []T, fD, fL []float64, w []float64) {
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

// LogisticSecondVJP writes the gradients of ⟨G, LogisticSecond⟩ for G [N,K,K,P]: only the
// diagonal blocks G[a][a] matter: dl_a = α_a³ σ”'_a Σ_c G[a][a][c] D[a][c] and
// dD[a][c] = α_a² σ”_a G[a][a][c].
func LogisticSecondVJP[T Float](dLogits, dDecoded, logits, decoded, g []T, sh Shape, alpha, beta []float64) error {
	const op = "softmaxjet.LogisticSecondVJP"
	if err := validateLogistic(op, sh, alpha, beta, opt("dLogits", dLogits, sh.LogitsLen()), opt("dDecoded", dDecoded, sh.DecodedLen()),
		need("logits", logits, sh.LogitsLen()), need("decoded", decoded, sh.DecodedLen()), need("g", g, sh.SecondLen())); err != nil {
		return err
	}
	j, err := newJob[T](op, logisticSecondVJPRows[T]{}, workspace{logistic: true}, sh)
	if err != nil {
		return err
	}
	j.o0, j.o1, j.l, j.d, j.g, j.alpha, j.beta = dLogits, dDecoded, logits, decoded, g, alpha, beta
	j.forRows(sh.N, sh.K*sh.P)
	return nil
}

type logisticSecondVJPRows[T Float] struct{}

func (logisticSecondVJPRows[T]) rows(j *job[T], lo, hi int) {
	K, P := j.K, j.P
	r := newRowLogistic(j.scratch, K)
	defer r.sc.release()
	for n := lo; n < hi; n++ {
		fillLogistic(&r, j.l[n*K:n*K+K], j.alpha, j.beta)
		// G[a][a] starts at (a·K + a)·P = a·(K+1)·P within the row.
		diagVJPRow(j.o0, j.o1, n, K, P, j.g[n*K*K*P:(n+1)*K*K*P], (K+1)*P, j.d[n*K*P:(n+1)*K*P], r.d2, r.d3, nil)
	}
}

// LogisticHVPVJP writes the gradients of ⟨G, LogisticHVP(v)⟩ for G [N,K,P] with respect to the
// logits, the decoded values and v (each may be nil): dv_a = α_a² σ”_a Σ_c G[a][c] D[a][c],
// dD[a][c] = α_a² σ”_a v_a G[a][c], dl_a = α_a³ σ”'_a v_a Σ_c G[a][c] D[a][c].
func LogisticHVPVJP[T Float](dLogits, dDecoded, dV, logits, decoded, v, g []T, sh Shape, alpha, beta []float64) error {
	const op = "softmaxjet.LogisticHVPVJP"
	if err := validateLogistic(op, sh, alpha, beta, opt("dLogits", dLogits, sh.LogitsLen()), opt("dDecoded", dDecoded, sh.DecodedLen()), opt("dV", dV, sh.LogitsLen()),
		need("logits", logits, sh.LogitsLen()), need("decoded", decoded, sh.DecodedLen()), need("v", v, sh.LogitsLen()), need("g", g, sh.FirstLen())); err != nil {
		return err
	}
	j, err := newJob[T](op, logisticHVPVJPRows[T]{}, workspace{logistic: true, k: 1}, sh)
	if err != nil {
		return err
	}
	j.o0, j.o1, j.o2, j.l, j.d, j.v, j.g, j.alpha, j.beta = dLogits, dDecoded, dV, logits, decoded, v, g, alpha, beta
	j.forRows(sh.N, sh.K*sh.P)
	return nil
}

type logisticHVPVJPRows[T Float] struct{}

func (logisticHVPVJPRows[T]) rows(j *job[T], lo, hi int) {
	K, P := j.K, j.P
	r := newRowLogistic(j.scratch, K)
	defer r.sc.release()
	w := r.rest[:K]
	for n := lo; n < hi; n++ {
		fillLogistic(&r, j.l[n*K:n*K+K], j.alpha, j.beta)
		rows := n * K * P
		gn, dn := j.g[rows:rows+K*P], j.d[rows:rows+K*P]
		if j.o2 != nil {
			for a := 0; a < K; a++ {
				j.o2[n*K+a] = T(r.d2[a] * dotRow(gn[a*P:a*P+P], dn[a*P:a*P+P]))
			}
		}
		for a := range w {
			w[a] = float64(j.v[n*K+a])
		}
		diagVJPRow(j.o0, j.o1, n, K, P, gn, P, dn, r.d2, r.d3, w)
	}
}

// LogisticGaussNewtonVJP writes the gradients of ⟨S, LogisticGaussNewton⟩ for S [N,K,K]; the
// upstream reaching first is (S + Sᵀ)·first, and the rest is LogisticFirstVJP.
func LogisticGaussNewtonVJP[T Float](dLogits, dDecoded, logits, decoded, g []T, sh Shape, alpha, beta []float64) error {
	const op = "softmaxjet.LogisticGaussNewtonVJP"
	if err := validateLogistic(op, sh, alpha, beta, opt("dLogits", dLogits, sh.LogitsLen()), opt("dDecoded", dDecoded, sh.DecodedLen()),
		need("logits", logits, sh.LogitsLen()), need("decoded", decoded, sh.DecodedLen()), need("g", g, sh.GNLen())); err != nil {
		return err
	}
	j, err := newJob[T](op, logisticGaussNewtonVJPRows[T]{}, workspace{logistic: true, kp: 2}, sh)
	if err != nil {
		return err
	}
	j.o0, j.o1, j.l, j.d, j.g, j.alpha, j.beta = dLogits, dDecoded, logits, decoded, g, alpha, beta
	j.forRows(sh.N, 2*sh.K*sh.K*sh.P)
	return nil
}

type logisticGaussNewtonVJPRows[T Float] struct{}

func (logisticGaussNewtonVJPRows[T]) rows(j *job[T], lo, hi int) {
	K, P := j.K, j.P
	r := newRowLogistic(j.scratch, K)
	defer r.sc.release()
	b := r.rest
	D, G := carve(&b, K*P), carve(&b, K*P)
	for n := lo; n < hi; n++ {
		fillLogistic(&r, j.l[n*K:n*K+K], j.alpha, j.beta)
		rows := n * K * P
		for i, x := range j.d[rows : rows+K*P] {
			D[i] = float64(x)
		}
		// G[a][c] = Σ_b (S[a][b] + S[b][a])·d1_b·D[b][c]  (first[b][c] = d1_b·D[b][c]);
		// symTimesFirst with s = 1 and ζ → d1 computes exactly that.
		symTimesFirst(G, j.g[n*K*K:(n+1)*K*K], r.d1, D, 1, K, P)
		for a := 0; a < K; a++ {
			ga, da := G[a*P:a*P+P], D[a*P:a*P+P]
			da = da[:len(ga)]
			acc := 0.0
			for c := range ga {
				acc += ga[c] * da[c]
			}
			if j.o0 != nil {
				j.o0[n*K+a] = T(r.d2[a] * acc)
			}
			if j.o1 != nil {
				ok := j.o1[rows+a*P : rows+a*P+P]
				for c := range ok {
					ok[c] = T(r.d1[a] * ga[c])
				}
			}
		}
	}
}

package softmaxjet

import (
	"math"
	"unsafe"

	"github.com/gatejet/gatejet"
	"github.com/gatejet/gatejet/internal/check"
)

// softmaxKind is the softmax gate ζ = softmax(s·l), of inverse temperature s (the job's s) and
// row state rowSoftmax. Never written.
var softmaxKind = gateKind{check: checkSoftmax}

// softmaxParam is the softmax gate of inverse temperature invTau. Inlined, so that the gate stays
// on its caller's stack.
func softmaxParam(invTau float64) *gate {
	return &gate{&softmaxKind, gateParams{s: invTau}}
}

func checkSoftmax(op string, _ int, invTau float64, _, _ []float64) error {
	return check.InvTau(op, invTau)
}

// softmaxRow fills the float64 gate ζ = softmax(s·l) (max subtracted), the value channel
// m_c = Σ_k ζ_k D[k][c] and the centred decoded values e[a][c] = D[a][c] − m_c of one row.
//
// A NaN logit, a +Inf logit or a row of all −Inf logits makes the whole row NaN, as a softmax
// does; −Inf logits alongside finite ones give ζ = 0 for those atoms.
func softmaxRow[T gatejet.Float](z, m, e []float64, l, d []T, s float64, K, P int) {
	softmaxGate(z, m, l, d, s, K, P)
	centreVec(e, d, m, K, P, false)
}

// softmaxGate is the first half of softmaxRow: the gate z (gateGo, exp.go, in AVX where it
// can be) and the value channel m. A NaN logit never becomes the maximum, but its exponential
// expNeg(s·(NaN − max)) is NaN and so is the sum, which makes the whole gate NaN; a +Inf
// logit or a row of all −Inf logits does the same through ∞ − ∞.
func softmaxGate[T gatejet.Float](z, m []float64, l, d []T, s float64, K, P int) {
	gateVec(z, l, s, K)
	meanVec(m, z, d, K, P)
}

// meanGo writes m_c = Σ_k z_k·D[k][c], the terms added in atom order. Products are converted
// explicitly (float64(x*y)) in this and the other Go twins of the AVX loops: that stops the
// compiler fusing them with the addition into an FMA, which it does with GOAMD64=v3 and
// the assembly does not.
func meanGo[T gatejet.Float](m, z []float64, d []T, K, P int) {
	m = m[:P]
	for c := range m {
		m[c] = 0
	}
	// Four atoms per sweep of m, added in atom order: the same sums as one atom at a time.
	k := 0
	for ; k+4 <= K; k += 4 {
		z0, z1, z2, z3 := z[k], z[k+1], z[k+2], z[k+3]
		d0, d1, d2, d3 := d[k*P:k*P+P], d[(k+1)*P:(k+1)*P+P], d[(k+2)*P:(k+2)*P+P], d[(k+3)*P:(k+3)*P+P]
		d0, d1, d2, d3 = d0[:len(m)], d1[:len(m)], d2[:len(m)], d3[:len(m)]
		for c, v := range m {
			v += float64(z0 * float64(d0[c]))
			v += float64(z1 * float64(d1[c]))
			v += float64(z2 * float64(d2[c]))
			v += float64(z3 * float64(d3[c]))
			m[c] = v
		}
	}
	for ; k < K; k++ {
		zk := z[k]
		dk := d[k*P : k*P+P]
		dk = dk[:len(m)]
		for c := range m {
			m[c] += float64(zk * float64(dk[c]))
		}
	}
}

// rowSoftmax is the per-row state every softmax kernel starts from.
type rowSoftmax struct {
	z, m, e []float64
	rest    carver // the remaining scratch
	sc      *scratch[rowSoftmax]
}

// carve is the row state's workspace: z (padded: the second channel's coefficient loop reads
// it four atoms at a time), m and e.
func (r *rowSoftmax) carve(c *carver, K, P int) {
	r.z, r.m, r.e = c.f64(padK(K), 1), c.f64(P, 1), c.f64(K, P)
}

// count adds the row state's workspace to c.
func (r *rowSoftmax) count(c carver, K, P int) carver {
	r.carve(&c, K, P)
	return c
}

// softmaxScratch is the pool of the softmax kernels' scratch.
var softmaxScratch scratchPool[rowSoftmax]

// newRowSoftmax carves the row state from pooled scratch of n float64s (the job's scratchLen,
// checked by newJob); rest holds what the kernel carves beyond z, m and e. z has capacity
// padK(K), the padding zeroed.
func newRowSoftmax(n, K, P int) *rowSoftmax {
	sc := softmaxScratch.get(n)
	r := &sc.row
	r.sc = sc
	r.rest = carver{b: sc.buf}
	r.carve(&r.rest, K, P)
	clear(r.z[K:])
	r.z = r.z[:K]
	return r
}

// softmaxKernel is a softmax-gate kernel's work on row n, from the row state r that
// softmaxRow filled (the rest of the scratch in r.rest).
type softmaxKernel[T gatejet.Float] interface {
	count(c carver, K, P int) carver // its workspace beyond r (noPieces: none)
	row(j *job[T], r *rowSoftmax, n int)
}

// softmaxRows is the kernel that runs softmax-gate kernel R on rows [lo, hi): it carves the
// row state once, then on each row computes the gate (softmaxRow) and R's row.
type softmaxRows[T gatejet.Float, R softmaxKernel[T]] struct{}

func (softmaxRows[T, R]) count(c carver, K, P int) carver {
	var r rowSoftmax
	var k R
	return k.count(r.count(c, K, P), K, P)
}

func (softmaxRows[T, R]) rows(j *job[T], lo, hi int) {
	K, P := j.K, j.P
	r := newRowSoftmax(j.scratch, K, P)
	defer r.sc.release()
	var k R
	for n := lo; n < hi; n++ {
		softmaxRow(r.z, r.m, r.e, j.l[n*K:n*K+K], j.d[n*K*P:(n+1)*K*P], j.s, K, P)
		k.row(j, r, n)
	}
}

// Value writes the value channel ẑ[n][c] = Σ_k softmax(s·l[n])_k · decoded[n][k][c] into dst
// [N,P]. s = invTau is the inverse temperature.
func (sm Softmax[T]) Value(dst, logits, decoded []T, sh Shape) error {
	return forward("softmaxjet.Softmax.Value", sh, softmaxParam(sm.InvTau), valueRows[T]{}, sh.K*sh.P, dst, sh.ValueLen(), logits, decoded)
}

// valueRows runs its own row loop, not softmaxRows: the value channel is the gate's m, and
// needs no centred values e.
type valueRows[T gatejet.Float] struct{}

func (valueRows[T]) count(c carver, K, P int) carver {
	var r rowSoftmax
	return r.count(c, K, P)
}

func (valueRows[T]) rows(j *job[T], lo, hi int) {
	K, P := j.K, j.P
	r := newRowSoftmax(j.scratch, K, P)
	defer r.sc.release()
	for n := lo; n < hi; n++ {
		softmaxGate(r.z, r.m, j.l[n*K:n*K+K], j.d[n*K*P:(n+1)*K*P], j.s, K, P)
		out := j.o0[n*P : n*P+P]
		for c, v := range r.m[:len(out)] {
			out[c] = T(v)
		}
	}
}

// First writes the first channel first[n][a][c] = ∂ẑ_c/∂l_a = s·ζ_a·(D[a][c] − ẑ_c) into dst
// [N,K,P]. Cost O(K·P) per row.
func (sm Softmax[T]) First(dst, logits, decoded []T, sh Shape) error {
	return forward("softmaxjet.Softmax.First", sh, softmaxParam(sm.InvTau), softmaxRows[T, firstRows[T]]{}, sh.K*sh.P, dst, sh.FirstLen(), logits, decoded)
}

type firstRows[T gatejet.Float] struct{ noPieces }

func (firstRows[T]) row(j *job[T], r *rowSoftmax, n int) {
	K, P := j.K, j.P
	firstInto(j.o0[n*K*P:(n+1)*K*P], r, j.s, K, P)
}

// Second writes the second channel second[n][a][b][c] = ∂²ẑ_c/∂l_a∂l_b into dst [N,K,K,P]:
//
//	second[a][b][c] = s²·( δ_ab·ζ_a·e[a][c] − ζ_a·ζ_b·(e[a][c] + e[b][c]) ),  e[a][c] = D[a][c] − ẑ_c.
//
// Cost O(K²·P) per row: one multiply-add per element written. The coefficient of block (a,b)
// is computed once for the pair, so the channel is exactly symmetric in (a, b). For float32
// the per-row gate and e are computed in float64 as everywhere, and the K²·P elements as
// c_ab·(e[a][c] + e[b][c]) in float32 (three roundings, relative error a few float32 ulps of
// the terms) whenever the coefficient and e are well inside float32's range; other blocks are
// computed in float64 and rounded once. On amd64 with AVX a row's K·(K+1)/2 coefficients are
// computed together, rounded to the element type, before its blocks are written, and the
// inner loop runs four float64 or eight float32 lanes at a time (the same operations, so the
// same bits); outputs much larger than the caches are written with non-temporal stores.
func (sm Softmax[T]) Second(dst, logits, decoded []T, sh Shape) error {
	return forward("softmaxjet.Softmax.Second", sh, softmaxParam(sm.InvTau), secondRows[T]{}, sh.K*sh.K*sh.P, dst, sh.SecondLen(), logits, decoded)
}

// secondRows writes rows [lo, hi) of the second channel. Each row is the gate and value
// channel (softmaxGate), e in the element type (centreVec), the coefficients and the verdict
// on float32 ranges (secondCoefsVec), then the K² blocks (rowVec). The work before the blocks
// is a fixed cost a row, the same for float32 and float64, where the blocks are a write of
// K²·P elements that the memory bandwidth bounds: so it is done four lanes at a time, and
// the coefficients once a pair into a matrix c, not once a block in the block loop, which
// then spends a broadcast and four instructions of bookkeeping a block beside the arithmetic
// and the stores (slab_amd64.s).
type secondRows[T gatejet.Float] struct{}

func (secondRows[T]) count(c carver, K, P int) carver {
	var r secondRow[T]
	c = r.rowSoftmax.count(c, K, P)
	r.carve(&c, K, P)
	return c
}

func (secondRows[T]) rows(j *job[T], lo, hi int) {
	K, P := j.K, j.P
	r := newSecondRow[T](j.scratch, K, P, j.s)
	defer r.sc.release()
	nt := len(j.o0)*r.size >= ntMin
	usedNT := false
	for n := lo; n < hi; n++ {
		usedNT = r.write(j.o0[n*K*K*P:(n+1)*K*K*P], j.l[n*K:n*K+K], j.d[n*K*P:(n+1)*K*P], K, P, K, nt) || usedNT
	}
	if usedNT {
		sfence() // order the non-temporal stores before par.For reports the rows done
	}
}

// write writes the second channel of the row with logits l and decoded rows d into out, its
// K rows of blocks stride blocks apart (K for the second channel, 2K for the ℓℓ blocks of the
// coordinate one). It reports whether it used non-temporal stores (asked for with nt).
func (r *secondRow[T]) write(out, l, d []T, K, P, stride int, nt bool) bool {
	if r.prep(l, d) || r.size == 8 { // in float64 the element-type loop is the float64 loop
		return rowVec(out, r.c, r.nsz, r.z, r.diag, r.et, K, P, stride, nt)
	}
	centre(r.e, d, r.m, K, P, false)
	rowGo(out, r.nsz, r.z, r.diag, r.e, K, P, stride)
	return false
}

// secondRow is the row state of secondRows: the row's softmax (gate, value channel, e in
// float64), the coefficients nsz and diag, the coefficient matrix c and e in the element
// type, carved from one pooled scratch.
type secondRow[T gatejet.Float] struct {
	rowSoftmax
	nsz, diag []float64
	c, et     []T
	s, s2     float64
	K, P      int
	size      int // bytes of a T
}

// carve is the scratch secondRows carves beyond rowSoftmax: nsz and diag, the matrix c and e
// in the element type, e on a 64-byte boundary (the row writer loads each e[b] once a block,
// and rows of P·size a multiple of 32 bytes then never straddle a cache line).
func (r *secondRow[T]) carve(c *carver, K, P int) {
	Kp := padK(K)
	r.nsz, r.diag = c.f64(Kp, 1), c.f64(Kp, 1)
	r.c = carveT[T](c, K, Kp)
	c.align64()
	r.et = carveT[T](c, K, P)
}

func newSecondRow[T gatejet.Float](n, K, P int, s float64) secondRow[T] {
	var zero T
	r := secondRow[T]{rowSoftmax: *newRowSoftmax(n, K, P), s: s, s2: s * s, K: K, P: P, size: int(unsafe.Sizeof(zero))}
	c := r.rest
	r.carve(&c, K, P)
	return r
}

// prep is the fixed work of a row before its blocks: the gate and value channel, e in the
// element type, the coefficients and matrix c. It reports whether the row's values are well
// inside float32's range (see centre and secondCoefs; always worth knowing, used for float32).
func (r *secondRow[T]) prep(l, d []T) bool {
	softmaxGate(r.z, r.m, l, d, r.s, r.K, r.P)
	fast := centreVec(r.et, d, r.m, r.K, r.P, r.size < 8)
	return secondCoefsVec(r.c, r.nsz, r.diag, r.z, r.s2, r.K) && fast
}

// ntMin is the output size, in bytes, from which the second channel is written with
// non-temporal stores (where the AVX loop runs): outputs this large do not stay in the caches
// anyway, and skipping the read of each line written halves the memory traffic. It is the
// size from which the runtime's memclr turns to non-temporal stores too. Tests lower it.
var ntMin = 32 << 20

// centre writes e[a][c] = D[a][c] − m_c, computed in float64, in the element type of e. With
// check, it reports whether every |e| ≤ 2¹⁰⁰ or is not finite: then float32 arithmetic on e
// gives the float64 result but for rounding (NaN and ±Inf propagate alike either way), where
// a huge finite e could overflow float32 sums that float64 would not.
func centre[E, T gatejet.Float](e []E, d []T, m []float64, K, P int, check bool) bool {
	ok := true
	for a := 0; a < K; a++ {
		ea := e[a*P : a*P+P]
		da := d[a*P : a*P+P]
		da = da[:len(ea)]
		mm := m[:len(ea)]
		if !check {
			for c := range ea {
				ea[c] = E(float64(da[c]) - mm[c])
			}
			continue
		}
		for c := range ea {
			x := float64(da[c]) - mm[c]
			ea[c] = E(x)
			if x > 0x1p100 || x < -0x1p100 { // rare: then look closer
				ok = ok && math.IsInf(x, 0)
			}
		}
	}
	return ok
}

// The second channel's block (a,b) is coef·(e[a] + e[b]) with, in float64,
//
//	coef = nsz[a]·z[b] for a < b, nsz[b]·z[a] for a > b, diag[a] for a = b,
//
// where nsz[k] = −s²·ζ_k and diag[a] = s²·ζ_a·(1 − 2ζ_a)/2 (halving and doubling are exact,
// so diag[a]·(e[a]+e[a]) is s²·ζ_a·(1 − 2ζ_a)·e[a] to the bit). The coefficient of a pair is
// computed from the ordered pair, so blocks (a,b) and (b,a) are equal bit for bit. A float32
// row rounds the coefficient to float32 and computes the block in float32.

// secondCoefs fills nsz and diag from the gate z. It reports whether every coefficient is 0
// or of magnitude in [2⁻⁹⁹, 2¹⁰⁰]: then, with |e| ≤ 2¹⁰⁰, a block computed in float32
// neither overflows nor loses precision to underflow. Off the diagonal that is checked on s²
// and the smallest nonzero ζ (a coefficient lies between s²·ζ_min² and s² in magnitude), on
// the diagonal coefficient by coefficient; a NaN fails both.
func secondCoefs(nsz, diag, z []float64, s2 float64) bool {
	zmin := math.Inf(1)
	ok := true
	for a, za := range z {
		f := s2 * za * (1 - float64(2*za)) / 2
		diag[a] = f
		nsz[a] = -(s2 * za)
		if fa := math.Abs(f); fa != 0 && !(fa >= 0x1p-99 && fa <= 0x1p100) {
			ok = false
		}
		if za > 0 && za < zmin {
			zmin = za
		} else if !(za >= 0) {
			ok = false // NaN
		}
	}
	return ok && offDiagonalOK(s2, zmin, len(z))
}

// offDiagonalOK is secondCoefs' check off the diagonal, from s² and the smallest positive ζ of
// the K (+Inf if none).
func offDiagonalOK(s2, zmin float64, K int) bool {
	return K <= 1 || (s2 <= 0x1p100 && (math.IsInf(zmin, 1) || s2*zmin*zmin >= 0x1p-98))
}

// padK is K rounded up to a multiple of 4: the length of the padded gate, nsz and diag, and
// the row length of the coefficient matrix (secondCoefsVec).
func padK(K int) int { return (K + 3) &^ 3 }

// pairCoef is the float64 coefficient of block (a,b).
func pairCoef(nsz, z, diag []float64, a, b int) float64 {
	switch {
	case a < b:
		return nsz[a] * z[b]
	case a > b:
		return nsz[b] * z[a]
	}
	return diag[a]
}

// rowT writes one row of the second channel, K×K blocks of P, block (a,b) at o[(a·os+b)·P]
// (os = K for the second channel), in the element type: exact for float64, a few float32
// ulps of the terms for float32. It is a leaf function, with its inner loop unrolled by four,
// so that the loops keep their registers.
//
//go:noinline
func rowT[T gatejet.Float](o []T, nsz, z, diag []float64, e []T, K, P, os int) {
	for a := 0; a < K; a++ {
		ea := e[a*P : a*P+P]
		for b := 0; b < K; b++ {
			f := T(pairCoef(nsz, z, diag, a, b))
			ob := o[(a*os+b)*P : (a*os+b)*P+P]
			eb := e[b*P : b*P+P]
			eb, ea := eb[:len(ob)], ea[:len(ob)]
			c := 0
			for ; c+4 <= len(ob); c += 4 {
				oc, xc, yc := ob[c:c+4:c+4], ea[c:c+4:c+4], eb[c:c+4:c+4]
				oc[0] = f * (xc[0] + yc[0])
				oc[1] = f * (xc[1] + yc[1])
				oc[2] = f * (xc[2] + yc[2])
				oc[3] = f * (xc[3] + yc[3])
			}
			for ; c < len(ob); c++ {
				ob[c] = f * (ea[c] + eb[c])
			}
		}
	}
}

// rowGo is rowT computed in float64 and rounded once: the path for float32 rows whose values
// are not well inside float32's range.
//
//go:noinline
func rowGo[T gatejet.Float](o []T, nsz, z, diag, e []float64, K, P, os int) {
	for a := 0; a < K; a++ {
		ea := e[a*P : a*P+P]
		for b := 0; b < K; b++ {
			f := pairCoef(nsz, z, diag, a, b)
			ob := o[(a*os+b)*P : (a*os+b)*P+P]
			eb := e[b*P : b*P+P]
			eb, ea := eb[:len(ob)], ea[:len(ob)]
			for c := range ob {
				ob[c] = T(f * (ea[c] + eb[c]))
			}
		}
	}
}

// HVP writes the Hessian-vector product hvp[n][a][c] = Σ_b second[n][a][b][c]·v[n][b] into dst
// [N,K,P] without building second:
//
//	hvp[a][c] = s²·ζ_a·( e[a][c]·u_a − w_c ),  u_a = v_a − Σ_b ζ_b v_b,  w_c = Σ_b ζ_b u_b e[b][c].
//
// Cost O(K·P) per row. v is [N,K].
func (sm Softmax[T]) HVP(dst, logits, decoded, v []T, sh Shape) error {
	return hvp("softmaxjet.Softmax.HVP", sh, softmaxParam(sm.InvTau), softmaxRows[T, hvpRows[T]]{}, dst, logits, decoded, v)
}

type hvpRows[T gatejet.Float] struct{}

func (hvpRows[T]) carve(c *carver, K, P int) (u, w, f, zu []float64) {
	return c.f64(K, 1), c.f64(P, 1), c.f64(K, 1), c.f64(K, 1)
}

func (k hvpRows[T]) count(c carver, K, P int) carver {
	k.carve(&c, K, P)
	return c
}

func (k hvpRows[T]) row(j *job[T], r *rowSoftmax, n int) {
	K, P := j.K, j.P
	s2 := j.s * j.s
	cut := r.rest
	u, w, f, zu := k.carve(&cut, K, P)
	centredDirection(u, w, zu, r.z, r.e, j.v[n*K:n*K+K], K, P)
	for a, za := range r.z {
		f[a] = s2 * za
	}
	hvpOutVec(j.o0[n*K*P:(n+1)*K*P], r.e, w, f, u, K, P)
}

// hvpOutGo writes o[a][c] = T(f_a·(e[a][c]·u_a − w_c)).
func hvpOutGo[T gatejet.Float](o []T, e, w, f, u []float64, K, P int) {
	for a := 0; a < K; a++ {
		fa, ua := f[a], u[a]
		oa := o[a*P : a*P+P]
		ea := e[a*P : a*P+P]
		ea = ea[:len(oa)]
		wa := w[:len(oa)]
		for c := range oa {
			oa[c] = T(fa * (float64(ea[c]*ua) - wa[c]))
		}
	}
}

// centredDirection fills u_a = v_a − Σ_b ζ_b v_b and w_c = Σ_b ζ_b u_b e[b][c] (zu holds
// ζ_b·u_b).
func centredDirection[T gatejet.Float](u, w, zu, z, e []float64, v []T, K, P int) {
	vbar := 0.0
	for b := 0; b < K; b++ {
		vbar += z[b] * float64(v[b])
	}
	for b := 0; b < K; b++ {
		u[b] = float64(v[b]) - vbar
		zu[b] = z[b] * u[b]
	}
	meanVec(w, zu, e, K, P)
}

// GaussNewton writes the Gauss-Newton slabs H[n][a][b] = Σ_c first[n][a][c]·first[n][b][c] =
// s²·ζ_a·ζ_b·Σ_c e[a][c]·e[b][c] into dst [N,K,K] without building first. Each slab is
// symmetric positive semi-definite; it is computed on a ≤ b and mirrored, so it is exactly
// symmetric. Cost O(K²·P) per row.
func (sm Softmax[T]) GaussNewton(dst, logits, decoded []T, sh Shape) error {
	return forward("softmaxjet.Softmax.GaussNewton", sh, softmaxParam(sm.InvTau), softmaxRows[T, gaussNewtonRows[T]]{}, sh.K*sh.K*sh.P, dst, sh.GNLen(), logits, decoded)
}

type gaussNewtonRows[T gatejet.Float] struct{ noPieces }

func (gaussNewtonRows[T]) row(j *job[T], r *rowSoftmax, n int) {
	K, s, z := j.K, j.s, r.z
	for a := range z {
		z[a] *= s // ζ scaled by s: first[a][c] = z[a]·e[a][c]
	}
	gramRow(j.o0[n*K*K:(n+1)*K*K], z, r.e, K, j.P)
}

// gramRow writes H[a][b] = f_a f_b Σ_c e[a][c] e[b][c] for a ≤ b and mirrors it. Four
// columns b at a time, each dot product its own sum over c in order (the same bits as one
// at a time): four independent chains of additions where one would wait on each add. Each
// product is rounded before it is added (float64(x*y)), so that no build fuses some of them
// into FMAs and not others.
func gramRow[T gatejet.Float](out []T, f, e []float64, K, P int) {
	put := func(a, b int, dot float64) {
		h := T(f[a] * f[b] * dot)
		out[a*K+b] = h
		out[b*K+a] = h
	}
	for a := 0; a < K; a++ {
		ea := e[a*P : a*P+P]
		b := a
		for ; b+4 <= K; b += 4 {
			e0, e1, e2, e3 := e[b*P:b*P+P], e[(b+1)*P:(b+1)*P+P], e[(b+2)*P:(b+2)*P+P], e[(b+3)*P:(b+3)*P+P]
			e0, e1, e2, e3 = e0[:len(ea)], e1[:len(ea)], e2[:len(ea)], e3[:len(ea)]
			d0, d1, d2, d3 := 0.0, 0.0, 0.0, 0.0
			for c, x := range ea {
				d0 += float64(x * e0[c])
				d1 += float64(x * e1[c])
				d2 += float64(x * e2[c])
				d3 += float64(x * e3[c])
			}
			put(a, b, d0)
			put(a, b+1, d1)
			put(a, b+2, d2)
			put(a, b+3, d3)
		}
		for ; b < K; b++ {
			eb := e[b*P : b*P+P]
			eb = eb[:len(ea)]
			dot := 0.0
			for c := range ea {
				dot += float64(ea[c] * eb[c])
			}
			put(a, b, dot)
		}
	}
}

// Softmax is the softmax gate ζ = softmax(InvTau·l) as a Gate: its methods Value …
// GaussNewtonVJP are the channels and their VJPs at inverse temperature InvTau.
type Softmax[T gatejet.Float] struct{ InvTau float64 }

var _ Gate[float64] = Softmax[float64]{}

package softmaxjet

import (
	"unsafe"

	"github.com/gatejet/gatejet"
	"github.com/gatejet/gatejet/internal/check"
)

// The coordinate jets: the row's primaries are p = (ℓ_1..ℓ_K, t_1..t_K), the gate logits and
// one latent coordinate per atom, and atom k's decoded row d_k(t_k) comes with its first and
// second derivatives in t_k: d0, d1, d2, each [N,K,P]. With ζ = ζ(ℓ) the gate and
// J[a][k] = ∂ζ_k/∂ℓ_a its Jacobian,
//
//	first[a][c]   = the gate's first channel over d0    first[K+k][c] = ζ_k·d1[k][c]
//	second: ℓℓ block the gate's second channel over d0, ℓt and tℓ blocks J[a][k]·d1[k][c],
//	        tt block δ_kj·ζ_k·d2[k][c]
//
// (docs/math.md, "Latent coordinates"). Per row, first and the HVP are [2K,P], second
// [2K,2K,P], the slab [2K,2K] and v [2K]. The built-in gates have their own rows; any other
// Gate runs through its methods (coordGeneric).

// coordCheck checks the shape of a coordinate-jet call: Shape.Check, and that the outputs'
// N·2K·2K·P elements fit in an int.
func coordCheck(op string, sh Shape) error {
	if err := sh.Check(op); err != nil {
		return err
	}
	if _, ok := check.Elems(sh.N, sh.K, sh.K, sh.P, 4); !ok {
		return check.Errorf(gatejet.ErrSize, op, "shape", "N·2K·2K·P overflows int (N=%d K=%d P=%d)", sh.N, sh.K, sh.P)
	}
	return nil
}

// coordKind names the four coordinate channels.
type coordKind int

const (
	coordFirst coordKind = iota
	coordSecond
	coordGN
	coordHVP
)

var coordOps = [...]string{
	coordFirst:  "softmaxjet.CoordFirst",
	coordSecond: "softmaxjet.CoordSecond",
	coordGN:     "softmaxjet.CoordGaussNewton",
	coordHVP:    "softmaxjet.CoordHVP",
}

// dstLen is the length of the channel's output.
func (k coordKind) dstLen(sh Shape) int {
	K2 := 2 * sh.K
	switch k {
	case coordSecond:
		return sh.N * K2 * K2 * sh.P
	case coordGN:
		return sh.N * K2 * K2
	}
	return sh.N * K2 * sh.P
}

// rowWork is a row's work for par.For: the elements it writes, or reads for Gauss-Newton.
func (k coordKind) rowWork(sh Shape) int {
	if k == coordFirst || k == coordHVP {
		return 2 * sh.K * sh.P
	}
	return 4 * sh.K * sh.K * sh.P
}

// CoordFirst writes the first channel over the primaries p = (ℓ, t) of gate g into dst
// [N,2K,P]: row a < K is ∂ẑ/∂ℓ_a, the gate's first channel over d0; row K+k is
// ∂ẑ/∂t_k = ζ_k·d1[k]. d0 and d1 [N,K,P] are the decoded rows and their derivatives in t;
// logits is [N,K]. Cost O(K·P) per row for the built-in gates.
func CoordFirst[T gatejet.Float](g Gate[T], dst, logits, d0, d1 []T, sh Shape) error {
	return coordRun(coordFirst, g, dst, logits, d0, d1, nil, nil, sh)
}

// CoordSecond writes the second channel over the primaries p = (ℓ, t) of gate g into dst
// [N,2K,2K,P], second[(a·2K+b)·P+c] per row: the ℓℓ block (a, b < K) is the gate's second
// channel over d0, the ℓt block second[a][K+k] = ∂ζ_k/∂ℓ_a·d1[k] and the tℓ block its mirror,
// the tt block δ_kj·ζ_k·d2[k]. The blocks beyond ℓℓ are mirrored bit for bit, so the channel
// is exactly symmetric in (a, b) when the gate's is (the built-in gates'). d0, d1, d2 [N,K,P]
// are the decoded rows and their first and second derivatives in t. Cost O(K²·P) per row,
// one multiply or less per element written for the built-in gates.
func CoordSecond[T gatejet.Float](g Gate[T], dst, logits, d0, d1, d2 []T, sh Shape) error {
	return coordRun(coordSecond, g, dst, logits, d0, d1, d2, nil, sh)
}

// CoordGaussNewton writes the Gauss-Newton slabs over the primaries p = (ℓ, t) of gate g,
// H = first·firstᵀ contracted over the P columns, into dst [N,2K,2K], without building first.
// The ℓℓ block is the gate's own slab over d0. Each slab is computed on a ≤ b and mirrored,
// so it is exactly symmetric. Cost O(K²·P) per row.
func CoordGaussNewton[T gatejet.Float](g Gate[T], dst, logits, d0, d1 []T, sh Shape) error {
	return coordRun(coordGN, g, dst, logits, d0, d1, nil, nil, sh)
}

// CoordHVP writes the Hessian-vector product over the primaries p = (ℓ, t) of gate g,
// hvp[a][c] = Σ_b second[a][b][c]·v_b, into dst [N,2K,P] for v [N,2K] (v_ℓ then v_t in each
// row), without building second. Cost O(K·P) per row for the built-in gates, O(K²·P)
// through another gate's methods.
func CoordHVP[T gatejet.Float](g Gate[T], dst, logits, d0, d1, d2, v []T, sh Shape) error {
	return coordRun(coordHVP, g, dst, logits, d0, d1, d2, v, sh)
}

// coordRun checks a coordinate-jet call and runs it with the gate's own rows, or through
// its methods.
func coordRun[T gatejet.Float](kind coordKind, g Gate[T], dst, logits, d0, d1, d2, v []T, sh Shape) error {
	op := coordOps[kind]
	if err := coordCheck(op, sh); err != nil {
		return err
	}
	a := args[T]{o0: dst, l: logits, d: d0, d1: d1, d2: d2, v: v}
	// A fixed array, not an appended slice: the checks' arguments stay on the stack.
	all := [...]check.Arg{check.Out("dst", dst, kind.dstLen(sh)), check.In("logits", logits, sh.LogitsLen()),
		check.In("d0", d0, sh.DecodedLen()), check.In("d1", d1, sh.DecodedLen()),
		check.In("d2", d2, sh.DecodedLen()), check.In("v", v, 2*sh.LogitsLen())}
	cargs := all[:4]
	switch kind {
	case coordSecond:
		cargs = all[:5]
	case coordHVP:
		cargs = all[:6]
	}
	w := kind.rowWork(sh)
	switch gt := g.(type) {
	case Softmax[T]:
		return runKernel(op, sh, softmaxParam(gt.InvTau), softmaxCoordKernel[T](kind), w, a, cargs...)
	case *Softmax[T]:
		if gt != nil {
			return runKernel(op, sh, softmaxParam(gt.InvTau), softmaxCoordKernel[T](kind), w, a, cargs...)
		}
	case Logistic[T]:
		return runKernel(op, sh, logisticParams(gt.Alpha, gt.Beta), logisticCoordKernel[T](kind), w, a, cargs...)
	case *Logistic[T]:
		if gt != nil {
			return runKernel(op, sh, logisticParams(gt.Alpha, gt.Beta), logisticCoordKernel[T](kind), w, a, cargs...)
		}
	}
	if g == nil || isNilGate(g) {
		return check.Errorf(gatejet.ErrParam, op, "g", "nil gate")
	}
	if err := validate(op, sh, &gate{&anyGateKind, gateParams{}}, cargs...); err != nil {
		return err
	}
	return coordGeneric(kind, g, a, sh)
}

// isNilGate reports a nil pointer to a built-in gate (other nil pointers are their
// methods' to handle).
func isNilGate[T gatejet.Float](g Gate[T]) bool {
	switch gt := g.(type) {
	case *Softmax[T]:
		return gt == nil
	case *Logistic[T]:
		return gt == nil
	}
	return false
}

// anyGateKind stands for a gate whose parameters its own methods check.
var anyGateKind = gateKind{check: func(string, int, float64, []float64, []float64) error { return nil }}

func softmaxCoordKernel[T gatejet.Float](kind coordKind) kernel[T] {
	switch kind {
	case coordFirst:
		return softmaxRows[T, coordFirstRows[T]]{}
	case coordSecond:
		return coordSecondRows[T]{}
	case coordGN:
		return softmaxRows[T, coordGNRows[T]]{}
	}
	return softmaxRows[T, coordHVPRows[T]]{}
}

func logisticCoordKernel[T gatejet.Float](kind coordKind) kernel[T] {
	switch kind {
	case coordFirst:
		return logisticRows[T, logisticCoordFirstRows[T]]{}
	case coordSecond:
		return logisticRows[T, logisticCoordSecondRows[T]]{}
	case coordGN:
		return logisticRows[T, logisticCoordGNRows[T]]{}
	}
	return logisticRows[T, logisticCoordHVPRows[T]]{}
}

// coordTRows writes the t rows of the first channel, out[k][c] = ζ_k·d1[k][c], rows of
// out stride elements apart (P for a row of [2K,P]).
func coordTRows[T gatejet.Float](out []T, z []float64, d1 []T, K, P int) {
	scaledRows(out, P, d1, z[:K], P)
}

// ---- softmax ----

type coordFirstRows[T gatejet.Float] struct{ noPieces }

func (coordFirstRows[T]) row(j *job[T], r *rowSoftmax, n int) {
	K, P := j.K, j.P
	out := j.o0[n*2*K*P : (n+1)*2*K*P]
	firstInto(out[:K*P], r, j.s, K, P)
	coordTRows(out[K*P:], r.z, j.d1[n*K*P:(n+1)*K*P], K, P)
}

// firstInto writes the softmax first channel of the row r into out [K,P]: out[a][c] =
// s·ζ_a·e[a][c]. firstRows and coordFirstRows both write it.
func firstInto[T gatejet.Float](out []T, r *rowSoftmax, s float64, K, P int) {
	z, e := r.z, r.e
	for a := 0; a < K; a++ {
		f := s * z[a]
		oa := out[a*P : a*P+P]
		ea := e[a*P : a*P+P]
		ea = ea[:len(oa)]
		for c := range oa {
			oa[c] = T(f * ea[c])
		}
	}
}

// coordSecondRows writes rows of the softmax coordinate second channel: the ℓℓ blocks as
// secondRows writes the second channel (the same bits, the same row writer with the blocks
// 2K apart), then the blocks of the coordinates, each a scaled copy of a row of d1 or d2, or
// zero (coordSecondRest). Both write with non-temporal stores where secondRows would.
type coordSecondRows[T gatejet.Float] struct{}

func (coordSecondRows[T]) count(c carver, K, P int) carver {
	var r coordSecondRow[T]
	c = r.rowSoftmax.count(c, K, P)
	r.secondRow.carve(&c, K, P)
	r.carveCoord(&c, K, P)
	return c
}

// coordSecondRow is secondRow with the pieces of coordSecondRest.
type coordSecondRow[T gatejet.Float] struct {
	secondRow[T]
	coordRest[T]
}

// coordRest is the workspace of coordSecondRest: the gate's Jacobian J [K,K] (filled by the
// caller) and its transpose, K zero coefficients and a zero row of P.
type coordRest[T gatejet.Float] struct {
	J, Jt, zf []float64
	zeros     []T
}

func (r *coordRest[T]) carveCoord(c *carver, K, P int) {
	r.J, r.Jt, r.zf = c.f64(K, K), c.f64(K, K), c.f64(K, 1)
	r.zeros = carveT[T](c, P, 1)
}

func (coordSecondRows[T]) rows(j *job[T], lo, hi int) {
	K, P := j.K, j.P
	r := coordSecondRow[T]{secondRow: newSecondRow[T](j.scratch, K, P, j.s)}
	defer r.sc.release()
	c := r.rest
	r.secondRow.carve(&c, K, P)
	r.carveCoord(&c, K, P)
	clear(r.zf)
	clear(r.zeros)
	K2 := 2 * K
	nt := len(j.o0)*r.size >= ntMin
	usedNT := false
	for n := lo; n < hi; n++ {
		out := j.o0[n*K2*K2*P : (n+1)*K2*K2*P]
		usedNT = r.write(out, j.l[n*K:n*K+K], j.d[n*K*P:(n+1)*K*P], K, P, K2, nt) || usedNT
		softmaxJacobian(r.J, r.z, j.s, K)
		usedNT = r.coordSecondRest(out, r.z, j.d1[n*K*P:(n+1)*K*P], j.d2[n*K*P:(n+1)*K*P], K, P, nt) || usedNT
	}
	if usedNT {
		sfence() // order the non-temporal stores before par.For reports the rows done
	}
}

// softmaxJacobian writes J[a][k] = ∂ζ_k/∂ℓ_a = s·ζ_k·(δ_ak − ζ_a).
func softmaxJacobian(J, z []float64, s float64, K int) {
	for a := 0; a < K; a++ {
		ja := J[a*K : a*K+K]
		sa := s * z[a]
		for k := range ja {
			ja[k] = -(sa * z[k])
		}
		ja[a] = sa * (1 - z[a])
	}
}

// coordSecondRest writes every block of a coordinate second-channel row [2K,2K,P] but the ℓℓ
// blocks, from the Jacobian r.J: block (a, K+k) is J[a][k]·d1[k] and its mirror (K+k, a)
// the same products (from the transpose of J, the same values), so the channel is exactly
// symmetric; the tt blocks are ζ_k·d2[k] on the diagonal and zero off it. Each product is
// computed in float64 and rounded once (scaleVec). It reports whether it used non-temporal
// stores (asked for with nt).
func (r *coordRest[T]) coordSecondRest(out []T, z []float64, d1, d2 []T, K, P int, nt bool) bool {
	K2 := 2 * K
	J, Jt := r.J[:K*K], r.Jt[:K*K]
	for a := 0; a < K; a++ {
		for k := 0; k < K; k++ {
			Jt[k*K+a] = J[a*K+k]
		}
	}
	used := false
	for a := 0; a < K; a++ {
		used = scaleVec(out[(a*K2+K)*P:(a*K2+K2)*P], d1, J[a*K:a*K+K], K, P, P, nt) || used
	}
	for k := 0; k < K; k++ {
		o := out[(K+k)*K2*P : (K+k+1)*K2*P]
		d1k := d1[k*P : k*P+P]
		used = scaleVec(o, d1k, Jt[k*K:k*K+K], K, P, 0, nt) || used
		tt := o[K*P:]
		scaleVec(tt, r.zeros, r.zf, k, P, 0, nt)
		scaleVec(tt[k*P:], d2[k*P:k*P+P], z[k:k+1], 1, P, 0, nt)
		scaleVec(tt[(k+1)*P:], r.zeros, r.zf, K-k-1, P, 0, nt)
	}
	return used
}

// coordGNRows writes the softmax Gauss-Newton slab over (ℓ, t): the Gram matrix of the 2K
// rows of first, f_a·E[a] with E = (e; d1) and f = (s·ζ; ζ), as gaussNewtonRows does for
// the K logit rows (the same bits on the ℓℓ block).
type coordGNRows[T gatejet.Float] struct{ coordGNPieces }

// coordGNPieces is the workspace of a coordinate Gauss-Newton row, either gate's: the 2K
// rows E [2K,P] and their factors f [2K].
type coordGNPieces struct{}

func (coordGNPieces) carve(c *carver, K, P int) (E, f []float64) {
	return c.f64(2*K, P), c.f64(2*K, 1)
}

func (k coordGNPieces) count(c carver, K, P int) carver {
	k.carve(&c, K, P)
	return c
}

func (k coordGNRows[T]) row(j *job[T], r *rowSoftmax, n int) {
	K, P := j.K, j.P
	cut := r.rest
	E, f := k.carve(&cut, K, P)
	copy(E, r.e)
	for i, x := range j.d1[n*K*P : (n+1)*K*P] {
		E[K*P+i] = float64(x)
	}
	for a, za := range r.z {
		f[a], f[K+a] = za*j.s, za
	}
	gramRow(j.o0[n*4*K*K:(n+1)*4*K*K], f, E, 2*K, P)
}

// coordHVPRows writes the softmax coordinate HVP (docs/math.md):
//
//	hvp[a][c]   = s²·ζ_a·(e[a][c]·u_a − w_c) + s·ζ_a·(v_ta·d1[a][c] − m_c)
//	            = s·ζ_a·((s·u_a·e[a][c] + v_ta·d1[a][c]) − q_c),   q_c = s·w_c + m_c
//	hvp[K+k][c] = s·ζ_k·u_k·d1[k][c] + ζ_k·v_tk·d2[k][c]
//
// with u, w as for HVP and m_c = Σ_k ζ_k·v_tk·d1[k][c]: five operations an element of the
// logit rows, three of the coordinate rows (coordHVPlVec, coordHVPtVec).
type coordHVPRows[T gatejet.Float] struct{}

func (coordHVPRows[T]) carve(c *carver, K, P int) (u, w, zu, q, zv, g, su, vt []float64) {
	return c.f64(K, 1), c.f64(P, 1), c.f64(K, 1), c.f64(P, 1), c.f64(K, 1), c.f64(K, 1), c.f64(K, 1), c.f64(K, 1)
}

func (k coordHVPRows[T]) count(c carver, K, P int) carver {
	k.carve(&c, K, P)
	return c
}

func (k coordHVPRows[T]) row(j *job[T], r *rowSoftmax, n int) {
	K, P, s, z := j.K, j.P, j.s, r.z
	cut := r.rest
	u, w, zu, q, zv, g, su, vt := k.carve(&cut, K, P)
	v := j.v[n*2*K : (n+1)*2*K]
	centredDirection(u, w, zu, z, r.e, v[:K], K, P)
	for k, x := range v[K:] {
		vt[k] = float64(x)
		zv[k] = z[k] * vt[k]
		g[k] = s * z[k]
		su[k] = s * u[k]
	}
	d1, d2 := j.d1[n*K*P:(n+1)*K*P], j.d2[n*K*P:(n+1)*K*P]
	meanVec(q, zv, d1, K, P)
	w = w[:len(q)]
	for c := range q {
		q[c] += float64(s * w[c])
	}
	out := j.o0[n*2*K*P : (n+1)*2*K*P]
	for k := range u {
		u[k] *= g[k] // s·ζ_k·u_k, the coordinate rows' factor of d1
	}
	coordHVPlVec(out[:K*P], r.e, d1, q, g, su, vt, K, P)
	coordHVPtVec(out[K*P:], d1, d2, u, zv, K, P)
}

// coordHVPlGo writes o[a][c] = T(g_a·((su_a·e[a][c] + vt_a·d1[a][c]) − q_c)), each product
// rounded before the sum (float64(x*y): no FMA, as the AVX loop).
func coordHVPlGo[T gatejet.Float](o []T, e []float64, d1 []T, q, g, su, vt []float64, K, P int) {
	for a := 0; a < K; a++ {
		ga, sa, va := g[a], su[a], vt[a]
		oa := o[a*P : a*P+P]
		ea, da := e[a*P:a*P+P], d1[a*P:a*P+P]
		ea, da, qa := ea[:len(oa)], da[:len(oa)], q[:len(oa)]
		for c := range oa {
			x := float64(sa*ea[c]) + float64(va*float64(da[c]))
			oa[c] = T(ga * (x - qa[c]))
		}
	}
}

// coordHVPtGo writes o[k][c] = T(f_k·x[k][c] + h_k·y[k][c]), each product rounded before the
// sum.
func coordHVPtGo[T gatejet.Float](o, x, y []T, f, h []float64, K, P int) {
	for k := 0; k < K; k++ {
		fk, hk := f[k], h[k]
		ok := o[k*P : k*P+P]
		xk, yk := x[k*P:k*P+P], y[k*P:k*P+P]
		xk, yk = xk[:len(ok)], yk[:len(ok)]
		for c := range ok {
			ok[c] = T(float64(fk*float64(xk[c])) + float64(hk*float64(yk[c])))
		}
	}
}

// ---- logistic: J is diagonal, J[k][k] = α_k·σ'_k (the row state's d1) ----

type logisticCoordFirstRows[T gatejet.Float] struct{ noPieces }

func (logisticCoordFirstRows[T]) row(j *job[T], r *rowLogistic, n int) {
	K, P := j.K, j.P
	out := j.o0[n*2*K*P : (n+1)*2*K*P]
	scaledRows(out, P, j.d[n*K*P:(n+1)*K*P], r.d1, P)
	coordTRows(out[K*P:], r.z, j.d1[n*K*P:(n+1)*K*P], K, P)
}

// logisticCoordSecondRows writes the logistic coordinate second channel, whose blocks are
// zero but for four diagonals: (a, a) = α_a²σ”_a·d0[a], (a, K+a) = (K+a, a) = α_aσ'_a·d1[a]
// and (K+a, K+a) = ζ_a·d2[a]. Each of the 2K rows of blocks is a run of zero blocks, a
// scaled block, zeros, a scaled block, zeros, written by scaleVec (a zero block is a zero
// row times 0), with non-temporal stores where the softmax rows use them.
type logisticCoordSecondRows[T gatejet.Float] struct{}

func (logisticCoordSecondRows[T]) carve(c *carver, K, P int) (zf []float64, zeros []T) {
	return c.f64(K, 1), carveT[T](c, P, 1)
}

func (k logisticCoordSecondRows[T]) count(c carver, K, P int) carver {
	k.carve(&c, K, P)
	return c
}

func (k logisticCoordSecondRows[T]) row(j *job[T], r *rowLogistic, n int) {
	K, P := j.K, j.P
	K2 := 2 * K
	cut := r.rest
	zf, zeros := k.carve(&cut, K, P)
	clear(zf)
	clear(zeros)
	nt := len(j.o0)*int(unsafe.Sizeof(zeros[0])) >= ntMin
	out := j.o0[n*K2*K2*P : (n+1)*K2*K2*P]
	rows := n * K * P
	d0, d1, d2 := j.d[rows:rows+K*P], j.d1[rows:rows+K*P], j.d2[rows:rows+K*P]
	used := false
	// put writes blocks [from, at) of the row of blocks o as zeros and block at as f·x.
	put := func(o []T, from, at int, f []float64, x []T) {
		used = scaleVec(o[from*P:at*P], zeros, zf, at-from, P, 0, nt) || used
		used = scaleVec(o[at*P:(at+1)*P], x, f, 1, P, 0, nt) || used
	}
	for i := 0; i < K2; i++ {
		a := i % K
		o := out[i*K2*P : (i+1)*K2*P]
		xa := func(d []T) []T { return d[a*P : a*P+P] }
		if i < K {
			put(o, 0, a, r.d2[a:a+1], xa(d0))
			put(o, a+1, K+a, r.d1[a:a+1], xa(d1))
		} else {
			put(o, 0, a, r.d1[a:a+1], xa(d1))
			put(o, a+1, K+a, r.z[a:a+1], xa(d2))
		}
		used = scaleVec(o[(K+a+1)*P:], zeros, zf, K-a-1, P, 0, nt) || used
	}
	if used {
		sfence()
	}
}

type logisticCoordGNRows[T gatejet.Float] struct{ coordGNPieces }

func (k logisticCoordGNRows[T]) row(j *job[T], r *rowLogistic, n int) {
	K, P := j.K, j.P
	cut := r.rest
	E, f := k.carve(&cut, K, P)
	rows := n * K * P
	for i, x := range j.d[rows : rows+K*P] {
		E[i] = float64(x)
	}
	for i, x := range j.d1[rows : rows+K*P] {
		E[K*P+i] = float64(x)
	}
	copy(f, r.d1)
	copy(f[K:], r.z)
	gramRow(j.o0[n*4*K*K:(n+1)*4*K*K], f, E, 2*K, P)
}

// logisticCoordHVPRows: hvp[a] = α_a²σ”_a·v_ℓa·d0[a] + α_aσ'_a·v_ta·d1[a],
// hvp[K+k] = α_kσ'_k·v_ℓk·d1[k] + ζ_k·v_tk·d2[k].
type logisticCoordHVPRows[T gatejet.Float] struct{ noPieces }

func (logisticCoordHVPRows[T]) row(j *job[T], r *rowLogistic, n int) {
	K, P := j.K, j.P
	rows := n * K * P
	d0, d1, d2 := j.d[rows:rows+K*P], j.d1[rows:rows+K*P], j.d2[rows:rows+K*P]
	v := j.v[n*2*K : (n+1)*2*K]
	out := j.o0[n*2*K*P : (n+1)*2*K*P]
	for a := 0; a < K; a++ {
		vl, vt := float64(v[a]), float64(v[K+a])
		axpby(out[a*P:a*P+P], r.d2[a]*vl, d0[a*P:a*P+P], r.d1[a]*vt, d1[a*P:a*P+P])
		axpby(out[(K+a)*P:(K+a+1)*P], r.d1[a]*vl, d1[a*P:a*P+P], r.z[a]*vt, d2[a*P:a*P+P])
	}
}

// scaleGo writes n rows of P, o[i·P+c] = T(f[i]·x[i·xs+c]): xs = P scales n rows of x, xs = 0
// one row n times.
func scaleGo[T gatejet.Float](o, x []T, f []float64, n, P, xs int) {
	for i, fi := range f[:n] {
		oi := o[i*P : i*P+P]
		xi := x[i*xs : i*xs+P]
		xi = xi[:len(oi)]
		for c := range oi {
			oi[c] = T(fi * float64(xi[c]))
		}
	}
}

// axpby writes o[c] = T(f·x[c] + g·y[c]).
func axpby[T gatejet.Float](o []T, f float64, x []T, g float64, y []T) {
	x, y = x[:len(o)], y[:len(o)]
	for c := range o {
		o[c] = T(f*float64(x[c]) + g*float64(y[c]))
	}
}

// ---- any other gate, through its methods ----

// genericChunk is the number of elements of the largest buffer coordGeneric takes for a chunk
// of rows (one row's worth if that is more).
const genericChunk = 1 << 16

// coordGeneric runs a coordinate channel for a gate other than the built-in ones through its
// methods, on chunks of rows: ζ and J are its Value and First on identity decoded rows
// (P = K: ẑ_c = ζ_c, first[a][c] = ∂ζ_c/∂ℓ_a), the ℓ blocks its First, Second or HVP over d0;
// the rest is assembled here in float64 and rounded once. The call's arguments are checked;
// the gate's methods check its parameters and report their own errors.
func coordGeneric[T gatejet.Float](kind coordKind, g Gate[T], a args[T], sh Shape) error {
	op := coordOps[kind]
	N, K, P := sh.N, sh.K, sh.P
	if N == 0 { // no row, but the gate's parameters are checked as by the gate's own kernels
		return g.Value(nil, nil, nil, Shape{N: 0, K: K, P: K})
	}
	blk := max(K*K, K*P) // a row of the gate's channel
	if kind == coordSecond {
		blk = K * K * P
	}
	nc := max(1, min(N, genericChunk/blk))
	var zero T
	size := int(unsafe.Sizeof(zero))
	for _, dims := range [][]int{{nc, blk}, {2 * K, P}} {
		if _, err := check.Alloc(op, "shape", max(size, 8), dims...); err != nil {
			return err
		}
	}
	id, z, J, ch := make([]T, nc*K*K), make([]T, nc*K), make([]T, nc*K*K), make([]T, nc*blk)
	var vl []T
	if kind == coordHVP {
		vl = make([]T, nc*K)
	}
	for r := 0; r < nc; r++ {
		for k := 0; k < K; k++ {
			id[(r*K+k)*K+k] = 1
		}
	}
	zf, E, f, acc := make([]float64, K), make([]float64, 2*K*P), make([]float64, 2*K), make([]float64, P)
	rest := coordRest[T]{J: make([]float64, K*K), Jt: make([]float64, K*K), zf: make([]float64, K), zeros: make([]T, P)}
	Jf := rest.J
	K2 := 2 * K
	for n0 := 0; n0 < N; n0 += nc {
		m := min(nc, N-n0)
		l := a.l[n0*K : (n0+m)*K]
		d0 := a.d[n0*K*P : (n0+m)*K*P]
		idsh, sub := Shape{N: m, K: K, P: K}, Shape{N: m, K: K, P: P}
		if err := g.Value(z[:m*K], l, id[:m*K*K], idsh); err != nil {
			return err
		}
		if err := g.First(J[:m*K*K], l, id[:m*K*K], idsh); err != nil {
			return err
		}
		var err error
		switch kind {
		case coordFirst, coordGN:
			err = g.First(ch[:m*K*P], l, d0, sub)
		case coordSecond:
			err = g.Second(ch[:m*K*K*P], l, d0, sub)
		case coordHVP:
			for r := 0; r < m; r++ {
				copy(vl[r*K:r*K+K], a.v[(n0+r)*K2:(n0+r)*K2+K])
			}
			err = g.HVP(ch[:m*K*P], l, d0, vl[:m*K], sub)
		}
		if err != nil {
			return err
		}
		for r := 0; r < m; r++ {
			n := n0 + r
			for k := range zf {
				zf[k] = float64(z[r*K+k])
			}
			for i := range Jf {
				Jf[i] = float64(J[r*K*K+i])
			}
			d1 := a.d1[n*K*P : (n+1)*K*P]
			switch kind {
			case coordFirst:
				out := a.o0[n*K2*P : (n+1)*K2*P]
				copy(out, ch[r*K*P:(r+1)*K*P])
				coordTRows(out[K*P:], zf, d1, K, P)
			case coordSecond:
				out := a.o0[n*K2*K2*P : (n+1)*K2*K2*P]
				for i := 0; i < K; i++ {
					copy(out[i*K2*P:i*K2*P+K*P], ch[(r*K+i)*K*P:(r*K+i+1)*K*P])
				}
				rest.coordSecondRest(out, zf, d1, a.d2[n*K*P:(n+1)*K*P], K, P, false)
			case coordGN:
				for i, x := range ch[r*K*P : (r+1)*K*P] {
					E[i] = float64(x)
				}
				for i, x := range d1 {
					E[K*P+i] = float64(x)
				}
				for k := 0; k < K; k++ {
					f[k], f[K+k] = 1, zf[k]
				}
				gramRow(a.o0[n*K2*K2:(n+1)*K2*K2], f, E, K2, P)
			case coordHVP:
				coordHVPGeneric(a.o0[n*K2*P:(n+1)*K2*P], ch[r*K*P:(r+1)*K*P], Jf, zf, a.v[n*K2:(n+1)*K2], d1, a.d2[n*K*P:(n+1)*K*P], acc, K, P)
			}
		}
	}
	return nil
}

// coordHVPGeneric writes one row of the coordinate HVP from the gate's HVP h [K,P] over d0:
//
//	hvp[a][c]   = h[a][c] + Σ_k J[a][k]·v_tk·d1[k][c]
//	hvp[K+k][c] = (Σ_a J[a][k]·v_ℓa)·d1[k][c] + ζ_k·v_tk·d2[k][c]
func coordHVPGeneric[T gatejet.Float](out, h []T, J, z []float64, v, d1, d2 []T, acc []float64, K, P int) {
	for a := 0; a < K; a++ {
		for c := range acc {
			acc[c] = float64(h[a*P+c])
		}
		for k := 0; k < K; k++ {
			f := J[a*K+k] * float64(v[K+k])
			d1k := d1[k*P : k*P+P]
			for c := range acc {
				acc[c] += f * float64(d1k[c])
			}
		}
		oa := out[a*P : a*P+P]
		for c := range oa {
			oa[c] = T(acc[c])
		}
	}
	for k := 0; k < K; k++ {
		f1 := 0.0
		for a := 0; a < K; a++ {
			f1 += J[a*K+k] * float64(v[a])
		}
		axpby(out[(K+k)*P:(K+k+1)*P], f1, d1[k*P:k*P+P], z[k]*float64(v[K+k]), d2[k*P:k*P+P])
	}
}

package ops

import (
	"fmt"

	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/gatejet/gatejet/internal/kernel"
	"github.com/gatejet/gatejet/softmaxjet"
)

// The gradients of the coordinate jets, built from the row-jet ops, the row contractions
// (rowops.go), a reshape that copies (reshape.go) and Gorgonia's slice, concat and batched
// products, so that they are differentiable in turn as far as those are. Per row, with ζ = the gate (the value op over identity decoded rows, P = K) and
// J[a][k] = ∂ζ_k/∂ℓ_a (the first channel over identity rows), the coordinate jets are
//
//	first  = [ first(ℓ, d0) ; ζ⊙d1 ]
//	second = [ second(ℓ, d0), J[a][k]·d1[k] ; (mirror), δ_kj·ζ_k·d2[k] ]
//	hvp    = [ hvp(ℓ, d0, v_ℓ) + first(ℓ, v_t⊙d1) ; (Jᵀv_ℓ)⊙d1 + ζ⊙v_t⊙d2 ]
//	gn     = first·firstᵀ
//
// (x⊙Y scales row k of Y by x_k; hvp's first block uses that first is linear in D, so
// Σ_k J[a][k]·v_t,k·d1[k] = first(ℓ, v_t⊙d1)[a]). The gradient of ⟨G, X⟩ is then each
// term's: the row-jet VJP ops for the terms in d0 and, through ζ and J, the value and first
// channels' VJPs over identity rows with the upstream contracted against d1 or d2. The
// Gauss-Newton slab's VJP is the first channel's at Ĝ = (G + Gᵀ)·first.
//
// The first channel's VJP, hence the Gauss-Newton slab's, uses only differentiable VJPs (the
// value and first channels'): a loss on them can be differentiated twice. So can a loss on
// the HVP or the second channel of a built-in gate, whose row terms' VJPs are built from ζ by
// their closed forms (rowHVPVJP, rowSecondVJP); another gate's use the row HVP's and second
// channel's VJP ops, which are not differentiable, so a loss on those is differentiable once.

// coordVJP returns the gradients of ⟨up, X⟩, X the output of f, with respect to f's inputs
// in, as nodes built by b (nil, with b.err set, on an error).
func coordVJP(b *nodeBuilder, f *coordOp, in gorgonia.Nodes, up *gorgonia.Node) gorgonia.Nodes {
	c := coordCtx{b: b, f: f}
	l, d0, d1 := in[0], in[1], in[2]
	switch f.c {
	case kernel.First:
		return c.firstVJP(l, d0, d1, up)
	case kernel.GaussNewton:
		first := b.apply(newCoordOp(f.g, kernel.First, f.sh, f.dt, f.inherited()), l, d0, d1)
		return c.firstVJP(l, d0, d1, b.batchedMatMul(b.add(up, b.transpose(up)), first))
	case kernel.Second:
		return c.secondVJP(l, d0, d1, in[3], up)
	}
	return c.hvpVJP(l, d0, d1, in[3], in[4], up)
}

// coordCtx builds the nodes of one coordinate jet's gradient.
type coordCtx struct {
	b *nodeBuilder
	f *coordOp
	// Made on first use: identity decoded rows [n,K,K], the gate ζ [n,K] and J [n,K,K].
	eye, zeta, jac *gorgonia.Node
}

// jet is a new row-jet op of the gate for channel ch over P columns.
func (c *coordCtx) jet(ch channel, P int) *jetOp {
	f := c.f
	return newJetOp(f.g, ch, softmaxjet.Shape{N: f.sh.N, K: f.sh.K, P: P}, f.dt, f.inherited())
}

// vjp applies the VJP op with respect to input wrt of channel ch over P columns.
func (c *coordCtx) vjp(ch channel, P, wrt int, children ...*gorgonia.Node) *gorgonia.Node {
	return c.b.apply(newJetVJPOp(c.jet(ch, P), wrt), children...)
}

func (c *coordCtx) identity() *gorgonia.Node {
	if c.eye == nil {
		N, K := c.f.sh.N, c.f.sh.K
		c.eye = c.b.constant(N*K*K, func(i int) float64 {
			if i%(K*K)%(K+1) == 0 {
				return 1
			}
			return 0
		}, N, K, K)
	}
	return c.eye
}

// gate returns ζ [n,K], the value channel over identity decoded rows.
func (c *coordCtx) gate(l *gorgonia.Node) *gorgonia.Node {
	if c.zeta == nil {
		c.zeta = c.b.apply(c.jet(kernel.Value, c.f.sh.K), l, c.identity())
	}
	return c.zeta
}

// jacobian returns J [n,K,K], J[a][k] = ∂ζ_k/∂ℓ_a: the first channel over identity rows.
func (c *coordCtx) jacobian(l *gorgonia.Node) *gorgonia.Node {
	if c.jac == nil {
		c.jac = c.b.apply(c.jet(kernel.First, c.f.sh.K), l, c.identity())
	}
	return c.jac
}

// zetaVJP is the gradient in the logits of ⟨z, ζ⟩ for z [n,K].
func (c *coordCtx) zetaVJP(l, z *gorgonia.Node) *gorgonia.Node {
	return c.vjp(kernel.Value, c.f.sh.K, 0, l, c.identity(), z)
}

// jacobianVJP is the gradient in the logits of ⟨W, J⟩ for W [n,K,K].
func (c *coordCtx) jacobianVJP(l, w *gorgonia.Node) *gorgonia.Node {
	return c.vjp(kernel.First, c.f.sh.K, 0, l, c.identity(), w)
}

// rows returns rows [from, from+K) of axis 1 of x ([n,2K,…]), shaped [n,K,…].
func (c *coordCtx) rows(x *gorgonia.Node, from int) *gorgonia.Node {
	K := c.f.sh.K
	s := append(tensor.Shape{}, x.Shape()...)
	s[1] = K
	return c.b.reshapeCopy(c.b.slice(x, nil, gorgonia.S(from, from+K)), s...)
}

// firstVJP: ⟨G, first⟩ = ⟨G_ℓ, first(ℓ, d0)⟩ + Σ_k ζ_k·⟨G_t[k], d1[k]⟩.
func (c *coordCtx) firstVJP(l, d0, d1, up *gorgonia.Node) gorgonia.Nodes {
	b, P := c.b, c.f.sh.P
	gl, gt := c.rows(up, 0), c.rows(up, c.f.sh.K)
	dl := b.add(c.vjp(kernel.First, P, 0, l, d0, gl), c.zetaVJP(l, b.rowDot(gt, d1)))
	dd0 := c.vjp(kernel.First, P, 1, l, d0, gl)
	dd1 := b.rowScale(c.gate(l), gt)
	return gorgonia.Nodes{dl, dd0, dd1}
}

// secondVJP: ⟨G, second⟩ = ⟨G_ℓℓ, second(ℓ, d0)⟩ + Σ_{a,k} J[a][k]·⟨H[k][a], d1[k]⟩
// + Σ_k ζ_k·⟨G_tt[k][k], d2[k]⟩, H[k][a] = G_ℓt[a][k] + G_tℓ[k][a].
func (c *coordCtx) secondVJP(l, d0, d1, d2, up *gorgonia.Node) gorgonia.Nodes {
	b := c.b
	N, K, P := c.f.sh.N, c.f.sh.K, c.f.sh.P
	block := func(i, j int) *gorgonia.Node {
		return b.reshapeCopy(b.slice(up, nil, gorgonia.S(i, i+K), gorgonia.S(j, j+K)), N, K, K, P)
	}
	gll, glt, gtl, gtt := block(0, 0), block(0, K), block(K, 0), block(K, K)
	h := b.reshapeCopy(b.add(b.permute(glt, 0, 2, 1, 3), gtl), N*K, K, P) // [n·K(k), K(a), P]
	jt := b.reshapeCopy(b.transpose(c.jacobian(l)), N*K, 1, K)            // J[·][k] as rows
	dd1 := b.reshapeCopy(b.batchedMatMul(jt, h), N, K, P)
	w := b.transpose(b.reshapeCopy(b.batchedMatMul(h, b.reshapeCopy(d1, N*K, P, 1)), N, K, K)) // W[a][k]
	diag := c.diagonal(gtt)
	dlRow, dd0 := c.rowSecondVJP(l, d0, gll)
	dl := b.add(b.add(dlRow, c.jacobianVJP(l, w)), c.zetaVJP(l, b.rowDot(diag, d2)))
	dd2 := b.rowScale(c.gate(l), diag)
	return gorgonia.Nodes{dl, dd0, dd1, dd2}
}

// diagonal returns x[n][k][k][c] [n,K,P] of x [n,K,K,P]: flattened, element (k, k, c) of a
// row is at k·(K+1)·P + c, so with K·P zeros appended the row is [K, (K+1)·P] and the
// diagonal its first P columns.
func (c *coordCtx) diagonal(x *gorgonia.Node) *gorgonia.Node {
	b := c.b
	N, K, P := c.f.sh.N, c.f.sh.K, c.f.sh.P
	zeros := b.constant(N*K*P, func(int) float64 { return 0 }, N, K*P)
	padded := b.reshapeCopy(b.concat(1, b.reshapeCopy(x, N, K*K*P), zeros), N, K, (K+1)*P)
	return b.reshapeCopy(b.slice(padded, nil, nil, gorgonia.S(0, P)), N, K, P)
}

// hvpVJP: ⟨G, hvp⟩ = ⟨G_ℓ, hvp(ℓ, d0, v_ℓ)⟩ + ⟨G_ℓ, first(ℓ, v_t⊙d1)⟩ + Σ_{a,k} v_ℓ,a·J[a][k]·q_k
// + Σ_k ζ_k·v_t,k·r_k, with q_k = ⟨G_t[k], d1[k]⟩ and r_k = ⟨G_t[k], d2[k]⟩.
func (c *coordCtx) hvpVJP(l, d0, d1, d2, v, up *gorgonia.Node) gorgonia.Nodes {
	b := c.b
	N, K, P := c.f.sh.N, c.f.sh.K, c.f.sh.P
	gl, gt := c.rows(up, 0), c.rows(up, K)
	vl, vt := c.rows(v, 0), c.rows(v, K)
	zeta, jac := c.gate(l), c.jacobian(l)
	// hvp(ℓ, d0, v_ℓ)
	dl, dd0, dvl := c.rowHVPVJP(l, d0, vl, gl)
	// first(ℓ, v_t⊙d1)
	scaled := b.rowScale(vt, d1)
	dl = b.add(dl, c.vjp(kernel.First, P, 0, l, scaled, gl))
	dScaled := c.vjp(kernel.First, P, 1, l, scaled, gl)
	dvt := b.rowDot(dScaled, d1)
	dd1 := b.rowScale(vt, dScaled)
	// v_ℓᵀ·J·q
	q := b.rowDot(gt, d1)
	dvl = b.add(dvl, b.reshapeCopy(b.batchedMatMul(jac, b.reshapeCopy(q, N, K, 1)), N, K))
	dl = b.add(dl, c.jacobianVJP(l, b.batchedMatMul(b.reshapeCopy(vl, N, K, 1), b.reshapeCopy(q, N, 1, K))))
	jv := b.reshapeCopy(b.batchedMatMul(b.reshapeCopy(vl, N, 1, K), jac), N, K)
	dd1 = b.add(dd1, b.rowScale(jv, gt))
	// ζ⊙v_t·r
	r := b.rowDot(gt, d2)
	dl = b.add(dl, c.zetaVJP(l, b.hadamard(vt, r)))
	dvt = b.add(dvt, b.hadamard(zeta, r))
	dd2 := b.rowScale(b.hadamard(zeta, vt), gt)
	dv := b.concat(1, dvl, dvt)
	return gorgonia.Nodes{dl, dd0, dd1, dd2, dv}
}

// constant is a constant node of the builder's dtype and the given shape, element i f(i).
func (b *nodeBuilder) constant(n int, f func(i int) float64, shape ...int) *gorgonia.Node {
	if b.err != nil {
		return nil
	}
	t, err := newDense(b.op, b.dt, shape)
	if err != nil {
		b.err = err
		return nil
	}
	if b.dt == tensor.Float64 {
		for i := range t.Float64s()[:n] {
			t.Float64s()[i] = f(i)
		}
	} else {
		for i := range t.Float32s()[:n] {
			t.Float32s()[i] = float32(f(i))
		}
	}
	return gorgonia.NewConstant(t)
}

// slice is Gorgonia's slice (a slice of one element drops its axis; callers reshape).
func (b *nodeBuilder) slice(n *gorgonia.Node, s ...tensor.Slice) *gorgonia.Node {
	return b.build("slice", func() (*gorgonia.Node, error) { return gorgonia.Slice(n, s...) }, n)
}

// concat joins nodes along axis.
func (b *nodeBuilder) concat(axis int, ns ...*gorgonia.Node) *gorgonia.Node {
	return b.build(fmt.Sprintf("concatenation along axis %d", axis), func() (*gorgonia.Node, error) { return gorgonia.Concat(axis, ns...) }, ns...)
}

// permute transposes a node by the permutation axes.
func (b *nodeBuilder) permute(n *gorgonia.Node, axes ...int) *gorgonia.Node {
	return b.build(fmt.Sprintf("transpose by %v", axes), func() (*gorgonia.Node, error) { return gorgonia.Transpose(n, axes...) }, n)
}

// rowHVPVJP returns the gradients in ℓ, D and v of ⟨G, hvp(ℓ, D, v)⟩, the row jet's HVP. For
// the built-in gates they are built from ζ (the value op over identity rows, differentiable
// twice) by the closed forms of docs/math.md, polynomials in ζ, D, v and G, so that they are
// differentiable in turn; for another gate they are the HVP's VJP ops, which are not.
func (c *coordCtx) rowHVPVJP(l, d, v, g *gorgonia.Node) (dl, dd, dv *gorgonia.Node) {
	switch c.f.g.k {
	case kernel.SoftmaxGate:
		return c.softmaxHVPVJP(l, d, v, g)
	case kernel.LogisticGate:
		return c.logisticHVPVJP(l, d, v, g)
	}
	P := c.f.sh.P
	return c.vjp(kernel.HVP, P, 0, l, d, v, g), c.vjp(kernel.HVP, P, 1, l, d, v, g), c.vjp(kernel.HVP, P, 2, l, d, v, g)
}

// softmaxHVPVJP is the softmax gate's (its HVP's VJP in docs/math.md, "Vector-Jacobian
// products"): with e = D − ẑ, u = v − ⟨ζ, v⟩, A_k = ⟨G[k], e[k]⟩, γ = ζᵀG, Γ_k = ⟨γ, e[k]⟩,
// β = (ζ⊙u)ᵀG, w = (ζ⊙u)ᵀe and T = A − ⟨ζ, A⟩ − Γ,
//
//	dv = s²·ζ⊙T    dD[k] = s²·(ζ_k·u_k·(G[k] − γ) − ζ_k·β)
//	dℓ = the gate's pull-back of s²·Z,   Z_k = u_k·T_k − ⟨e[k], β⟩ − ⟨G[k], w⟩.
func (c *coordCtx) softmaxHVPVJP(l, d, v, g *gorgonia.Node) (dl, dd, dv *gorgonia.Node) {
	b := c.b
	N, K, P := c.f.sh.N, c.f.sh.K, c.f.sh.P
	s2 := c.f.g.floats[0] * c.f.g.floats[0]
	zeta := c.gate(l)
	ones := b.constant(N*K, func(int) float64 { return 1 }, N, K, 1)
	spread := func(x *gorgonia.Node) *gorgonia.Node { return b.batchedMatMul(ones, x) }        // [n,1,m] → [n,K,m]
	spreadK := func(x *gorgonia.Node) *gorgonia.Node { return b.reshapeCopy(spread(x), N, K) } // [n,1,1] → [n,K]
	under := func(w, x *gorgonia.Node) *gorgonia.Node {                                        // Σ_k w_k·x[k] for w [n,K]: [n,1,cols]
		return b.batchedMatMul(b.reshapeCopy(w, N, 1, K), x)
	}
	col := func(x *gorgonia.Node, n int) *gorgonia.Node { return b.reshapeCopy(x, N, n, 1) }
	against := func(x, y *gorgonia.Node) *gorgonia.Node { // ⟨x[k], y⟩ for x [n,K,P], y [n,1,P]: [n,K]
		return b.reshapeCopy(b.batchedMatMul(x, b.reshapeCopy(y, N, P, 1)), N, K)
	}
	e := b.sub(d, spread(under(zeta, d)))
	u := b.sub(v, spreadK(under(zeta, col(v, K))))
	zu := b.hadamard(zeta, u)
	A := b.rowDot(g, e)
	gamma := under(zeta, g)
	beta := under(zu, g)
	w := under(zu, e)
	T := b.sub(b.sub(A, spreadK(under(zeta, col(A, K)))), against(e, gamma))
	dv = b.scale(b.hadamard(zeta, T), s2)
	dd = b.scale(b.sub(b.rowScale(zu, b.sub(g, spread(gamma))), b.rowScale(zeta, spread(beta))), s2)
	Z := b.sub(b.sub(b.hadamard(u, T), against(e, beta)), against(g, w))
	dl = c.zetaVJP(l, b.scale(Z, s2))
	return dl, dd, dv
}

// logisticHVPVJP is the logistic gate's: hvp[k] = α_k²·σ”_k·v_k·D[k] with
// σ” = q(ζ) = ζ(1 − ζ)(1 − 2ζ), so with A_k = ⟨G[k], D[k]⟩
//
//	dv = α²⊙q⊙A    dD[k] = α_k²·q_k·v_k·G[k]    dℓ = the gate's pull-back of α²⊙q'(ζ)⊙v⊙A,
//
// q'(ζ) = 1 − 6ζ + 6ζ².
func (c *coordCtx) logisticHVPVJP(l, d, v, g *gorgonia.Node) (dl, dd, dv *gorgonia.Node) {
	b := c.b
	a2q, a2dq := c.logisticCurvature(l)
	A := b.rowDot(g, d)
	dv = b.hadamard(a2q, A)
	dd = b.rowScale(b.hadamard(a2q, v), g)
	dl = c.zetaVJP(l, b.hadamard(a2dq, b.hadamard(v, A)))
	return dl, dd, dv
}

// logisticCurvature returns α²⊙q(ζ) and α²⊙q'(ζ) [n,K] of the logistic gate, q(ζ) = σ” =
// ζ(1 − ζ)(1 − 2ζ) and q'(ζ) = 1 − 6ζ + 6ζ².
func (c *coordCtx) logisticCurvature(l *gorgonia.Node) (a2q, a2dq *gorgonia.Node) {
	b := c.b
	N, K := c.f.sh.N, c.f.sh.K
	alpha := c.f.g.floats[:K]
	zeta := c.gate(l)
	alpha2 := b.constant(N*K, func(i int) float64 { return alpha[i%K] * alpha[i%K] }, N, K)
	ones := b.constant(N*K, func(int) float64 { return 1 }, N, K)
	q := b.hadamard(b.hadamard(zeta, b.sub(ones, zeta)), b.sub(ones, b.scale(zeta, 2)))
	dq := b.add(b.sub(ones, b.scale(zeta, 6)), b.scale(b.hadamard(zeta, zeta), 6))
	return b.hadamard(alpha2, q), b.hadamard(alpha2, dq)
}

// rowSecondVJP returns the gradients in ℓ and D of ⟨G, second(ℓ, D)⟩, the row jet's second
// channel, G [n,K,K,P]: for the built-in gates built from ζ by the closed forms, so that they
// are differentiable in turn; for another gate the second channel's VJP ops, which are not.
func (c *coordCtx) rowSecondVJP(l, d, g *gorgonia.Node) (dl, dd *gorgonia.Node) {
	b := c.b
	N, K, P := c.f.sh.N, c.f.sh.K, c.f.sh.P
	switch c.f.g.k {
	case kernel.LogisticGate:
		diag := c.diagonal(g)
		// second[a][b] = δ_ab·α_a²·σ''_a·D[a]: with A_k = ⟨G[k][k], D[k]⟩,
		// dD[k] = α_k²·q_k·G[k][k] and dℓ the pull-back of α²⊙q'(ζ)⊙A.
		a2q, a2dq := c.logisticCurvature(l)
		return c.zetaVJP(l, b.hadamard(a2dq, b.rowDot(diag, d))), b.rowScale(a2q, diag)
	case kernel.SoftmaxGate:
		// The second channel's VJP of docs/math.md, "Vector-Jacobian products": with
		// S[a][b] = G[a][b] + G[b][a], T[a] = Σ_b S[a][b]·ζ_b, M[a] = G[a][a] − T[a],
		// μ = ζᵀM, e = D − ẑ and Y[k] = Σ_a ζ_a·e[a]⊙S[a][k],
		//	dD[k] = s²·ζ_k·(M[k] − μ),   dℓ = the pull-back of s²·Z,
		//	Z_k = ⟨e[k], M[k] − μ⟩ − Σ_c Y[k][c].
		s2 := c.f.g.floats[0] * c.f.g.floats[0]
		diag := c.diagonal(g)
		zeta := c.gate(l)
		zr := b.reshapeCopy(zeta, N, 1, K)
		ones := b.constant(N*K, func(int) float64 { return 1 }, N, K, 1)
		spread := func(x *gorgonia.Node) *gorgonia.Node { return b.batchedMatMul(ones, x) } // [n,1,P] → [n,K,P]
		sym := b.add(g, b.reshapeCopy(b.permute(g, 0, 2, 1, 3), N, K, K, P))
		// S is symmetric in (a, b): Σ_b S[a][b]·ζ_b is ζᵀ times S as [n, K(b), K(a)·P].
		T := b.reshapeCopy(b.batchedMatMul(zr, b.reshapeCopy(sym, N, K, K*P)), N, K, P)
		M := b.sub(diag, T)
		mc := b.sub(M, spread(b.batchedMatMul(zr, M)))
		e := b.sub(d, spread(b.batchedMatMul(zr, d)))
		// Y[k][c] = Σ_a (ζ⊙e)[a][c]·S[a][k][c]: per (n, c), a row of K times a K×K matrix.
		ze := b.reshapeCopy(b.permute(b.rowScale(zeta, e), 0, 2, 1), N*P, 1, K)
		sc := b.reshapeCopy(b.permute(sym, 0, 3, 1, 2), N*P, K, K)
		y := b.reshapeCopy(b.permute(b.reshapeCopy(b.batchedMatMul(ze, sc), N, P, K), 0, 2, 1), N, K, P)
		onesP := b.constant(N*K*P, func(int) float64 { return 1 }, N*K, P, 1)
		ySum := b.reshapeCopy(b.batchedMatMul(b.reshapeCopy(y, N*K, 1, P), onesP), N, K) // Σ_c Y[k][c]
		Z := b.sub(b.rowDot(e, mc), ySum)
		return c.zetaVJP(l, b.scale(Z, s2)), b.scale(b.rowScale(zeta, mc), s2)
	}
	return c.vjp(kernel.Second, P, 0, l, d, g), c.vjp(kernel.Second, P, 1, l, d, g)
}

// sub is the elementwise difference of two nodes of one shape.
func (b *nodeBuilder) sub(x, y *gorgonia.Node) *gorgonia.Node {
	return b.build("difference", func() (*gorgonia.Node, error) { return gorgonia.Sub(x, y) }, x, y)
}

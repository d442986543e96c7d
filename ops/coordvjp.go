package ops

import (
	"fmt"

	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/gatejet/gatejet/internal/kernel"
	"github.com/gatejet/gatejet/softmaxjet"
)

// The gradients of the coordinate jets, built from the row-jet ops and Gorgonia's reshape,
// slice, concat and batched products, so that they are differentiable in turn as far as
// those are. Per row, with ζ = the gate (the value op over identity decoded rows, P = K) and
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
// value and first channels'): a loss on them can be differentiated twice. The second
// channel's uses the row second channel's VJP, and the HVP's the row HVP's, which are not
// differentiable: those two are differentiable once.

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
	return c.b.reshape(c.b.slice(x, nil, gorgonia.S(from, from+K)), s...)
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
		return b.reshape(b.slice(up, nil, gorgonia.S(i, i+K), gorgonia.S(j, j+K)), N, K, K, P)
	}
	gll, glt, gtl, gtt := block(0, 0), block(0, K), block(K, 0), block(K, K)
	h := b.reshape(b.add(b.permute(glt, 0, 2, 1, 3), gtl), N*K, K, P) // [n·K(k), K(a), P]
	jt := b.reshape(b.transpose(c.jacobian(l)), N*K, 1, K)            // J[·][k] as rows
	dd1 := b.reshape(b.batchedMatMul(jt, h), N, K, P)
	w := b.transpose(b.reshape(b.batchedMatMul(h, b.reshape(d1, N*K, P, 1)), N, K, K)) // W[a][k]
	diag := c.diagonal(gtt)
	dl := b.add(b.add(c.vjp(kernel.Second, P, 0, l, d0, gll), c.jacobianVJP(l, w)), c.zetaVJP(l, b.rowDot(diag, d2)))
	dd0 := c.vjp(kernel.Second, P, 1, l, d0, gll)
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
	padded := b.reshape(b.concat(1, b.reshape(x, N, K*K*P), zeros), N, K, (K+1)*P)
	return b.reshape(b.slice(padded, nil, nil, gorgonia.S(0, P)), N, K, P)
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
	dl := c.vjp(kernel.HVP, P, 0, l, d0, vl, gl)
	dd0 := c.vjp(kernel.HVP, P, 1, l, d0, vl, gl)
	dvl := c.vjp(kernel.HVP, P, 2, l, d0, vl, gl)
	// first(ℓ, v_t⊙d1)
	scaled := b.rowScale(vt, d1)
	dl = b.add(dl, c.vjp(kernel.First, P, 0, l, scaled, gl))
	dScaled := c.vjp(kernel.First, P, 1, l, scaled, gl)
	dvt := b.rowDot(dScaled, d1)
	dd1 := b.rowScale(vt, dScaled)
	// v_ℓᵀ·J·q
	q := b.rowDot(gt, d1)
	dvl = b.add(dvl, b.reshape(b.batchedMatMul(jac, b.reshape(q, N, K, 1)), N, K))
	dl = b.add(dl, c.jacobianVJP(l, b.batchedMatMul(b.reshape(vl, N, K, 1), b.reshape(q, N, 1, K))))
	jv := b.reshape(b.batchedMatMul(b.reshape(vl, N, 1, K), jac), N, K)
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

// rowScale returns x_k·Y[k][c] for x [n,K] and Y [n,K,P]: a batched product of 1×1 by 1×P.
func (b *nodeBuilder) rowScale(x, y *gorgonia.Node) *gorgonia.Node {
	if b.err != nil {
		return nil
	}
	s := y.Shape()
	nk := s[0] * s[1]
	return b.reshape(b.batchedMatMul(b.reshape(x, nk, 1, 1), b.reshape(y, nk, 1, s[2])), s...)
}

// rowDot returns Σ_c Y[k][c]·Z[k][c] [n,K] for Y, Z [n,K,P]: a batched product of 1×P by P×1.
func (b *nodeBuilder) rowDot(y, z *gorgonia.Node) *gorgonia.Node {
	if b.err != nil {
		return nil
	}
	s := y.Shape()
	nk := s[0] * s[1]
	return b.reshape(b.batchedMatMul(b.reshape(y, nk, 1, s[2]), b.reshape(z, nk, s[2], 1)), s[0], s[1])
}

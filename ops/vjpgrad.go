package ops

import (
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/gatejet/gatejet"
	"github.com/gatejet/gatejet/internal/check"
	"github.com/gatejet/gatejet/internal/kernel"
)

// The gradients of the value, first and Gauss-Newton channels' VJPs, so that a loss built on
// any of them (SoftmaxJetValue, LogisticJetFirst, SoftmaxJetGaussNewton, ...) has exact
// Hessian-vector products. Channel X with
// upstream G has the VJP dl = ∂⟨G,X⟩/∂l, dD = ∂⟨G,X⟩/∂D; the gradients of ⟨U, dl⟩ and ⟨U, dD⟩
// for an upstream U on either output are contractions of channels that exist, for any gate.
//
// Through dD: the value and first channels are linear in D, so dD does not depend on D and
// ⟨U, dD⟩ = ⟨G, X(l, U)⟩:
//
//	∂/∂l = XVJP_l(l, U, G)    ∂/∂G = X(l, U)
//
// Through dl: ⟨U, dl⟩ is the derivative of ⟨G, X⟩ along U. For the value channel
// (dl_a = Σ_c g_c·first[a][c]):
//
//	∂/∂l_b = Σ_c g_c·HVP(l, D, U)[b][c]    ∂/∂D = FirstVJP_D(l, D, U⊗g)    ∂/∂g_c = Σ_a U_a·first[a][c]
//
// and for the first channel (dl_e = Σ_{a,c} G[a][c]·second[a][e][c], so
// ⟨U, dl⟩ = ⟨G, HVP(l, D, U)⟩):
//
//	∂/∂l = HVPVJP_l(l, D, U, G)    ∂/∂D = HVPVJP_D(l, D, U, G)    ∂/∂G = HVP(l, D, U)
//
// HVPVJP_l is the third-order contraction Σ_{a,b,c} G[a][c]·U_b·∂³ẑ_c/∂l_a∂l_b∂l_e, which the
// HVP's VJP kernel computes in O(K·P) a row (docs/math.md).
//
// The Gauss-Newton channel GN = F·Fᵀ (F = first(l, D), per row) is quadratic in D, but its
// VJP at upstream G is the first channel's at Ĝ = S·F, S = G + Gᵀ. So the gradient of either
// output is the first channel's VJP gradient above at upstream Ĝ (partials in l and D at fixed
// Ĝ, and W = ∂/∂Ĝ: HVP(l, D, U) through dl, first(l, U) through dD), plus the chain through Ĝ:
//
//	∂/∂G = W·Fᵀ + F·Wᵀ    ∂/∂(l, D) += FirstVJP(l, D, S·W)
//
// the latter since ⟨W, S·F⟩ = ⟨Sᵀ·W, F⟩ and S is symmetric. The Gauss-Newton VJP ops keep
// their own kernel; only their gradient is built from the first channel's.
//
// Each term is a node of this package (its reshapes copy, reshapeCopy) or a Gorgonia
// transpose, sum or batched product, so they are differentiable in turn as far as those are
// (the HVP's VJP is not).

// differentiableVJP reports whether the VJP ops of channel c are differentiable.
func differentiableVJP(c channel) bool {
	return c == kernel.Value || c == kernel.First || c == kernel.GaussNewton
}

// vjpSymDiff returns the gradients of ⟨U, VJP⟩ with respect to logits, decoded and the
// upstream gradient, for the value, first or Gauss-Newton channel's VJP op with respect to
// input wrt.
func vjpSymDiff(op *jetVJPOp, inputs gorgonia.Nodes, u *gorgonia.Node) (gorgonia.Nodes, error) {
	f := op.fwd
	l, d, g := inputs[0], inputs[1], inputs[2]
	sh := f.sh
	b := nodeBuilder{op: op.name(), dt: f.dt}
	jetOf := func(c channel) *jetOp { return newJetOp(f.g, c, sh, f.dt, f.inherited()) }
	switch {
	case f.c == kernel.GaussNewton:
		return gaussNewtonVJPSymDiff(op, inputs, u)
	case op.wrt == 1: // through dD, U shaped like D
		dl := b.apply(newJetVJPOp(jetOf(f.c), 0), l, u, g)
		dg := b.apply(jetOf(f.c), l, u)
		return gorgonia.Nodes{dl, nil, dg}, b.err
	case f.c == kernel.First: // through dl, U [n,K]
		dl := b.apply(newJetVJPOp(jetOf(kernel.HVP), 0), l, d, u, g)
		dd := b.apply(newJetVJPOp(jetOf(kernel.HVP), 1), l, d, u, g)
		dg := b.apply(jetOf(kernel.HVP), l, d, u)
		return gorgonia.Nodes{dl, dd, dg}, b.err
	}
	// the value channel through dl, U [n,K]
	hvp := b.apply(jetOf(kernel.HVP), l, d, u)
	dl := b.reshapeCopy(b.batchedMatMul(hvp, b.reshapeCopy(g, sh.N, sh.P, 1)), sh.N, sh.K)
	ug := b.batchedMatMul(b.reshapeCopy(u, sh.N, sh.K, 1), b.reshapeCopy(g, sh.N, 1, sh.P))
	dd := b.apply(newJetVJPOp(jetOf(kernel.First), 1), l, d, ug)
	first := b.apply(jetOf(kernel.First), l, d)
	dg := b.reshapeCopy(b.batchedMatMul(b.reshapeCopy(u, sh.N, 1, sh.K), first), sh.N, sh.P)
	return gorgonia.Nodes{dl, dd, dg}, b.err
}

// gaussNewtonVJPSymDiff is vjpSymDiff for the Gauss-Newton channel. Its VJP is the first
// channel's at upstream Ĝ = S·F, S = G + Gᵀ, F = first(l, D); so the gradient is the first
// channel's VJP gradient at fixed Ĝ (vjpSymDiff: partials in l and D, and W = ∂/∂Ĝ), then the
// chain through Ĝ: ∂/∂G = W·Fᵀ + F·Wᵀ, and in (l, D) the first channel's VJP at upstream
// Sᵀ·W = S·W.
func gaussNewtonVJPSymDiff(op *jetVJPOp, inputs gorgonia.Nodes, u *gorgonia.Node) (gorgonia.Nodes, error) {
	f := op.fwd
	l, d, g := inputs[0], inputs[1], inputs[2]
	b := nodeBuilder{op: op.name(), dt: f.dt}
	firstOp := func() *jetOp { return newJetOp(f.g, kernel.First, f.sh, f.dt, f.inherited()) }
	first := b.apply(firstOp(), l, d)
	s := b.add(g, b.transpose(g))
	gHat := b.batchedMatMul(s, first)
	if b.err != nil {
		return nil, b.err
	}
	// The first channel's VJP gradient at fixed Ĝ: for wrt 1 its partial in D is nil (the
	// first channel's dD does not depend on D).
	p, err := vjpSymDiff(newJetVJPOp(firstOp(), op.wrt), gorgonia.Nodes{l, d, gHat}, u)
	if err != nil {
		return nil, err
	}
	w := p[2]
	sw := b.batchedMatMul(s, w)
	dl := b.add(p[0], b.apply(newJetVJPOp(firstOp(), 0), l, d, sw))
	dd := b.apply(newJetVJPOp(firstOp(), 1), l, d, sw)
	if p[1] != nil {
		dd = b.add(p[1], dd)
	}
	wf := b.batchedMatMul(w, b.transpose(first))
	dg := b.add(wf, b.transpose(wf))
	return gorgonia.Nodes{dl, dd, dg}, b.err
}

// nodeBuilder applies ops one after the other and keeps the first error, so that a chain of
// nodes reads like the formula it builds.
type nodeBuilder struct {
	op  string
	dt  tensor.Dtype
	err error
}

// sizedOp is an op of this package that knows its output shape before it is applied.
type sizedOp interface {
	gorgonia.Op
	resultShape() tensor.Shape
}

// apply checks the op's output against gatejet.MaxBytes and applies it.
func (b *nodeBuilder) apply(op sizedOp, children ...*gorgonia.Node) *gorgonia.Node {
	if b.err != nil {
		return nil
	}
	if b.err = checkOutput(b.op, b.dt, op.resultShape()); b.err != nil {
		return nil
	}
	n, err := gorgonia.ApplyOp(op, children...)
	if err != nil {
		b.err = err
	}
	return n
}

// build applies f, one of Gorgonia's constructors on the operands, unless an error is
// kept; an error of f is kept as an ErrShape that says what it builds and on which shapes.
func (b *nodeBuilder) build(what string, f func() (*gorgonia.Node, error), operands ...*gorgonia.Node) *gorgonia.Node {
	if b.err != nil {
		return nil
	}
	r, err := f()
	if err != nil {
		shapes := make([]tensor.Shape, len(operands))
		for i, n := range operands {
			shapes[i] = n.Shape()
		}
		b.err = check.Errorf(gatejet.ErrShape, b.op, "", "%s of %v: %v", what, shapes, err)
	}
	return r
}

// ones is a constant vector of n ones of the builder's dtype.
func (b *nodeBuilder) ones(n int) *gorgonia.Node {
	if b.err != nil {
		return nil
	}
	t, err := newDense(b.op, b.dt, tensor.Shape{n})
	if err != nil {
		b.err = err
		return nil
	}
	if b.dt == tensor.Float64 {
		for i := range t.Float64s() {
			t.Float64s()[i] = 1
		}
	} else {
		for i := range t.Float32s() {
			t.Float32s()[i] = 1
		}
	}
	return gorgonia.NewConstant(t)
}

// scale multiplies a node by the constant x.
func (b *nodeBuilder) scale(n *gorgonia.Node, x float64) *gorgonia.Node {
	return b.build("scale", func() (*gorgonia.Node, error) {
		if b.dt == tensor.Float32 {
			return gorgonia.Mul(n, gorgonia.NewConstant(float32(x)))
		}
		return gorgonia.Mul(n, gorgonia.NewConstant(x))
	}, n)
}

// hadamard is the elementwise product of two nodes of one shape.
func (b *nodeBuilder) hadamard(x, y *gorgonia.Node) *gorgonia.Node {
	return b.build("product", func() (*gorgonia.Node, error) { return gorgonia.HadamardProd(x, y) }, x, y)
}

// sumRows sums a rank-3 node [n,a,b] over its last two axes, to [n].
func (b *nodeBuilder) sumRows(n *gorgonia.Node) *gorgonia.Node {
	return b.build("sum over the last two axes", func() (*gorgonia.Node, error) { return gorgonia.Sum(n, 1, 2) }, n)
}

// transpose swaps the last two axes of a rank-3 node.
func (b *nodeBuilder) transpose(n *gorgonia.Node) *gorgonia.Node {
	return b.build("transpose", func() (*gorgonia.Node, error) { return gorgonia.Transpose(n, 0, 2, 1) }, n)
}

// add is the elementwise sum of two nodes of one shape.
func (b *nodeBuilder) add(x, y *gorgonia.Node) *gorgonia.Node {
	return b.build("sum", func() (*gorgonia.Node, error) { return gorgonia.Add(x, y) }, x, y)
}

// batchedMatMul is the product of [n,a,b] and [n,b,c], its output checked against
// gatejet.MaxBytes first.
func (b *nodeBuilder) batchedMatMul(x, y *gorgonia.Node) *gorgonia.Node {
	if b.err == nil {
		b.err = checkOutput(b.op, b.dt, []int{x.Shape()[0], x.Shape()[1], y.Shape()[2]})
	}
	return b.build("batched product", func() (*gorgonia.Node, error) { return gorgonia.BatchedMatMul(x, y) }, x, y)
}

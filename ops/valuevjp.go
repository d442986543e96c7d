package ops

import (
	"github.com/gatejet/gatejet/internal/kernel"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/gatejet/gatejet"
	"github.com/gatejet/gatejet/internal/check"
)

// The gradients of the value channel's VJP, so that a loss built on SoftmaxJetValue or
// LogisticJetValue has exact Hessian-vector products. With ẑ = Σ_k ζ_k(l)·D[k], upstream g on
// ẑ, the VJP is
//
//	dl_a = Σ_c g_c·first[a][c],   dD[k][c] = ζ_k·g_c,
//
// and its own gradients, for an upstream U on dl or on dD, are contractions of channels that
// exist, for any gate:
//
//	through dl:  ∂/∂l_b = Σ_c g_c·HVP(l, D, U)[b][c]    ∂/∂D = FirstVJP_D(l, D, U⊗g)
//	             ∂/∂g_c = Σ_a U_a·first[a][c]
//	through dD:  ∂/∂l   = ValueVJP_l(l, U, g)           ∂/∂g_c = Σ_k ζ_k·U[k][c] = value(l, U)
//
// (dD does not depend on D). Each term is a node of this package or a Gorgonia reshape or
// batched product, so they are differentiable in turn as far as those are.

// valueVJPDiffWRT is the DiffWRT of the value channel's VJP with respect to input wrt.
func valueVJPDiffWRT(wrt, inputs int) []bool {
	m := diffMask(inputs, true)
	if wrt == 1 && len(m) > 1 {
		m[1] = false
	}
	return m
}

// valueVJPSymDiff returns the gradients of ⟨U, VJP⟩ with respect to logits, decoded and g,
// for the value channel's VJP op with respect to input wrt.
func valueVJPSymDiff(op *jetVJPOp, inputs gorgonia.Nodes, u *gorgonia.Node) (gorgonia.Nodes, error) {
	f := op.fwd
	l, d, g := inputs[0], inputs[1], inputs[2]
	sh := f.sh
	o := f.inherited()
	b := nodeBuilder{op: op.name(), dt: f.dt}
	if op.wrt == 1 { // through dD = ζ⊗g, U [n,K,P]
		dl := b.apply(newJetVJPOp(newJetOp(f.g, kernel.Value, sh, f.dt, o), 0), l, u, g)
		dg := b.apply(newJetOp(f.g, kernel.Value, sh, f.dt, o), l, u)
		return gorgonia.Nodes{dl, nil, dg}, b.err
	}
	// through dl = first·g, U [n,K]
	hvp := b.apply(newJetOp(f.g, kernel.HVP, sh, f.dt, o), l, d, u)
	dl := b.reshape(b.batchedMatMul(hvp, b.reshape(g, sh.N, sh.P, 1)), sh.N, sh.K)
	ug := b.batchedMatMul(b.reshape(u, sh.N, sh.K, 1), b.reshape(g, sh.N, 1, sh.P))
	dd := b.apply(newJetVJPOp(newJetOp(f.g, kernel.First, sh, f.dt, o), 1), l, d, ug)
	first := b.apply(newJetOp(f.g, kernel.First, sh, f.dt, o), l, d)
	dg := b.reshape(b.batchedMatMul(b.reshape(u, sh.N, 1, sh.K), first), sh.N, sh.P)
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

func (b *nodeBuilder) reshape(n *gorgonia.Node, shape ...int) *gorgonia.Node {
	if b.err != nil {
		return nil
	}
	r, err := gorgonia.Reshape(n, shape)
	if err != nil {
		b.err = check.Errorf(gatejet.ErrShape, b.op, "", "reshape %v to %v: %v", n.Shape(), shape, err)
	}
	return r
}

func (b *nodeBuilder) batchedMatMul(x, y *gorgonia.Node) *gorgonia.Node {
	if b.err != nil {
		return nil
	}
	if err := checkOutput(b.op, b.dt, []int{x.Shape()[0], x.Shape()[1], y.Shape()[2]}); err != nil {
		b.err = err
		return nil
	}
	r, err := gorgonia.BatchedMatMul(x, y)
	if err != nil {
		b.err = check.Errorf(gatejet.ErrShape, b.op, "", "batched product of %v and %v: %v", x.Shape(), y.Shape(), err)
	}
	return r
}

package ops

import (
	"fmt"
	"hash"
	"math"

	"github.com/chewxy/hm"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/gatejet/gatejet"
	"github.com/gatejet/gatejet/internal/check"
	"github.com/gatejet/gatejet/internal/graphmath"
	"github.com/gatejet/gatejet/internal/graphops"
	"github.com/gatejet/gatejet/internal/kernel"
)

// The ops of graphs.SoftArgmin and graphs.LogDetPlusRidge are ops of this package like any
// other (options, ReuseOutput, path reporting, UsePreallocDo, dispatch through the seam);
// package graphs offers and documents them, through internal/graphops. Their kernels
// (internal/graphmath) run on the CPU only.

func init() {
	graphops.SoftArgmin = func(costs *gorgonia.Node, invTau float64, opts any) (*gorgonia.Node, error) {
		o, _ := opts.([]Option)
		return softArgmin(costs, invTau, o...)
	}
	graphops.LogDetPlusRidge = func(H *gorgonia.Node, lambda float64, opts any) (*gorgonia.Node, error) {
		o, _ := opts.([]Option)
		return logDetPlusRidge(H, lambda, o...)
	}
}

// softArgmin returns p = softmax(−invTau·costs) along the last axis of costs (rank 1 to 8,
// Float64 or Float32, invTau in (0, gatejet.MaxInvTau]). See graphs.SoftArgmin.
func softArgmin(costs *gorgonia.Node, invTau float64, opts ...Option) (*gorgonia.Node, error) {
	const name = graphmath.OpSoftArgmin
	dt, err := checkArgs(name, arg{"costs", costs})
	if err != nil {
		return nil, err
	}
	if err := check.InvTau(name, invTau); err != nil {
		return nil, err
	}
	if dt == tensor.Float32 && invTau > math.MaxFloat32 {
		// The gradient multiplies by −invTau in the costs' dtype, where it would be −Inf
		// (and 0·Inf = NaN where p is 0).
		return nil, check.Errorf(gatejet.ErrTemperature, name, "invTau",
			"with Float32 costs want invTau ≤ %g (the largest float32), got %v", math.MaxFloat32, invTau)
	}
	o, err := applyOptions(name, opts)
	if err != nil {
		return nil, err
	}
	s := costs.Shape()
	if len(s) < 1 || len(s) > 8 {
		return nil, check.Errorf(gatejet.ErrRank, name, "costs", "want rank 1 to 8, got shape %v", s)
	}
	if err := checkPositiveDims(name, "costs", s); err != nil {
		return nil, err
	}
	if err := checkOutput(name, dt, s); err != nil {
		return nil, err
	}
	return gorgonia.ApplyOp(newSoftArgminOp(invTau, s.Clone(), dt, o), costs)
}

// softArgminOp is p = softmax(−invTau·c) along the last axis of c: one kernel call forward,
// one (the VJP −invTau·SoftmaxBackward(p, dp)) in DoDiff. Its kernel runs on the CPU only:
// under the build tag cuda its CUDADo is staged through host.
type softArgminOp struct {
	uniform
	invTau float64
}

func newSoftArgminOp(invTau float64, shape tensor.Shape, dt tensor.Dtype, o options) *softArgminOp {
	op := &softArgminOp{invTau: invTau}
	k := shape[len(shape)-1]
	op.uniform = uniform{args: []string{"costs"}, k: kernel.SoftArgmin, sizes: []int{shape.TotalSize() / k, k},
		floats: []float64{invTau}, diff: kernel.SoftArgminVJP, diffArgs: []string{"p", "p.grad"}, fromOutput: true}
	op.init(op, graphmath.OpSoftArgmin, dt, shape, o)
	return op
}

// WriteHash writes the op's name and invTau (exact bits).
func (op *softArgminOp) WriteHash(h hash.Hash) {
	if h == nil {
		return
	}
	fmt.Fprintf(h, "ops.SoftArgmin{%016x}%s", math.Float64bits(op.invTau), op.reuseHash())
}

func (op *softArgminOp) String() string { return fmt.Sprintf("SoftArgmin{s=%g}", op.invTau) }

// SymDiff: dc = −invTau·SoftmaxBackward(p, dp) along the last axis, a differentiable node.
func (op *softArgminOp) SymDiff(inputs gorgonia.Nodes, output, grad *gorgonia.Node) (gorgonia.Nodes, error) {
	if err := checkDiffNodes(op.name(), 1, inputs, output, grad); err != nil {
		return nil, err
	}
	dx, err := SoftmaxBackward(output, grad, -1, op.inheritedOptions()...)
	if err != nil {
		return nil, err
	}
	s := gorgonia.NewConstant(-op.invTau)
	if op.outDT == tensor.Float32 {
		s = gorgonia.NewConstant(float32(-op.invTau))
	}
	dc, err := gorgonia.Mul(dx, s)
	if err != nil {
		return nil, err
	}
	return gorgonia.Nodes{dc}, nil
}

// logDetPlusRidge returns out[r] = log det(sym(H[r]) + λI) for H [n,K,K] (Float64 or
// Float32, λ ≥ 0 finite). See graphs.LogDetPlusRidge.
func logDetPlusRidge(H *gorgonia.Node, lambda float64, opts ...Option) (*gorgonia.Node, error) {
	const name = graphmath.OpLogDet
	if !(lambda >= 0) || math.IsInf(lambda, 1) {
		return nil, check.Errorf(gatejet.ErrParam, name, "lambda", "want 0 ≤ lambda < +Inf, got %v", lambda)
	}
	dt, err := checkArgs(name, arg{"H", H})
	if err != nil {
		return nil, err
	}
	s := H.Shape()
	if len(s) != 3 {
		return nil, check.Errorf(gatejet.ErrRank, name, "H", "want rank 3 [n,K,K], got shape %v", s)
	}
	if s[0] <= 0 || s[1] <= 0 || s[1] != s[2] {
		return nil, check.Errorf(gatejet.ErrShape, name, "H", "want [n,K,K] with n, K ≥ 1, got %v", s)
	}
	o, err := applyOptions(name, opts)
	if err != nil {
		return nil, err
	}
	if err := checkOutput(name, dt, s); err != nil { // the gradient's [n,K,K]
		return nil, err
	}
	return gorgonia.ApplyOp(newLogDetOp(lambda, s[0], s[1], dt, o), H)
}

// logDetOp: H [n,K,K] → [n], computed in float64 by the log_det_plus_ridge kernel, which runs
// on the CPU only: under the build tag cuda its CUDADo is staged through host.
type logDetOp struct {
	seam
	lambda float64
	sizes  []int // n, K
	hShape tensor.Shape
	grad   launch // the gradient's kernel call: (H, grad) → dH
}

func newLogDetOp(lambda float64, n, k int, dt tensor.Dtype, o options) *logDetOp {
	op := &logDetOp{lambda: lambda, sizes: []int{n, k}, hShape: tensor.Shape{n, k, k}}
	floats := []float64{lambda}
	op.init(op, graphmath.OpLogDet, dt, tensor.Shape{n},
		launch{k: kernel.LogDetPlusRidge, ints: op.sizes, floats: floats, in: []tensor.Shape{op.hShape}}, o)
	op.grad = launch{k: kernel.LogDetPlusRidgeGrad, ints: op.sizes, floats: floats, in: []tensor.Shape{op.hShape, op.outShape}}
	op.grad.bind(op.name(), op.hShape)
	return op
}

// Arity is 1: H.
func (op *logDetOp) Arity() int { return 1 }

// Type is Tensor-3 a → Tensor-1 a.
func (op *logDetOp) Type() hm.Type {
	a := hm.TypeVariable('a')
	return fnType(tensorType(3, a), tensorType(1, a))
}

// InferShape checks H's shape and returns [n]. Gorgonia calls it when it applies the op; an
// op built with ReuseOutput is applied once (see ReuseOutput).
func (op *logDetOp) InferShape(ds ...gorgonia.DimSizer) (tensor.Shape, error) {
	if err := op.checkShapes(ds, 1); err != nil {
		return nil, err
	}
	return op.claim(op.name(), op.outShape.Clone(), nil)
}

// checkShapes checks that the first input is [n,K,K] and, with two inputs, that the second
// has n elements.
func (op *logDetOp) checkShapes(in []gorgonia.DimSizer, arity int) error {
	if len(in) != arity {
		return check.Errorf(gatejet.ErrParam, op.name(), "", "want %d inputs, got %d", arity, len(in))
	}
	if s, ok := in[0].(tensor.Shape); !ok || !s.Eq(op.hShape) {
		return check.Errorf(gatejet.ErrShape, op.name(), "H", "want %v, got %v", op.hShape, in[0])
	}
	if arity == 2 {
		if g, ok := in[1].(tensor.Shape); !ok || g.TotalSize() != op.sizes[0] {
			return check.Errorf(gatejet.ErrShape, op.name(), "grad", "want [%d], got %v", op.sizes[0], in[1])
		}
	}
	return nil
}

// WriteHash writes the op's name, λ (exact bits), n, K and dtype.
func (op *logDetOp) WriteHash(h hash.Hash) {
	if h == nil {
		return
	}
	fmt.Fprintf(h, "ops.LogDetPlusRidge{%016x,%d,%d,%v}%s", math.Float64bits(op.lambda), op.sizes[0], op.sizes[1], op.outDT, op.reuseHash())
}

func (op *logDetOp) String() string { return fmt.Sprintf("LogDetPlusRidge{λ=%g}", op.lambda) }

func (op *logDetOp) compute(out *tensor.Dense, vals []gorgonia.Value) error {
	var buf [kernel.MaxIn]*tensor.Dense
	ts, err := values(&buf, op.name(), op.outDT, op.hShape, vals, "H")
	if err != nil {
		return err
	}
	return runLaunch(op.name(), &op.run, op.outDT, &op.plan, ts, out)
}

// gradient writes the gradient dh = g[r]·(sym(H[r]) + λI)⁻¹ from the values H and g (the
// launch op.grad), recording the path in rec.
func (op *logDetOp) gradient(rec *pathRecord, dh *tensor.Dense, vals []gorgonia.Value) error {
	if len(vals) != 2 {
		return check.Errorf(gatejet.ErrParam, op.name(), "", "want 2 inputs, got %d", len(vals))
	}
	h, err := dense(op.name(), "H", vals[0], op.outDT, op.hShape)
	if err != nil {
		return err
	}
	g, err := dense(op.name(), "grad", vals[1], op.outDT, op.outShape)
	if err != nil {
		return err
	}
	return runLaunch(op.name(), rec, op.outDT, &op.grad, []*tensor.Dense{h, g}, dh)
}

// DiffWRT: differentiable in H.
func (op *logDetOp) DiffWRT(inputs int) []bool { return diffMask(inputs, true) }

// SymDiff: dH[r] = grad[r]·(sym(H[r]) + λI)⁻¹, the gradient op.
func (op *logDetOp) SymDiff(inputs gorgonia.Nodes, output, grad *gorgonia.Node) (gorgonia.Nodes, error) {
	if err := checkDiffNodes(op.name(), 1, inputs, grad); err != nil {
		return nil, err
	}
	return gradNodes(1, gorgonia.Nodes{inputs[0], grad}, func(int) gradOp { return newLogDetGradOp(op) })
}

// DoDiff (LispMachine): H.d += out.d[r]·(sym(H[r]) + λI)⁻¹, one gradient kernel call.
func (op *logDetOp) DoDiff(ctx gorgonia.ExecutionContext, inputs gorgonia.Nodes, output *gorgonia.Node) error {
	return reverse(ctx, op.name(), op.outDT, 1, inputs, output, inputs, []string{"H"}, func(vals []gorgonia.Value) ([]*tensor.Dense, error) {
		dh, err := newDense(op.name(), op.outDT, op.hShape)
		if err != nil {
			return nil, err
		}
		return []*tensor.Dense{dh}, op.gradient(&op.diffRun, dh, vals)
	})
}

// logDetGradOp: (H [n,K,K], grad [n]) → grad[r]·(sym(H[r]) + λI)⁻¹. Differentiable with
// graphs.Grad (SymDiff; it has no DoDiff). Its kernel runs on the CPU only: under the build
// tag cuda its CUDADo is staged through host.
type logDetGradOp struct {
	seam
	fwd *logDetOp
}

func newLogDetGradOp(fwd *logDetOp) *logDetGradOp {
	op := &logDetGradOp{fwd: fwd}
	op.init(op, fwd.name(), fwd.outDT, fwd.hShape, fwd.grad, fwd.inherited())
	return op
}

// Arity is 2: H and the upstream gradient.
func (op *logDetGradOp) Arity() int { return 2 }

// Type is Tensor-3 a → Tensor-1 a → Tensor-3 a.
func (op *logDetGradOp) Type() hm.Type {
	a := hm.TypeVariable('a')
	return fnType(tensorType(3, a), tensorType(1, a), tensorType(3, a))
}

// InferShape checks the shapes and returns H's. An op built with ReuseOutput (inherited) is
// applied once.
func (op *logDetGradOp) InferShape(ds ...gorgonia.DimSizer) (tensor.Shape, error) {
	if err := op.fwd.checkShapes(ds, 2); err != nil {
		return nil, err
	}
	return op.claim(op.name(), op.outShape.Clone(), nil)
}

// WriteHash writes "grad:" and the forward op's hash.
func (op *logDetGradOp) WriteHash(h hash.Hash) {
	if h == nil {
		return
	}
	fmt.Fprint(h, "grad:")
	op.fwd.WriteHash(h)
}

func (op *logDetGradOp) String() string {
	return fmt.Sprintf("LogDetPlusRidgeGrad{λ=%g}", op.fwd.lambda)
}

func (op *logDetGradOp) compute(out *tensor.Dense, vals []gorgonia.Value) error {
	return op.fwd.gradient(&op.run, out, vals)
}

// DiffWRT: differentiable in H and the upstream gradient.
func (op *logDetGradOp) DiffWRT(inputs int) []bool { return diffMask(inputs, true) }

// SymDiff: with A = sym(H) + λI and M = g·A⁻¹ the op's output, the gradient of ⟨U, M⟩ is
//
//	∂/∂g[r] = ⟨U[r], A[r]⁻¹⟩    ∂/∂H = −sym(Y) = −(Y + Yᵀ)/2,   Y[r] = M[r]·U[r]·A[r]⁻¹,
//
// since d(A⁻¹) = −A⁻¹·dA·A⁻¹ and dA = sym(dH). A⁻¹ is this op at g = 1, so the gradient is
// differentiable in turn.
func (op *logDetGradOp) SymDiff(inputs gorgonia.Nodes, output, grad *gorgonia.Node) (gorgonia.Nodes, error) {
	if err := checkDiffNodes(op.name(), 2, inputs, output, grad); err != nil {
		return nil, err
	}
	b := nodeBuilder{op: op.name(), dt: op.outDT}
	inv := b.apply(newLogDetGradOp(op.fwd), inputs[0], b.ones(op.fwd.sizes[0]))
	y := b.batchedMatMul(b.batchedMatMul(output, grad), inv)
	dh := b.scale(b.add(y, b.transpose(y)), -0.5)
	dg := b.sumRows(b.hadamard(grad, inv))
	return gorgonia.Nodes{dh, dg}, b.err
}

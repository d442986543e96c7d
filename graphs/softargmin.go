package graphs

import (
	"fmt"
	"hash"
	"math"

	"github.com/chewxy/hm"
	"github.com/gatejet/gatejet"
	"github.com/gatejet/gatejet/backward"
	"github.com/gatejet/gatejet/internal/check"
	"github.com/gatejet/gatejet/internal/strided"
	"github.com/gatejet/gatejet/ops"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

const opSoftArgmin = "graphs.SoftArgmin"

// SoftArgmin returns p = softmax(−invTau·costs) along the last axis of costs: a
// differentiable argmin that puts most of its mass on the smallest costs, all of it in
// the limit invTau → ∞, and is uniform as invTau → 0. costs has rank 1 to 8 (a vector
// [K] of candidate costs or a batch [n,K], for example), no zero dim, and dtype Float64 or
// Float32; invTau = 1/τ satisfies 0 < invTau ≤ gatejet.MaxInvTau, and is at most
// math.MaxFloat32 for Float32 costs.
//
// The node is differentiable with gorgonia.Grad (and on a LispMachine): with upstream
// gradient g on p, the gradient with respect to costs is −invTau·(diag(p) − ppᵀ)·g per
// row, built from ops.SoftmaxBackward, which is itself differentiable, so the gradient
// graph can be differentiated again.
//
// The forward map computes exp(−invTau·(c_i − min c)) in float64, the differences taken
// before scaling, so finite costs give finite probabilities for every accepted invTau. A
// cost of +Inf gets probability 0 when its row has a finite cost; a row
// of all +Inf, or with a NaN or a −Inf cost, gives a NaN row. Other rows are not affected.
func SoftArgmin(costs *gorgonia.Node, invTau float64) (*gorgonia.Node, error) {
	dt, err := floatNode(opSoftArgmin, "costs", costs)
	if err != nil {
		return nil, err
	}
	if err := check.InvTau(opSoftArgmin, invTau); err != nil {
		return nil, err
	}
	if dt == tensor.Float32 && invTau > math.MaxFloat32 {
		// The gradient multiplies by −invTau in the costs' dtype, where it would be −Inf
		// (and 0·Inf = NaN where p is 0).
		return nil, check.Errorf(gatejet.ErrTemperature, opSoftArgmin, "invTau",
			"with Float32 costs want invTau ≤ %g (the largest float32), got %v", math.MaxFloat32, invTau)
	}
	shp := costs.Shape()
	if len(shp) < 1 || len(shp) > 8 {
		return nil, check.Errorf(gatejet.ErrRank, opSoftArgmin, "costs",
			"want rank 1 to 8, got shape %v", shp)
	}
	for _, d := range shp {
		if d <= 0 {
			return nil, check.Errorf(gatejet.ErrShape, opSoftArgmin, "costs",
				"want positive dims, got shape %v", shp)
		}
	}
	return gorgonia.ApplyOp(softArgminOp{invTau: invTau}, costs)
}

// softArgminOp is p = softmax(−s·c) along the last axis.
type softArgminOp struct {
	invTau float64
}

func (op softArgminOp) Arity() int { return 1 }

func (op softArgminOp) Type() hm.Type {
	a := hm.TypeVariable('a')
	return hm.NewFnType(a, a)
}

func (op softArgminOp) InferShape(in ...gorgonia.DimSizer) (tensor.Shape, error) {
	if len(in) != 1 {
		return nil, check.Errorf(gatejet.ErrParam, opSoftArgmin, "", "want 1 input, got %d", len(in))
	}
	s, ok := in[0].(tensor.Shape)
	if !ok {
		return nil, check.Errorf(gatejet.ErrShape, opSoftArgmin, "costs", "want a tensor.Shape, got %T", in[0])
	}
	return s.Clone(), nil
}

func (op softArgminOp) Do(in ...gorgonia.Value) (gorgonia.Value, error) {
	if len(in) != 1 {
		return nil, check.Errorf(gatejet.ErrParam, opSoftArgmin, "", "want 1 input, got %d", len(in))
	}
	c, ok := in[0].(*tensor.Dense)
	if !ok {
		return nil, check.Errorf(gatejet.ErrParam, opSoftArgmin, "costs", "want a *tensor.Dense, got %T", in[0])
	}
	if c.IsMaterializable() {
		c = c.Materialize().(*tensor.Dense)
	}
	shp := c.Shape()
	if len(shp) < 1 {
		return nil, check.Errorf(gatejet.ErrRank, opSoftArgmin, "costs", "want rank ≥ 1, got a scalar")
	}
	switch c.Dtype() {
	case tensor.Float64:
		return softArgminDense[float64](c, op.invTau)
	case tensor.Float32:
		return softArgminDense[float32](c, op.invTau)
	}
	return nil, check.Errorf(gatejet.ErrDType, opSoftArgmin, "costs", "want Float64 or Float32, got %v", c.Dtype())
}

// softArgminDense returns softmax(−s·c) along the last axis of c (dtype T, not a view, in
// either storage order) as a new row-major tensor of c's shape and dtype.
func softArgminDense[T backward.Float](c *tensor.Dense, s float64) (gorgonia.Value, error) {
	cv, err := strided.Logical[T](opSoftArgmin, "costs", c)
	if err != nil {
		return nil, err
	}
	p := make([]T, len(cv))
	shp := c.Shape()
	if err := softArgminRows(opSoftArgmin, p, cv, shp[len(shp)-1], s); err != nil {
		return nil, err
	}
	return tensor.New(tensor.WithShape(shp.Clone()...), tensor.WithBacking(p)), nil
}

func (op softArgminOp) ReturnsPtr() bool     { return false }
func (op softArgminOp) CallsExtern() bool    { return false }
func (op softArgminOp) OverwritesInput() int { return -1 }

func (op softArgminOp) WriteHash(h hash.Hash) {
	fmt.Fprintf(h, "graphs.SoftArgmin{%016x}", math.Float64bits(op.invTau))
}

func (op softArgminOp) Hashcode() uint32 { return hashOf(op) }

func (op softArgminOp) String() string { return fmt.Sprintf("SoftArgmin{s=%g}", op.invTau) }

// DiffWRT: differentiable in costs.
func (op softArgminOp) DiffWRT(int) []bool { return []bool{true} }

// SymDiff: dc = −s·SoftmaxBackward(p, dp) along the last axis.
func (op softArgminOp) SymDiff(in gorgonia.Nodes, out, grad *gorgonia.Node) (gorgonia.Nodes, error) {
	if len(in) != 1 {
		return nil, check.Errorf(gatejet.ErrParam, opSoftArgmin, "", "want 1 input, got %d", len(in))
	}
	dx, err := ops.SoftmaxBackward(out, grad, -1)
	if err != nil {
		return nil, err
	}
	dc, err := gorgonia.Mul(dx, scalarConst(out.Dtype(), -op.invTau))
	if err != nil {
		return nil, err
	}
	return gorgonia.Nodes{dc}, nil
}

// DoDiff (LispMachine): costs.d += −s·SoftmaxBackward(p, p.d).
func (op softArgminOp) DoDiff(_ gorgonia.ExecutionContext, in gorgonia.Nodes, out *gorgonia.Node) error {
	dpV, dcV, err := unaryGrads(opSoftArgmin, "costs", in, out)
	if err != nil {
		return err
	}
	p, ok := out.Value().(*tensor.Dense)
	if !ok {
		return check.Errorf(gatejet.ErrParam, opSoftArgmin, "p", "output value is %T", out.Value())
	}
	dp, ok1 := dpV.(*tensor.Dense)
	dc, ok2 := dcV.(*tensor.Dense)
	if !ok1 || !ok2 {
		return check.Errorf(gatejet.ErrParam, opSoftArgmin, "", "gradients are %T and %T, want *tensor.Dense", dpV, dcV)
	}
	if p.IsMaterializable() {
		p = p.Materialize().(*tensor.Dense)
	}
	if dp.IsMaterializable() {
		dp = dp.Materialize().(*tensor.Dense)
	}
	switch p.Dtype() {
	case tensor.Float64:
		return accumulateSoftArgminVJP[float64](dc, p, dp, op.invTau)
	case tensor.Float32:
		return accumulateSoftArgminVJP[float32](dc, p, dp, op.invTau)
	}
	return check.Errorf(gatejet.ErrDType, opSoftArgmin, "costs", "want Float64 or Float32, got %v", p.Dtype())
}

// accumulateSoftArgminVJP adds −s·SoftmaxBackward(p, dp) into dc, each read and written in
// logical order whatever its storage order.
func accumulateSoftArgminVJP[T backward.Float](dc, p, dp *tensor.Dense, invTau float64) error {
	pv, err := strided.Logical[T](opSoftArgmin, "p", p)
	if err != nil {
		return err
	}
	dpv, err := strided.Logical[T](opSoftArgmin, "p.grad", dp)
	if err != nil {
		return err
	}
	if len(dpv) != len(pv) || dc.Shape().TotalSize() != len(pv) {
		return check.Errorf(gatejet.ErrShape, opSoftArgmin, "", "p %v, its gradient %v and the costs' gradient %v differ",
			p.Shape(), dp.Shape(), dc.Shape())
	}
	tmp := make([]T, len(pv))
	if err := backward.SoftmaxBackward(tmp, pv, dpv, []int(p.Shape()), -1); err != nil {
		return err
	}
	for i, v := range tmp {
		tmp[i] = T(-invTau * float64(v))
	}
	return strided.AddInto(opSoftArgmin, "costs.grad", dc, p.Dtype(), p.Shape(),
		tensor.New(tensor.WithShape(p.Shape().Clone()...), tensor.WithBacking(tmp)))
}

// softArgminRows writes softmax(−s·c) for each row of k elements of c into p, with the
// project's one softmax forward, backward.Softmax, applied in float64 to the logits
// −s·(c_i − min c): the differences are taken before scaling (see scaledGap), so finite
// costs and any accepted s give finite probabilities (−s·c itself overflows for |c| near
// the largest float64, while s·(c_i − min c) overflowing to +Inf is exactly an exp that
// underflows to 0). The minimum's logit is 0, so the softmax's sum is ≥ 1. A row with a
// NaN or a −Inf cost, or of all +Inf, gets NaN logits, which backward.Softmax turns into a
// NaN row. p has the length of c, a positive multiple of k, and does not overlap it other
// than as the same slice; op names the caller in errors.
func softArgminRows[T backward.Float](op string, p, c []T, k int, s float64) error {
	if len(c) == 0 && len(p) == 0 {
		return nil
	}
	if k <= 0 || len(c)%k != 0 || len(p) != len(c) {
		return check.Errorf(gatejet.ErrShape, op, "costs", "want rows of %d costs in %d values, and as many probabilities, got %d", k, len(c), len(p))
	}
	// The logits are float64 whatever T: p holds them when it is []float64.
	x, direct := any(p).([]float64)
	if !direct {
		x = make([]float64, len(c))
	}
	for r := 0; r+k <= len(c); r += k {
		row, logit := c[r:r+k], x[r:r+k]
		lo := math.Inf(1)
		bad := false
		for _, v := range row {
			v := float64(v)
			if math.IsNaN(v) || math.IsInf(v, -1) {
				bad = true
			}
			lo = math.Min(lo, v)
		}
		if bad || math.IsInf(lo, 1) {
			lo = math.NaN()
		}
		for i, v := range row {
			logit[i] = -scaledGap(float64(v), lo, s)
		}
	}
	if err := backward.Softmax(x, x, []int{len(c) / k, k}, 1); err != nil {
		return err
	}
	if !direct {
		for i, v := range x {
			p[i] = T(v)
		}
	}
	return nil
}

// scaledGap returns s·(x − lo) for x ≥ lo and s > 0. When x − lo overflows although x is
// finite (x near the largest float64, lo near its negative), s·x − s·lo is used: a small
// s brings the gap back into range, and with the terms of opposite signs nothing cancels.
func scaledGap(x, lo, s float64) float64 {
	d := x - lo
	if math.IsInf(d, 1) && !math.IsInf(x, 1) {
		return s*x - s*lo
	}
	return s * d
}

func scalarConst(dt tensor.Dtype, x float64) *gorgonia.Node {
	if dt == tensor.Float32 {
		return gorgonia.NewConstant(float32(x))
	}
	return gorgonia.NewConstant(x)
}

// SoftArgminProbs returns p = softmax(−invTau·costs), the plain-slice form of SoftArgmin
// for one row. Special values behave as in SoftArgmin; an empty costs gives an empty p.
//
// It returns a *gatejet.Error of kind gatejet.ErrTemperature unless invTau is positive and
// finite.
func SoftArgminProbs(costs []float64, invTau float64) ([]float64, error) {
	const op = "graphs.SoftArgminProbs"
	if err := check.InvTau(op, invTau); err != nil {
		return nil, err
	}
	p := make([]float64, len(costs))
	if err := softArgminRows(op, p, costs, len(costs), invTau); err != nil {
		return nil, err
	}
	return p, nil
}

// SoftArgminVJP returns J·v, where J = ∂p/∂costs = −invTau·(diag(p) − ppᵀ) is the
// Jacobian of p = SoftArgminProbs(costs, invTau); probs is that p. J is symmetric, so
// this is both the Jacobian-vector product (how p moves when the costs move along v)
// and the vector-Jacobian product (the gradient with respect to the costs of a function
// whose gradient with respect to p is v):
//
//	(J·v)_i = −invTau·p_i·(v_i − ⟨p, v⟩).
//
// It returns a *gatejet.Error: gatejet.ErrTemperature, or gatejet.ErrSize when the lengths
// differ.
func SoftArgminVJP(probs, v []float64, invTau float64) ([]float64, error) {
	const op = "graphs.SoftArgminVJP"
	if err := check.InvTau(op, invTau); err != nil {
		return nil, err
	}
	if len(v) != len(probs) {
		return nil, check.Errorf(gatejet.ErrSize, op, "v", "want length %d (probs), got %d", len(probs), len(v))
	}
	dot := 0.0
	for i, p := range probs {
		dot += p * v[i]
	}
	out := make([]float64, len(probs))
	for i, p := range probs {
		d := v[i] - dot
		if math.IsInf(d, 0) && !math.IsInf(v[i], 0) && !math.IsInf(dot, 0) {
			// v_i − ⟨p, v⟩ overflowed (|v| near the largest float64) while the scaled
			// result may not: scale each term first.
			a := -invTau * p
			out[i] = a*v[i] - a*dot
			continue
		}
		out[i] = -invTau * p * d
	}
	return out, nil
}

// Argmin returns the index of the smallest cost, the first one on ties. NaN costs are
// never chosen; it returns −1 when costs is empty or all NaN.
func Argmin(costs []float64) int {
	best := -1
	for i, c := range costs {
		if math.IsNaN(c) {
			continue
		}
		if best < 0 || c < costs[best] {
			best = i
		}
	}
	return best
}

// NaturalGradient returns the Fisher-preconditioned gradient F⁻¹·grad of a categorical
// distribution p = softmax(θ) parameterised by its logits θ, where grad is a gradient with
// respect to θ and F = diag(p) − ppᵀ is the Fisher information of the logits; probs is p
// and is assumed to sum to 1. For SoftArgmin the logits are θ = −invTau·costs.
//
// F is singular: F·1 = 0, because adding a constant to every logit leaves p unchanged
// (and also F·e_i = 0 for every p_i = 0). How the singular system is solved depends on
// lambda:
//
//   - lambda > 0: the damped system (F + λI)·x = grad is solved exactly, in O(K), with
//     the Sherman–Morrison formula for the diagonal-plus-rank-one matrix diag(p) + λI − ppᵀ.
//   - lambda = 0: x = F⁺·grad, the Moore–Penrose solution: the component of grad along the
//     null space (1 on the support S = {i : p_i > 0}, and every e_i off it) is dropped and
//     x is the solution orthogonal to that null space, x_i = u_i − mean_S(u) on S with
//     u_i = (grad_i − mean_S(grad))/p_i, and x_i = 0 off S. Gradients of any function of p
//     lie in the range of F already, so only their exact null-space component, which is
//     zero, is dropped. Tiny p_i make F⁺ huge; use lambda > 0 at low temperature.
//
// It returns a *gatejet.Error: gatejet.ErrSize when the lengths differ, gatejet.ErrParam for
// a negative or non-finite lambda or a negative probability. NaN data propagate.
func NaturalGradient(probs, grad []float64, lambda float64) ([]float64, error) {
	const op = "graphs.NaturalGradient"
	if len(grad) != len(probs) {
		return nil, check.Errorf(gatejet.ErrSize, op, "grad", "want length %d (probs), got %d", len(probs), len(grad))
	}
	if !(lambda >= 0) || math.IsInf(lambda, 1) {
		return nil, check.Errorf(gatejet.ErrParam, op, "lambda", "want 0 ≤ lambda < +Inf, got %v", lambda)
	}
	for i, p := range probs {
		if p < 0 {
			return nil, check.Errorf(gatejet.ErrParam, op, "probs", "probs[%d] = %v is negative", i, p)
		}
	}
	x := make([]float64, len(probs))
	if lambda > 0 {
		// (A − ppᵀ)⁻¹g = A⁻¹g + A⁻¹p·(pᵀA⁻¹g)/(1 − pᵀA⁻¹p), A = diag(p) + λI.
		// 1 − pᵀA⁻¹p = (1 − Σp) + Σ λp_i/(p_i + λ), written so that small λ keeps its digits.
		sumP, pAg, den := 0.0, 0.0, 0.0
		for i, p := range probs {
			a := p + lambda
			sumP += p
			pAg += p * grad[i] / a
			den += lambda * p / a
		}
		den += 1 - sumP
		coef := pAg / den
		for i, p := range probs {
			x[i] = (grad[i] + p*coef) / (p + lambda)
		}
		return x, nil
	}
	n, gSum := 0, 0.0
	for i, p := range probs {
		if p > 0 || math.IsNaN(p) {
			n++
			gSum += grad[i]
		}
	}
	if n == 0 {
		return x, nil
	}
	gMean := gSum / float64(n)
	uSum := 0.0
	for i, p := range probs {
		if p > 0 || math.IsNaN(p) {
			x[i] = (grad[i] - gMean) / p
			uSum += x[i]
		}
	}
	uMean := uSum / float64(n)
	for i, p := range probs {
		if p > 0 || math.IsNaN(p) {
			x[i] -= uMean
		}
	}
	return x, nil
}

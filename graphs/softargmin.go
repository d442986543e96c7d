package graphs

import (
	"math"

	"github.com/gatejet/gatejet"
	"github.com/gatejet/gatejet/internal/check"
	"github.com/gatejet/gatejet/internal/graphmath"
	"github.com/gatejet/gatejet/internal/graphops"
	"github.com/gatejet/gatejet/ops"
	"gorgonia.org/gorgonia"
)

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
//
// The node's op is an op of package ops like any other: opts (ops.ReuseOutput, say) configure
// it and the gradient ops built from it, it reports where it ran (ops.LastPath) and has
// UsePreallocDo, and it runs on the CPU only (under cudaops.ModeRequired its run is a
// gatejet.ErrDevice error).
func SoftArgmin(costs *gorgonia.Node, invTau float64, opts ...ops.Option) (*gorgonia.Node, error) {
	return graphops.SoftArgmin(costs, invTau, opts)
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
	if err := graphmath.SoftArgminRows(op, p, costs, len(costs), invTau); err != nil {
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

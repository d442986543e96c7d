package graphs

import (
	"math"

	"github.com/gatejet/gatejet"
	"github.com/gatejet/gatejet/internal/check"
	"github.com/gatejet/gatejet/ops"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// GaussNewtonSlabs returns the Gauss-Newton slabs [n,K,K] of the softmax-gated
// reconstruction ẑ = Σ_k softmax(invTau·logits)_k·decoded[k] (see ops.SoftmaxJetValue),
//
//	H[r][a][b] = Σ_c first[r][a][c]·first[r][b][c],   first[r][a][c] = ∂ẑ[r][c]/∂logits[r][a],
//
// computed by ops.SoftmaxJetGaussNewton without building the first channel. logits is
// [n,K], decoded [n,K,P], both Float64 or both Float32, 0 < invTau ≤ gatejet.MaxInvTau. Each
// slab is symmetric positive semi-definite and singular: Σ_a first[r][a][c] = 0, so
// H[r]·1 = 0. Add a ridge before inverting it or taking its log-determinant, as
// GaussNewtonLogDet does. Differentiable in logits and decoded.
//
// opts are passed to the op (ops.ReuseOutput, say), as by every builder of this package that
// builds ops of package ops.
func GaussNewtonSlabs(logits, decoded *gorgonia.Node, invTau float64, opts ...ops.Option) (*gorgonia.Node, error) {
	return ops.SoftmaxJetGaussNewton(logits, decoded, invTau, opts...)
}

// GaussNewtonLogDet returns the [n] vector log det(H[r] + λI) of the Gauss-Newton slabs of
// GaussNewtonSlabs: the log-determinant term of a Laplace approximation of the evidence
// (which enters it as −½·log det). lambda must be positive, because the slabs are
// singular. Differentiable in logits and decoded, twice with Grad (a Hessian-vector product of
// the evidence term; see LogDetPlusRidge and the ops package's Gradients). opts go to the
// Gauss-Newton op and the log-determinant's: with ops.ReuseOutput a training loop on a
// TapeMachine stops allocating the [n,K,K] slabs every run.
func GaussNewtonLogDet(logits, decoded *gorgonia.Node, invTau, lambda float64, opts ...ops.Option) (*gorgonia.Node, error) {
	const op = "graphs.GaussNewtonLogDet"
	if !(lambda > 0) || math.IsInf(lambda, 1) {
		return nil, check.Errorf(gatejet.ErrParam, op, "lambda",
			"want 0 < lambda < +Inf (the Gauss-Newton slabs are singular), got %v", lambda)
	}
	h, err := GaussNewtonSlabs(logits, decoded, invTau, opts...)
	if err != nil {
		return nil, err
	}
	return LogDetPlusRidge(h, lambda, opts...)
}

// CurvaturePenalty returns the scalar
//
//	weight · (1/n) · Σ_r ‖first[r]‖²_F = weight · mean_r trace(H[r]),
//
// the mean squared Frobenius norm of the first jet channel (ops.SoftmaxJetFirst) over the
// n rows, which equals the mean trace of the Gauss-Newton slabs H of GaussNewtonSlabs: how
// sharply, on average, the reconstruction responds to the logits. Adding it to a loss
// penalises gates that are too sensitive (too cold). logits is [n,K] and decoded [n,K,P];
// weight is finite. Differentiable in logits and decoded: the gradient goes through the
// first channel's vector-Jacobian product, which is the second channel contracted with
// 2·weight/n·first, never materialised. opts go to the first-channel op.
func CurvaturePenalty(logits, decoded *gorgonia.Node, invTau, weight float64, opts ...ops.Option) (*gorgonia.Node, error) {
	const op = "graphs.CurvaturePenalty"
	if math.IsNaN(weight) || math.IsInf(weight, 0) {
		return nil, check.Errorf(gatejet.ErrParam, op, "weight", "want a finite weight, got %v", weight)
	}
	first, err := ops.SoftmaxJetFirst(logits, decoded, invTau, opts...)
	if err != nil {
		return nil, err
	}
	sq, err := gorgonia.Square(first)
	if err != nil {
		return nil, err
	}
	sum, err := gorgonia.Sum(sq)
	if err != nil {
		return nil, err
	}
	n := first.Shape()[0]
	return gorgonia.Mul(sum, scalarConst(first.Dtype(), weight/float64(n)))
}

func scalarConst(dt tensor.Dtype, x float64) *gorgonia.Node {
	if dt == tensor.Float32 {
		return gorgonia.NewConstant(float32(x))
	}
	return gorgonia.NewConstant(x)
}

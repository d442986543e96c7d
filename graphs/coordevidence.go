package graphs

import (
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/gatejet/gatejet"
	"github.com/gatejet/gatejet/internal/check"
	"github.com/gatejet/gatejet/ops"
)

// CoordGaussNewtonLogDet returns the [N] vector, one entry per row r,
//
//	out[r] = log det(H[r]/σ² + λI),   H[r][a][b] = Σ_c ∂ẑ_rc/∂p_a · ∂ẑ_rc/∂p_b,
//
// over the 2K primaries p = (ℓ_1..ℓ_K, t_1..t_K) of a row of the latent-coordinate model
// ẑ_rc = Σ_k softmax(s·ℓ_r)_k·d_kc(t_rk) (docs/math.md, "Latent coordinates" and "The
// evidence over the row primaries"). It is the log-determinant term of the Laplace
// approximation of a row's evidence under a Gaussian likelihood of noise scale σ and a
// Gaussian prior of precision λ on the primaries, with the Gauss-Newton curvature:
//
//	log p(z_r) ≈ −‖z_r − ẑ_r‖²/(2σ²) − λ‖p̂_r‖²/2 − ½·out[r] + K·log λ − P·log σ − (P/2)·log 2π
//
// at the fitted primaries p̂_r. A user who learns the hyperparameters by maximising the
// evidence adds −½·Σ_r out[r] to the other terms and differentiates with Grad or
// gorgonia.Grad: the gradients are exact in every argument.
//
// logits [N,K] are the raw logits ℓ; d0 and d1 [N,K,P] are the decoded rows and their
// derivative in t at the row's coordinates (MonomialJets or BSplineJets, so gradients reach
// t and the coefficients B); all three Float64 or all Float32. invTau, logSigma and logLambda
// are scalar nodes of the same dtype and graph: the inverse temperature s, log σ and log λ.
// They may be variables (learned) or constants (gorgonia.NewConstant, say). σ and λ enter through their logarithms, so
// that every real value is valid and a gradient step keeps σ and λ positive.
//
// How it is built: the temperature is a node, so the coordinate Gauss-Newton op runs at
// inverse temperature 1 on the scaled logits s·ℓ (ops.SoftmaxCoordJetGaussNewton), which gives
// the slab H' over (s·ℓ, t). The primaries are the raw logits, ∂/∂ℓ_a = s·∂/∂(sℓ)_a, so the slab
// over them is H = D·H'·D with D = diag(s·1_K, 1_K): the logit rows and columns of H' scaled by
// s, the coordinate block unchanged. (For a constant s this is the slab that
// ops.SoftmaxCoordJetGaussNewton(logits, d0, d1, s) returns; here it is differentiable in s,
// both through the gate and through D.) Then, with c = 1/(σ²λ) = exp(−2·log σ − log λ),
//
//	log det(H/σ² + λI) = log det(c·H + I) + 2K·log λ,
//
// the first term by LogDetPlusRidge at ridge 1. c·H + I is positive definite for every H
// and c ≥ 0, so the run does not fail on a singular slab; a c that overflows (log σ and log λ
// very negative) makes the rows NaN, as non-finite data does.
//
// Errors are *gatejet.Error values: ErrParam for a nil node, nodes of different graphs or
// none in a graph, ErrDType, ErrRank, ErrShape for a scalar argument that is not a scalar
// node, and the errors of ops.SoftmaxCoordJetGaussNewton for logits, d0 and d1. opts go to the
// Gauss-Newton op and the log-determinant's (ops.ReuseOutput, say). Differentiate on a
// TapeMachine: the broadcast of the scaling holds a Repeat, which Gorgonia's LispMachine
// cannot differentiate.
func CoordGaussNewtonLogDet(logits, d0, d1, invTau, logSigma, logLambda *gorgonia.Node, opts ...ops.Option) (*gorgonia.Node, error) {
	const op = "graphs.CoordGaussNewtonLogDet"
	names := []string{"logits", "d0", "d1", "invTau", "logSigma", "logLambda"}
	nodes := []*gorgonia.Node{logits, d0, d1, invTau, logSigma, logLambda}
	g, err := oneGraph(op, names, nodes...)
	if err != nil {
		return nil, err
	}
	dt := logits.Dtype()
	if dt != tensor.Float64 && dt != tensor.Float32 {
		return nil, check.Errorf(gatejet.ErrDType, op, "logits", "want Float64 or Float32, got %v", dt)
	}
	if s := logits.Shape(); len(s) != 2 {
		return nil, check.Errorf(gatejet.ErrRank, op, "logits", "want rank 2 [N,K], got shape %v", s)
	}
	for i := 3; i < len(nodes); i++ {
		if d := nodes[i].Dtype(); d != dt {
			return nil, check.Errorf(gatejet.ErrDType, op, names[i], "want %v (the logits' dtype), got %v", dt, d)
		}
		if !nodes[i].IsScalar() {
			return nil, check.Errorf(gatejet.ErrShape, op, names[i], "want a scalar node, got shape %v", nodes[i].Shape())
		}
	}
	K := logits.Shape()[1]

	// The op checks d0, d1 and the options only once the scaled logits are in the graph: if
	// it refuses them, the nodes added since are taken out again (not one that was there
	// before, which Gorgonia hands back for an equal expression), so that a refused call
	// leaves no stray root (a LispMachine wants the cost as its only one).
	before := make(map[*gorgonia.Node]bool)
	for _, n := range g.AllNodes() {
		before[n] = true
	}
	scaled, err := gorgonia.Mul(invTau, logits)
	if err != nil {
		return nil, err
	}
	h, err := ops.SoftmaxCoordJetGaussNewton(scaled, d0, d1, 1, opts...)
	if err != nil {
		var added []*gorgonia.Node // collected first: RemoveNode shifts AllNodes' slice
		for _, n := range g.AllNodes() {
			if !before[n] {
				added = append(added, n)
			}
		}
		for _, n := range added {
			g.RemoveNode(n)
		}
		return nil, err
	}
	// The scalars enter expressions with constants of their own, which Gorgonia builds only
	// in a graph: a constant scalar joins logits' graph.
	for _, n := range []**gorgonia.Node{&invTau, &logSigma, &logLambda} {
		if (*n).Graph() == nil {
			*n = g.AddNode(*n)
		}
	}
	// The scaling c·D⊗D as one [1,2K,2K] weight: W = c·w·wᵀ with w = s·e_ℓ + e_t, where e_ℓ
	// and e_t are the indicator vectors of the logit and the coordinate primaries (built
	// after the op, which has checked K against the size limits).
	el, et := make([]float64, 2*K), make([]float64, 2*K)
	for k := range K {
		el[k], et[K+k] = 1, 1
	}
	var b exprs
	w := b.add(b.mul(invTau, vectorConst(dt, el)), vectorConst(dt, et))
	c := b.exp(b.neg(b.add(b.mul(scalarConst(dt, 2), logSigma), logLambda)))
	W := b.reshape(b.mul(c, b.outer(w, w)), tensor.Shape{1, 2 * K, 2 * K})
	A := b.broadcastMul(h, W)
	if b.err != nil {
		return nil, b.err
	}
	ld, err := LogDetPlusRidge(A, 1, opts...)
	if err != nil {
		return nil, err
	}
	out := b.add(ld, b.mul(scalarConst(dt, float64(2*K)), logLambda))
	return out, b.err
}

// exprs builds Gorgonia expressions, keeping the first error: once an error is kept, every
// later call returns nil without calling Gorgonia.
type exprs struct{ err error }

func (b *exprs) do(f func() (*gorgonia.Node, error)) *gorgonia.Node {
	if b.err != nil {
		return nil
	}
	n, err := f()
	if err != nil {
		b.err = err
		return nil
	}
	return n
}

func (b *exprs) add(x, y *gorgonia.Node) *gorgonia.Node {
	return b.do(func() (*gorgonia.Node, error) { return gorgonia.Add(x, y) })
}

func (b *exprs) mul(x, y *gorgonia.Node) *gorgonia.Node {
	return b.do(func() (*gorgonia.Node, error) { return gorgonia.Mul(x, y) })
}

func (b *exprs) neg(x *gorgonia.Node) *gorgonia.Node {
	return b.do(func() (*gorgonia.Node, error) { return gorgonia.Neg(x) })
}

func (b *exprs) exp(x *gorgonia.Node) *gorgonia.Node {
	return b.do(func() (*gorgonia.Node, error) { return gorgonia.Exp(x) })
}

func (b *exprs) outer(x, y *gorgonia.Node) *gorgonia.Node {
	return b.do(func() (*gorgonia.Node, error) { return gorgonia.OuterProd(x, y) })
}

func (b *exprs) reshape(x *gorgonia.Node, s tensor.Shape) *gorgonia.Node {
	return b.do(func() (*gorgonia.Node, error) { return gorgonia.Reshape(x, s) })
}

// broadcastMul is x ⊙ y with y [1,…] repeated along x's first axis.
func (b *exprs) broadcastMul(x, y *gorgonia.Node) *gorgonia.Node {
	return b.do(func() (*gorgonia.Node, error) { return gorgonia.BroadcastHadamardProd(x, y, nil, []byte{0}) })
}

func vectorConst(dt tensor.Dtype, x []float64) *gorgonia.Node {
	if dt == tensor.Float32 {
		f := make([]float32, len(x))
		for i, v := range x {
			f[i] = float32(v)
		}
		return gorgonia.NewConstant(tensor.New(tensor.WithShape(len(x)), tensor.WithBacking(f)))
	}
	return gorgonia.NewConstant(tensor.New(tensor.WithShape(len(x)), tensor.WithBacking(x)))
}

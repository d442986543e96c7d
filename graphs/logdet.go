package graphs

import (
	"fmt"
	"hash"
	"math"

	"github.com/chewxy/hm"
	"github.com/gatejet/gatejet"
	"github.com/gatejet/gatejet/internal/check"
	"github.com/gatejet/gatejet/internal/strided"
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/lapack/lapack64"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

const opLogDet = "graphs.LogDetPlusRidge"

// LogDetPlusRidge returns, for a batch of square matrices H [n,K,K], the vector [n] of
//
//	out[r] = log det(sym(H[r]) + λI),   sym(H) = (H + Hᵀ)/2,
//
// computed in float64 from a Cholesky factorisation by gonum's LAPACK (Potrf, and Potri
// for the gradient; O(K³) per row). H has rank 3, dtype Float64 or Float32 and positive
// dims; lambda ≥ 0 is finite. Only the symmetric part of each matrix counts, so the
// gradient is symmetric:
//
//	∂out[r]/∂H[r] = (sym(H[r]) + λI)⁻¹.
//
// The node is differentiable with gorgonia.Grad (the gradient node is a second op of this
// package that factorises again) and on a LispMachine. Its gradient node is not itself
// differentiable: differentiating it returns an error.
//
// Entries and λ as large as the largest float64 are accepted: a row whose sym(H) + λI
// would overflow is factored halved, so finite positive definite rows give finite values.
// A finite row whose sym(H) + λI is not positive definite makes the machine's run fail
// with an error matching ErrNotSPD that names the row (it never panics). A row holding a
// NaN or an infinity gives NaN (and a NaN gradient) for that row only.
func LogDetPlusRidge(H *gorgonia.Node, lambda float64) (*gorgonia.Node, error) {
	if !(lambda >= 0) || math.IsInf(lambda, 1) {
		return nil, check.Errorf(gatejet.ErrParam, opLogDet, "lambda", "want 0 ≤ lambda < +Inf, got %v", lambda)
	}
	dt, err := floatNode(opLogDet, "H", H)
	if err != nil {
		return nil, err
	}
	s := H.Shape()
	if len(s) != 3 {
		return nil, check.Errorf(gatejet.ErrRank, opLogDet, "H", "want rank 3 [n,K,K], got shape %v", s)
	}
	if s[0] <= 0 || s[1] <= 0 || s[1] != s[2] {
		return nil, check.Errorf(gatejet.ErrShape, opLogDet, "H", "want [n,K,K] with n, K ≥ 1, got %v", s)
	}
	return gorgonia.ApplyOp(&logDetOp{lambda: lambda, n: s[0], k: s[1], dt: dt}, H)
}

// logDetOp: H [n,K,K] → [n].
type logDetOp struct {
	lambda float64
	n, k   int
	dt     tensor.Dtype
}

func (op *logDetOp) Arity() int { return 1 }

func (op *logDetOp) Type() hm.Type {
	a := hm.TypeVariable('a')
	return hm.NewFnType(gorgonia.TensorType{Dims: 3, Of: a}, gorgonia.TensorType{Dims: 1, Of: a})
}

func (op *logDetOp) InferShape(in ...gorgonia.DimSizer) (tensor.Shape, error) {
	if err := op.checkShapes(in, 1); err != nil {
		return nil, err
	}
	return tensor.Shape{op.n}, nil
}

// checkShapes checks that the first input is [n,K,K] and, with two inputs, that the second
// is [n].
func (op *logDetOp) checkShapes(in []gorgonia.DimSizer, arity int) error {
	if len(in) != arity {
		return check.Errorf(gatejet.ErrParam, opLogDet, "", "want %d inputs, got %d", arity, len(in))
	}
	s, ok := in[0].(tensor.Shape)
	if !ok || !s.Eq(tensor.Shape{op.n, op.k, op.k}) {
		return check.Errorf(gatejet.ErrShape, opLogDet, "H", "want [%d,%d,%d], got %v", op.n, op.k, op.k, in[0])
	}
	if arity == 2 {
		g, ok := in[1].(tensor.Shape)
		if !ok || g.TotalSize() != op.n {
			return check.Errorf(gatejet.ErrShape, opLogDet, "grad", "want [%d], got %v", op.n, in[1])
		}
	}
	return nil
}

func (op *logDetOp) Do(in ...gorgonia.Value) (gorgonia.Value, error) {
	if len(in) != 1 {
		return nil, check.Errorf(gatejet.ErrParam, opLogDet, "", "want 1 input, got %d", len(in))
	}
	h, err := op.matrices(in[0])
	if err != nil {
		return nil, err
	}
	out := make([]float64, op.n)
	work := make([]float64, op.k*op.k)
	for r := range out {
		ok, finite, halved := op.factor(work, h[r*op.k*op.k:(r+1)*op.k*op.k])
		if !finite {
			out[r] = math.NaN()
			continue
		}
		if ok >= 0 {
			return nil, op.notSPD(r, ok, work)
		}
		ld := 0.0
		for i := 0; i < op.k; i++ {
			ld += math.Log(work[i*op.k+i])
		}
		out[r] = 2 * ld
		if halved {
			out[r] += float64(op.k) * math.Ln2
		}
	}
	return fromFloat64s(op.dt, tensor.Shape{op.n}, out), nil
}

func (op *logDetOp) notSPD(r, pivot int, work []float64) error {
	return check.Errorf(ErrNotSPD, opLogDet, "H",
		"row %d: sym(H)+%gI has a non-positive pivot %g at %d (K=%d)", r, op.lambda, work[pivot*op.k+pivot], pivot, op.k)
}

// matrices returns the value of H as float64.
func (op *logDetOp) matrices(v gorgonia.Value) ([]float64, error) {
	h, ok := floatsOf(v)
	if !ok || len(h) != op.n*op.k*op.k {
		return nil, check.Errorf(gatejet.ErrParam, opLogDet, "H",
			"want a float %v value with %d elements, got %T", tensor.Shape{op.n, op.k, op.k}, op.n*op.k*op.k, v)
	}
	return h, nil
}

// factor writes the Cholesky factor L (lower triangle, row-major) of sym(h) + λI into
// work. It returns finite = false when h has a non-finite element, and pivot ≥ 0, the
// first pivot that is not positive, when the matrix is not positive definite (−1 when it
// is). When an entry of sym(h) + λI overflows although h and λ are finite (entries near the
// largest float64), it factors (sym(h) + λI)/2 instead, exactly halved, and says so with
// halved: log det gains K·log 2 and the inverse a factor ½.
func (op *logDetOp) factor(work, h []float64) (pivot int, finite, halved bool) {
	k := op.k
	for i := 0; i < k; i++ {
		for j := 0; j <= i; j++ {
			a, b := h[i*k+j], h[j*k+i]
			if math.IsNaN(a) || math.IsInf(a, 0) || math.IsNaN(b) || math.IsInf(b, 0) {
				return -1, false, false
			}
			work[i*k+j] = 0.5 * (a + b)
			halved = halved || math.IsInf(work[i*k+j], 0)
		}
		work[i*k+i] += op.lambda
		halved = halved || math.IsInf(work[i*k+i], 0)
	}
	if halved {
		// ¼a + ¼b and ½λ are exact for such large values, and their sum is at most the
		// largest float64.
		for i := 0; i < k; i++ {
			for j := 0; j <= i; j++ {
				work[i*k+j] = 0.25*h[i*k+j] + 0.25*h[j*k+i]
			}
			work[i*k+i] += 0.5 * op.lambda
		}
	}
	a := blas64.Symmetric{Uplo: blas.Lower, N: k, Stride: k, Data: work}
	if _, ok := lapack64.Potrf(a); ok {
		return -1, true, halved
	}
	// Potrf stops at the first pivot that is not positive (or NaN, after an overflow) and
	// leaves it on the diagonal, after the positive ones of the columns it factored.
	pivot = 0
	for pivot < k-1 && work[pivot*k+pivot] > 0 {
		pivot++
	}
	return pivot, true, halved
}

// inverse writes scale·(L·Lᵀ)⁻¹ into inv (k×k, full) from the factor L that factor left in
// work, which it overwrites.
func (op *logDetOp) inverse(inv, work []float64, scale float64) {
	k := op.k
	// Potri fails only on a zero diagonal, and factor's diagonal is positive when it
	// succeeds. It leaves the lower triangle of (L·Lᵀ)⁻¹ in work, with −0 where an entry
	// is zero (the off-diagonal of a diagonal matrix): adding +0 makes that +0.
	lapack64.Potri(blas64.Triangular{Uplo: blas.Lower, Diag: blas.NonUnit, N: k, Stride: k, Data: work})
	for a := 0; a < k; a++ {
		for b := 0; b <= a; b++ {
			v := scale * (work[a*k+b] + 0)
			inv[a*k+b], inv[b*k+a] = v, v
		}
	}
}

// gradient returns g[r]·(sym(H[r]) + λI)⁻¹ for every row, as float64 [n,K,K].
func (op *logDetOp) gradient(h, g []float64) ([]float64, error) {
	k2 := op.k * op.k
	out := make([]float64, op.n*k2)
	work := make([]float64, k2)
	for r := 0; r < op.n; r++ {
		dst := out[r*k2 : (r+1)*k2]
		pivot, finite, halved := op.factor(work, h[r*k2:(r+1)*k2])
		if !finite || math.IsNaN(g[r]) || math.IsInf(g[r], 0) {
			for i := range dst {
				dst[i] = math.NaN()
			}
			continue
		}
		if pivot >= 0 {
			return nil, op.notSPD(r, pivot, work)
		}
		scale := g[r]
		if halved {
			scale *= 0.5
		}
		op.inverse(dst, work, scale)
	}
	return out, nil
}

func (op *logDetOp) ReturnsPtr() bool     { return false }
func (op *logDetOp) CallsExtern() bool    { return false }
func (op *logDetOp) OverwritesInput() int { return -1 }

func (op *logDetOp) WriteHash(h hash.Hash) {
	fmt.Fprintf(h, "graphs.LogDetPlusRidge{%016x,%d,%d,%v}", math.Float64bits(op.lambda), op.n, op.k, op.dt)
}

func (op *logDetOp) Hashcode() uint32 { return hashOf(op) }

func (op *logDetOp) String() string { return fmt.Sprintf("LogDetPlusRidge{λ=%g}", op.lambda) }

// DiffWRT: differentiable in H.
func (op *logDetOp) DiffWRT(int) []bool { return []bool{true} }

// SymDiff: dH[r] = grad[r]·(sym(H[r]) + λI)⁻¹.
func (op *logDetOp) SymDiff(in gorgonia.Nodes, _, grad *gorgonia.Node) (gorgonia.Nodes, error) {
	if len(in) != 1 {
		return nil, check.Errorf(gatejet.ErrParam, opLogDet, "", "want 1 input, got %d", len(in))
	}
	dh, err := gorgonia.ApplyOp(&logDetGradOp{op}, in[0], grad)
	if err != nil {
		return nil, err
	}
	return gorgonia.Nodes{dh}, nil
}

// DoDiff (LispMachine): H.d += out.d[r]·(sym(H[r]) + λI)⁻¹.
func (op *logDetOp) DoDiff(_ gorgonia.ExecutionContext, in gorgonia.Nodes, out *gorgonia.Node) error {
	up, dv, err := unaryGrads(opLogDet, "H", in, out)
	if err != nil {
		return err
	}
	g, ok := floatsOf(up)
	if !ok || len(g) != op.n {
		return check.Errorf(gatejet.ErrShape, opLogDet, "output", "gradient %T is not [%d]", up, op.n)
	}
	h, err := op.matrices(in[0].Value())
	if err != nil {
		return err
	}
	dh, err := op.gradient(h, g)
	if err != nil {
		return err
	}
	shape := tensor.Shape{op.n, op.k, op.k}
	return strided.AddInto(opLogDet, "H", dv, op.dt, shape, fromFloat64s(op.dt, shape, dh))
}

// logDetGradOp: (H [n,K,K], grad [n]) → grad[r]·(sym(H[r]) + λI)⁻¹.
type logDetGradOp struct{ f *logDetOp }

func (op *logDetGradOp) Arity() int { return 2 }

func (op *logDetGradOp) Type() hm.Type {
	a := hm.TypeVariable('a')
	t3 := gorgonia.TensorType{Dims: 3, Of: a}
	return hm.NewFnType(t3, gorgonia.TensorType{Dims: 1, Of: a}, t3)
}

func (op *logDetGradOp) InferShape(in ...gorgonia.DimSizer) (tensor.Shape, error) {
	if err := op.f.checkShapes(in, 2); err != nil {
		return nil, err
	}
	return tensor.Shape{op.f.n, op.f.k, op.f.k}, nil
}

func (op *logDetGradOp) Do(in ...gorgonia.Value) (gorgonia.Value, error) {
	if len(in) != 2 {
		return nil, check.Errorf(gatejet.ErrParam, opLogDet, "", "want 2 inputs, got %d", len(in))
	}
	h, err := op.f.matrices(in[0])
	if err != nil {
		return nil, err
	}
	g, ok := floatsOf(in[1])
	if !ok || len(g) != op.f.n {
		return nil, check.Errorf(gatejet.ErrShape, opLogDet, "grad", "want [%d], got %T", op.f.n, in[1])
	}
	dh, err := op.f.gradient(h, g)
	if err != nil {
		return nil, err
	}
	return fromFloat64s(op.f.dt, tensor.Shape{op.f.n, op.f.k, op.f.k}, dh), nil
}

func (op *logDetGradOp) ReturnsPtr() bool     { return false }
func (op *logDetGradOp) CallsExtern() bool    { return false }
func (op *logDetGradOp) OverwritesInput() int { return -1 }

func (op *logDetGradOp) WriteHash(h hash.Hash) {
	fmt.Fprint(h, "grad:")
	op.f.WriteHash(h)
}

func (op *logDetGradOp) Hashcode() uint32 { return hashOf(op) }

func (op *logDetGradOp) String() string {
	return fmt.Sprintf("LogDetPlusRidgeGrad{λ=%g}", op.f.lambda)
}

// DiffWRT: reported differentiable so that differentiating through it fails loudly in
// SymDiff rather than silently treating it as a constant.
func (op *logDetGradOp) DiffWRT(int) []bool { return []bool{true, true} }

// SymDiff: the second derivative of the log-det is not implemented.
func (op *logDetGradOp) SymDiff(gorgonia.Nodes, *gorgonia.Node, *gorgonia.Node) (gorgonia.Nodes, error) {
	return nil, check.Errorf(gatejet.ErrParam, opLogDet, "",
		"the gradient of LogDetPlusRidge is not differentiable (second derivative not implemented)")
}

// fromFloat64s builds a Dense of dtype dt from float64 data.
func fromFloat64s(dt tensor.Dtype, shape tensor.Shape, x []float64) *tensor.Dense {
	if dt == tensor.Float32 {
		b := make([]float32, len(x))
		for i, v := range x {
			b[i] = float32(v)
		}
		return tensor.New(tensor.WithShape(shape.Clone()...), tensor.WithBacking(b))
	}
	return tensor.New(tensor.WithShape(shape.Clone()...), tensor.WithBacking(x))
}

package graphs

import (
	"github.com/gatejet/gatejet/internal/graphops"
	"github.com/gatejet/gatejet/ops"
	"gorgonia.org/gorgonia"
)

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
// The node is differentiable with gorgonia.Grad (the gradient node is a second op that
// factorises again) and on a LispMachine. Its gradient node is differentiable in turn with
// Grad (symbolically; not on a LispMachine): with A = sym(H) + λI and M = g·A⁻¹ the gradient
// node, the gradient of ⟨U, M⟩ is −sym(M·U·A⁻¹) in H and ⟨U[r], A[r]⁻¹⟩ in g, from the
// gradient op again at g = 1, so a cost on the log-determinant has Hessian-vector products.
//
// Entries and λ as large as the largest float64 are accepted: a row whose sym(H) + λI
// would overflow is factored halved, so finite positive definite rows give finite values.
// A finite row whose sym(H) + λI is not positive definite makes the machine's run fail
// with an error matching ErrNotSPD that names the row (it never panics). A row holding a
// NaN or an infinity gives NaN (and a NaN gradient) for that row only.
//
// The node's op, and its gradient op, are ops of package ops like any other: opts
// (ops.ReuseOutput, say) configure them, they report where they ran (ops.LastPath) and have
// UsePreallocDo, and they run on the CPU only (under cudaops.ModeRequired their run is a
// gatejet.ErrDevice error).
func LogDetPlusRidge(H *gorgonia.Node, lambda float64, opts ...ops.Option) (*gorgonia.Node, error) {
	return graphops.LogDetPlusRidge(H, lambda, opts)
}

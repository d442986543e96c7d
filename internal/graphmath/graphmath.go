// Package graphmath is the maths of package graphs' own ops on plain slices: the soft-argmin
// p = softmax(−s·c) of rows of costs and its vector-Jacobian product, and the batched
// log-determinant log det(sym(H) + λI) by a Cholesky factorisation (gonum's LAPACK) and its
// gradient. The kernel table (internal/kernel) declares them as CPU-only kernels, which the
// ops run through cudaops; graphs' plain-slice helpers call them directly. Errors name the
// graphs op they serve.
package graphmath

import (
	"errors"
	"math"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/lapack/lapack64"

	"github.com/gatejet/gatejet"
	"github.com/gatejet/gatejet/backward"
	"github.com/gatejet/gatejet/internal/check"
)

// The names of the graphs ops these kernels serve, as their errors give them.
const (
	OpSoftArgmin = "graphs.SoftArgmin"
	OpLogDet     = "graphs.LogDetPlusRidge"
)

// ErrNotSPD is graphs.ErrNotSPD: a matrix that must be symmetric positive definite (after the
// ridge) is not, so its Cholesky factorisation failed.
var ErrNotSPD = errors.New("matrix is not positive definite")

// SoftArgminRows writes softmax(−s·c) for each row of k elements of c into p, with the
// project's one softmax forward, backward.Softmax, applied in float64 to the logits
// −s·(c_i − min c): the differences are taken before scaling (see scaledGap), so finite
// costs and any accepted s give finite probabilities (−s·c itself overflows for |c| near
// the largest float64, while s·(c_i − min c) overflowing to +Inf is exactly an exp that
// underflows to 0). The minimum's logit is 0, so the softmax's sum is ≥ 1. A row with a
// NaN or a −Inf cost, or of all +Inf, gets NaN logits, which backward.Softmax turns into a
// NaN row. p has the length of c, a positive multiple of k, and does not overlap it other
// than as the same slice; op names the caller in errors.
func SoftArgminRows[T gatejet.Float](op string, p, c []T, k int, s float64) error {
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

// SoftArgminVJP writes dc = −s·SoftmaxBackward(p, dp) along rows of k elements: the gradient
// with respect to the costs of the soft-argmin p, given the gradient dp with respect to p.
func SoftArgminVJP[T gatejet.Float](dc, p, dp []T, k int, s float64) error {
	if k <= 0 || len(p)%k != 0 || len(dp) != len(p) || len(dc) != len(p) {
		return check.Errorf(gatejet.ErrShape, OpSoftArgmin, "p", "want rows of %d probabilities, got %d", k, len(p))
	}
	if err := backward.SoftmaxBackward(dc, p, dp, []int{len(p) / k, k}, -1); err != nil {
		return err
	}
	for i, v := range dc {
		dc[i] = T(-s * float64(v))
	}
	return nil
}

// LogDet writes out[r] = log det(sym(H[r]) + λI) for the n matrices K×K of h (row-major), a
// NaN for a matrix holding a NaN or an infinity, and returns an ErrNotSPD error naming the
// first finite row that is not positive definite.
func LogDet(out, h []float64, n, k int, lambda float64) error {
	if err := batchLens(n, k, h, out, h); err != nil {
		return err
	}
	work := make([]float64, k*k)
	for r := range out[:n] {
		ok, finite, halved := Factor(work, h[r*k*k:(r+1)*k*k], k, lambda)
		if !finite {
			out[r] = math.NaN()
			continue
		}
		if ok >= 0 {
			return notSPD(r, ok, work, k, lambda)
		}
		ld := 0.0
		for i := 0; i < k; i++ {
			ld += math.Log(work[i*k+i])
		}
		out[r] = 2 * ld
		if halved {
			out[r] += float64(k) * math.Ln2
		}
	}
	return nil
}

// LogDetGrad writes dh[r] = g[r]·(sym(H[r]) + λI)⁻¹ for every row (NaN for a row whose matrix
// or g[r] is not finite), or returns LogDet's ErrNotSPD error.
func LogDetGrad(dh, h, g []float64, n, k int, lambda float64) error {
	if err := batchLens(n, k, h, g, dh); err != nil {
		return err
	}
	k2 := k * k
	work := make([]float64, k2)
	for r := 0; r < n; r++ {
		dst := dh[r*k2 : (r+1)*k2]
		pivot, finite, halved := Factor(work, h[r*k2:(r+1)*k2], k, lambda)
		if !finite || math.IsNaN(g[r]) || math.IsInf(g[r], 0) {
			for i := range dst {
				dst[i] = math.NaN()
			}
			continue
		}
		if pivot >= 0 {
			return notSPD(r, pivot, work, k, lambda)
		}
		scale := g[r]
		if halved {
			scale *= 0.5
		}
		Inverse(dst, work, k, scale)
	}
	return nil
}

// batchLens checks the lengths of n matrices K×K h and m and of the n values v.
func batchLens(n, k int, h, v, m []float64) error {
	if len(h) != n*k*k || len(v) != n || len(m) != len(h) {
		return check.Errorf(gatejet.ErrSize, OpLogDet, "H", "want %d matrices %d×%d and %d values, got %d, %d and %d elements",
			n, k, k, n, len(h), len(v), len(m))
	}
	return nil
}

func notSPD(r, pivot int, work []float64, k int, lambda float64) error {
	return check.Errorf(ErrNotSPD, OpLogDet, "H",
		"row %d: sym(H)+%gI has a non-positive pivot %g at %d (K=%d)", r, lambda, work[pivot*k+pivot], pivot, k)
}

// Factor writes the Cholesky factor L (lower triangle, row-major) of sym(h) + λI into
// work (h and work K×K). It returns finite = false when h has a non-finite element, and
// pivot ≥ 0, the first pivot that is not positive, when the matrix is not positive definite
// (−1 when it is). When an entry of sym(h) + λI overflows although h and λ are finite
// (entries near the largest float64), it factors (sym(h) + λI)/2 instead, exactly halved,
// and says so with halved: log det gains K·log 2 and the inverse a factor ½.
func Factor(work, h []float64, k int, lambda float64) (pivot int, finite, halved bool) {
	for i := 0; i < k; i++ {
		for j := 0; j <= i; j++ {
			a, b := h[i*k+j], h[j*k+i]
			if math.IsNaN(a) || math.IsInf(a, 0) || math.IsNaN(b) || math.IsInf(b, 0) {
				return -1, false, false
			}
			work[i*k+j] = 0.5 * (a + b)
			halved = halved || math.IsInf(work[i*k+j], 0)
		}
		work[i*k+i] += lambda
		halved = halved || math.IsInf(work[i*k+i], 0)
	}
	if halved {
		// ¼a + ¼b and ½λ are exact for such large values, and their sum is at most the
		// largest float64.
		for i := 0; i < k; i++ {
			for j := 0; j <= i; j++ {
				work[i*k+j] = 0.25*h[i*k+j] + 0.25*h[j*k+i]
			}
			work[i*k+i] += 0.5 * lambda
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

// Inverse writes scale·(L·Lᵀ)⁻¹ into inv (K×K, full) from the factor L that Factor left in
// work, which it overwrites.
func Inverse(inv, work []float64, k int, scale float64) {
	// Potri fails only on a zero diagonal, and Factor's diagonal is positive when it
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

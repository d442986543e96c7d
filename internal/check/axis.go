package check

import (
	"math"

	"github.com/gatejet/gatejet"
)

// MaxRank is the largest rank of a shape split around an axis.
const MaxRank = 8

// AxisLayout validates shape and axis for the operation op and splits the shape around the
// axis: outer is the product of the dims before the axis, n the dim at the axis and inner the
// product of the dims after it, so that element (o, k, i) of the tensor is at flat index
// (o·n + k)·inner + i of a row-major buffer of length outer·n·inner.
//
// The shape must have rank 1 to MaxRank and no negative dim; a zero dim is valid (the tensor
// is empty). axis must lie in [-rank, rank); a negative axis counts from the end. The error,
// when not nil, is a *gatejet.Error wrapping gatejet.ErrRank (rank 0 or above MaxRank),
// gatejet.ErrShape (a negative dim), gatejet.ErrSize (dims whose product, zero dims left out,
// overflows int) or gatejet.ErrAxis.
func AxisLayout(op string, shape []int, axis int) (outer, n, inner int, err error) {
	rank := len(shape)
	if rank < 1 || rank > MaxRank {
		return 0, 0, 0, Errorf(gatejet.ErrRank, op, "shape", "want rank 1 to %d, got %d", MaxRank, rank)
	}
	nonzero := 1 // product of the nonzero dims, checked for overflow
	for i, d := range shape {
		if d < 0 {
			return 0, 0, 0, Errorf(gatejet.ErrShape, op, "shape", "dim %d is %d, want ≥ 0", i, d)
		}
		if d == 0 {
			continue
		}
		if nonzero > math.MaxInt/d {
			return 0, 0, 0, Errorf(gatejet.ErrSize, op, "shape", "element count of %v overflows int", shape)
		}
		nonzero *= d
	}
	if axis < -rank || axis >= rank {
		return 0, 0, 0, Errorf(gatejet.ErrAxis, op, "axis", "want %d ≤ axis < %d, got %d", -rank, rank, axis)
	}
	if axis < 0 {
		axis += rank
	}
	// The products below divide the product of the nonzero dims, so none overflows.
	outer, n, inner = 1, shape[axis], 1
	for _, d := range shape[:axis] {
		outer *= d
	}
	for _, d := range shape[axis+1:] {
		inner *= d
	}
	return outer, n, inner, nil
}

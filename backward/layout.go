package backward

import (
	"math"
	"unsafe"

	"github.com/gatejet/gatejet"
	"github.com/gatejet/gatejet/internal/check"
)

// Float is the element type of every kernel: float32 or float64, or a type defined on them.
// Whatever the element type, reductions and pointwise derivatives are computed in float64 and
// each output is rounded once when it is stored.
type Float interface{ ~float32 | ~float64 }

// maxRank is the largest rank a shape may have.
const maxRank = 8

// layout is a validated shape split around its axis.
type layout struct {
	outer, n, inner int // product of dims before the axis, dim at the axis, product after
	total           int // outer·n·inner, the length of every buffer
}

// AxisLayout validates shape and axis for the operation op and splits the shape around the
// axis: outer is the product of the dims before the axis, n the dim at the axis and inner the
// product of the dims after it, so that element (o, k, i) of the tensor is at flat index
// (o·n + k)·inner + i of a row-major buffer of length outer·n·inner.
//
// The shape must have rank 1 to 8 and no negative dim; a zero dim is valid (the tensor is
// empty). axis must lie in [-rank, rank); a negative axis counts from the end. The error, when
// not nil, is a *gatejet.Error wrapping gatejet.ErrRank (rank 0 or above 8), gatejet.ErrShape
// (a negative dim), gatejet.ErrSize (dims whose product, zero dims left out, overflows int)
// or gatejet.ErrAxis.
func AxisLayout(op string, shape []int, axis int) (outer, n, inner int, err error) {
	l, err := newLayout(op, shape, axis)
	return l.outer, l.n, l.inner, err
}

// newLayout is AxisLayout returning the total element count as well.
func newLayout(op string, shape []int, axis int) (layout, error) {
	rank := len(shape)
	if rank < 1 || rank > maxRank {
		return layout{}, check.Errorf(gatejet.ErrRank, op, "shape", "want rank 1 to %d, got %d", maxRank, rank)
	}
	nonzero := 1 // product of the nonzero dims, checked for overflow
	for i, d := range shape {
		if d < 0 {
			return layout{}, check.Errorf(gatejet.ErrShape, op, "shape", "dim %d is %d, want ≥ 0", i, d)
		}
		if d == 0 {
			continue
		}
		if nonzero > math.MaxInt/d {
			return layout{}, check.Errorf(gatejet.ErrSize, op, "shape", "element count of %v overflows int", shape)
		}
		nonzero *= d
	}
	if axis < -rank || axis >= rank {
		return layout{}, check.Errorf(gatejet.ErrAxis, op, "axis", "want %d ≤ axis < %d, got %d", -rank, rank, axis)
	}
	if axis < 0 {
		axis += rank
	}
	// The products below divide the product of the nonzero dims, so none overflows.
	l := layout{outer: 1, n: shape[axis], inner: 1}
	for _, d := range shape[:axis] {
		l.outer *= d
	}
	for _, d := range shape[axis+1:] {
		l.inner *= d
	}
	l.total = l.outer * l.n * l.inner
	return l, nil
}

// checkLen reports an ErrSize error naming arg unless got == want.
func checkLen(op, arg string, got, want int) error {
	if got != want {
		return check.Errorf(gatejet.ErrSize, op, arg, "len(%s) = %d, want %d", arg, got, want)
	}
	return nil
}

// arg is a named slice argument whose length a call checks.
type arg[T Float] struct {
	name     string
	s        []T
	optional bool // an output that may be nil (skipped)
}

// need is an argument that must have the length wanted.
func need[T Float](name string, s []T) arg[T] { return arg[T]{name: name, s: s} }

// opt is an output that must have the length wanted unless it is nil.
func opt[T Float](name string, s []T) arg[T] { return arg[T]{name: name, s: s, optional: true} }

// layoutFor is newLayout, then checkLen of every argument against the layout's total length.
func layoutFor[T Float](op string, shape []int, axis int, args ...arg[T]) (layout, error) {
	l, err := newLayout(op, shape, axis)
	if err != nil {
		return l, err
	}
	for _, a := range args {
		if a.optional && a.s == nil {
			continue
		}
		if err := checkLen(op, a.name, len(a.s), l.total); err != nil {
			return l, err
		}
	}
	return l, nil
}

// sub returns x[lo:hi], or nil when x is nil (an output the caller skips).
func sub[T Float](x []T, lo, hi int) []T {
	if x == nil {
		return nil
	}
	return x[lo:hi]
}

// checkAlias reports an ErrParam error naming the output out if it shares memory with the
// input in without being the very same slice: a kernel reads each element's inputs before it
// writes the element's outputs, so in-place use is exact, but a partial overlap would read
// elements already overwritten (or being written by another goroutine). Lengths are already
// checked, so the same start means the same slice.
func checkAlias[T Float](op, outName string, out []T, inName string, in []T) error {
	if !check.Overlap(out, in) || unsafe.SliceData(out) == unsafe.SliceData(in) {
		return nil
	}
	return check.Errorf(gatejet.ErrParam, op, outName, "%s partly overlaps %s: an output may be the same slice as an input or share no memory with it", outName, inName)
}

// checkOutputs checks the two outputs of a double backward (either may be nil): they must not
// share memory with each other, and each may be the same slice as one of the inputs x (the
// forward input or output, named xName), dy and g, or share no memory with it.
func checkOutputs[T Float](op, o0Name string, o0 []T, o1Name string, o1 []T, xName string, x, dy, g []T) error {
	if check.Overlap(o0, o1) {
		return check.Errorf(gatejet.ErrParam, op, o0Name, "%s overlaps %s: the two outputs must share no memory", o0Name, o1Name)
	}
	for _, o := range [...]struct {
		name string
		s    []T
	}{{o0Name, o0}, {o1Name, o1}} {
		if err := checkAlias(op, o.name, o.s, xName, x); err != nil {
			return err
		}
		if err := checkAlias(op, o.name, o.s, "dy", dy); err != nil {
			return err
		}
		if err := checkAlias(op, o.name, o.s, "g", g); err != nil {
			return err
		}
	}
	return nil
}

// checkParts reports an ErrSize error if the partial sums of a long axis (runAxis) would
// exceed gatejet.MaxBytes; they are at most a few percent of the data, so this only guards
// against a limit set below that.
func checkParts(op string, l layout, kind axisKind) error {
	if l.total == 0 {
		return nil
	}
	p := newAxisPlan(l, kind)
	if p.nc == 1 {
		return nil // no partial sums: the accumulators are one block wide
	}
	_, err := check.Alloc(op, "shape", 8, p.outer, p.nb, p.nc, p.aw)
	return err
}

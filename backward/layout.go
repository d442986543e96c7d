package backward

import (
	"unsafe"

	"github.com/gatejet/gatejet"
	"github.com/gatejet/gatejet/internal/check"
)

// maxRank is the largest rank a shape may have.
const maxRank = check.MaxRank

// layout is a validated shape split around its axis.
type layout struct {
	outer, n, inner int // product of dims before the axis, dim at the axis, product after
	total           int // outer·n·inner, the length of every buffer
}

// newLayout validates shape and axis for the operation op (check.AxisLayout) and splits the
// shape around the axis, with the total element count.
func newLayout(op string, shape []int, axis int) (layout, error) {
	outer, n, inner, err := check.AxisLayout(op, shape, axis)
	if err != nil {
		return layout{}, err
	}
	return layout{outer: outer, n: n, inner: inner, total: outer * n * inner}, nil
}

// checkLen reports an ErrSize error naming arg unless got == want.
func checkLen(op, arg string, got, want int) error {
	if got != want {
		return check.Errorf(gatejet.ErrSize, op, arg, "len(%s) = %d, want %d", arg, got, want)
	}
	return nil
}

// arg is a named slice argument whose length a call checks.
type arg[T gatejet.Float] struct {
	name     string
	s        []T
	optional bool // an output that may be nil (skipped)
}

// need is an argument that must have the length wanted.
func need[T gatejet.Float](name string, s []T) arg[T] { return arg[T]{name: name, s: s} }

// opt is an output that must have the length wanted unless it is nil.
func opt[T gatejet.Float](name string, s []T) arg[T] { return arg[T]{name: name, s: s, optional: true} }

// layoutFor is newLayout, then checkLen of every argument against the layout's total length.
func layoutFor[T gatejet.Float](op string, shape []int, axis int, args ...arg[T]) (layout, error) {
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
func sub[T gatejet.Float](x []T, lo, hi int) []T {
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
func checkAlias[T gatejet.Float](op, outName string, out []T, inName string, in []T) error {
	if !check.Overlap(out, in) || unsafe.SliceData(out) == unsafe.SliceData(in) {
		return nil
	}
	return check.Errorf(gatejet.ErrParam, op, outName, "%s partly overlaps %s: an output may be the same slice as an input or share no memory with it", outName, inName)
}

// checkOutputs checks the two outputs of a double backward (either may be nil): they must not
// share memory with each other, and each may be the same slice as one of the inputs x (the
// forward input or output, named xName), dy and g, or share no memory with it.
func checkOutputs[T gatejet.Float](op, o0Name string, o0 []T, o1Name string, o1 []T, xName string, x, dy, g []T) error {
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

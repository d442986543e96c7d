// Package strided reads *tensor.Dense values, and accumulates gradients into them, in their
// logical row-major order whatever their storage order. A *tensor.Dense may be stored
// column-major (tensor.AsFortran) with the same shape, so indexing its backing slice as
// row-major would silently permute the elements; its strides say where each element is.
// Packages ops and graphs share it.
package strided

import (
	"github.com/gatejet/gatejet"
	"github.com/gatejet/gatejet/internal/check"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// Offsets returns, for each element of t in logical row-major order, its offset in t's
// backing data, or nil when that order is the backing order itself. t must not be a view
// (materialise it first). A masked tensor is refused: its mask cannot be honoured here.
// Errors are *gatejet.Error values of operation op naming argument arg: ErrParam for a view,
// a mask or strides that do not fit the shape, ErrSize for backing data too short.
func Offsets(op, arg string, t *tensor.Dense) ([]int, error) {
	if t.IsMaterializable() {
		return nil, check.Errorf(gatejet.ErrParam, op, arg, "a view cannot be indexed directly; materialise it first")
	}
	if t.IsMasked() {
		return nil, check.Errorf(gatejet.ErrParam, op, arg, "masked tensors are not supported")
	}
	shape, strides := []int(t.Shape()), t.Strides()
	n := t.Shape().TotalSize()
	if len(shape) == 0 || n <= 1 {
		if t.DataSize() < n {
			return nil, check.Errorf(gatejet.ErrSize, op, arg, "want %d elements, got %d", n, t.DataSize())
		}
		return nil, nil
	}
	if len(strides) != len(shape) {
		return nil, check.Errorf(gatejet.ErrParam, op, arg, "shape %v has strides %v", shape, strides)
	}
	rowMajor, want := true, 1
	for d := len(shape) - 1; d >= 0; d-- {
		if shape[d] > 1 && strides[d] != want {
			rowMajor = false
		}
		want *= shape[d]
	}
	size := t.DataSize()
	if rowMajor {
		if size < n {
			return nil, check.Errorf(gatejet.ErrSize, op, arg, "want %d elements, got %d", n, size)
		}
		return nil, nil
	}
	off := make([]int, n)
	idx := make([]int, len(shape))
	o := 0
	for i := range off {
		if o < 0 || o >= size {
			return nil, check.Errorf(gatejet.ErrSize, op, arg,
				"strides %v of shape %v reach element %d of %d", strides, shape, o, size)
		}
		off[i] = o
		for d := len(shape) - 1; d >= 0; d-- {
			idx[d]++
			o += strides[d]
			if idx[d] < shape[d] {
				break
			}
			o -= strides[d] * shape[d]
			idx[d] = 0
		}
	}
	return off, nil
}

// At maps a logical index through Offsets' result (nil: the identity).
func At(off []int, i int) int {
	if off == nil {
		return i
	}
	return off[i]
}

// backing returns the backing slice of t as []T, or an ErrDType error of operation op
// naming argument arg when t's dtype is not T.
func backing[T gatejet.Float](op, arg string, t *tensor.Dense) ([]T, error) {
	var z T
	switch any(z).(type) {
	case float64:
		if t.Dtype() == tensor.Float64 {
			if d, ok := any(t.Float64s()).([]T); ok {
				return d, nil
			}
		}
	case float32:
		if t.Dtype() == tensor.Float32 {
			if d, ok := any(t.Float32s()).([]T); ok {
				return d, nil
			}
		}
	}
	return nil, check.Errorf(gatejet.ErrDType, op, arg, "unexpected dtype %v", t.Dtype())
}

// Logical returns the elements of t (dtype T, not a view) in logical row-major order: its
// backing slice itself when that is already the order, a gathered copy otherwise. Errors are
// Offsets', or ErrDType when t's dtype is not T.
func Logical[T gatejet.Float](op, arg string, t *tensor.Dense) ([]T, error) {
	off, err := Offsets(op, arg, t)
	if err != nil {
		return nil, err
	}
	d, err := backing[T](op, arg, t)
	if err != nil {
		return nil, err
	}
	n := t.Shape().TotalSize()
	if off == nil {
		return d[:n], nil
	}
	out := make([]T, n)
	for i, o := range off {
		out[i] = d[o]
	}
	return out, nil
}

// AddInto adds src into the gradient value dst of a node (a LispMachine's live gradient),
// element by element in logical row-major order. dst must be a *tensor.Dense of dtype dt
// (Float64 or Float32) with the given shape's number of elements that is not a view, and src
// a *tensor.Dense of dtype dt with as many elements, not a view; either may be stored
// column-major. Anything else is an ErrParam error of operation op naming argument arg (or
// Offsets' ErrSize).
//
// dst is read in the given shape whatever shape it carries: Gorgonia's Reshape
// differentiates by reshaping its output's gradient in place and handing that tensor on as
// its input's gradient, so on every later run over the same graph (each new LispMachine) the
// gradient of a reshaped node is a tensor of the Reshape input's shape. Gorgonia's own ops
// accumulate over a gradient's storage element by element and never see that; this does the
// same, over dst's storage in dst's own order.
func AddInto(op, arg string, dst gorgonia.Value, dt tensor.Dtype, shape tensor.Shape, src *tensor.Dense) error {
	d, ok := dst.(*tensor.Dense)
	if !ok || d == nil {
		return check.Errorf(gatejet.ErrParam, op, arg, "cannot accumulate the gradient: want a *tensor.Dense, got %T", dst)
	}
	if d.Dtype() != dt || d.Shape().TotalSize() != shape.TotalSize() {
		return check.Errorf(gatejet.ErrParam, op, arg,
			"cannot accumulate the gradient: want %v %v, got %v %v", dt, shape, d.Dtype(), d.Shape())
	}
	if !d.Shape().Eq(shape) {
		if d.IsMaterializable() {
			return check.Errorf(gatejet.ErrParam, op, arg, "a view cannot be indexed directly; materialise it first")
		}
		// A header of its own over the same storage: dst keeps its shape, which the node
		// that reshaped it reads.
		d = d.ShallowClone()
		if err := d.Reshape(shape...); err != nil {
			return check.Errorf(gatejet.ErrParam, op, arg, "cannot accumulate the gradient of shape %v into %v: %v", shape, dst.Shape(), err)
		}
	}
	if src == nil || src.Dtype() != dt || src.Shape().TotalSize() != shape.TotalSize() {
		return check.Errorf(gatejet.ErrParam, op, arg, "the gradient to add is not %d elements of %v", shape.TotalSize(), dt)
	}
	switch dt {
	case tensor.Float64:
		return addInto[float64](op, arg, d, src)
	case tensor.Float32:
		return addInto[float32](op, arg, d, src)
	}
	return check.Errorf(gatejet.ErrParam, op, arg, "cannot accumulate a gradient of dtype %v", dt)
}

func addInto[T gatejet.Float](op, arg string, dst, src *tensor.Dense) error {
	s, err := Logical[T](op, arg, src)
	if err != nil {
		return err
	}
	off, err := Offsets(op, arg, dst)
	if err != nil {
		return err
	}
	d, err := backing[T](op, arg, dst)
	if err != nil {
		return err
	}
	if off == nil {
		d = d[:len(s)]
		for i, v := range s {
			d[i] += v
		}
		return nil
	}
	for i, v := range s {
		d[off[i]] += v
	}
	return nil
}

package graphs

import (
	"github.com/gatejet/gatejet"
	"github.com/gatejet/gatejet/backward"
	"gorgonia.org/tensor"
)

// offsets returns, for each element of t in logical row-major order, its offset in t's
// backing data, or nil when that order is the backing order itself. A *tensor.Dense may be
// stored column-major (tensor.AsFortran) with the same shape, so indexing its backing slice
// as row-major would silently permute the elements; its strides say where each element is.
// t must not be a view (materialise it first, as the callers do). A masked tensor is
// refused like the ops package refuses it: its mask cannot be honoured here.
func offsets(op, arg string, t *tensor.Dense) ([]int, error) {
	if t.IsMaterializable() {
		return nil, gatejet.Errorf(gatejet.ErrParam, op, arg, "a view cannot be indexed directly; materialise it first")
	}
	if t.IsMasked() {
		return nil, gatejet.Errorf(gatejet.ErrParam, op, arg, "masked tensors are not supported")
	}
	shape, strides := []int(t.Shape()), t.Strides()
	n := t.Shape().TotalSize()
	if len(shape) == 0 || n <= 1 {
		if t.DataSize() < n {
			return nil, gatejet.Errorf(gatejet.ErrSize, op, arg, "want %d elements, got %d", n, t.DataSize())
		}
		return nil, nil
	}
	if len(strides) != len(shape) {
		return nil, gatejet.Errorf(gatejet.ErrParam, op, arg, "shape %v has strides %v", shape, strides)
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
			return nil, gatejet.Errorf(gatejet.ErrSize, op, arg, "want %d elements, got %d", n, size)
		}
		return nil, nil
	}
	off := make([]int, n)
	idx := make([]int, len(shape))
	o := 0
	for i := range off {
		if o < 0 || o >= size {
			return nil, gatejet.Errorf(gatejet.ErrSize, op, arg,
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

// at maps a logical index through offsets (nil: the identity).
func at(off []int, i int) int {
	if off == nil {
		return i
	}
	return off[i]
}

// backingOf returns t's backing slice as []T, or false when its dtype is not T.
func backingOf[T backward.Float](t *tensor.Dense) ([]T, bool) {
	var z T
	switch any(z).(type) {
	case float64:
		if t.Dtype() == tensor.Float64 {
			d, ok := any(t.Float64s()).([]T)
			return d, ok
		}
	case float32:
		if t.Dtype() == tensor.Float32 {
			d, ok := any(t.Float32s()).([]T)
			return d, ok
		}
	}
	return nil, false
}

// logical returns the elements of t (dtype T, not a view) in logical row-major order: its
// backing slice itself when that is already the order, a gathered copy otherwise.
func logical[T backward.Float](op, arg string, t *tensor.Dense) ([]T, error) {
	off, err := offsets(op, arg, t)
	if err != nil {
		return nil, err
	}
	d, ok := backingOf[T](t)
	if !ok {
		return nil, gatejet.Errorf(gatejet.ErrDType, op, arg, "unexpected dtype %v", t.Dtype())
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

// addLogical adds f(i) to the element of t (dtype T, not a view) at logical row-major
// index i, for every i: the accumulation of a LispMachine's reverse pass into a gradient
// that may be stored column-major.
func addLogical[T backward.Float](op, arg string, t *tensor.Dense, f func(i int) float64) error {
	off, err := offsets(op, arg, t)
	if err != nil {
		return err
	}
	d, ok := backingOf[T](t)
	if !ok {
		return gatejet.Errorf(gatejet.ErrDType, op, arg, "unexpected dtype %v", t.Dtype())
	}
	for i, n := 0, t.Shape().TotalSize(); i < n; i++ {
		d[at(off, i)] += T(f(i))
	}
	return nil
}

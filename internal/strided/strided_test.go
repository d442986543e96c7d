package strided

import (
	"errors"
	"testing"

	"github.com/gatejet/gatejet"
	"github.com/stretchr/testify/require"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// logicalOf is x laid out as shape, row-major or (fortran) column-major; either way its
// element at logical row-major index i is x[i].
func logicalOf(t *testing.T, shape []int, x []float64, fortran bool) *tensor.Dense {
	t.Helper()
	if !fortran {
		return tensor.New(tensor.WithShape(shape...), tensor.WithBacking(append([]float64(nil), x...)))
	}
	d := tensor.New(tensor.WithShape(shape...), tensor.AsFortran(append([]float64(nil), x...)))
	require.False(t, d.DataOrder().IsRowMajor())
	return d
}

func TestLogicalAndOffsets(t *testing.T) {
	x := []float64{1, 2, 3, 4, 5, 6}
	for _, fortran := range []bool{false, true} {
		d := logicalOf(t, []int{2, 3}, x, fortran)
		got, err := Logical[float64]("op", "x", d)
		require.NoError(t, err)
		require.Equal(t, x, got, "fortran %v", fortran)
		off, err := Offsets("op", "x", d)
		require.NoError(t, err)
		require.Equal(t, fortran, off != nil)
		back := d.Float64s()
		for i, v := range x {
			require.Equal(t, v, back[At(off, i)])
		}
	}
	_, err := Logical[float32]("op", "x", logicalOf(t, []int{2, 3}, x, false))
	require.ErrorIs(t, err, gatejet.ErrDType)
}

func TestAddInto(t *testing.T) {
	shape := tensor.Shape{2, 3}
	x := []float64{1, 2, 3, 4, 5, 6}
	src := []float64{10, 20, 30, 40, 50, 60}
	for _, dstF := range []bool{false, true} {
		for _, srcF := range []bool{false, true} {
			dst := logicalOf(t, shape, x, dstF)
			require.NoError(t, AddInto("op", "g", dst, tensor.Float64, shape, logicalOf(t, shape, src, srcF)))
			got, err := Logical[float64]("op", "g", dst)
			require.NoError(t, err)
			require.Equal(t, []float64{11, 22, 33, 44, 55, 66}, got, "dst fortran %v, src fortran %v", dstF, srcF)
		}
	}
	// float32
	dst := tensor.New(tensor.WithShape(2), tensor.WithBacking([]float32{1, 2}))
	require.NoError(t, AddInto("op", "g", dst, tensor.Float32, tensor.Shape{2},
		tensor.New(tensor.WithShape(2), tensor.WithBacking([]float32{0.5, 0.25}))))
	require.Equal(t, []float32{1.5, 2.25}, dst.Float32s())
}

// TestAddIntoReshaped: a gradient that Gorgonia's Reshape reshaped in place (to [3,2] or
// [6], from the node's [2,3]) is accumulated over its storage as the node's shape, stored
// row-major or column-major, and keeps the shape it carries.
func TestAddIntoReshaped(t *testing.T) {
	shape := tensor.Shape{2, 3}
	x := []float64{1, 2, 3, 4, 5, 6}
	src := []float64{10, 20, 30, 40, 50, 60}
	for _, fortran := range []bool{false, true} {
		for _, other := range []tensor.Shape{{3, 2}, {6}, {1, 6}} {
			dst := logicalOf(t, shape, x, fortran)
			require.NoError(t, dst.Reshape(other...))
			require.NoError(t, AddInto("op", "g", dst, tensor.Float64, shape, logicalOf(t, shape, src, false)))
			require.Equal(t, other, dst.Shape(), "fortran %v", fortran)
			require.NoError(t, dst.Reshape(shape...))
			got, err := Logical[float64]("op", "g", dst)
			require.NoError(t, err)
			require.Equal(t, []float64{11, 22, 33, 44, 55, 66}, got, "fortran %v, carried shape %v", fortran, other)
		}
	}
}

func TestAddIntoErrors(t *testing.T) {
	shape := tensor.Shape{2, 3}
	f64 := func(s ...int) *tensor.Dense { return tensor.New(tensor.Of(tensor.Float64), tensor.WithShape(s...)) }
	f32 := tensor.New(tensor.Of(tensor.Float32), tensor.WithShape(2, 3))
	view, err := f64(4, 3).Slice(gorgonia.S(0, 2))
	require.NoError(t, err)
	viewFlat, err := f64(6, 2).Slice(nil, gorgonia.S(0, 1))
	require.NoError(t, err)
	masked := f64(2, 3)
	masked.ResetMask(false)
	for name, tc := range map[string]struct {
		dst  gorgonia.Value
		dt   tensor.Dtype
		src  *tensor.Dense
		kind error
	}{
		"scalar value":  {gorgonia.NewF64(1), tensor.Float64, f64(2, 3), gatejet.ErrParam},
		"nil dense":     {(*tensor.Dense)(nil), tensor.Float64, f64(2, 3), gatejet.ErrParam},
		"dtype":         {f32, tensor.Float64, f64(2, 3), gatejet.ErrParam},
		"size":          {f64(3, 3), tensor.Float64, f64(2, 3), gatejet.ErrParam},
		"nil src":       {f64(2, 3), tensor.Float64, nil, gatejet.ErrParam},
		"src size":      {f64(2, 3), tensor.Float64, f64(5), gatejet.ErrParam},
		"src dtype":     {f64(2, 3), tensor.Float64, f32, gatejet.ErrParam},
		"int":           {tensor.New(tensor.Of(tensor.Int), tensor.WithShape(2, 3)), tensor.Int, tensor.New(tensor.Of(tensor.Int), tensor.WithShape(2, 3)), gatejet.ErrParam},
		"view":          {view, tensor.Float64, f64(2, 3), gatejet.ErrParam},
		"view reshaped": {viewFlat, tensor.Float64, f64(2, 3), gatejet.ErrParam},
		"masked":        {masked, tensor.Float64, f64(2, 3), gatejet.ErrParam},
	} {
		err := AddInto("op", "g", tc.dst, tc.dt, shape, tc.src)
		require.ErrorIs(t, err, tc.kind, name)
		var ge *gatejet.Error
		require.True(t, errors.As(err, &ge), name)
		require.Equal(t, "op", ge.Op, name)
		require.Equal(t, "g", ge.Arg, name)
	}
}

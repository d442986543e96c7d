// Package axisref holds what the tests of the softmax family along an axis share: the lines of
// a tensor along an axis, walked from the multi-index directly, independently of the layout
// code under test (check.AxisLayout and the kernels), and float64 references of the
// forward maps.
package axisref

import "math"

// Lines returns, for every line of a row-major tensor of shape along axis (negative axes count
// from the end), the flat indices of its elements in axis order.
func Lines(shape []int, axis int) [][]int {
	rank := len(shape)
	if axis < 0 {
		axis += rank
	}
	strides := make([]int, rank)
	s := 1
	for d := rank - 1; d >= 0; d-- {
		strides[d] = s
		s *= shape[d]
	}
	var out [][]int
	for f := 0; f < s; f++ {
		if (f/strides[axis])%shape[axis] != 0 {
			continue
		}
		line := make([]int, shape[axis])
		for k := range line {
			line[k] = f + k*strides[axis]
		}
		out = append(out, line)
	}
	return out
}

// Softmax and LogSoftmax are the float64 forward maps along axis of a row-major tensor of
// shape, max-subtracted: a plain loop per line.
func Softmax(x []float64, shape []int, axis int) []float64 {
	y := make([]float64, len(x))
	for _, ln := range Lines(shape, axis) {
		m, z := maxExpSum(x, ln)
		for _, i := range ln {
			y[i] = math.Exp(x[i]-m) / z
		}
	}
	return y
}

func LogSoftmax(x []float64, shape []int, axis int) []float64 {
	y := make([]float64, len(x))
	for _, ln := range Lines(shape, axis) {
		m, z := maxExpSum(x, ln)
		lse := m + math.Log(z)
		for _, i := range ln {
			y[i] = x[i] - lse
		}
	}
	return y
}

// maxExpSum returns the largest element m of x on the line ln and Σ exp(x_i − m) over it.
func maxExpSum(x []float64, ln []int) (m, z float64) {
	m = math.Inf(-1)
	for _, i := range ln {
		m = math.Max(m, x[i])
	}
	for _, i := range ln {
		z += math.Exp(x[i] - m)
	}
	return m, z
}

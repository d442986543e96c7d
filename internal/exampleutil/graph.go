package exampleutil

import (
	"math"

	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// Read makes n's value copied out as a TapeMachine runs (gorgonia.Read) into a value of its
// own, which the caller keeps apart from the struct that holds the machine: Gorgonia gives
// every TapeMachine a finalizer, and a machine that reaches itself through the read pointer
// is never collected, with every value of its graph.
func Read(n *gorgonia.Node) (*gorgonia.Node, *gorgonia.Value) {
	v := new(gorgonia.Value)
	return gorgonia.Read(n, v), v
}

// Scalar returns the float64 held by a scalar value (a *gorgonia.F64 or a float64 tensor of
// one element), and NaN for anything else.
func Scalar(v gorgonia.Value) float64 {
	switch v := v.(type) {
	case *gorgonia.F64:
		return float64(*v)
	case tensor.Tensor:
		if f, ok := v.Data().(float64); ok {
			return f
		}
		if f, ok := v.Data().([]float64); ok && len(f) == 1 {
			return f[0]
		}
	}
	return math.NaN()
}

// Filled returns n copies of v.
func Filled(n int, v float64) []float64 {
	s := make([]float64, n)
	for i := range s {
		s[i] = v
	}
	return s
}

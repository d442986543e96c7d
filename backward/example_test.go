package backward_test

import (
	"fmt"
	"math"

	"github.com/gatejet/gatejet/backward"
)

// Example takes a softmax down the columns (axis 0) of a 2×3 tensor and back-propagates a
// gradient through it. Only the saved output y is needed, and each column of dx sums to zero
// because softmax is invariant to adding a constant to its inputs.
func Example() {
	shape := []int{2, 3}
	x := []float64{
		1, 2, 3,
		2, 2, 0,
	}
	// Forward, along axis 0: y[k][c] = exp(x[k][c]) / Σ_j exp(x[j][c]).
	y := make([]float64, len(x))
	for c := 0; c < 3; c++ {
		z := math.Exp(x[c]) + math.Exp(x[3+c])
		y[c], y[3+c] = math.Exp(x[c])/z, math.Exp(x[3+c])/z
	}
	dy := []float64{
		1, 0, 0,
		0, 0, 1,
	}
	dx := make([]float64, len(x))
	if err := backward.SoftmaxBackward(dx, y, dy, shape, 0); err != nil {
		fmt.Println(err)
		return
	}
	for k := 0; k < 2; k++ {
		fmt.Printf("%+.4f\n", dx[3*k:3*k+3])
	}
	fmt.Printf("column sums: %+.4f\n", []float64{dx[0] + dx[3], dx[1] + dx[4], dx[2] + dx[5]})

	// The same call with a bad axis reports an error wrapping gatejet.ErrAxis.
	fmt.Println(backward.SoftmaxBackward(dx, y, dy, shape, 2))
	// Output:
	// [+0.1966 +0.0000 -0.0452]
	// [-0.1966 +0.0000 +0.0452]
	// column sums: [+0.0000 +0.0000 +0.0000]
	// backward.SoftmaxBackward: axis: axis out of range: want -2 ≤ axis < 2, got 2
}

// ExampleGELUDeriv shows the pointwise derivatives the GELU kernels use.
func ExampleGELUDeriv() {
	for _, x := range []float64{-1, 0, 1, 40} {
		d1, d2 := backward.GELUDeriv(x)
		fmt.Printf("x=%3g  gelu'=%.6f  gelu''=%.6f\n", x, d1, d2)
	}
	// Output:
	// x= -1  gelu'=-0.082964  gelu''=0.242148
	// x=  0  gelu'=0.500000  gelu''=0.797885
	// x=  1  gelu'=1.082964  gelu''=0.242148
	// x= 40  gelu'=1.000000  gelu''=0.000000
}

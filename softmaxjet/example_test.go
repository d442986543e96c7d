package softmaxjet_test

import (
	"fmt"

	"github.com/gatejet/gatejet/softmaxjet"
)

// One row gating two atoms with three output columns: the value, the first channel and the
// curvature along the direction v, without building the second channel.
func Example() {
	sh := softmaxjet.Shape{N: 1, K: 2, P: 3}
	logits := []float64{0.5, -0.5}
	decoded := []float64{
		1, 0, 2, // atom 0
		0, 1, -2, // atom 1
	}
	gate := softmaxjet.Softmax[float64]{InvTau: 1}

	value := make([]float64, sh.ValueLen())
	first := make([]float64, sh.FirstLen())
	hvp := make([]float64, sh.FirstLen())
	if err := gate.Value(value, logits, decoded, sh); err != nil {
		panic(err)
	}
	if err := gate.First(first, logits, decoded, sh); err != nil {
		panic(err)
	}
	v := []float64{1, 0} // push atom 0's logit
	if err := gate.HVP(hvp, logits, decoded, v, sh); err != nil {
		panic(err)
	}
	fmt.Printf("value  %.4f\n", value)
	fmt.Printf("first  %.4f\n", first)
	fmt.Printf("hvp    %.4f\n", hvp)
	// Output:
	// value  [0.7311 0.2689 0.9242]
	// first  [0.1966 -0.1966 0.7864 -0.1966 0.1966 -0.7864]
	// hvp    [-0.0909 0.0909 -0.3634 0.0909 -0.0909 0.3634]
}

// Bad input is an error value naming the argument, never a panic.
func ExampleSoftmax_Second_errors() {
	sh := softmaxjet.Shape{N: 2, K: 3, P: 4}
	dst := make([]float64, sh.SecondLen())
	err := softmaxjet.Softmax[float64]{InvTau: 1}.Second(dst, make([]float64, 5), make([]float64, 24), sh)
	fmt.Println(err)
	err = softmaxjet.Softmax[float64]{InvTau: 0}.Second(dst, make([]float64, 6), make([]float64, 24), sh)
	fmt.Println(err)
	// Output:
	// softmaxjet.Softmax.Second: logits: wrong or too large a size: want 6 elements for N=2 K=3 P=4, got 5
	// softmaxjet.Softmax.Second: invTau: inverse temperature out of range: want 0 < invTau < +Inf, got 0
}

// Two atoms, each decoded from a latent coordinate as d_k(t) = (t, t²), at t = (1, 2): the
// Gauss-Newton matrix over the four primaries (ℓ_0, ℓ_1, t_0, t_1), and the curvature along
// a direction in them.
func ExampleCoordGaussNewton() {
	sh := softmaxjet.Shape{N: 1, K: 2, P: 2}
	logits := []float64{0.5, -0.5}
	d0 := []float64{1, 1, 2, 4} // d_k(t_k)
	d1 := []float64{1, 2, 1, 4} // ∂d_k/∂t
	d2 := []float64{0, 2, 0, 2} // ∂²d_k/∂t²
	// A gate converted to the interface once is used call after call without allocating.
	var gate softmaxjet.Gate[float64] = softmaxjet.Softmax[float64]{InvTau: 1}

	H := make([]float64, 4*4) // [N, 2K, 2K]
	if err := softmaxjet.CoordGaussNewton(gate, H, logits, d0, d1, sh); err != nil {
		panic(err)
	}
	for a := 0; a < 4; a++ {
		fmt.Printf("%7.4f\n", H[a*4:a*4+4])
	}
	v := []float64{0, 0, 1, 0}  // move t_0
	hvp := make([]float64, 4*2) // [N, 2K, P]
	if err := softmaxjet.CoordHVP(gate, hvp, logits, d0, d1, d2, v, sh); err != nil {
		panic(err)
	}
	fmt.Printf("%7.4f\n", hvp)
	// Output:
	// [ 0.3866 -0.3866 -1.0061 -0.6874]
	// [-0.3866  0.3866  1.0061  0.6874]
	// [-1.0061  1.0061  2.6722  1.7695]
	// [-0.6874  0.6874  1.7695  1.2296]
	// [ 0.1966  0.3932 -0.1966 -0.3932  0.0000  1.4621  0.0000  0.0000]
}

// Package testcase builds random cudaops.Calls and compares their outputs; the emulator tests,
// the device tests and the benchmarks share it.
package testcase

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/gatejet/gatejet/cudaops"
	"github.com/gatejet/gatejet/internal/golden"
)

// sizes returns the length of each input and output of kernel k with the given Ints.
func sizes(k cudaops.Kernel, ints []int) (in, out []int) {
	switch k.Family() {
	case cudaops.FamilySoftmaxJet, cudaops.FamilyLogisticJet:
		N, K, P := ints[0], ints[1], ints[2]
		nk, nkp, np, nkkp, nkk := N*K, N*K*P, N*P, N*K*K*P, N*K*K
		base := []int{nk, nkp}
		suffix := string(k)[len("jet_"):]
		if k.Family() == cudaops.FamilyLogisticJet {
			suffix = string(k)[len("logistic_"):]
		}
		vjp := []int{nk, nkp}
		switch suffix {
		case "value":
			return base, []int{np}
		case "first":
			return base, []int{nkp}
		case "second":
			return base, []int{nkkp}
		case "hvp":
			return []int{nk, nkp, nk}, []int{nkp}
		case "gauss_newton":
			return base, []int{nkk}
		case "value_vjp":
			return []int{nk, nkp, np}, vjp
		case "first_vjp":
			return []int{nk, nkp, nkp}, vjp
		case "second_vjp":
			return []int{nk, nkp, nkkp}, vjp
		case "hvp_vjp":
			return []int{nk, nkp, nk, nkp}, []int{nk, nkp, nk}
		case "gauss_newton_vjp":
			return []int{nk, nkp, nkk}, vjp
		}
	case cudaops.FamilyAxis, cudaops.FamilyElementwise:
		n := 1
		for _, x := range ints {
			n *= x
		}
		in, out = make([]int, k.NumIn()), make([]int, k.NumOut())
		for i := range in {
			in[i] = n
		}
		for i := range out {
			out[i] = n
		}
		return in, out
	}
	panic(fmt.Sprintf("testcase: unknown kernel %q", k))
}

// New returns a Call of kernel k with element type dt, the given Ints and random inputs:
// logits ~ 1.5·N(0,1), everything else ~ N(0,1); axis backward kernels get y a softmax (or
// log-softmax) output along n, as a real backward would, and the forward kernels x ~ 4·N(0,1); activations get x spread over [-8, 8] with a few
// exact zeros. Floats: invTau in [0.5, 2] (softmax jets) or α ∈ ±[0.5, 2], β ~ N(0,1)
// (logistic jets). Outputs are zeroed slices. Work is set to the output element count.
func New(k cudaops.Kernel, dt cudaops.DType, ints []int, rng *rand.Rand) *cudaops.Call {
	inSizes, outSizes := sizes(k, ints)
	c := &cudaops.Call{Kernel: k, Ints: append([]int(nil), ints...)}
	in64 := make([][]float64, len(inSizes))
	for i, n := range inSizes {
		in64[i] = make([]float64, n)
		scale := 1.0
		if i == 0 && (k.Family() == cudaops.FamilySoftmaxJet || k.Family() == cudaops.FamilyLogisticJet) {
			scale = 1.5
		}
		for j := range in64[i] {
			in64[i][j] = scale * rng.NormFloat64()
		}
	}
	switch k.Family() {
	case cudaops.FamilySoftmaxJet:
		c.Floats = []float64{0.5 + 1.5*rng.Float64()}
	case cudaops.FamilyLogisticJet:
		K := ints[1]
		c.Floats = make([]float64, 2*K)
		for i := 0; i < K; i++ {
			a := 0.5 + 1.5*rng.Float64()
			if rng.IntN(2) == 0 {
				a = -a
			}
			c.Floats[i] = a
			c.Floats[K+i] = rng.NormFloat64()
		}
	case cudaops.FamilyAxis:
		if k == cudaops.KernelSoftmaxForward || k == cudaops.KernelLogSoftmaxForward {
			for j := range in64[0] {
				in64[0][j] *= 4
			}
			break
		}
		outer, n, inner := ints[0], ints[1], ints[2]
		logY := k == cudaops.KernelLogSoftmaxBackward || k == cudaops.KernelLogSoftmaxBackwardGrad
		y := in64[0]
		for o := 0; o < outer; o++ {
			for i := 0; i < inner; i++ {
				mx, sum := math.Inf(-1), 0.0
				for j := 0; j < n; j++ {
					mx = math.Max(mx, y[(o*n+j)*inner+i])
				}
				for j := 0; j < n; j++ {
					sum += math.Exp(y[(o*n+j)*inner+i] - mx)
				}
				for j := 0; j < n; j++ {
					x := &y[(o*n+j)*inner+i]
					if logY {
						*x = *x - mx - math.Log(sum)
					} else {
						*x = math.Exp(*x-mx) / sum
					}
				}
			}
		}
	case cudaops.FamilyElementwise:
		x := in64[0]
		for j := range x {
			x[j] = 16*rng.Float64() - 8
			if rng.IntN(16) == 0 {
				x[j] = 0
			}
		}
	}
	for i := range in64 {
		c.In = append(c.In, Convert(in64[i], dt))
	}
	for _, n := range outSizes {
		c.Out = append(c.Out, Zeros(dt, n))
	}
	c.Work = c.OutputElements()
	return c
}

// Convert returns x as a slice of element type dt.
func Convert(x []float64, dt cudaops.DType) any {
	if dt == cudaops.Float32 {
		y := make([]float32, len(x))
		for i, v := range x {
			y[i] = float32(v)
		}
		return y
	}
	return append([]float64(nil), x...)
}

// Zeros returns a zeroed slice of element type dt and length n.
func Zeros(dt cudaops.DType, n int) any {
	if dt == cudaops.Float32 {
		return make([]float32, n)
	}
	return make([]float64, n)
}

// Float64s returns a float64 copy of a []float32 or []float64.
func Float64s(s any) []float64 {
	switch v := s.(type) {
	case []float64:
		return append([]float64(nil), v...)
	case []float32:
		out := make([]float64, len(v))
		for i, x := range v {
			out[i] = float64(x)
		}
		return out
	}
	panic("testcase: not a float slice")
}

// Clone returns a copy of c with fresh zeroed outputs (inputs shared).
func Clone(c *cudaops.Call) *cudaops.Call {
	d := *c
	d.Out = make([]any, len(c.Out))
	for i, s := range c.Out {
		d.Out[i] = Zeros(c.DType(), len(Float64s(s)))
	}
	return &d
}

// As64 returns a float64 copy of c: the same (rounded) inputs, in float64, fresh outputs.
func As64(c *cudaops.Call) *cudaops.Call {
	d := *c
	d.In = make([]any, len(c.In))
	for i, s := range c.In {
		d.In[i] = Float64s(s)
	}
	d.Out = make([]any, len(c.Out))
	for i, s := range c.Out {
		d.Out[i] = make([]float64, len(Float64s(s)))
	}
	return &d
}

// RelErr is the normwise relative error max|got − want| / max|want| (absolute when want is all
// zero). NaN in the same place on both sides counts as equal; NaN on one side only is +Inf.
// It is golden.RelErr, the one declaration shared with the golden-file tests.
func RelErr(got, want []float64) float64 { return golden.RelErr(got, want) }

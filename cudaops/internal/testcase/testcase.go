// Package testcase builds random dispatch.Calls and compares their outputs; the emulator tests,
// the device tests and the benchmarks share it.
package testcase

import (
	"math"
	"math/rand/v2"

	"github.com/gatejet/gatejet"
	"github.com/gatejet/gatejet/internal/dispatch"
	"github.com/gatejet/gatejet/internal/floats"
	"github.com/gatejet/gatejet/internal/golden"
	"github.com/gatejet/gatejet/internal/kernel"
)

// New returns a Call of kernel k with element type dt, the given Ints and random inputs:
// logits ~ 1.5·N(0,1), everything else ~ N(0,1); axis backward kernels get y a softmax (or
// log-softmax) output along n, as a real backward would, and the forward kernels x ~ 4·N(0,1); activations get x spread over [-8, 8] with a few
// exact zeros. Floats: the gate's Sample (softmax: invTau in [0.5, 2]; logistic:
// α ∈ ±[0.5, 2], β ~ N(0,1)). Outputs are zeroed slices. Work is set to the output element count.
func New(k dispatch.Kernel, dt dispatch.DType, ints []int, rng *rand.Rand) *dispatch.Call {
	c := &dispatch.Call{Kernel: k, DType: dt, Ints: append([]int(nil), ints...)}
	inSizes, outSizes, err := c.Lengths()
	if err != nil {
		panic("testcase: " + err.Error())
	}
	jet := kernel.ID(k).Spec().Gate != nil // a row or coordinate jet
	in64 := make([][]float64, len(inSizes))
	for i, n := range inSizes {
		in64[i] = make([]float64, n)
		scale := 1.0
		if i == 0 && jet {
			scale = 1.5
		}
		for j := range in64[i] {
			in64[i][j] = scale * rng.NormFloat64()
		}
	}
	switch {
	case jet:
		c.Floats = kernel.ID(k).Spec().Gate.Sample(ints[1], rng.Float64, rng.NormFloat64)
	case k.Family() == dispatch.FamilyAxis:
		if k == dispatch.KernelSoftmaxForward || k == dispatch.KernelLogSoftmaxForward {
			for j := range in64[0] {
				in64[0][j] *= 4
			}
			break
		}
		logY := k == dispatch.KernelLogSoftmaxBackward || k == dispatch.KernelLogSoftmaxBackwardGrad
		in64[0] = SoftmaxAlong(in64[0], ints[0], ints[1], ints[2], logY)
	case k.Family() == dispatch.FamilyElementwise:
		x := in64[0]
		for j := range x {
			x[j] = 16*rng.Float64() - 8
			if rng.IntN(16) == 0 {
				x[j] = 0
			}
		}
	}
	outs := make([][]float64, len(outSizes))
	for i, n := range outSizes {
		outs[i] = make([]float64, n)
	}
	Set(c, in64, outs)
	c.Work = c.OutputElements()
	return c
}

// SoftmaxAlong returns the softmax (log-softmax when logY) of x, a row-major [outer, n, inner]
// tensor, along its middle axis.
func SoftmaxAlong(x []float64, outer, n, inner int, logY bool) []float64 {
	y := make([]float64, len(x))
	for o := 0; o < outer; o++ {
		for i := 0; i < inner; i++ {
			mx, sum := math.Inf(-1), 0.0
			for j := 0; j < n; j++ {
				mx = math.Max(mx, x[(o*n+j)*inner+i])
			}
			for j := 0; j < n; j++ {
				sum += math.Exp(x[(o*n+j)*inner+i] - mx)
			}
			for j := 0; j < n; j++ {
				p := (o*n+j)*inner + i
				if logY {
					y[p] = x[p] - mx - math.Log(sum)
				} else {
					y[p] = math.Exp(x[p]-mx) / sum
				}
			}
		}
	}
	return y
}

// Set sets the call's operands to copies of in and out in its DType (rounded for Float32).
func Set(c *dispatch.Call, in, out [][]float64) {
	c.F64, c.F32 = dispatch.Operands[float64]{}, dispatch.Operands[float32]{}
	if c.DType == dispatch.Float32 {
		set(&c.F32, in, out)
	} else {
		set(&c.F64, in, out)
	}
}

func set[T gatejet.Float](o *dispatch.Operands[T], in, out [][]float64) {
	for i, x := range in {
		o.In[i] = floats.Convert[T](x)
	}
	for i, x := range out {
		o.Out[i] = floats.Convert[T](x)
	}
}

// Inputs returns float64 copies of the call's inputs.
func Inputs(c *dispatch.Call) [][]float64 {
	in, _ := operands(c)
	return in
}

// Outputs returns float64 copies of the call's outputs.
func Outputs(c *dispatch.Call) [][]float64 {
	_, out := operands(c)
	return out
}

func operands(c *dispatch.Call) (in, out [][]float64) {
	if c.DType == dispatch.Float32 {
		return copies(c, &c.F32)
	}
	return copies(c, &c.F64)
}

func copies[T gatejet.Float](c *dispatch.Call, o *dispatch.Operands[T]) (in, out [][]float64) {
	sp := kernel.ID(c.Kernel).Spec()
	for i := range sp.In {
		in = append(in, floats.Convert[float64](o.In[i]))
	}
	for i := range sp.Out {
		out = append(out, floats.Convert[float64](o.Out[i]))
	}
	return in, out
}

// Clone returns a copy of c with fresh zeroed outputs (inputs copied).
func Clone(c *dispatch.Call) *dispatch.Call {
	d := *c
	in, out := operands(c)
	for _, o := range out {
		clear(o)
	}
	Set(&d, in, out)
	return &d
}

// As64 returns a float64 copy of c: the same (rounded) inputs, in float64, fresh outputs.
func As64(c *dispatch.Call) *dispatch.Call {
	d := *c
	d.DType = dispatch.Float64
	in, out := operands(c)
	for _, o := range out {
		clear(o)
	}
	Set(&d, in, out)
	return &d
}

// Tol is the normwise relative tolerance of a kernel's outputs against a float64 reference:
// 1e-12 in float64, 1e-5 in float32 (the kernels compute in double and round each output once,
// but for the float32 second channel's blocks, computed in float as softmaxjet's are).
func Tol(dt dispatch.DType) float64 {
	if dt == dispatch.Float32 {
		return 1e-5
	}
	return 1e-12
}

// RelErr is the normwise relative error max|got − want| / max|want| (absolute when want is all
// zero). NaN in the same place on both sides counts as equal; NaN on one side only is +Inf.
// It is golden.RelErr, the one declaration shared with the golden-file tests.
func RelErr(got, want []float64) float64 { return golden.RelErr(got, want) }

// Package cpuref runs a cudaops.Call on the CPU with the packages that own the maths,
// softmaxjet and backward. It is the oracle of the emulator and device tests and the CPU side
// of the benchmarks; it is also a worked example of the Call conventions.
package cpuref

import (
	"github.com/gatejet/gatejet"
	"github.com/gatejet/gatejet/backward"
	"github.com/gatejet/gatejet/cudaops"
	"github.com/gatejet/gatejet/softmaxjet"
)

// Run computes c on the CPU, writing c.Out. c must pass Check.
func Run(c *cudaops.Call) error {
	if err := c.Check(); err != nil {
		return err
	}
	switch c.DType() {
	case cudaops.Float32:
		return run[float32](c)
	default:
		return run[float64](c)
	}
}

func run[T softmaxjet.Float](c *cudaops.Call) error {
	in := make([][]T, len(c.In))
	for i, s := range c.In {
		in[i] = s.([]T)
	}
	out := make([][]T, len(c.Out))
	for i, s := range c.Out {
		out[i] = s.([]T)
	}
	switch c.Kernel.Family() {
	case cudaops.FamilySoftmaxJet:
		return softmaxJet(c.Kernel, in, out, softmaxjet.Shape{N: c.Ints[0], K: c.Ints[1], P: c.Ints[2]}, c.Floats[0])
	case cudaops.FamilyLogisticJet:
		K := c.Ints[1]
		return logisticJet(c.Kernel, in, out, softmaxjet.Shape{N: c.Ints[0], K: K, P: c.Ints[2]}, c.Floats[:K], c.Floats[K:])
	case cudaops.FamilyAxis:
		return axis(c.Kernel, in, out, []int{c.Ints[0], c.Ints[1], c.Ints[2]})
	case cudaops.FamilyElementwise:
		return elementwise(c.Kernel, in, out)
	}
	return gatejet.Errorf(gatejet.ErrParam, "cpuref.Run", "Kernel", "unknown kernel %q", c.Kernel)
}

func softmaxJet[T softmaxjet.Float](k cudaops.Kernel, in, out [][]T, sh softmaxjet.Shape, s float64) error {
	l, d := in[0], in[1]
	switch k {
	case cudaops.KernelJetValue:
		return softmaxjet.Value(out[0], l, d, sh, s)
	case cudaops.KernelJetFirst:
		return softmaxjet.First(out[0], l, d, sh, s)
	case cudaops.KernelJetSecond:
		return softmaxjet.Second(out[0], l, d, sh, s)
	case cudaops.KernelJetHVP:
		return softmaxjet.HVP(out[0], l, d, in[2], sh, s)
	case cudaops.KernelJetGaussNewton:
		return softmaxjet.GaussNewton(out[0], l, d, sh, s)
	case cudaops.KernelJetValueVJP:
		return softmaxjet.ValueVJP(out[0], out[1], l, d, in[2], sh, s)
	case cudaops.KernelJetFirstVJP:
		return softmaxjet.FirstVJP(out[0], out[1], l, d, in[2], sh, s)
	case cudaops.KernelJetSecondVJP:
		return softmaxjet.SecondVJP(out[0], out[1], l, d, in[2], sh, s)
	case cudaops.KernelJetHVPVJP:
		return softmaxjet.HVPVJP(out[0], out[1], out[2], l, d, in[2], in[3], sh, s)
	case cudaops.KernelJetGaussNewtonVJP:
		return softmaxjet.GaussNewtonVJP(out[0], out[1], l, d, in[2], sh, s)
	}
	return gatejet.Errorf(gatejet.ErrParam, "cpuref.Run", "Kernel", "unknown kernel %q", k)
}

func logisticJet[T softmaxjet.Float](k cudaops.Kernel, in, out [][]T, sh softmaxjet.Shape, al, be []float64) error {
	l, d := in[0], in[1]
	switch k {
	case cudaops.KernelLogisticValue:
		return softmaxjet.LogisticValue(out[0], l, d, sh, al, be)
	case cudaops.KernelLogisticFirst:
		return softmaxjet.LogisticFirst(out[0], l, d, sh, al, be)
	case cudaops.KernelLogisticSecond:
		return softmaxjet.LogisticSecond(out[0], l, d, sh, al, be)
	case cudaops.KernelLogisticHVP:
		return softmaxjet.LogisticHVP(out[0], l, d, in[2], sh, al, be)
	case cudaops.KernelLogisticGaussNewton:
		return softmaxjet.LogisticGaussNewton(out[0], l, d, sh, al, be)
	case cudaops.KernelLogisticValueVJP:
		return softmaxjet.LogisticValueVJP(out[0], out[1], l, d, in[2], sh, al, be)
	case cudaops.KernelLogisticFirstVJP:
		return softmaxjet.LogisticFirstVJP(out[0], out[1], l, d, in[2], sh, al, be)
	case cudaops.KernelLogisticSecondVJP:
		return softmaxjet.LogisticSecondVJP(out[0], out[1], l, d, in[2], sh, al, be)
	case cudaops.KernelLogisticHVPVJP:
		return softmaxjet.LogisticHVPVJP(out[0], out[1], out[2], l, d, in[2], in[3], sh, al, be)
	case cudaops.KernelLogisticGaussNewtonVJP:
		return softmaxjet.LogisticGaussNewtonVJP(out[0], out[1], l, d, in[2], sh, al, be)
	}
	return gatejet.Errorf(gatejet.ErrParam, "cpuref.Run", "Kernel", "unknown kernel %q", k)
}

func axis[T softmaxjet.Float](k cudaops.Kernel, in, out [][]T, shape []int) error {
	switch k {
	case cudaops.KernelSoftmaxBackward:
		return backward.SoftmaxBackward(out[0], in[0], in[1], shape, 1)
	case cudaops.KernelLogSoftmaxBackward:
		return backward.LogSoftmaxBackward(out[0], in[0], in[1], shape, 1)
	case cudaops.KernelSoftmaxBackwardGrad:
		return backward.SoftmaxBackwardGrad(out[0], out[1], in[0], in[1], in[2], shape, 1)
	case cudaops.KernelLogSoftmaxBackwardGrad:
		return backward.LogSoftmaxBackwardGrad(out[0], out[1], in[0], in[1], in[2], shape, 1)
	case cudaops.KernelSoftmaxForward:
		return backward.Softmax(out[0], in[0], shape, 1)
	case cudaops.KernelLogSoftmaxForward:
		return backward.LogSoftmax(out[0], in[0], shape, 1)
	}
	return gatejet.Errorf(gatejet.ErrParam, "cpuref.Run", "Kernel", "unknown kernel %q", k)
}

func elementwise[T softmaxjet.Float](k cudaops.Kernel, in, out [][]T) error {
	switch k {
	case cudaops.KernelReLUForward:
		return backward.ReLU(out[0], in[0])
	case cudaops.KernelGELUForward:
		return backward.GELU(out[0], in[0])
	case cudaops.KernelSiLUForward:
		return backward.SiLU(out[0], in[0])
	case cudaops.KernelReLUBackward:
		return backward.ReLUBackward(out[0], in[0], in[1])
	case cudaops.KernelGELUBackward:
		return backward.GELUBackward(out[0], in[0], in[1])
	case cudaops.KernelSiLUBackward:
		return backward.SiLUBackward(out[0], in[0], in[1])
	case cudaops.KernelReLUBackwardGrad:
		return backward.ReLUBackwardGrad(out[0], out[1], in[0], in[1], in[2])
	case cudaops.KernelGELUBackwardGrad:
		return backward.GELUBackwardGrad(out[0], out[1], in[0], in[1], in[2])
	case cudaops.KernelSiLUBackwardGrad:
		return backward.SiLUBackwardGrad(out[0], out[1], in[0], in[1], in[2])
	}
	return gatejet.Errorf(gatejet.ErrParam, "cpuref.Run", "Kernel", "unknown kernel %q", k)
}

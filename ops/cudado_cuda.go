//go:build cuda

package ops

import (
	"errors"
	"strconv"

	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/gatejet/gatejet"
	"github.com/gatejet/gatejet/cudaops"
	"github.com/gatejet/gatejet/cudaops/cudadoer"
	"github.com/gatejet/gatejet/internal/check"
)

// Under Gorgonia's build tag cuda every op of this package is a gorgonia.CUDADoer, so that a
// CUDA machine keeps the values of a graph that mixes these ops and Gorgonia's on the device.
// CUDADo runs the op's launch (the kernel call its host path runs too) on the device values
// the machine hands it, and writes the output into prealloc, a device value:
//
//   - an op whose kernel has device entry points (every jet op and its VJPs, the softmax
//     family, the activations and their backward and double backward) launches it on the
//     device pointers through the machine's context (package cudadoer); a kernel output the
//     op does not return goes to device scratch memory;
//   - an op whose kernel runs on the CPU only (SoftArgmin, LogDetPlusRidge and its gradient)
//     is staged through host: its inputs are copied to host tensors through the machine's
//     context, its host path computes the output, which is copied into prealloc. Such a call
//     counts in PathCounts.Staged (and, by the path its host computation took, in CPU).
//
// Device memory is never read by Go code: values are passed to kernels and copies by address.

// deviceOps is true under the build tag cuda: every op is a CUDADoer, so Gorgonia's CUDA
// machine must preallocate its output on the device (see seam.CallsExtern).
const deviceOps = true

// deviceOp is what every op implements under the build tag cuda.
type deviceOp interface {
	gorgonia.CUDADoer
	CUDAFuncName() string
}

// A missing method is a type error under the tag: one line per op type of this package.
var (
	_ deviceOp = (*jetOp)(nil)
	_ deviceOp = (*jetVJPOp)(nil)
	_ deviceOp = (*softmaxOp)(nil)
	_ deviceOp = (*axisOp)(nil)
	_ deviceOp = (*axisGradOp)(nil)
	_ deviceOp = (*actOp)(nil)
	_ deviceOp = (*softArgminOp)(nil)
	_ deviceOp = (*logDetOp)(nil)
	_ deviceOp = (*logDetGradOp)(nil)
)

// CUDAFuncName is the name of the op's kernel (see package cudaops), whose entry points for
// the value's dtype and device CUDADo resolves.
func (s *seam) CUDAFuncName() string { return s.plan.k.String() }

// stagedThroughHost reports whether CUDADo computes the op on the host (its kernel runs on the
// CPU only) rather than launching it on the device.
func (s *seam) stagedThroughHost() bool { return !s.plan.k.OnDevice() }

// CUDADo implements gorgonia.CUDADoer: the op's output, computed from the device values
// inputs, written into prealloc, a device value of the output's dtype and shape on device dev
// of the CUDA machine extern; it returns prealloc. See the top of this file for which ops
// launch on the device and which are staged through host.
func (s *seam) CUDADo(extern gorgonia.External, dev gorgonia.Device, prealloc gorgonia.Value, inputs ...gorgonia.Value) (gorgonia.Value, error) {
	if err := s.checkDevice(extern, prealloc, inputs); err != nil {
		return nil, err
	}
	p := &s.plan
	if s.stagedThroughHost() {
		return s.staged(extern, dev, prealloc, inputs)
	}
	outs := make([]gorgonia.Value, p.k.NumOut())
	outs[p.out] = prealloc
	k := cudadoer.Kernel{Kernel: cudaops.Kernel(p.k), Ints: p.ints, Floats: p.floats, Output: p.out}
	if err := k.Launch(extern, dev, outs, inputs); err != nil {
		return nil, s.deviceError(err)
	}
	s.run.record(cudaops.PathGPU)
	return prealloc, nil
}

// staged is CUDADo of an op whose kernel runs on the CPU only: the inputs copied to host, the
// host path, the output copied into prealloc.
func (s *seam) staged(extern gorgonia.External, dev gorgonia.Device, prealloc gorgonia.Value, inputs []gorgonia.Value) (gorgonia.Value, error) {
	host := make([]gorgonia.Value, len(inputs))
	for i, v := range inputs {
		t, err := newDense(s.nm, s.outDT, s.plan.in[i])
		if err != nil {
			return nil, err
		}
		if err := cudadoer.CopyToHost(extern, dev, t, v); err != nil {
			return nil, s.deviceError(err)
		}
		host[i] = t
	}
	out, err := newDense(s.nm, s.outDT, s.outShape)
	if err != nil {
		return nil, err
	}
	if err := s.self.compute(out, host); err != nil {
		return nil, err
	}
	if err := cudadoer.CopyToDevice(extern, dev, prealloc, out); err != nil {
		return nil, s.deviceError(err)
	}
	s.run.staged.Add(1)
	return prealloc, nil
}

// checkDevice checks what CUDADo is given: a CUDA machine, a preallocated output and inputs
// of the op's dtype and shapes (as the op's launch declares them), none of them a view.
func (s *seam) checkDevice(extern gorgonia.External, prealloc gorgonia.Value, inputs []gorgonia.Value) error {
	if _, ok := extern.(gorgonia.CUDAMachine); !ok {
		return check.Errorf(gatejet.ErrDevice, s.nm, "", "CUDADo needs a CUDA machine, got %T", extern)
	}
	if prealloc == nil {
		return check.Errorf(gatejet.ErrParam, s.nm, "prealloc", "CUDADo needs a preallocated device output")
	}
	if err := deviceValue(s.nm, "prealloc", prealloc, s.outDT, s.outShape); err != nil {
		return err
	}
	if len(inputs) != len(s.plan.in) {
		return check.Errorf(gatejet.ErrParam, s.nm, "", "want %d inputs, got %d", len(s.plan.in), len(inputs))
	}
	for i, v := range inputs {
		if err := deviceValue(s.nm, "inputs["+strconv.Itoa(i)+"]", v, s.outDT, s.plan.in[i]); err != nil {
			return err
		}
	}
	return nil
}

// deviceValue checks one device value: a *tensor.Dense of the dtype and shape, contiguous and
// not a view (its header only: its memory is the device's).
func deviceValue(op, name string, v gorgonia.Value, dt tensor.Dtype, shape tensor.Shape) error {
	if v == nil {
		return check.Errorf(gatejet.ErrParam, op, name, "nil value")
	}
	t, ok := v.(*tensor.Dense)
	if !ok {
		return check.Errorf(gatejet.ErrParam, op, name, "want a *tensor.Dense device value, got %T", v)
	}
	if t.Dtype() != dt {
		return check.Errorf(gatejet.ErrDType, op, name, "want %v, got %v", dt, t.Dtype())
	}
	if !t.Shape().Eq(shape) {
		return check.Errorf(gatejet.ErrShape, op, name, "want shape %v, got %v", shape, t.Shape())
	}
	if t.IsMaterializable() || t.RequiresIterator() || !t.DataOrder().IsRowMajor() {
		return check.Errorf(gatejet.ErrParam, op, name, "want a contiguous row-major device value that is not a view")
	}
	return nil
}

// deviceError names the op in an error of package cudadoer, keeping its kind (ErrDevice when
// it has none) for errors.Is.
func (s *seam) deviceError(err error) error {
	kind := gatejet.ErrDevice
	var ge *gatejet.Error
	if errors.As(err, &ge) && ge.Kind != nil {
		kind = ge.Kind
	}
	return check.Errorf(kind, s.nm, "", "CUDADo: %v", err)
}

//go:build cuda

package ops

import (
	"errors"
	"strconv"

	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/gatejet/gatejet"
	"github.com/gatejet/gatejet/cudaops/cudadoer"
	"github.com/gatejet/gatejet/internal/check"
	"github.com/gatejet/gatejet/internal/dispatch"
	"github.com/gatejet/gatejet/internal/strided"
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
//     counts in dispatch.PathCounts.Staged (and, by the path its host computation took, in CPU).
//
// A LispMachine's reverse pass calls DoDiff, which under the tag reads device values through
// host copies after waiting for the machine's queued work (see newDiffIO). Device memory is
// never read or written by Go code: values are passed to kernels and copies by address.

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
	k := cudadoer.Kernel{Kernel: dispatch.Kernel(p.k), Ints: p.ints, Floats: p.floats, Output: p.out}
	if err := k.Launch(extern, dev, outs, inputs); err != nil {
		return nil, s.deviceError(err)
	}
	s.run.record(dispatch.PathGPU)
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
func (s *seam) deviceError(err error) error { return deviceError(s.nm, "CUDADo", err) }

// deviceError is the error of op's method (CUDADo, DoDiff) for an error of package
// cudadoer, keeping its kind (ErrDevice when it has none) for errors.Is.
func deviceError(op, method string, err error) error {
	kind := gatejet.ErrDevice
	var ge *gatejet.Error
	if errors.As(err, &ge) && ge.Kind != nil {
		kind = ge.Kind
	}
	return check.Errorf(kind, op, "", "%s: %v", method, err)
}

// newDiffIO under the build tag cuda. A LispMachine of Gorgonia's cuda build puts every
// CUDADoer node on device 0 but runs its reverse pass through DoDiff alone (Gorgonia v0.9.18
// calls no device variant): the values and gradients of the device nodes that DoDiff is given
// live in the machine's arena, and the work that wrote them (launches, copies, and the
// gradient accumulations that the DoDiff of Gorgonia's own device ops queues) may still wait
// in the engines' batched contexts, unprocessed. So DoDiff first waits for all of it
// (cudadoer.Sync: a synchronisation queued behind it, the queue processed), then reads the
// device values it needs through host copies (cudadoer.CopyToHost) and writes each
// accumulated gradient back (cudadoer.CopyToDevice, which returns when the copy has run).
//
// Gorgonia v0.9.18's arena is managed memory (cuMemAllocManaged), which Go could address in
// place once synchronised; copies are used instead because they are correct for device memory
// of any kind (plain cuMemAlloc, or a device without concurrent managed access, where a host
// access while any kernel runs faults), so no configuration has to be refused, and they cost
// little next to the transfers a LispMachine makes anyway. A node on the CPU (an input, a
// Gorgonia op without CUDADo) holds host values, used in place. A machine that is not a CUDA
// machine, or has no engines (no device node: Gorgonia runs the graph on the CPU), holds only
// host values.
func newDiffIO(ctx gorgonia.ExecutionContext, name string) (diffIO, error) {
	machine, ok := ctx.External.(gorgonia.CUDAMachine)
	if !ok || len(machine.Engines()) == 0 {
		return hostIO{}, nil
	}
	if err := cudadoer.Sync(machine); err != nil {
		return nil, check.Errorf(gatejet.ErrDevice, name, "", "DoDiff: the device work queued before this reverse step failed: %v", err)
	}
	return deviceIO{extern: machine, name: name}, nil
}

// deviceIO is the diffIO of a CUDA machine: host copies of the values of device nodes.
type deviceIO struct {
	extern gorgonia.External
	name   string
}

// read returns v itself for a node on the CPU, and a host copy of v for a device node.
func (d deviceIO) read(n *gorgonia.Node, v gorgonia.Value, arg string) (gorgonia.Value, error) {
	if n.Device() == gorgonia.CPU {
		return v, nil
	}
	t, ok := v.(*tensor.Dense)
	if !ok || t == nil {
		return nil, check.Errorf(gatejet.ErrParam, d.name, arg, "DoDiff: want a *tensor.Dense device value, got %T", v)
	}
	if err := deviceValue(d.name, arg, t, t.Dtype(), t.Shape()); err != nil {
		return nil, err
	}
	h, err := newDense(d.name, t.Dtype(), t.Shape())
	if err != nil {
		return nil, err
	}
	if err := cudadoer.CopyToHost(d.extern, n.Device(), h, t); err != nil {
		return nil, deviceError(d.name, "DoDiff", err)
	}
	return h, nil
}

// add accumulates in place for a node on the CPU; for a device node, into a host copy of
// its gradient dst, which is then copied back.
func (d deviceIO) add(name, arg string, n *gorgonia.Node, dst gorgonia.Value, dt tensor.Dtype, src *tensor.Dense) error {
	if n.Device() == gorgonia.CPU {
		return hostIO{}.add(name, arg, n, dst, dt, src)
	}
	h, err := d.read(n, dst, arg)
	if err != nil {
		return err
	}
	if err := strided.AddInto(name, arg, h, dt, src.Shape(), src); err != nil {
		return err
	}
	if err := cudadoer.CopyToDevice(d.extern, n.Device(), dst, h.(*tensor.Dense)); err != nil {
		return deviceError(name, "DoDiff", err)
	}
	return nil
}

package ops

import (
	"github.com/gatejet/gatejet"
	"gorgonia.org/tensor"

	"github.com/gatejet/gatejet/internal/check"
	"github.com/gatejet/gatejet/internal/dispatch"
	"github.com/gatejet/gatejet/internal/kernel"
)

// launch is the one kernel call that computes an op's output, declared once when the op is
// built: kernel k with sizes ints and scalars floats, the op's inputs in order as the kernel's
// inputs (of shapes in), and the kernel's output out as the op's value (a kernel with more
// outputs writes the others to scratch, or skips them where the CPU may). The host path
// (runLaunch, through dispatch.RunBound) and, under the build tag cuda, CUDADo (on the device
// values of Gorgonia's CUDA machine) both run it.
type launch struct {
	k      kernel.ID
	ints   []int
	floats []float64
	in     []tensor.Shape
	out    int
	// bound is the call checked against the kernel table once, by bind; err is why it could
	// not be bound (a launch that disagrees with its kernel's declaration), returned by every
	// run instead of computing.
	bound dispatch.Bound
	err   error
}

// bind checks the launch against its kernel's declaration once, for op name: the sizes and
// scalars (dispatch.Bind), and the shapes of the inputs and of the output (of shape
// outShape) against the lengths the kernel declares. Every run then checks only that its
// tensors have the launch's shapes.
func (l *launch) bind(name string, outShape tensor.Shape) {
	l.bound, l.err = dispatch.Bind(name, dispatch.Kernel(l.k), l.ints, l.floats)
	if l.err != nil {
		return
	}
	if len(l.in) != l.k.NumIn() || l.out >= l.k.NumOut() {
		l.err = check.Errorf(gatejet.ErrParam, name, "", "%v: a launch of %d inputs to output %d", l.k, len(l.in), l.out)
		return
	}
	for i, s := range l.in {
		if s.TotalSize() != l.bound.InLen(i) {
			l.err = check.Errorf(gatejet.ErrShape, name, "", "%v: input %d of shape %v, the kernel's of length %d", l.k, i, s, l.bound.InLen(i))
			return
		}
	}
	if outShape.TotalSize() != l.bound.OutLen(l.out) {
		l.err = check.Errorf(gatejet.ErrShape, name, "", "%v: output of shape %v, the kernel's of length %d", l.k, outShape, l.bound.OutLen(l.out))
	}
}

// runLaunch runs the op's launch on host tensors: the inputs in (of the launch's shapes,
// checked by the caller) and the output out, after checking that out overlaps no input. The
// path taken is recorded in rec.
func runLaunch(name string, rec *pathRecord, dt tensor.Dtype, l *launch, in []*tensor.Dense, out *tensor.Dense) error {
	if dt == tensor.Float64 {
		return runLaunchOf[float64](name, rec, l, in, out)
	}
	return runLaunchOf[float32](name, rec, l, in, out)
}

func runLaunchOf[T gatejet.Float](name string, rec *pathRecord, l *launch, in []*tensor.Dense, out *tensor.Dense) error {
	if l.err != nil {
		return l.err
	}
	b := &l.bound
	if b.Kernel() == 0 {
		// A launch made for one call rather than an op's plan (which seam.init binds): bound,
		// and so checked, on this call.
		lb, err := dispatch.Bind(name, dispatch.Kernel(l.k), l.ints, l.floats)
		if err != nil {
			return err
		}
		b = &lb
	}
	var o dispatch.Operands[T]
	dst := data[T](out, out.Shape().TotalSize())
	for i, t := range in {
		o.In[i] = data[T](t, t.Shape().TotalSize())
		if check.Overlap(dst, o.In[i]) {
			return errOverlap(name)
		}
	}
	o.Out[l.out] = dst
	return rec.ran(dispatch.RunBound(b, o))
}

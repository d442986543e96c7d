package ops

import (
	"github.com/gatejet/gatejet"
	"gorgonia.org/tensor"

	"github.com/gatejet/gatejet/internal/check"
	"github.com/gatejet/gatejet/internal/kernel"
)

// launch is the one kernel call that computes an op's output, declared once when the op is
// built: kernel k with sizes ints and scalars floats, the op's inputs in order as the kernel's
// inputs (of shapes in), and the kernel's output out as the op's value (a kernel with more
// outputs writes the others to scratch, or skips them where the CPU may). The host path
// (compute, through dispatch.Run) and, under the build tag cuda, CUDADo (on the device values
// of Gorgonia's CUDA machine) both run it.
type launch struct {
	k      kernel.ID
	ints   []int
	floats []float64
	in     []tensor.Shape
	out    int
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
	var ins [kernel.MaxIn][]T
	var outs [kernel.MaxOut][]T
	dst := data[T](out, out.Shape().TotalSize())
	for i, t := range in {
		ins[i] = data[T](t, t.Shape().TotalSize())
		if check.Overlap(dst, ins[i]) {
			return errOverlap(name)
		}
	}
	outs[l.out] = dst
	return run(rec, l.k, l.ints, l.floats, ins[:len(in)], outs[:])
}

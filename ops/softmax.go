package ops

import (
	"errors"
	"fmt"
	"hash"

	"github.com/chewxy/hm"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/gatejet/gatejet"
	"github.com/gatejet/gatejet/backward"
	"github.com/gatejet/gatejet/cudaops"
	"github.com/gatejet/gatejet/internal/check"
)

// Softmax returns y = exp(x − max)/Σ exp(x − max) along axis of x (rank 1 to 8, Float64 or
// Float32; axis in [-rank, rank), negative axes counting from the end), a replacement for
// gorgonia.SoftMax (whose axis is the last one) computed by one kernel (backward.Softmax). The
// max along the axis is subtracted, so y is finite for any finite x. A NaN, a +Inf or a slice
// of all −Inf makes its slice NaN; a −Inf beside finite values gets probability 0.
//
// Its gradient is SoftmaxBackward of the output, which is itself differentiable: a graph built
// with Softmax can be differentiated twice (graphs.Grad).
func Softmax(x *gorgonia.Node, axis int, opts ...Option) (*gorgonia.Node, error) {
	return newSoftmax("ops.Softmax", false, x, axis, opts)
}

// LogSoftmax returns y = (x − max) − log Σ exp(x − max) along axis of x (backward.LogSoftmax):
// finite wherever x − max is. A −Inf beside finite values gives −Inf; NaN, +Inf and all −Inf
// slices as for Softmax. Its gradient is LogSoftmaxBackward of the output. Arguments as for
// Softmax.
func LogSoftmax(x *gorgonia.Node, axis int, opts ...Option) (*gorgonia.Node, error) {
	return newSoftmax("ops.LogSoftmax", true, x, axis, opts)
}

func newSoftmax(name string, log bool, x *gorgonia.Node, axis int, opts []Option) (*gorgonia.Node, error) {
	dt, err := checkArgs(name, arg{"x", x})
	if err != nil {
		return nil, err
	}
	o, err := applyOptions(name, opts)
	if err != nil {
		return nil, err
	}
	a, err := newSoftmaxAxis(name, "x", log, x.Shape(), axis, dt)
	if err != nil {
		return nil, err
	}
	op := &softmaxOp{softmaxAxis: a}
	op.configure(o)
	return gorgonia.ApplyOp(op, x)
}

// softmaxOp is softmax or log-softmax along one axis. Input x; output y. Shape and dtype are
// fixed when the node is built.
type softmaxOp struct {
	seam
	softmaxAxis
}

// softmaxAxis is what a softmax op and the softmax-family backward ops (SoftmaxBackward and
// the gradient of Softmax) share: the axis, shape and dtype, fixed when the node is built.
type softmaxAxis struct {
	log   bool
	axis  int // normalised to [0, rank)
	shape tensor.Shape
	dt    tensor.Dtype
	ints  [3]int // outer, n, inner
}

// newSoftmaxAxis checks the shape s of argument arg (rank 1 to 8, no zero dim, axis in
// [-rank, rank), an output of that shape within gatejet.MaxBytes) and returns its layout.
func newSoftmaxAxis(name, arg string, log bool, s tensor.Shape, axis int, dt tensor.Dtype) (softmaxAxis, error) {
	if len(s) == 0 {
		return softmaxAxis{}, check.Errorf(gatejet.ErrRank, name, arg, "want rank 1 to 8, got a scalar")
	}
	outer, n, inner, err := backward.AxisLayout(name, []int(s), axis)
	if err != nil {
		// The layout check names its own "shape" argument; here the shape is arg's.
		var ge *gatejet.Error
		if errors.As(err, &ge) && ge.Arg == "shape" {
			ge.Arg = arg
		}
		return softmaxAxis{}, err
	}
	if err := checkPositiveDims(name, arg, s); err != nil {
		return softmaxAxis{}, err
	}
	if err := checkOutput(name, dt, s); err != nil {
		return softmaxAxis{}, err
	}
	if axis < 0 {
		axis += len(s)
	}
	return softmaxAxis{log: log, axis: axis, shape: s.Clone(), dt: dt, ints: [3]int{outer, n, inner}}, nil
}

func (op *softmaxOp) name() string {
	if op.log {
		return "ops.LogSoftmax"
	}
	return "ops.Softmax"
}

// Arity is 1: x.
func (op *softmaxOp) Arity() int { return 1 }

// Type is a → a.
func (op *softmaxOp) Type() hm.Type {
	a := hm.TypeVariable('a')
	return fnType(a, a)
}

// InferShape checks that the input has the op's shape and returns it. Gorgonia calls it when
// it applies the op; an op built with ReuseOutput is applied once (see ReuseOutput).
func (op *softmaxOp) InferShape(ds ...gorgonia.DimSizer) (tensor.Shape, error) {
	sh, err := sameShapes(op.name(), op.shape, ds, 1)
	return op.claim(op.name(), sh, err)
}

// WriteHash writes the op's name and axis.
func (op *softmaxOp) WriteHash(h hash.Hash) {
	if h == nil {
		return
	}
	fmt.Fprintf(h, "%s axis %d%s", op.name(), op.axis, op.reuseHash())
}

// Hashcode is the FNV-32a hash of WriteHash.
func (op *softmaxOp) Hashcode() uint32 { return hashOf(op) }

// String names the op and its axis.
func (op *softmaxOp) String() string { return fmt.Sprintf("%s{axis=%d}", op.name(), op.axis) }

// Do computes y into a new tensor.
func (op *softmaxOp) Do(vals ...gorgonia.Value) (gorgonia.Value, error) {
	return doNew(op, op.dt, op.shape, vals)
}

// UsePreallocDo computes y into prealloc (a contiguous *tensor.Dense of the output's dtype and
// shape sharing no memory with the input).
func (op *softmaxOp) UsePreallocDo(prealloc gorgonia.Value, vals ...gorgonia.Value) (gorgonia.Value, error) {
	return doPrealloc(op, op.dt, op.shape, prealloc, vals)
}

func (op *softmaxOp) compute(out *tensor.Dense, vals []gorgonia.Value) error {
	ts, err := values(op.name(), op.dt, op.shape, vals, "x")
	if err != nil {
		return err
	}
	if op.dt == tensor.Float64 {
		return softmaxForward[float64](op, out, ts[0])
	}
	return softmaxForward[float32](op, out, ts[0])
}

func softmaxForward[T float](op *softmaxOp, out, xt *tensor.Dense) error {
	b := &op.softmaxAxis
	n := b.shape.TotalSize()
	y, x := data[T](out, n), data[T](xt, n)
	if check.Overlap(y, x) {
		return check.Errorf(gatejet.ErrParam, op.name(), "prealloc", "the output buffer overlaps an input")
	}
	k := cudaops.KernelSoftmaxForward
	if b.log {
		k = cudaops.KernelLogSoftmaxForward
	}
	return run(&op.run, k, b.ints[:], nil, [][]T{x}, [][]T{y})
}

// DiffWRT: differentiable in x.
func (op *softmaxOp) DiffWRT(inputs int) []bool { return diffMask(inputs, true) }

// newBackward returns a fresh backward op of the same axis, shape and dtype, inheriting the
// op's options.
func (op *softmaxOp) newBackward() *axisOp {
	a := op.softmaxAxis
	a.shape = a.shape.Clone()
	return newAxisOp(a, op.inherited())
}

// SymDiff returns the gradient node: SoftmaxBackward (or LogSoftmaxBackward) of the output and
// the upstream gradient. That op is differentiable in both, so the gradient can be
// differentiated again.
func (op *softmaxOp) SymDiff(inputs gorgonia.Nodes, output, grad *gorgonia.Node) (gorgonia.Nodes, error) {
	if err := checkDiffNodes(op.name(), 1, inputs, output, grad); err != nil {
		return nil, err
	}
	bop := op.newBackward()
	// The gradient op's output has the op's shape, checked when the op was built; the limit
	// may have been lowered since.
	if err := checkOutput(bop.name(), op.dt, op.shape); err != nil {
		return nil, err
	}
	n, err := gorgonia.ApplyOp(bop, output, grad)
	if err != nil {
		return nil, err
	}
	return gorgonia.Nodes{n}, nil
}

// DoDiff is the LispMachine's reverse step: the backward kernel of the output's value and
// gradient, added into x's gradient.
func (op *softmaxOp) DoDiff(ctx gorgonia.ExecutionContext, inputs gorgonia.Nodes, output *gorgonia.Node) error {
	if err := checkDiffNodes(op.name(), 1, inputs, output); err != nil {
		return err
	}
	up, err := output.Grad()
	if err != nil {
		return check.Errorf(gatejet.ErrParam, op.name(), "output", "no gradient: %v", err)
	}
	b := &op.softmaxAxis
	ts, err := values(op.name(), b.dt, b.shape, []gorgonia.Value{output.Value(), up}, "y", "grad")
	if err != nil {
		return err
	}
	dx, err := newDense(op.name(), b.dt, b.shape)
	if err != nil {
		return err
	}
	n := b.shape.TotalSize()
	if b.dt == tensor.Float64 {
		err = runAxisBackward(&op.diffRun, b.log, b.ints,
			data[float64](dx, n), data[float64](ts[0], n), data[float64](ts[1], n))
	} else {
		err = runAxisBackward(&op.diffRun, b.log, b.ints,
			data[float32](dx, n), data[float32](ts[0], n), data[float32](ts[1], n))
	}
	if err != nil {
		return err
	}
	return accumulate(op.name(), b.dt, b.shape, inputs, []string{"x"}, []*tensor.Dense{dx})
}

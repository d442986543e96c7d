package ops

import (
	"fmt"
	"hash"

	"github.com/chewxy/hm"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/gatejet/gatejet"
	"github.com/gatejet/gatejet/cudaops"
	"github.com/gatejet/gatejet/internal/check"
	"github.com/gatejet/gatejet/internal/strided"
)

// SoftmaxBackward returns the gradient dx = y⊙(dy − ⟨y,dy⟩) with respect to the input of a
// softmax taken along axis, from its saved output y and the gradient dy with respect to that
// output (the inner product runs along axis). y and dy have the same shape (rank 1 to 8) and
// dtype (Float64 or Float32); axis lies in [-rank, rank). The node is differentiable in both
// y and dy (double backward), unlike Gorgonia's own softmax gradient.
func SoftmaxBackward(y, dy *gorgonia.Node, axis int, opts ...Option) (*gorgonia.Node, error) {
	return newAxisBackward("ops.SoftmaxBackward", false, y, dy, axis, opts)
}

// LogSoftmaxBackward returns the gradient dx = dy − exp(y)·Σ dy with respect to the input of a
// log-softmax taken along axis, from its saved output y (the log-softmax output) and the
// gradient dy with respect to it. Arguments and differentiability as for SoftmaxBackward.
func LogSoftmaxBackward(y, dy *gorgonia.Node, axis int, opts ...Option) (*gorgonia.Node, error) {
	return newAxisBackward("ops.LogSoftmaxBackward", true, y, dy, axis, opts)
}

func newAxisBackward(name string, log bool, y, dy *gorgonia.Node, axis int, opts []Option) (*gorgonia.Node, error) {
	dt, err := checkArgs(name, arg{"y", y}, arg{"dy", dy})
	if err != nil {
		return nil, err
	}
	o, err := applyOptions(name, opts)
	if err != nil {
		return nil, err
	}
	ys, dys := y.Shape(), dy.Shape()
	if len(ys) > 0 && !ys.Eq(dys) {
		return nil, check.Errorf(gatejet.ErrShape, name, "dy", "want the shape of y %v, got %v", ys, dys)
	}
	sa, err := newSoftmaxAxis(name, "y", log, ys, axis, dt)
	if err != nil {
		return nil, err
	}
	op := newAxisOp(sa, o)
	return gorgonia.ApplyOp(op, y, dy)
}

// axisOp is the softmax-family backward along one axis. Inputs: y and dy; output dx. Shape
// and dtype are fixed when the node is built.
type axisOp struct {
	seam
	softmaxAxis
}

func newAxisOp(a softmaxAxis, o options) *axisOp {
	op := &axisOp{softmaxAxis: a}
	op.configure(o)
	return op
}

func (op *axisOp) name() string {
	if op.log {
		return "ops.LogSoftmaxBackward"
	}
	return "ops.SoftmaxBackward"
}

// Arity is 2: y and dy.
func (op *axisOp) Arity() int { return 2 }

// Type is a → a → a.
func (op *axisOp) Type() hm.Type {
	a := hm.TypeVariable('a')
	return fnType(a, a, a)
}

// InferShape checks that every input has the op's shape and returns it. Gorgonia calls it
// when it applies the op; an op built with ReuseOutput is applied once (see ReuseOutput).
func (op *axisOp) InferShape(ds ...gorgonia.DimSizer) (tensor.Shape, error) {
	sh, err := sameShapes(op.name(), op.shape, ds, op.Arity())
	return op.claim(op.name(), sh, err)
}

// sameShapes checks that there are arity inputs, all of the given shape.
func sameShapes(name string, shape tensor.Shape, ds []gorgonia.DimSizer, arity int) (tensor.Shape, error) {
	if len(ds) != arity {
		return nil, check.Errorf(gatejet.ErrParam, name, "", "want %d inputs, got %d", arity, len(ds))
	}
	for i := range ds {
		s, err := shapeOf(name, ds, i)
		if err != nil {
			return nil, err
		}
		if !s.Eq(shape) {
			return nil, check.Errorf(gatejet.ErrShape, name, "", "input %d: want shape %v, got %v", i, shape, s)
		}
	}
	return shape.Clone(), nil
}

// WriteHash writes the op's name and axis.
func (op *axisOp) WriteHash(h hash.Hash) {
	if h == nil {
		return
	}
	fmt.Fprintf(h, "%s axis %d%s", op.name(), op.axis, op.reuseHash())
}

// Hashcode is the FNV-32a hash of WriteHash.
func (op *axisOp) Hashcode() uint32 { return hashOf(op) }

// String names the op and its axis.
func (op *axisOp) String() string { return fmt.Sprintf("%s{axis=%d}", op.name(), op.axis) }

// values checks n values of the op's dtype and shape.
func values(name string, dt tensor.Dtype, shape tensor.Shape, vals []gorgonia.Value, names ...string) ([]*tensor.Dense, error) {
	if len(vals) != len(names) {
		return nil, check.Errorf(gatejet.ErrParam, name, "", "want %d inputs, got %d", len(names), len(vals))
	}
	ts := make([]*tensor.Dense, len(vals))
	for i, v := range vals {
		t, err := dense(name, names[i], v, dt, shape)
		if err != nil {
			return nil, err
		}
		ts[i] = t
	}
	return ts, nil
}

// Do computes dx into a new tensor.
func (op *axisOp) Do(vals ...gorgonia.Value) (gorgonia.Value, error) {
	return doNew(op, op.dt, op.shape, vals)
}

// UsePreallocDo computes dx into prealloc (a contiguous *tensor.Dense of the output's dtype
// and shape sharing no memory with the inputs).
func (op *axisOp) UsePreallocDo(prealloc gorgonia.Value, vals ...gorgonia.Value) (gorgonia.Value, error) {
	return doPrealloc(op, op.dt, op.shape, prealloc, vals)
}

func (op *axisOp) compute(out *tensor.Dense, vals []gorgonia.Value) error {
	if len(vals) != 2 {
		return check.Errorf(gatejet.ErrParam, op.name(), "", "want 2 inputs, got %d", len(vals))
	}
	y, err := dense(op.name(), "y", vals[0], op.dt, op.shape)
	if err != nil {
		return err
	}
	dy, err := dense(op.name(), "dy", vals[1], op.dt, op.shape)
	if err != nil {
		return err
	}
	if op.dt == tensor.Float64 {
		return axisBackward[float64](op, out, y, dy)
	}
	return axisBackward[float32](op, out, y, dy)
}

func axisBackward[T float](op *axisOp, out, yt, dyt *tensor.Dense) error {
	n := op.shape.TotalSize()
	dx, y, dy := data[T](out, n), data[T](yt, n), data[T](dyt, n)
	if check.Overlap(dx, y) || check.Overlap(dx, dy) {
		return check.Errorf(gatejet.ErrParam, op.name(), "prealloc", "the output buffer overlaps an input")
	}
	return runAxisBackward(&op.run, op.log, op.ints, dx, y, dy)
}

func runAxisBackward[T float](rec *pathRecord, log bool, ints [3]int, dx, y, dy []T) error {
	k := cudaops.KernelSoftmaxBackward
	if log {
		k = cudaops.KernelLogSoftmaxBackward
	}
	return run(rec, k, ints[:], nil, [][]T{y, dy}, [][]T{dx})
}

func runAxisBackwardGrad[T float](rec *pathRecord, log bool, ints [3]int, gy, gdy, y, dy, g []T) error {
	k := cudaops.KernelSoftmaxBackwardGrad
	if log {
		k = cudaops.KernelLogSoftmaxBackwardGrad
	}
	return run(rec, k, ints[:], nil, [][]T{y, dy, g}, [][]T{gy, gdy})
}

// DiffWRT: differentiable in y and dy.
func (op *axisOp) DiffWRT(inputs int) []bool { return diffMask(inputs, true) }

// SymDiff returns the double-backward nodes: the gradients of ⟨grad, dx⟩ with respect to y
// and dy (backward.SoftmaxBackwardGrad or LogSoftmaxBackwardGrad, one node per input).
func (op *axisOp) SymDiff(inputs gorgonia.Nodes, output, grad *gorgonia.Node) (gorgonia.Nodes, error) {
	if err := checkDiffNodes(op.name(), 2, inputs, grad); err != nil {
		return nil, err
	}
	// The gradient ops' outputs have the op's shape, checked when it was built; the limit may
	// have been lowered since.
	if err := checkOutput(op.name()+"Grad", op.dt, op.shape); err != nil {
		return nil, err
	}
	retVal := make(gorgonia.Nodes, 2)
	for wrt := range retVal {
		gop := &axisGradOp{fwd: op, wrt: wrt}
		gop.configure(op.inherited())
		n, err := gorgonia.ApplyOp(gop, inputs[0], inputs[1], grad)
		if err != nil {
			return nil, err
		}
		retVal[wrt] = n
	}
	return retVal, nil
}

// DoDiff is the LispMachine's reverse step: one double-backward kernel call for both inputs,
// added into their gradients.
func (op *axisOp) DoDiff(ctx gorgonia.ExecutionContext, inputs gorgonia.Nodes, output *gorgonia.Node) error {
	if err := checkDiffNodes(op.name(), 2, inputs, output); err != nil {
		return err
	}
	up, err := output.Grad()
	if err != nil {
		return check.Errorf(gatejet.ErrParam, op.name(), "output", "no gradient: %v", err)
	}
	ts, err := values(op.name(), op.dt, op.shape, []gorgonia.Value{inputs[0].Value(), inputs[1].Value(), up}, "y", "dy", "grad")
	if err != nil {
		return err
	}
	gy, err := newDense(op.name(), op.dt, op.shape)
	if err != nil {
		return err
	}
	gdy, err := newDense(op.name(), op.dt, op.shape)
	if err != nil {
		return err
	}
	n := op.shape.TotalSize()
	if op.dt == tensor.Float64 {
		err = runAxisBackwardGrad(&op.diffRun, op.log, op.ints,
			data[float64](gy, n), data[float64](gdy, n), data[float64](ts[0], n), data[float64](ts[1], n), data[float64](ts[2], n))
	} else {
		err = runAxisBackwardGrad(&op.diffRun, op.log, op.ints,
			data[float32](gy, n), data[float32](gdy, n), data[float32](ts[0], n), data[float32](ts[1], n), data[float32](ts[2], n))
	}
	if err != nil {
		return err
	}
	return accumulate(op.name(), op.dt, op.shape, inputs, []string{"y", "dy"}, []*tensor.Dense{gy, gdy})
}

// accumulate adds grads[i] into the live gradient of inputs[i].
func accumulate(name string, dt tensor.Dtype, shape tensor.Shape, inputs gorgonia.Nodes, names []string, grads []*tensor.Dense) error {
	for i, n := range inputs {
		g, err := n.Grad()
		if err != nil {
			return check.Errorf(gatejet.ErrParam, name, names[i], "no gradient to accumulate into: %v", err)
		}
		if err := strided.AddInto(name, names[i], g, dt, shape, grads[i]); err != nil {
			return err
		}
	}
	return nil
}

// axisGradOp is the double backward of an axisOp with respect to one input (wrt 0: y, 1: dy).
// Inputs: y, dy and the upstream gradient on dx. Not differentiable itself.
type axisGradOp struct {
	seam
	fwd *axisOp
	wrt int
}

func (op *axisGradOp) name() string { return op.fwd.name() + "Grad" }

// Arity is 3: y, dy and the upstream gradient.
func (op *axisGradOp) Arity() int { return 3 }

// Type is a → a → a → a.
func (op *axisGradOp) Type() hm.Type {
	a := hm.TypeVariable('a')
	return fnType(a, a, a, a)
}

// InferShape checks that every input has the forward op's shape and returns it. Gorgonia
// calls it when it applies the op; an op built with ReuseOutput is applied once.
func (op *axisGradOp) InferShape(ds ...gorgonia.DimSizer) (tensor.Shape, error) {
	sh, err := sameShapes(op.name(), op.fwd.shape, ds, op.Arity())
	return op.claim(op.name(), sh, err)
}

// WriteHash writes the forward op's hash and wrt.
func (op *axisGradOp) WriteHash(h hash.Hash) {
	if h == nil {
		return
	}
	op.fwd.WriteHash(h)
	fmt.Fprintf(h, " grad wrt %d", op.wrt)
}

// Hashcode is the FNV-32a hash of WriteHash.
func (op *axisGradOp) Hashcode() uint32 { return hashOf(op) }

// String names the op, its axis and wrt.
func (op *axisGradOp) String() string {
	return fmt.Sprintf("%s{axis=%d, wrt %s}", op.name(), op.fwd.axis, []string{"y", "dy"}[op.wrt])
}

// Do computes the gradient into a new tensor.
func (op *axisGradOp) Do(vals ...gorgonia.Value) (gorgonia.Value, error) {
	return doNew(op, op.fwd.dt, op.fwd.shape, vals)
}

// UsePreallocDo computes the gradient into prealloc.
func (op *axisGradOp) UsePreallocDo(prealloc gorgonia.Value, vals ...gorgonia.Value) (gorgonia.Value, error) {
	return doPrealloc(op, op.fwd.dt, op.fwd.shape, prealloc, vals)
}

func (op *axisGradOp) compute(out *tensor.Dense, vals []gorgonia.Value) error {
	f := op.fwd
	ts, err := values(op.name(), f.dt, f.shape, vals, "y", "dy", "grad")
	if err != nil {
		return err
	}
	if f.dt == tensor.Float64 {
		return axisGrad[float64](op, out, ts)
	}
	return axisGrad[float32](op, out, ts)
}

func axisGrad[T float](op *axisGradOp, out *tensor.Dense, ts []*tensor.Dense) error {
	f := op.fwd
	n := f.shape.TotalSize()
	dst, y, dy, g := data[T](out, n), data[T](ts[0], n), data[T](ts[1], n), data[T](ts[2], n)
	if check.Overlap(dst, y) || check.Overlap(dst, dy) || check.Overlap(dst, g) {
		return check.Errorf(gatejet.ErrParam, op.name(), "prealloc", "the output buffer overlaps an input")
	}
	var outs [2][]T
	outs[op.wrt] = dst
	return runAxisBackwardGrad(&op.run, f.log, f.ints, outs[0], outs[1], y, dy, g)
}

// DiffWRT: the double backward is not differentiable.
func (op *axisGradOp) DiffWRT(inputs int) []bool { return diffMask(inputs, false) }

// SymDiff reports that the double backward is not differentiable.
func (op *axisGradOp) SymDiff(inputs gorgonia.Nodes, output, grad *gorgonia.Node) (gorgonia.Nodes, error) {
	return nil, check.Errorf(gatejet.ErrParam, op.name(), "", "the double backward is not differentiable")
}

// DoDiff accepts a zero output gradient and reports an error otherwise (see nonDiff).
func (op *axisGradOp) DoDiff(ctx gorgonia.ExecutionContext, inputs gorgonia.Nodes, output *gorgonia.Node) error {
	return nonDiff(op.name(), output)
}

package ops

import (
	"fmt"

	"gorgonia.org/gorgonia"

	"github.com/gatejet/gatejet"
	"github.com/gatejet/gatejet/internal/check"
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
// and dtype are fixed when the node is built. Its DoDiff runs the double-backward kernel.
type axisOp struct {
	axisUniform
}

func newAxisOp(a softmaxAxis, o options) *axisOp {
	op := &axisOp{}
	k := a.kernels()
	op.axisUniform = axisUniform{softmaxAxis: a, uniform: uniform{args: []string{"y", "dy"}, k: k[1],
		diff: k[2], diffArgs: []string{"y", "dy", "grad"}}}
	op.initAxis(op, a.names()[1], o)
	return op
}

// SymDiff returns the double-backward nodes: the gradients of ⟨grad, dx⟩ with respect to y
// and dy (backward.SoftmaxBackwardGrad or LogSoftmaxBackwardGrad, one node per input).
func (op *axisOp) SymDiff(inputs gorgonia.Nodes, output, grad *gorgonia.Node) (gorgonia.Nodes, error) {
	if err := checkDiffNodes(op.name(), 2, inputs, grad); err != nil {
		return nil, err
	}
	return gradNodes(2, gorgonia.Nodes{inputs[0], inputs[1], grad}, func(wrt int) gradOp { return newAxisGradOp(op, wrt) })
}

// axisGradOp is the double backward of an axisOp with respect to one input (wrt 0: y, 1: dy).
// Inputs: y, dy and the upstream gradient on dx. Not differentiable itself.
type axisGradOp struct {
	uniform
	wrtOf[*axisOp]
}

func newAxisGradOp(fwd *axisOp, wrt int) *axisGradOp {
	op := &axisGradOp{wrtOf: wrtOf[*axisOp]{fwd: fwd, wrt: wrt, tag: "grad"}}
	op.uniform = uniform{args: []string{"y", "dy", "grad"}, k: fwd.kernels()[2], sizes: fwd.sizes, slot: wrt}
	op.init(op, fwd.name()+"Grad", fwd.dt, fwd.shape, fwd.inherited())
	return op
}

// String names the op, its axis and wrt.
func (op *axisGradOp) String() string {
	return fmt.Sprintf("%s{axis=%d, wrt %s}", op.name(), op.fwd.axis, []string{"y", "dy"}[op.wrt])
}

// DiffWRT: differentiable in every input (see uniform.DiffWRT), but the gradient with
// respect to dy, y⊙(grad − ⟨y,grad⟩) or grad − ⟨exp(y),grad⟩, does not depend on dy: no
// gradient flows back through that input, so Grad need not refuse a path through it.
func (op *axisGradOp) DiffWRT(inputs int) []bool { return doubleBackwardDiffWRT(op.wrt, inputs) }

// SymDiff reports that the double backward is not differentiable.
func (op *axisGradOp) SymDiff(inputs gorgonia.Nodes, output, grad *gorgonia.Node) (gorgonia.Nodes, error) {
	return nil, check.Errorf(gatejet.ErrParam, op.name(), "", "the double backward is not differentiable")
}

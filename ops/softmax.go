package ops

import (
	"errors"
	"fmt"
	"hash"

	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/gatejet/gatejet"
	"github.com/gatejet/gatejet/internal/check"
	"github.com/gatejet/gatejet/internal/kernel"
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
	op := newSoftmaxOp(a, o)
	return gorgonia.ApplyOp(op, x)
}

// softmaxOp is softmax or log-softmax along one axis. Input x; output y. Shape and dtype are
// fixed when the node is built. Its DoDiff runs the backward kernel on the output's value.
type softmaxOp struct {
	axisUniform
}

func newSoftmaxOp(a softmaxAxis, o options) *softmaxOp {
	op := &softmaxOp{}
	k := a.kernels()
	op.axisUniform = axisUniform{softmaxAxis: a, uniform: uniform{args: []string{"x"}, k: k[0],
		diff: k[1], diffArgs: []string{"y", "grad"}, fromOutput: true}}
	op.initAxis(op, a.names()[0], o)
	return op
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
	outer, n, inner, err := check.AxisLayout(name, []int(s), axis)
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

// kernels are the axis's forward, backward and double-backward kernels.
func (a *softmaxAxis) kernels() [3]kernel.ID {
	if a.log {
		return [3]kernel.ID{kernel.LogSoftmaxForward, kernel.LogSoftmaxBackward, kernel.LogSoftmaxBackwardGrad}
	}
	return [3]kernel.ID{kernel.SoftmaxForward, kernel.SoftmaxBackward, kernel.SoftmaxBackwardGrad}
}

// names are the names of the axis's forward and backward ops.
func (a *softmaxAxis) names() [2]string {
	if a.log {
		return [2]string{"ops.LogSoftmax", "ops.LogSoftmaxBackward"}
	}
	return [2]string{"ops.Softmax", "ops.SoftmaxBackward"}
}

// axisUniform is the part of the softmax op and its backward that they share: the layout
// along the axis, the uniform seam over it, the hash and the name.
type axisUniform struct {
	uniform
	softmaxAxis
}

// initAxis sets up the seam of the op self of the given name over the axis's shape and sizes.
func (u *axisUniform) initAxis(self computer, name string, o options) {
	u.sizes = u.ints[:]
	u.uniform.init(self, name, u.dt, u.shape, o)
}

// WriteHash writes the op's name and axis.
func (u *axisUniform) WriteHash(h hash.Hash) {
	if h == nil {
		return
	}
	fmt.Fprintf(h, "%s axis %d%s", u.name(), u.axis, u.reuseHash())
}

// String names the op and its axis.
func (u *axisUniform) String() string { return fmt.Sprintf("%s{axis=%d}", u.name(), u.axis) }

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
	return gradNodes(1, gorgonia.Nodes{output, grad}, func(int) gradOp { return op.newBackward() })
}

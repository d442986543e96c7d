package ops

import (
	"fmt"
	"hash"

	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/gatejet/gatejet"
	"github.com/gatejet/gatejet/internal/check"
	"github.com/gatejet/gatejet/internal/kernel"
)

// activation names an elementwise activation function.
type activation uint8

const (
	actReLU activation = iota
	actGELU
	actSiLU
	numActivations
)

var actNames = [numActivations]string{"ReLU", "GELU", "SiLU"}

// kernels returns the activation's kernels in the kernel table, whose Activations follow
// this package's order of activations.
func (a activation) kernels() *kernel.Activation { return kernel.Activations[a] }

// actStage is what an actOp computes: the forward map, its backward or its double backward.
type actStage uint8

const (
	stageForward  actStage = iota // x → y = f(x)
	stageBackward                 // (x, dy) → dx = dy·f'(x)
	stageGrad                     // (x, dy, g) → gx = g·dy·f″(x) (wrt 0) or gdy = g·f'(x) (wrt 1)
)

// ReLU returns max(0, x) elementwise (NaN propagates). x has rank ≥ 1 and dtype Float64 or
// Float32. Its gradient is ReLUBackward; Gorgonia's own Rectify computes the same forward map.
func ReLU(x *gorgonia.Node, opts ...Option) (*gorgonia.Node, error) {
	return newActivation(actReLU, x, opts)
}

// GELU returns the tanh form of the Gaussian error linear unit elementwise,
// ½x(1 + tanh(√(2/π)(x + 0.044715x³))). Arguments as for ReLU. Its gradient is GELUBackward.
func GELU(x *gorgonia.Node, opts ...Option) (*gorgonia.Node, error) {
	return newActivation(actGELU, x, opts)
}

// SiLU returns the sigmoid linear unit x·σ(x) elementwise. Arguments as for ReLU. Its
// gradient is SiLUBackward.
func SiLU(x *gorgonia.Node, opts ...Option) (*gorgonia.Node, error) {
	return newActivation(actSiLU, x, opts)
}

// ReLUBackward returns dx = dy·[x > 0] from the forward input x and the gradient dy with
// respect to the output (same shape, rank ≥ 1, and dtype). Differentiable in x (zero almost
// everywhere) and dy.
func ReLUBackward(x, dy *gorgonia.Node, opts ...Option) (*gorgonia.Node, error) {
	return newActivationBackward(actReLU, x, dy, opts)
}

// GELUBackward returns dx = dy·gelu'(x) (tanh form). Arguments as for ReLUBackward;
// differentiable in x and dy.
func GELUBackward(x, dy *gorgonia.Node, opts ...Option) (*gorgonia.Node, error) {
	return newActivationBackward(actGELU, x, dy, opts)
}

// SiLUBackward returns dx = dy·silu'(x), silu'(x) = σ(x)(1 + x(1 − σ(x))). Arguments as for
// ReLUBackward; differentiable in x and dy.
func SiLUBackward(x, dy *gorgonia.Node, opts ...Option) (*gorgonia.Node, error) {
	return newActivationBackward(actSiLU, x, dy, opts)
}

func newActivation(a activation, x *gorgonia.Node, opts []Option) (*gorgonia.Node, error) {
	return applyActivation(a, stageForward, opts, arg{"x", x})
}

func newActivationBackward(a activation, x, dy *gorgonia.Node, opts []Option) (*gorgonia.Node, error) {
	return applyActivation(a, stageBackward, opts, arg{"x", x}, arg{"dy", dy})
}

// applyActivation builds the node of stage of a on args: x, then inputs of x's shape.
func applyActivation(a activation, stage actStage, opts []Option, args ...arg) (*gorgonia.Node, error) {
	name := actName(a, stage)
	dt, err := checkArgs(name, args...)
	if err != nil {
		return nil, err
	}
	o, err := applyOptions(name, opts)
	if err != nil {
		return nil, err
	}
	s, err := elementwiseShape(name, "x", args[0].n.Shape())
	if err != nil {
		return nil, err
	}
	nodes := make([]*gorgonia.Node, len(args))
	for i, in := range args {
		if !in.n.Shape().Eq(s) {
			return nil, check.Errorf(gatejet.ErrShape, name, in.name, "want the shape of x %v, got %v", s, in.n.Shape())
		}
		nodes[i] = in.n
	}
	if err := checkOutput(name, dt, s); err != nil {
		return nil, err
	}
	return gorgonia.ApplyOp(newActOp(a, stage, 0, s, dt, o), nodes...)
}

func elementwiseShape(name, argName string, s tensor.Shape) (tensor.Shape, error) {
	if len(s) == 0 {
		return nil, check.Errorf(gatejet.ErrRank, name, argName, "want rank ≥ 1, got a scalar")
	}
	if err := checkPositiveDims(name, argName, s); err != nil {
		return nil, err
	}
	return s.Clone(), nil
}

func actName(a activation, stage actStage) string {
	return "ops." + actNames[a] + [...]string{"", "Backward", "BackwardGrad"}[stage]
}

// actOp is an elementwise activation, its backward or its double backward with respect to
// one input. Inputs: x; x, dy; or x, dy, g (the upstream gradient on dx). Each stage runs the
// activation's kernel of that stage (the double backward keeps output wrt of its two), and
// its DoDiff the kernel of the next stage.
type actOp struct {
	uniform
	a     activation
	stage actStage
	wrt   int // stageGrad only: 0 x, 1 dy
}

var actArgNames = []string{"x", "dy", "grad"}

func newActOp(a activation, stage actStage, wrt int, shape tensor.Shape, dt tensor.Dtype, o options) *actOp {
	op := &actOp{a: a, stage: stage, wrt: wrt}
	ks := a.kernels()
	op.uniform = uniform{args: actArgNames[:stage+1], k: ks.Kernel(kernel.Stage(stage)),
		sizes: []int{shape.TotalSize()}, slot: wrt}
	if stage != stageGrad {
		op.diff, op.diffArgs = ks.Kernel(kernel.Stage(stage+1)), actArgNames[:stage+2]
	}
	op.init(op, actName(a, stage), dt, shape, o)
	return op
}

// WriteHash writes the op's name and, for the double backward, wrt.
func (op *actOp) WriteHash(h hash.Hash) {
	if h == nil {
		return
	}
	fmt.Fprintf(h, "%s wrt %d%s", op.name(), op.wrt, op.reuseHash())
}

// String names the op (and, for the double backward, wrt).
func (op *actOp) String() string {
	if op.stage == stageGrad {
		return fmt.Sprintf("%s{wrt %s}", op.name(), []string{"x", "dy"}[op.wrt])
	}
	return op.name()
}

// DiffWRT: differentiable in every input (see uniform.DiffWRT); the double backward with
// respect to dy, f'(x)·grad, does not depend on dy (see doubleBackwardDiffWRT).
func (op *actOp) DiffWRT(inputs int) []bool {
	if op.stage == stageGrad {
		return doubleBackwardDiffWRT(op.wrt, inputs)
	}
	return op.uniform.DiffWRT(inputs)
}

// SymDiff returns the backward node for the forward map (f's Backward of x and grad), and
// the two double-backward nodes for the backward.
func (op *actOp) SymDiff(inputs gorgonia.Nodes, output, grad *gorgonia.Node) (gorgonia.Nodes, error) {
	if err := checkDiffNodes(op.name(), op.Arity(), inputs, grad); err != nil {
		return nil, err
	}
	if op.stage == stageGrad {
		return nil, check.Errorf(gatejet.ErrParam, op.name(), "", "the double backward is not differentiable")
	}
	// The forward map's gradient is one backward node; the backward's, a double backward
	// per input.
	return gradNodes(op.Arity(), append(append(gorgonia.Nodes{}, inputs...), grad), func(wrt int) gradOp {
		return newActOp(op.a, op.stage+1, wrt, op.outShape, op.outDT, op.inherited())
	})
}

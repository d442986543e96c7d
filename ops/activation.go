package ops

import (
	"fmt"
	"hash"

	"github.com/chewxy/hm"
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
	name := "ops." + actNames[a]
	dt, err := checkArgs(name, arg{"x", x})
	if err != nil {
		return nil, err
	}
	o, err := applyOptions(name, opts)
	if err != nil {
		return nil, err
	}
	s, err := elementwiseShape(name, "x", x.Shape())
	if err != nil {
		return nil, err
	}
	if err := checkOutput(name, dt, s); err != nil {
		return nil, err
	}
	return gorgonia.ApplyOp(newActOp(a, stageForward, 0, s, dt, o), x)
}

func newActivationBackward(a activation, x, dy *gorgonia.Node, opts []Option) (*gorgonia.Node, error) {
	name := "ops." + actNames[a] + "Backward"
	dt, err := checkArgs(name, arg{"x", x}, arg{"dy", dy})
	if err != nil {
		return nil, err
	}
	o, err := applyOptions(name, opts)
	if err != nil {
		return nil, err
	}
	s, err := elementwiseShape(name, "x", x.Shape())
	if err != nil {
		return nil, err
	}
	if !dy.Shape().Eq(s) {
		return nil, check.Errorf(gatejet.ErrShape, name, "dy", "want the shape of x %v, got %v", s, dy.Shape())
	}
	if err := checkOutput(name, dt, s); err != nil {
		return nil, err
	}
	return gorgonia.ApplyOp(newActOp(a, stageBackward, 0, s, dt, o), x, dy)
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

// actOp is an elementwise activation, its backward or its double backward with respect to
// one input. Inputs: x; x, dy; or x, dy, g (the upstream gradient on dx).
type actOp struct {
	seam
	a     activation
	stage actStage
	wrt   int // stageGrad only: 0 x, 1 dy
	shape tensor.Shape
	dt    tensor.Dtype
	nm    string
}

func newActOp(a activation, stage actStage, wrt int, shape tensor.Shape, dt tensor.Dtype, o options) *actOp {
	op := &actOp{a: a, stage: stage, wrt: wrt, shape: shape, dt: dt,
		nm: "ops." + actNames[a] + [...]string{"", "Backward", "BackwardGrad"}[stage]}
	op.configure(o)
	return op
}

func (op *actOp) name() string { return op.nm }

// Arity is 1 (forward), 2 (backward) or 3 (double backward).
func (op *actOp) Arity() int { return int(op.stage) + 1 }

// Type is a → a, a → a → a or a → a → a → a.
func (op *actOp) Type() hm.Type {
	a := hm.TypeVariable('a')
	ts := make([]hm.Type, op.Arity()+1)
	for i := range ts {
		ts[i] = a
	}
	return fnType(ts...)
}

// InferShape checks that every input has the op's shape and returns it. Gorgonia calls it
// when it applies the op; an op built with ReuseOutput is applied once (see ReuseOutput).
func (op *actOp) InferShape(ds ...gorgonia.DimSizer) (tensor.Shape, error) {
	sh, err := sameShapes(op.name(), op.shape, ds, op.Arity())
	return op.claim(op.name(), sh, err)
}

// WriteHash writes the op's name and, for the double backward, wrt.
func (op *actOp) WriteHash(h hash.Hash) {
	if h == nil {
		return
	}
	fmt.Fprintf(h, "%s wrt %d%s", op.name(), op.wrt, op.reuseHash())
}

// Hashcode is the FNV-32a hash of WriteHash.
func (op *actOp) Hashcode() uint32 { return hashOf(op) }

// String names the op (and, for the double backward, wrt).
func (op *actOp) String() string {
	if op.stage == stageGrad {
		return fmt.Sprintf("%s{wrt %s}", op.name(), []string{"x", "dy"}[op.wrt])
	}
	return op.name()
}

// Do computes the output into a new tensor.
func (op *actOp) Do(vals ...gorgonia.Value) (gorgonia.Value, error) {
	return doNew(op, op.dt, op.shape, vals)
}

// UsePreallocDo computes the output into prealloc (a contiguous *tensor.Dense of the output's
// dtype and shape sharing no memory with the inputs).
func (op *actOp) UsePreallocDo(prealloc gorgonia.Value, vals ...gorgonia.Value) (gorgonia.Value, error) {
	return doPrealloc(op, op.dt, op.shape, prealloc, vals)
}

var actArgNames = []string{"x", "dy", "grad"}

func (op *actOp) compute(out *tensor.Dense, vals []gorgonia.Value) error {
	ts, err := values(op.name(), op.dt, op.shape, vals, actArgNames[:op.Arity()]...)
	if err != nil {
		return err
	}
	if op.dt == tensor.Float64 {
		return computeAct[float64](op, out, ts)
	}
	return computeAct[float32](op, out, ts)
}

func computeAct[T float](op *actOp, out *tensor.Dense, ts []*tensor.Dense) error {
	n := op.shape.TotalSize()
	dst := data[T](out, n)
	var in [3][]T
	for i, t := range ts {
		in[i] = data[T](t, n)
		if check.Overlap(dst, in[i]) {
			return check.Errorf(gatejet.ErrParam, op.name(), "prealloc", "the output buffer overlaps an input")
		}
	}
	switch op.stage {
	case stageForward:
		return runActForward(&op.run, op.a, dst, in[0])
	case stageBackward:
		return runActBackward(&op.run, op.a, dst, in[0], in[1])
	default:
		var outs [2][]T
		outs[op.wrt] = dst
		return runActGrad(&op.run, op.a, outs[0], outs[1], in[0], in[1], in[2])
	}
}

func runActForward[T float](rec *pathRecord, a activation, y, x []T) error {
	ints := [1]int{len(x)}
	return run(rec, a.kernels().Kernel(kernel.Forward), ints[:], nil, [][]T{x}, [][]T{y})
}

func runActBackward[T float](rec *pathRecord, a activation, dx, x, dy []T) error {
	ints := [1]int{len(x)}
	return run(rec, a.kernels().Kernel(kernel.Backward), ints[:], nil, [][]T{x, dy}, [][]T{dx})
}

func runActGrad[T float](rec *pathRecord, a activation, gx, gdy, x, dy, g []T) error {
	ints := [1]int{len(x)}
	return run(rec, a.kernels().Kernel(kernel.BackwardGrad), ints[:], nil, [][]T{x, dy, g}, [][]T{gx, gdy})
}

// DiffWRT: the forward map and the backward are differentiable in every input; the double
// backward is not.
func (op *actOp) DiffWRT(inputs int) []bool { return diffMask(inputs, op.stage != stageGrad) }

// SymDiff returns the backward node for the forward map (f's Backward of x and grad), and
// the two double-backward nodes for the backward.
func (op *actOp) SymDiff(inputs gorgonia.Nodes, output, grad *gorgonia.Node) (gorgonia.Nodes, error) {
	if err := checkDiffNodes(op.name(), op.Arity(), inputs, grad); err != nil {
		return nil, err
	}
	switch op.stage {
	case stageForward:
		bop := newActOp(op.a, stageBackward, 0, op.shape, op.dt, op.inherited())
		// The gradient op's output has the op's shape, checked when the op was built; the
		// limit may have been lowered since.
		if err := checkOutput(bop.name(), op.dt, op.shape); err != nil {
			return nil, err
		}
		n, err := gorgonia.ApplyOp(bop, inputs[0], grad)
		if err != nil {
			return nil, err
		}
		return gorgonia.Nodes{n}, nil
	case stageBackward:
		retVal := make(gorgonia.Nodes, 2)
		for wrt := range retVal {
			gop := newActOp(op.a, stageGrad, wrt, op.shape, op.dt, op.inherited())
			if err := checkOutput(gop.name(), op.dt, op.shape); err != nil {
				return nil, err
			}
			n, err := gorgonia.ApplyOp(gop, inputs[0], inputs[1], grad)
			if err != nil {
				return nil, err
			}
			retVal[wrt] = n
		}
		return retVal, nil
	}
	return nil, check.Errorf(gatejet.ErrParam, op.name(), "", "the double backward is not differentiable")
}

// DoDiff is the LispMachine's reverse step: for the forward map it adds f's backward of the
// output's gradient into x's gradient; for the backward it adds both double-backward outputs
// (one kernel call) into the gradients of x and dy. The double backward is not
// differentiable: see nonDiff.
func (op *actOp) DoDiff(ctx gorgonia.ExecutionContext, inputs gorgonia.Nodes, output *gorgonia.Node) error {
	if op.stage == stageGrad {
		return nonDiff(op.name(), output)
	}
	if err := checkDiffNodes(op.name(), op.Arity(), inputs, output); err != nil {
		return err
	}
	up, err := output.Grad()
	if err != nil {
		return check.Errorf(gatejet.ErrParam, op.name(), "output", "no gradient: %v", err)
	}
	vals := make([]gorgonia.Value, 0, 3)
	for _, n := range inputs {
		vals = append(vals, n.Value())
	}
	vals = append(vals, up)
	ts, err := values(op.name(), op.dt, op.shape, vals, actArgNames[:len(vals)]...)
	if err != nil {
		return err
	}
	grads := make([]*tensor.Dense, len(inputs))
	for i := range grads {
		if grads[i], err = newDense(op.name(), op.dt, op.shape); err != nil {
			return err
		}
	}
	if op.dt == tensor.Float64 {
		err = actDiff[float64](op, grads, ts)
	} else {
		err = actDiff[float32](op, grads, ts)
	}
	if err != nil {
		return err
	}
	return accumulate(op.name(), op.dt, op.shape, inputs, actArgNames, grads)
}

func actDiff[T float](op *actOp, grads, ts []*tensor.Dense) error {
	n := op.shape.TotalSize()
	if op.stage == stageForward {
		return runActBackward(&op.diffRun, op.a, data[T](grads[0], n), data[T](ts[0], n), data[T](ts[1], n))
	}
	return runActGrad(&op.diffRun, op.a, data[T](grads[0], n), data[T](grads[1], n),
		data[T](ts[0], n), data[T](ts[1], n), data[T](ts[2], n))
}

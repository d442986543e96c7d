package ops

import (
	"fmt"
	"hash"
	"hash/fnv"

	"github.com/chewxy/hm"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/gatejet/gatejet"
	"github.com/gatejet/gatejet/internal/check"
)

// reshapeOp is a reshape that copies: its output never shares memory with its input.
// Gorgonia v0.9.18's own Reshape may run in place (its UnsafeDo changes the shape of the
// input's tensor), and a TapeMachine that reuses a register behind a reshaped value has then
// been seen to hand a batched product an input that is not the value it was computed from;
// the gradients this package builds, which reshape between batched products, use this one.
// Its gradient is the reshape back, so it is differentiable to any order.
type reshapeOp struct {
	from, to tensor.Shape
	dt       tensor.Dtype
}

// reshapeCopy reshapes n to shape (same number of elements) through a reshapeOp.
func (b *nodeBuilder) reshapeCopy(n *gorgonia.Node, shape ...int) *gorgonia.Node {
	if b.err != nil {
		return nil
	}
	to := tensor.Shape(shape).Clone()
	if n.Shape().TotalSize() != to.TotalSize() {
		b.err = check.Errorf(gatejet.ErrShape, b.op, "", "reshape of %v to %v", n.Shape(), to)
		return nil
	}
	if b.err = checkOutput(b.op, b.dt, to); b.err != nil {
		return nil
	}
	r, err := gorgonia.ApplyOp(&reshapeOp{from: n.Shape().Clone(), to: to, dt: b.dt}, n)
	b.err = err
	return r
}

func (op *reshapeOp) Arity() int { return 1 }

func (op *reshapeOp) Type() hm.Type {
	a := hm.TypeVariable('a')
	return fnType(tensorType(len(op.from), a), tensorType(len(op.to), a))
}

func (op *reshapeOp) InferShape(ds ...gorgonia.DimSizer) (tensor.Shape, error) {
	s, err := shapeOf(op.String(), ds, 0)
	if err != nil {
		return nil, err
	}
	if !s.Eq(op.from) {
		return nil, check.Errorf(gatejet.ErrShape, op.String(), "", "want %v, got %v", op.from, s)
	}
	return op.to.Clone(), nil
}

func (op *reshapeOp) Do(vals ...gorgonia.Value) (gorgonia.Value, error) {
	if len(vals) != 1 {
		return nil, check.Errorf(gatejet.ErrParam, op.String(), "", "want 1 input, got %d", len(vals))
	}
	out, err := newDense(op.String(), op.dt, op.to)
	if err != nil {
		return nil, err
	}
	// Gorgonia may hand a value of one element as a scalar.
	switch x := vals[0].(type) {
	case *gorgonia.F64:
		if op.dt == tensor.Float64 && op.to.TotalSize() == 1 {
			out.Float64s()[0] = float64(*x)
			return out, nil
		}
	case *gorgonia.F32:
		if op.dt == tensor.Float32 && op.to.TotalSize() == 1 {
			out.Float32s()[0] = float32(*x)
			return out, nil
		}
	}
	in, err := dense(op.String(), "x", vals[0], op.dt, op.from)
	if err != nil {
		return nil, err
	}
	if op.dt == tensor.Float64 {
		copy(out.Float64s(), in.Float64s()[:op.to.TotalSize()])
	} else {
		copy(out.Float32s(), in.Float32s()[:op.to.TotalSize()])
	}
	return out, nil
}

func (op *reshapeOp) ReturnsPtr() bool     { return false }
func (op *reshapeOp) CallsExtern() bool    { return false }
func (op *reshapeOp) OverwritesInput() int { return -1 }

func (op *reshapeOp) WriteHash(h hash.Hash) {
	if h != nil {
		fmt.Fprintf(h, "ops.reshape %v→%v %v", op.from, op.to, op.dt)
	}
}

func (op *reshapeOp) Hashcode() uint32 {
	h := fnv.New32a()
	op.WriteHash(h)
	return h.Sum32()
}

func (op *reshapeOp) String() string { return fmt.Sprintf("ops.Reshape%v", op.to) }

func (op *reshapeOp) DiffWRT(inputs int) []bool { return diffMask(inputs, true) }

// SymDiff is the upstream gradient reshaped back.
func (op *reshapeOp) SymDiff(inputs gorgonia.Nodes, output, grad *gorgonia.Node) (gorgonia.Nodes, error) {
	if err := checkDiffNodes(op.String(), 1, inputs, grad); err != nil {
		return nil, err
	}
	r, err := gorgonia.ApplyOp(op.back(), grad)
	return gorgonia.Nodes{r}, err
}

// DoDiff adds the output's gradient, reshaped back, into the input's.
func (op *reshapeOp) DoDiff(ctx gorgonia.ExecutionContext, inputs gorgonia.Nodes, output *gorgonia.Node) error {
	return reverse(ctx, op.String(), op.dt, 1, inputs, output, nil, []string{"x"}, func(vals []gorgonia.Value) ([]*tensor.Dense, error) {
		back, err := op.back().Do(vals...)
		if err != nil {
			return nil, err
		}
		return []*tensor.Dense{back.(*tensor.Dense)}, nil
	})
}

// back is the reshape back, the op's gradient.
func (op *reshapeOp) back() *reshapeOp { return &reshapeOp{from: op.to, to: op.from, dt: op.dt} }

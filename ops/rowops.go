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

// rowOp is one of the row contractions the coordinate jets' gradients are built from, over
// rows [n,K] of P columns: rowScale (x [n,K], Y [n,K,P]) → x_k·Y[k] [n,K,P], and rowDot
// (Y, Z [n,K,P]) → ⟨Y[k], Z[k]⟩ [n,K]. Each is the other's gradient, so they are
// differentiable to any order. One kernel call each (the table's row_scale and row_dot), on
// the CPU only, where a batched product of N·K matrices 1×1 or 1×P would cost a call per row.
type rowOp struct {
	seam
	dot        bool
	n, k, p    int
	rows, wide tensor.Shape // [n,K] and [n,K,P]
	in         []tensor.Shape
}

func newRowOp(dot bool, n, k, p int, dt tensor.Dtype, o options) *rowOp {
	op := &rowOp{dot: dot, n: n, k: k, p: p, rows: tensor.Shape{n, k}, wide: tensor.Shape{n, k, p}}
	id, out, name := kernel.RowScale, op.wide, "ops.rowScale"
	op.in = []tensor.Shape{op.rows, op.wide}
	if dot {
		id, out, name = kernel.RowDot, op.rows, "ops.rowDot"
		op.in = []tensor.Shape{op.wide, op.wide}
	}
	op.init(op, name, dt, out, launch{k: id, ints: []int{n * k, p}, in: op.in}, o)
	return op
}

// rowScale returns x_k·Y[k][c] for x [n,K] and Y [n,K,P].
func (b *nodeBuilder) rowScale(x, y *gorgonia.Node) *gorgonia.Node {
	if b.err != nil {
		return nil
	}
	s := y.Shape()
	return b.apply(newRowOp(false, s[0], s[1], s[2], b.dt, options{}), x, y)
}

// rowDot returns Σ_c Y[k][c]·Z[k][c] [n,K] for Y, Z [n,K,P].
func (b *nodeBuilder) rowDot(y, z *gorgonia.Node) *gorgonia.Node {
	if b.err != nil {
		return nil
	}
	s := y.Shape()
	return b.apply(newRowOp(true, s[0], s[1], s[2], b.dt, options{}), y, z)
}

// Arity is 2.
func (op *rowOp) Arity() int { return 2 }

// Type is Tensor-2 a → Tensor-3 a → Tensor-3 a (rowScale), Tensor-3 a → Tensor-3 a →
// Tensor-2 a (rowDot).
func (op *rowOp) Type() hm.Type {
	a := hm.TypeVariable('a')
	return fnType(tensorType(len(op.in[0]), a), tensorType(3, a), tensorType(len(op.outShape), a))
}

// InferShape checks the inputs' shapes and returns the output's.
func (op *rowOp) InferShape(ds ...gorgonia.DimSizer) (tensor.Shape, error) {
	if len(ds) != 2 {
		return nil, check.Errorf(gatejet.ErrParam, op.name(), "", "want 2 inputs, got %d", len(ds))
	}
	for i, want := range op.in {
		s, err := shapeOf(op.name(), ds, i)
		if err != nil {
			return nil, err
		}
		if !s.Eq(want) {
			return nil, check.Errorf(gatejet.ErrShape, op.name(), "", "input %d: want shape %v, got %v", i, want, s)
		}
	}
	return op.claim(op.name(), op.outShape.Clone(), nil)
}

// WriteHash writes the op's name, sizes and dtype.
func (op *rowOp) WriteHash(h hash.Hash) {
	if h != nil {
		fmt.Fprintf(h, "%s{%d,%d,%d,%v}%s", op.name(), op.n, op.k, op.p, op.outDT, op.reuseHash())
	}
}

func (op *rowOp) String() string { return fmt.Sprintf("%s[%d,%d,%d]", op.name(), op.n, op.k, op.p) }

// values checks the input values.
func (op *rowOp) values(vals []gorgonia.Value) ([]*tensor.Dense, error) {
	if len(vals) != 2 {
		return nil, check.Errorf(gatejet.ErrParam, op.name(), "", "want 2 inputs, got %d", len(vals))
	}
	ts := make([]*tensor.Dense, 2)
	for i, v := range vals {
		t, err := dense(op.name(), []string{"x", "y"}[i], v, op.outDT, op.in[i])
		if err != nil {
			return nil, err
		}
		ts[i] = t
	}
	return ts, nil
}

func (op *rowOp) compute(out *tensor.Dense, vals []gorgonia.Value) error {
	ts, err := op.values(vals)
	if err != nil {
		return err
	}
	return runLaunch(op.name(), &op.run, op.outDT, &op.plan, ts, out)
}

// DiffWRT: differentiable in both inputs.
func (op *rowOp) DiffWRT(inputs int) []bool { return diffMask(inputs, true) }

// SymDiff: for rowScale(x, Y) with upstream G, dx = rowDot(G, Y) and dY = rowScale(x, G);
// for rowDot(Y, Z) with upstream g, dY = rowScale(g, Z) and dZ = rowScale(g, Y).
func (op *rowOp) SymDiff(inputs gorgonia.Nodes, output, grad *gorgonia.Node) (gorgonia.Nodes, error) {
	if err := checkDiffNodes(op.name(), 2, inputs, grad); err != nil {
		return nil, err
	}
	b := nodeBuilder{op: op.name(), dt: op.outDT}
	if op.dot {
		return gorgonia.Nodes{b.rowScale(grad, inputs[1]), b.rowScale(grad, inputs[0])}, b.err
	}
	return gorgonia.Nodes{b.rowDot(grad, inputs[1]), b.rowScale(inputs[0], grad)}, b.err
}

// DoDiff (LispMachine): both inputs' gradients, one kernel call each, added into theirs.
func (op *rowOp) DoDiff(ctx gorgonia.ExecutionContext, inputs gorgonia.Nodes, output *gorgonia.Node) error {
	return reverse(ctx, op.name(), op.outDT, 2, inputs, output, inputs, []string{"x", "y"}, func(vals []gorgonia.Value) ([]*tensor.Dense, error) {
		ts, err := op.values(vals[:2])
		if err != nil {
			return nil, err
		}
		up, err := dense(op.name(), "grad", vals[2], op.outDT, op.outShape)
		if err != nil {
			return nil, err
		}
		grads, err := newDenses(op.name(), op.outDT, op.in...)
		if err != nil {
			return nil, err
		}
		scale := launch{k: kernel.RowScale, ints: op.plan.ints, in: []tensor.Shape{op.rows, op.wide}}
		dot := launch{k: kernel.RowDot, ints: op.plan.ints, in: []tensor.Shape{op.wide, op.wide}}
		var steps [2]struct {
			l   *launch
			in  []*tensor.Dense
			out *tensor.Dense
		}
		if op.dot {
			steps[0].l, steps[0].in, steps[0].out = &scale, []*tensor.Dense{up, ts[1]}, grads[0]
			steps[1].l, steps[1].in, steps[1].out = &scale, []*tensor.Dense{up, ts[0]}, grads[1]
		} else {
			steps[0].l, steps[0].in, steps[0].out = &dot, []*tensor.Dense{up, ts[1]}, grads[0]
			steps[1].l, steps[1].in, steps[1].out = &scale, []*tensor.Dense{ts[0], up}, grads[1]
		}
		for _, s := range steps {
			if err := runLaunch(op.name(), &op.diffRun, op.outDT, s.l, s.in, s.out); err != nil {
				return nil, err
			}
		}
		return grads, nil
	})
}

package ops

import (
	"fmt"
	"hash"
	"hash/fnv"
	"math"
	"unsafe"

	"github.com/chewxy/hm"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/gatejet/gatejet"
	"github.com/gatejet/gatejet/internal/check"
	"github.com/gatejet/gatejet/internal/kernel"
	"github.com/gatejet/gatejet/internal/strided"
	"github.com/gatejet/gatejet/internal/uninit"
)

// nodeDtype returns the element type of a node without panicking (Node.Dtype panics on an
// unexpected type).
func nodeDtype(n *gorgonia.Node) (tensor.Dtype, bool) {
	switch t := n.Type().(type) {
	case tensor.Dtype:
		return t, true
	case gorgonia.TensorType:
		dt, ok := t.Of.(tensor.Dtype)
		return dt, ok
	}
	return tensor.Dtype{}, false
}

// arg is one node argument of a constructor, with the name used in errors.
type arg struct {
	name string
	n    *gorgonia.Node
}

// checkArgs validates what every constructor needs of its node arguments: none is nil, they
// belong to one graph (a constant made by gorgonia.NewConstant belongs to none until it is
// used, and may join any), and all have the same element type, Float64 or Float32. It
// returns that dtype.
func checkArgs(op string, args ...arg) (tensor.Dtype, error) {
	var dt tensor.Dtype
	var g *gorgonia.ExprGraph
	graphArg := ""
	for i, a := range args {
		if a.n == nil {
			return dt, check.Errorf(gatejet.ErrParam, op, a.name, "nil node")
		}
		if ag := a.n.Graph(); ag != nil {
			if g == nil {
				g, graphArg = ag, a.name
			} else if ag != g {
				return dt, check.Errorf(gatejet.ErrParam, op, a.name, "node belongs to another graph than %s", graphArg)
			}
		}
		d, ok := nodeDtype(a.n)
		if !ok || (d != tensor.Float64 && d != tensor.Float32) {
			return dt, check.Errorf(gatejet.ErrDType, op, a.name, "want float64 or float32, got type %v", a.n.Type())
		}
		if i == 0 {
			dt = d
		} else if d != dt {
			return dt, check.Errorf(gatejet.ErrDType, op, a.name, "want %v like %s, got %v", dt, args[0].name, d)
		}
	}
	if g == nil {
		return dt, check.Errorf(gatejet.ErrParam, op, args[0].name, "no argument belongs to a graph (all are free constants)")
	}
	return dt, nil
}

// checkRank reports an ErrRank error unless the node has the given rank.
func checkRank(op, name string, s tensor.Shape, rank int, layout string) error {
	if len(s) != rank {
		return check.Errorf(gatejet.ErrRank, op, name, "want rank %d %s, got shape %v", rank, layout, s)
	}
	return nil
}

// checkPositiveDims reports an ErrShape error if a dim is not positive: Gorgonia cannot hold
// empty tensors.
func checkPositiveDims(op, name string, s tensor.Shape) error {
	for _, d := range s {
		if d < 1 {
			return check.Errorf(gatejet.ErrShape, op, name, "want every dim ≥ 1 (Gorgonia holds no empty tensors), got shape %v", s)
		}
	}
	return nil
}

// shapeOf extracts the shape of the i-th DimSizer passed to InferShape.
func shapeOf(op string, ds []gorgonia.DimSizer, i int) (tensor.Shape, error) {
	if i >= len(ds) {
		return nil, check.Errorf(gatejet.ErrParam, op, "", "want at least %d inputs, got %d", i+1, len(ds))
	}
	s, ok := ds[i].(tensor.Shape)
	if !ok {
		return nil, check.Errorf(gatejet.ErrShape, op, "", "input %d: want a tensor.Shape, got %T", i, ds[i])
	}
	return s, nil
}

// tensorType is the Gorgonia type of a tensor of the given rank over the type variable a.
func tensorType(rank int, a hm.Type) gorgonia.TensorType {
	return gorgonia.TensorType{Dims: rank, Of: a}
}

// fnType builds the type of an op from its argument and result types.
func fnType(ts ...hm.Type) hm.Type { return hm.NewFnType(ts...) }

// dense returns v as a contiguous row-major *tensor.Dense of the given dtype and shape. A view
// (a slice or transpose) is materialised into a fresh tensor (an ErrSize error if that copy
// would exceed gatejet.MaxBytes); anything else that does not fit is an error.
func dense(op, name string, v gorgonia.Value, dt tensor.Dtype, shape tensor.Shape) (*tensor.Dense, error) {
	t, ok := v.(*tensor.Dense)
	if !ok {
		return nil, check.Errorf(gatejet.ErrParam, op, name, "want a *tensor.Dense value, got %T", v)
	}
	if t.Dtype() != dt {
		return nil, check.Errorf(gatejet.ErrDType, op, name, "want %v, got %v", dt, t.Dtype())
	}
	if !t.Shape().Eq(shape) {
		return nil, check.Errorf(gatejet.ErrShape, op, name, "want shape %v, got %v", shape, t.Shape())
	}
	if t.IsMaterializable() || t.RequiresIterator() || !t.DataOrder().IsRowMajor() {
		// Materialising allocates a copy of the value: checked like any buffer.
		if _, err := check.Alloc(op, name, int(dt.Size()), shape...); err != nil {
			return nil, err
		}
		if !t.IsMaterializable() && !t.DataOrder().IsRowMajor() {
			// Stored column-major (tensor.AsFortran), not a view: gathered in logical order.
			return logical(op, name, t, dt, shape)
		}
		m, ok := t.Materialize().(*tensor.Dense)
		if !ok || m.RequiresIterator() || !m.DataOrder().IsRowMajor() {
			return nil, check.Errorf(gatejet.ErrParam, op, name, "cannot lay the value out row-major")
		}
		t = m
	}
	if t.DataSize() < shape.TotalSize() {
		return nil, check.Errorf(gatejet.ErrSize, op, name, "want %d elements, got %d", shape.TotalSize(), t.DataSize())
	}
	return t, nil
}

// output checks that a preallocated value can receive an output of the given dtype and shape
// in place: a contiguous row-major *tensor.Dense that is not a view.
func output(op string, v gorgonia.Value, dt tensor.Dtype, shape tensor.Shape) (*tensor.Dense, error) {
	t, ok := v.(*tensor.Dense)
	if !ok {
		return nil, check.Errorf(gatejet.ErrParam, op, "prealloc", "want a *tensor.Dense, got %T", v)
	}
	if t.Dtype() != dt {
		return nil, check.Errorf(gatejet.ErrDType, op, "prealloc", "want %v, got %v", dt, t.Dtype())
	}
	if !t.Shape().Eq(shape) {
		return nil, check.Errorf(gatejet.ErrShape, op, "prealloc", "want shape %v, got %v", shape, t.Shape())
	}
	if t.IsMaterializable() || t.RequiresIterator() || !t.DataOrder().IsRowMajor() || t.DataSize() < shape.TotalSize() {
		return nil, check.Errorf(gatejet.ErrParam, op, "prealloc", "want a contiguous row-major tensor that is not a view")
	}
	return t, nil
}

// checkOutput reports an ErrSize error, naming the size, when a buffer of the given dtype and
// shape would exceed gatejet.MaxBytes. Every constructor and SymDiff calls it for the output
// of the op it builds, so a node whose output cannot be allocated is refused when it is built
// rather than ending the process (an out-of-memory error cannot be recovered) when it runs.
func checkOutput(op string, dt tensor.Dtype, shape tensor.Shape) error {
	_, err := check.Alloc(op, "output", int(dt.Size()), shape...)
	return err
}

// newDense allocates a zeroed row-major tensor, or returns checkOutput's ErrSize error: the
// limit may have been lowered since the node was built.
func newDense(op string, dt tensor.Dtype, shape tensor.Shape) (*tensor.Dense, error) {
	if err := checkOutput(op, dt, shape); err != nil {
		return nil, err
	}
	return tensor.New(tensor.Of(dt), tensor.WithShape(shape.Clone()...)), nil
}

// newOutput is newDense for an op's output, which its compute overwrites entirely: the memory
// is not zeroed (see package uninit; TestOutputsFullyWritten checks every op's compute).
func newOutput(op string, dt tensor.Dtype, shape tensor.Shape) (*tensor.Dense, error) {
	if err := checkOutput(op, dt, shape); err != nil {
		return nil, err
	}
	n := shape.TotalSize()
	if n == 0 {
		return newDense(op, dt, shape)
	}
	var backing any
	if dt == tensor.Float64 {
		backing = uninit.Float64s(n)
	} else {
		backing = uninit.Float32s(n)
	}
	return tensor.New(tensor.WithShape(shape.Clone()...), tensor.WithBacking(backing)), nil
}

// data returns the first size elements of a contiguous tensor as a []T (T matching its
// dtype, which the caller has checked).
func data[T gatejet.Float](t *tensor.Dense, size int) []T {
	var z T
	var p unsafe.Pointer
	switch any(z).(type) {
	case float64:
		p = unsafe.Pointer(unsafe.SliceData(t.Float64s()))
	default:
		p = unsafe.Pointer(unsafe.SliceData(t.Float32s()))
	}
	return unsafe.Slice((*T)(p), size)
}

// checkDiffNodes checks the nodes Gorgonia passes to SymDiff or DoDiff: want inputs, none of
// them nil, and the further nodes (the output, or the upstream gradient) not nil either, so
// that a careless direct call is an ErrParam error rather than a nil dereference.
func checkDiffNodes(op string, want int, inputs gorgonia.Nodes, more ...*gorgonia.Node) error {
	if len(inputs) != want {
		return check.Errorf(gatejet.ErrParam, op, "", "want %d inputs, got %d", want, len(inputs))
	}
	for i, n := range inputs {
		if n == nil {
			return check.Errorf(gatejet.ErrParam, op, "inputs", "input %d is a nil node", i)
		}
	}
	for _, n := range more {
		if n == nil {
			return check.Errorf(gatejet.ErrParam, op, "", "nil node")
		}
	}
	return nil
}

// diffMask is an op's DiffWRT: differentiable or not in each of its inputs (none for a
// negative count).
func diffMask(inputs int, differentiable bool) []bool {
	if inputs < 0 {
		return nil
	}
	d := make([]bool, inputs)
	for i := range d {
		d[i] = differentiable
	}
	return d
}

// hashOf is the FNV-32a hash of what an op writes with WriteHash.
func hashOf(op interface{ WriteHash(hash.Hash) }) uint32 {
	h := fnv.New32a()
	op.WriteHash(h)
	return h.Sum32()
}

// writeFloats writes the exact bits of each float, so that parameters that differ in any bit
// hash differently.
func writeFloats(h hash.Hash, name string, fs []float64) {
	fmt.Fprintf(h, " %s[%d]", name, len(fs))
	for _, f := range fs {
		fmt.Fprintf(h, ":%016x", math.Float64bits(f))
	}
}

// nonDiff is the DoDiff of an op that is not differentiable (a gradient op). A LispMachine
// calls DoDiff on every op of the graph; when the op's output does not reach the cost its
// gradient is zero and contributes nothing, so that is accepted. A nonzero gradient would
// need the next order of derivatives, which this package does not have: an ErrParam error,
// rather than a silently wrong gradient. ctx is the machine's (see newDiffIO).
func nonDiff(ctx gorgonia.ExecutionContext, name string, output *gorgonia.Node) error {
	if output == nil {
		return check.Errorf(gatejet.ErrParam, name, "output", "nil node")
	}
	g, err := output.Grad()
	if err != nil {
		return nil // no gradient at all: nothing flows back
	}
	io, err := newDiffIO(ctx, name)
	if err != nil {
		return err
	}
	if g, err = io.read(output, g, "output"); err != nil {
		return err
	}
	t, ok := g.(*tensor.Dense)
	if !ok {
		return check.Errorf(gatejet.ErrParam, name, "", "not differentiable (gradient %T)", g)
	}
	switch s := t.Data().(type) {
	case []float64:
		for _, x := range s {
			if x != 0 {
				return check.Errorf(gatejet.ErrParam, name, "", "not differentiable, but its output's gradient is not zero")
			}
		}
	case []float32:
		for _, x := range s {
			if x != 0 {
				return check.Errorf(gatejet.ErrParam, name, "", "not differentiable, but its output's gradient is not zero")
			}
		}
	}
	return nil
}

// diffIO is how DoDiff reaches the values and gradients of the nodes it is given: read
// returns v, the value or gradient of node n (arg names it in errors), as a value Go may read,
// and add adds src into dst, the gradient of input n. newDiffIO picks one per DoDiff call: in
// the default build, and on a machine without devices, hostIO, the nodes' values in place;
// under the build tag cuda, on a CUDA machine, one that reaches device values through host
// copies (cudado_cuda.go).
type diffIO interface {
	read(n *gorgonia.Node, v gorgonia.Value, arg string) (gorgonia.Value, error)
	add(name, arg string, n *gorgonia.Node, dst gorgonia.Value, dt tensor.Dtype, src *tensor.Dense) error
}

// hostIO reads and accumulates in place: every value is host memory.
type hostIO struct{}

func (hostIO) read(_ *gorgonia.Node, v gorgonia.Value, _ string) (gorgonia.Value, error) {
	return v, nil
}

func (hostIO) add(name, arg string, _ *gorgonia.Node, dst gorgonia.Value, dt tensor.Dtype, src *tensor.Dense) error {
	return strided.AddInto(name, arg, dst, dt, src.Shape(), src)
}

// computer is what every op of this package does: validate its input values and write its
// output into a tensor of the output's dtype and shape.
type computer interface {
	name() string
	compute(out *tensor.Dense, vals []gorgonia.Value) error
	outBuf() *outputBuf
	WriteHash(h hash.Hash)
}

// reverse is the LispMachine's reverse step (DoDiff) of a differentiable op with arity inputs:
// it checks the nodes, reads the output's gradient, lets grads compute one gradient per input
// from the values of the nodes from (the inputs, or the output) followed by that gradient,
// and adds them into the inputs' gradients (names are the inputs' names, for errors). Values
// are read and gradients accumulated through newDiffIO(ctx), ctx being the machine's.
func reverse(ctx gorgonia.ExecutionContext, name string, dt tensor.Dtype, arity int, inputs gorgonia.Nodes, output *gorgonia.Node,
	from gorgonia.Nodes, names []string, grads func(vals []gorgonia.Value) ([]*tensor.Dense, error)) error {
	if err := checkDiffNodes(name, arity, inputs, output); err != nil {
		return err
	}
	up, err := output.Grad()
	if err != nil {
		return check.Errorf(gatejet.ErrParam, name, "output", "no gradient: %v", err)
	}
	io, err := newDiffIO(ctx, name)
	if err != nil {
		return err
	}
	if up, err = io.read(output, up, "output"); err != nil {
		return err
	}
	vals := make([]gorgonia.Value, 0, len(from)+1)
	for i, n := range from {
		arg := "output"
		if n != output {
			arg = names[i]
		}
		v, err := io.read(n, n.Value(), arg)
		if err != nil {
			return err
		}
		vals = append(vals, v)
	}
	gs, err := grads(append(vals, up))
	if err != nil {
		return err
	}
	for i, n := range inputs {
		g, err := n.Grad()
		if err != nil {
			return check.Errorf(gatejet.ErrParam, name, names[i], "no gradient to accumulate into: %v", err)
		}
		if err := io.add(name, names[i], n, g, dt, gs[i]); err != nil {
			return err
		}
	}
	return nil
}

// newDenses allocates one zeroed tensor of each shape (see newDense).
func newDenses(op string, dt tensor.Dtype, shapes ...tensor.Shape) ([]*tensor.Dense, error) {
	ts := make([]*tensor.Dense, len(shapes))
	for i, s := range shapes {
		var err error
		if ts[i], err = newDense(op, dt, s); err != nil {
			return nil, err
		}
	}
	return ts, nil
}

// values checks the values of the op's dtype and shape, one for each name, and returns them
// in ts[:len(names)] (ts holds at most kernel.MaxIn).
func values(ts *[kernel.MaxIn]*tensor.Dense, name string, dt tensor.Dtype, shape tensor.Shape, vals []gorgonia.Value, names ...string) ([]*tensor.Dense, error) {
	if len(vals) != len(names) || len(vals) > len(ts) {
		return nil, check.Errorf(gatejet.ErrParam, name, "", "want %d inputs, got %d", len(names), len(vals))
	}
	for i, v := range vals {
		t, err := dense(name, names[i], v, dt, shape)
		if err != nil {
			return nil, err
		}
		ts[i] = t
	}
	return ts[:len(vals)], nil
}

// errOverlap is the error of an output buffer that overlaps an input.
func errOverlap(op string) error {
	return check.Errorf(gatejet.ErrParam, op, "prealloc", "the output buffer overlaps an input")
}

// gradOp is a gradient op that a SymDiff builds.
type gradOp interface {
	gorgonia.Op
	name() string
	resultShape() tensor.Shape
	dtype() tensor.Dtype
}

// gradNodes is the end of a SymDiff: it applies the gradient op newOp(wrt) to children for
// each of n inputs wrt. Each op's output was checked against gatejet.MaxBytes when the op it
// differentiates was built; it is checked again, since the limit may have been lowered since.
func gradNodes(n int, children gorgonia.Nodes, newOp func(wrt int) gradOp) (gorgonia.Nodes, error) {
	retVal := make(gorgonia.Nodes, n)
	for wrt := range retVal {
		op := newOp(wrt)
		if err := checkOutput(op.name(), op.dtype(), op.resultShape()); err != nil {
			return nil, err
		}
		r, err := gorgonia.ApplyOp(op, children...)
		if err != nil {
			return nil, err
		}
		retVal[wrt] = r
	}
	return retVal, nil
}

// wrtOf is what a gradient op holds of the forward op it differentiates: fwd, the input
// wrt, and the tag of the gradient's kind ("grad", "VJP") for the hash.
type wrtOf[F interface{ WriteHash(hash.Hash) }] struct {
	fwd F
	wrt int
	tag string
}

// WriteHash writes the hash of the gradient op: that of fwd, then the tag and wrt.
func (g *wrtOf[F]) WriteHash(h hash.Hash) {
	if h == nil {
		return
	}
	g.fwd.WriteHash(h)
	fmt.Fprintf(h, " %s wrt %d", g.tag, g.wrt)
}

// logical returns t (not a view, dtype dt) laid out row-major in its logical order (a
// gathered copy unless its storage already is that order).
func logical(op, name string, t *tensor.Dense, dt tensor.Dtype, shape tensor.Shape) (*tensor.Dense, error) {
	var backing any
	var err error
	if dt == tensor.Float64 {
		backing, err = strided.Logical[float64](op, name, t)
	} else {
		backing, err = strided.Logical[float32](op, name, t)
	}
	if err != nil {
		return nil, err
	}
	return tensor.New(tensor.WithShape(shape.Clone()...), tensor.WithBacking(backing)), nil
}

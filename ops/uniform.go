package ops

import (
	"github.com/chewxy/hm"
	"github.com/gatejet/gatejet/internal/kernel"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/gatejet/gatejet"
	"github.com/gatejet/gatejet/internal/check"
)

// uniform is the seam of an op whose inputs all have the shape and dtype of its output, and
// which computes its output with one kernel call over the inputs in order: the softmax-family
// ops along an axis and the activations, their backward and double backward. A differentiable
// one computes all its inputs' gradients in DoDiff with one call of a second kernel.
type uniform struct {
	seam
	args   []string  // the inputs' names, in order
	k      kernel.ID // the forward kernel
	sizes  []int     // the kernels' sizes
	floats []float64 // the kernels' parameters
	slot   int       // the kernel output the op computes (a double backward computes one of two)
	// DoDiff: the kernel (0 for an op that is not differentiable), the names of its values
	// (those of the inputs, or of the output when fromOutput, then of the output's gradient).
	diff       kernel.ID
	diffArgs   []string
	fromOutput bool
}

// init sets up the seam of an op built on uniform (its fields set): its launch is the forward
// kernel over the inputs in order, every one of the output's shape, keeping output slot.
func (u *uniform) init(self computer, name string, dt tensor.Dtype, shape tensor.Shape, o options) {
	in := make([]tensor.Shape, len(u.args))
	for i := range in {
		in[i] = shape
	}
	u.seam.init(self, name, dt, shape, launch{k: u.k, ints: u.sizes, floats: u.floats, in: in, out: u.slot}, o)
}

// Arity is the number of inputs.
func (u *uniform) Arity() int { return len(u.args) }

// Type is a → … → a, one a per input and one for the output.
func (u *uniform) Type() hm.Type {
	a := hm.TypeVariable('a')
	ts := make([]hm.Type, u.Arity()+1)
	for i := range ts {
		ts[i] = a
	}
	return fnType(ts...)
}

// InferShape checks that every input has the op's shape and returns it. Gorgonia calls it
// when it applies the op; an op built with ReuseOutput is applied once (see ReuseOutput).
func (u *uniform) InferShape(ds ...gorgonia.DimSizer) (tensor.Shape, error) {
	sh, err := sameShapes(u.nm, u.outShape, ds, u.Arity())
	return u.claim(u.nm, sh, err)
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

func (u *uniform) compute(out *tensor.Dense, vals []gorgonia.Value) error {
	var buf [kernel.MaxIn]*tensor.Dense
	ts, err := values(&buf, u.nm, u.outDT, u.outShape, vals, u.args...)
	if err != nil {
		return err
	}
	return runLaunch(u.nm, &u.run, u.outDT, &u.plan, ts, out)
}

// DiffWRT: differentiable in every input. A double backward, which has no gradient, says so
// too, so that a gradient through it fails loudly in SymDiff rather than being dropped as if
// the op were a constant.
func (u *uniform) DiffWRT(inputs int) []bool { return diffMask(inputs, true) }

// doubleBackwardDiffWRT is the DiffWRT of a double backward with respect to input wrt (0: y
// or x, 1: dy), whose inputs are (y or x, dy, grad): the backward is linear in dy, so its
// gradient with respect to dy does not depend on dy.
func doubleBackwardDiffWRT(wrt, inputs int) []bool {
	m := diffMask(inputs, true)
	if wrt == 1 && len(m) > 1 {
		m[1] = false
	}
	return m
}

// DoDiff is the LispMachine's reverse step: one call of the op's DoDiff kernel computes the
// gradients of every input, which are added into theirs. An op that is not differentiable
// accepts a zero output gradient and reports an error otherwise (see nonDiff).
func (u *uniform) DoDiff(ctx gorgonia.ExecutionContext, inputs gorgonia.Nodes, output *gorgonia.Node) error {
	if u.diff == 0 {
		return nonDiff(ctx, u.nm, output)
	}
	from := inputs
	if u.fromOutput {
		from = gorgonia.Nodes{output}
	}
	return reverse(ctx, u.nm, u.outDT, u.Arity(), inputs, output, from, u.args, func(vals []gorgonia.Value) ([]*tensor.Dense, error) {
		var buf [kernel.MaxIn]*tensor.Dense
		ts, err := values(&buf, u.nm, u.outDT, u.outShape, vals, u.diffArgs...)
		if err != nil {
			return nil, err
		}
		shapes := make([]tensor.Shape, u.Arity())
		for i := range shapes {
			shapes[i] = u.outShape
		}
		grads, err := newDenses(u.nm, u.outDT, shapes...)
		if err != nil {
			return nil, err
		}
		if u.outDT == tensor.Float64 {
			return grads, diffUniform[float64](u, grads, ts)
		}
		return grads, diffUniform[float32](u, grads, ts)
	})
}

func diffUniform[T gatejet.Float](u *uniform, grads, ts []*tensor.Dense) error {
	n := u.outShape.TotalSize()
	var in [3][]T
	var outs [2][]T
	for i, t := range ts {
		in[i] = data[T](t, n)
	}
	for i, g := range grads {
		outs[i] = data[T](g, n)
	}
	return run(u.nm, &u.diffRun, u.diff, u.sizes, u.floats, in[:len(ts)], outs[:len(grads)])
}

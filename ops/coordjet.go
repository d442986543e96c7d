package ops

import (
	"fmt"
	"hash"
	"strings"

	"github.com/chewxy/hm"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/gatejet/gatejet"
	"github.com/gatejet/gatejet/internal/check"
	"github.com/gatejet/gatejet/internal/dispatch"
	"github.com/gatejet/gatejet/internal/kernel"
	"github.com/gatejet/gatejet/softmaxjet"
)

// Coordinate jets: the jets of ẑ_c = Σ_k ζ_k(ℓ)·d_kc(t_k) over the 2K primaries
// p = (ℓ_1..ℓ_K, t_1..t_K) of each row, where each atom's decoded row depends on its latent
// coordinate t_k. They take the decoded rows and their derivatives in t as inputs,
// d0 = d(t), d1 = ∂d/∂t, d2 = ∂²d/∂t², each [n,K,P] (graphs.MonomialJets and
// graphs.BSplineJets build them), so any basis works and gradients reach its coefficients
// through the graph. Rows a < K of a channel are the logits', rows K + k the coordinates'.
// The formulas are in docs/math.md ("Latent coordinates"); the kernels run on the CPU and,
// like the row jets', on the device.

// SoftmaxCoordJetFirst returns the first channel over the primaries [n,2K,P]: row a < K is
// ∂ẑ/∂logits_a (SoftmaxJetFirst over d0), row K+k is ∂ẑ/∂t_k = ζ_k·d1[k]. logits is [n,K],
// d0 and d1 [n,K,P], all Float64 or all Float32; invTau as for SoftmaxJetValue.
// Differentiable in every input, twice (see the ops package's documentation).
func SoftmaxCoordJetFirst(logits, d0, d1 *gorgonia.Node, invTau float64, opts ...Option) (*gorgonia.Node, error) {
	return coordJet(kernel.First, kernel.SoftmaxGate, gorgonia.Nodes{logits, d0, d1}, softmaxParams(invTau), opts)
}

// SoftmaxCoordJetSecond returns the second channel over the primaries [n,2K,2K,P], symmetric:
// the logit block is SoftmaxJetSecond over d0, the mixed blocks ∂ζ_k/∂logits_a·d1[k], the
// coordinate block diagonal, ζ_k·d2[k]. d2 is [n,K,P] like d0. Differentiable in every input.
func SoftmaxCoordJetSecond(logits, d0, d1, d2 *gorgonia.Node, invTau float64, opts ...Option) (*gorgonia.Node, error) {
	return coordJet(kernel.Second, kernel.SoftmaxGate, gorgonia.Nodes{logits, d0, d1, d2}, softmaxParams(invTau), opts)
}

// SoftmaxCoordJetHVP returns the Hessian-vector product over the primaries [n,2K,P],
// hvp[r][a][c] = Σ_b second[r][a][b][c]·v[r][b], without building the second channel; v is
// [n,2K] (the logits' direction, then the coordinates'). Differentiable in every input.
func SoftmaxCoordJetHVP(logits, d0, d1, d2, v *gorgonia.Node, invTau float64, opts ...Option) (*gorgonia.Node, error) {
	return coordJet(kernel.HVP, kernel.SoftmaxGate, gorgonia.Nodes{logits, d0, d1, d2, v}, softmaxParams(invTau), opts)
}

// SoftmaxCoordJetGaussNewton returns the Gauss-Newton slabs over the primaries [n,2K,2K],
// the first channel contracted with itself over the P columns, without building it.
// Differentiable in every input, twice.
func SoftmaxCoordJetGaussNewton(logits, d0, d1 *gorgonia.Node, invTau float64, opts ...Option) (*gorgonia.Node, error) {
	return coordJet(kernel.GaussNewton, kernel.SoftmaxGate, gorgonia.Nodes{logits, d0, d1}, softmaxParams(invTau), opts)
}

// LogisticCoordJetFirst is SoftmaxCoordJetFirst for the logistic gate
// ζ_k = σ(alpha[k]·logits_k + beta[k]); alpha and beta as for LogisticJetValue.
func LogisticCoordJetFirst(logits, d0, d1 *gorgonia.Node, alpha, beta []float64, opts ...Option) (*gorgonia.Node, error) {
	return coordJet(kernel.First, kernel.LogisticGate, gorgonia.Nodes{logits, d0, d1}, logisticParams(alpha, beta), opts)
}

// LogisticCoordJetSecond is SoftmaxCoordJetSecond for the logistic gate (its logit block is
// diagonal, and so are the mixed blocks).
func LogisticCoordJetSecond(logits, d0, d1, d2 *gorgonia.Node, alpha, beta []float64, opts ...Option) (*gorgonia.Node, error) {
	return coordJet(kernel.Second, kernel.LogisticGate, gorgonia.Nodes{logits, d0, d1, d2}, logisticParams(alpha, beta), opts)
}

// LogisticCoordJetHVP is SoftmaxCoordJetHVP for the logistic gate.
func LogisticCoordJetHVP(logits, d0, d1, d2, v *gorgonia.Node, alpha, beta []float64, opts ...Option) (*gorgonia.Node, error) {
	return coordJet(kernel.HVP, kernel.LogisticGate, gorgonia.Nodes{logits, d0, d1, d2, v}, logisticParams(alpha, beta), opts)
}

// LogisticCoordJetGaussNewton is SoftmaxCoordJetGaussNewton for the logistic gate.
func LogisticCoordJetGaussNewton(logits, d0, d1 *gorgonia.Node, alpha, beta []float64, opts ...Option) (*gorgonia.Node, error) {
	return coordJet(kernel.GaussNewton, kernel.LogisticGate, gorgonia.Nodes{logits, d0, d1}, logisticParams(alpha, beta), opts)
}

// coordArgs are the names of a coordinate jet's inputs, in order; channel c takes the first
// c.CoordIn() of them.
var coordArgs = []string{"logits", "d0", "d1", "d2", "v"}

// coordName is the name of the ops of gate gk's coordinate jet of channel c:
// "ops.SoftmaxCoordJetFirst" for the softmax gate (Title "SoftmaxJet").
func coordName(gk *kernel.Gate, c channel) string {
	return "ops." + strings.TrimSuffix(gk.Title, "Jet") + "CoordJet" + c.String()
}

// coordJet builds the node of gate gk's coordinate jet of channel c on the input nodes in:
// the one constructor of every gate's coordinate-jet ops.
func coordJet(c channel, gk *kernel.Gate, in gorgonia.Nodes, params gateParams, opts []Option) (*gorgonia.Node, error) {
	op := coordName(gk, c)
	args := make([]arg, len(in))
	shapes := make([]tensor.Shape, len(in))
	for i, n := range in {
		args[i] = arg{coordArgs[i], n}
	}
	dt, err := checkArgs(op, args...)
	if err != nil {
		return nil, err
	}
	for i, n := range in {
		shapes[i] = n.Shape()
	}
	sh, err := coordShape(op, c, shapes)
	if err != nil {
		return nil, err
	}
	o, err := applyOptions(op, opts)
	if err != nil {
		return nil, err
	}
	if err := checkCoordOutput(op, c, dt, sh); err != nil {
		return nil, err
	}
	floats, err := params(op, sh.K)
	if err != nil {
		return nil, err
	}
	g, err := newGate(op, gk, sh.K, floats)
	if err != nil {
		return nil, err
	}
	return gorgonia.ApplyOp(newCoordOp(g, c, sh, dt, o), in...)
}

// checkCoordOutput reports an ErrSize error when channel c's output, or the direction v
// [n,2K], would overflow int or exceed gatejet.MaxBytes; after it, the shapes with 2K are safe
// to compute.
func checkCoordOutput(op string, c channel, dt tensor.Dtype, sh softmaxjet.Shape) error {
	size := int(dt.Size())
	dims := map[kernel.Dim][]int{
		kernel.N2KP:   {sh.N, 2, sh.K, sh.P},
		kernel.N2K2KP: {sh.N, 2, sh.K, 2, sh.K, sh.P},
		kernel.N2K2K:  {sh.N, 2, sh.K, 2, sh.K},
	}[c.CoordOut()]
	if _, err := check.Alloc(op, "output", size, dims...); err != nil {
		return err
	}
	_, err := check.Alloc(op, "v", size, sh.N, 2, sh.K)
	return err
}

// coordShape checks the shapes of a coordinate jet's inputs against each other: logits
// [n,K], d0, d1 (and d2) [n,K,P], v [n,2K]; every dim at least 1.
func coordShape(op string, c channel, shapes []tensor.Shape) (softmaxjet.Shape, error) {
	if len(shapes) != c.CoordIn() {
		return softmaxjet.Shape{}, check.Errorf(gatejet.ErrParam, op, "", "want %d inputs, got %d", c.CoordIn(), len(shapes))
	}
	ls, ds := shapes[0], shapes[1]
	// d0 against logits before the other inputs, so that every channel names d0 when its n or
	// K disagrees with logits.
	if err := checkLogitsAnd(op, "d0", ls, ds); err != nil {
		return softmaxjet.Shape{}, err
	}
	for i, s := range shapes[2:] {
		name := coordArgs[i+2]
		if name == "v" {
			if err := checkRank(op, name, s, 2, "[n,2K]"); err != nil {
				return softmaxjet.Shape{}, err
			}
			if s[0] != ls[0] || ls[1] > s[1]/2 || s[1] != 2*ls[1] {
				return softmaxjet.Shape{}, check.Errorf(gatejet.ErrShape, op, name, "want [n,2K] = [%d,2·%d] for logits %v, got %v", ls[0], ls[1], ls, s)
			}
			continue
		}
		if err := checkRank(op, name, s, 3, "[n,K,P]"); err != nil {
			return softmaxjet.Shape{}, err
		}
		if !s.Eq(ds) {
			return softmaxjet.Shape{}, check.Errorf(gatejet.ErrShape, op, name, "want the shape of d0 %v, got %v", ds, s)
		}
	}
	return batchShape(op, "d0", ls, ds)
}

// coordOp computes one coordinate jet of a gate: channel c over the 2K primaries, from
// logits [n,K], d0, d1 [, d2] [n,K,P] [, v [n,2K]], with one kernel call. Its gradient is a
// composition of the row-jet ops (coordVJP). Shapes and dtype are fixed when the node is built.
type coordOp struct {
	seam
	g  *gate
	c  channel
	sh softmaxjet.Shape
	dt tensor.Dtype
	in []tensor.Shape // the inputs' shapes, in order
}

func newCoordOp(g *gate, c channel, sh softmaxjet.Shape, dt tensor.Dtype, o options) *coordOp {
	l, d := tensor.Shape{sh.N, sh.K}, tensor.Shape{sh.N, sh.K, sh.P}
	in := []tensor.Shape{l, d, d, d, {sh.N, 2 * sh.K}}[:c.CoordIn()]
	op := &coordOp{g: g, c: c, sh: sh, dt: dt, in: in}
	op.init(op, coordName(g.k, c), dt, c.CoordOut().Shape(sh.N, sh.K, sh.P),
		launch{k: g.k.CoordKernel(c), ints: []int{sh.N, sh.K, sh.P}, floats: g.floats, in: in}, o)
	return op
}

// Arity is 3 (logits, d0, d1), 4 for the second channel (and d2), 5 for the HVP (and v).
func (op *coordOp) Arity() int { return len(op.in) }

// Type is Tensor-2 a → Tensor-3 a → … → Tensor-r a, r the rank of the channel.
func (op *coordOp) Type() hm.Type {
	a := hm.TypeVariable('a')
	ts := make([]hm.Type, 0, len(op.in)+1)
	for _, s := range op.in {
		ts = append(ts, tensorType(len(s), a))
	}
	return fnType(append(ts, tensorType(len(op.outShape), a))...)
}

// InferShape checks the input shapes and returns the channel's. Gorgonia calls it when it
// applies the op; an op built with ReuseOutput is applied once (see ReuseOutput).
func (op *coordOp) InferShape(ds ...gorgonia.DimSizer) (tensor.Shape, error) {
	if len(ds) != op.Arity() {
		return nil, check.Errorf(gatejet.ErrParam, op.name(), "", "want %d inputs, got %d", op.Arity(), len(ds))
	}
	shapes := make([]tensor.Shape, len(ds))
	for i := range ds {
		s, err := shapeOf(op.name(), ds, i)
		if err != nil {
			return nil, err
		}
		shapes[i] = s
	}
	sh, err := coordShape(op.name(), op.c, shapes)
	if err == nil && sh != op.sh {
		err = check.Errorf(gatejet.ErrShape, op.name(), "", "the op was built for [n,K,P] = [%d,%d,%d], got inputs %v", op.sh.N, op.sh.K, op.sh.P, shapes)
	}
	return op.claim(op.name(), op.outShape.Clone(), err)
}

// WriteHash writes the op's name, its kernel's name and the gate parameters (exact bits).
func (op *coordOp) WriteHash(h hash.Hash) {
	if h == nil {
		return
	}
	fmt.Fprintf(h, "%s/%s%s", op.name(), op.plan.k, op.reuseHash())
	op.g.writeHash(h)
}

// String names the op and its gate parameters.
func (op *coordOp) String() string { return fmt.Sprintf("%s{%v}", op.name(), op.g) }

// coordValues holds the checked values of a coordinate jet's inputs and an upstream gradient.
type coordValues [kernel.MaxIn + 1]*tensor.Dense

// inputs checks the values of the op's inputs and, withUp, of an upstream gradient of the
// channel's shape after them, into ts, and returns them as a slice of ts.
func (op *coordOp) inputs(ts *coordValues, vals []gorgonia.Value, withUp bool) ([]*tensor.Dense, error) {
	want := op.Arity()
	if withUp {
		want++
	}
	if len(vals) != want {
		return nil, check.Errorf(gatejet.ErrParam, op.name(), "", "want %d inputs, got %d", want, len(vals))
	}
	for i, v := range vals {
		name, shape := "grad", op.outShape
		if i < op.Arity() {
			name, shape = coordArgs[i], op.in[i]
		}
		t, err := dense(op.name(), name, v, op.dt, shape)
		if err != nil {
			return nil, err
		}
		ts[i] = t
	}
	return ts[:want], nil
}

func (op *coordOp) compute(out *tensor.Dense, vals []gorgonia.Value) error {
	var buf coordValues
	ts, err := op.inputs(&buf, vals, false)
	if err != nil {
		return err
	}
	return runLaunch(op.name(), &op.run, op.dt, &op.plan, ts, out)
}

// DiffWRT: differentiable in every input.
func (op *coordOp) DiffWRT(inputs int) []bool { return diffMask(inputs, true) }

// SymDiff returns the gradient of ⟨grad, output⟩ with respect to each input, built from the
// row-jet ops (coordVJP).
func (op *coordOp) SymDiff(inputs gorgonia.Nodes, output, grad *gorgonia.Node) (gorgonia.Nodes, error) {
	if err := checkDiffNodes(op.name(), op.Arity(), inputs, grad); err != nil {
		return nil, err
	}
	b := nodeBuilder{op: op.name(), dt: op.dt}
	grads := coordVJP(&b, op, inputs, grad)
	return grads, b.err
}

// DoDiff is the LispMachine's reverse step: it builds the gradient of SymDiff on a graph of
// its own over the values, runs it, and adds the results into the inputs' gradients. Its
// path (LastDiffPath) is that graph's: a fallback if an op of it fell back, the GPU if one
// ran there, the CPU otherwise.
func (op *coordOp) DoDiff(ctx gorgonia.ExecutionContext, inputs gorgonia.Nodes, output *gorgonia.Node) error {
	return reverse(ctx, op.name(), op.dt, op.Arity(), inputs, output, inputs, coordArgs, func(vals []gorgonia.Value) ([]*tensor.Dense, error) {
		var buf coordValues
		ts, err := op.inputs(&buf, vals, true)
		if err != nil {
			return nil, err
		}
		g := gorgonia.NewGraph()
		nodes := make(gorgonia.Nodes, len(ts))
		for i, t := range ts {
			// Named apart: Gorgonia merges unnamed inputs of one shape into one node.
			name := "grad"
			if i < op.Arity() {
				name = coordArgs[i]
			}
			nodes[i] = gorgonia.NewTensor(g, op.dt, t.Dims(), gorgonia.WithShape(t.Shape().Clone()...), gorgonia.WithName(name), gorgonia.WithValue(t.Clone()))
		}
		b := nodeBuilder{op: op.name(), dt: op.dt}
		grads := coordVJP(&b, op, nodes[:op.Arity()], nodes[op.Arity()])
		if b.err != nil {
			return nil, b.err
		}
		m := gorgonia.NewTapeMachine(g)
		defer m.Close()
		if err := m.RunAll(); err != nil {
			return nil, err
		}
		op.diffRun.record(innerPath(g))
		out := make([]*tensor.Dense, len(grads))
		for i, n := range grads {
			d, err := dense(op.name(), coordArgs[i]+".grad", n.Value(), op.dt, op.in[i])
			if err != nil {
				return nil, err
			}
			// The machine's registers are its own: the gradient is copied out.
			if out[i], err = newDense(op.name(), op.dt, op.in[i]); err != nil {
				return nil, err
			}
			if err := tensor.Copy(out[i], d); err != nil {
				return nil, check.Errorf(gatejet.ErrParam, op.name(), coordArgs[i], "copying the gradient: %v", err)
			}
		}
		return out, nil
	})
}

// innerPath is the path of a gradient graph that has run: PathCPUFallback if an op of this
// package in it fell back, PathGPU if one ran on the device, PathCPU otherwise.
func innerPath(g *gorgonia.ExprGraph) dispatch.Path {
	p := dispatch.PathCPU
	for _, n := range g.AllNodes() {
		r, ok := n.Op().(dispatch.PathReporter)
		if !ok {
			continue
		}
		switch q, _ := r.LastPath(); q {
		case dispatch.PathCPUFallback:
			return q
		case dispatch.PathGPU:
			p = q
		}
	}
	return p
}

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
	"github.com/gatejet/gatejet/softmaxjet"
)

// SoftmaxJetValue returns the value channel ẑ [n,P] of the softmax-gated reconstruction:
// ẑ[r][c] = Σ_k softmax(invTau·logits[r])_k·decoded[r][k][c]. logits is [n,K] and decoded
// [n,K,P], both Float64 or both Float32; invTau is the inverse temperature (positive,
// finite). Differentiable in logits and decoded.
func SoftmaxJetValue(logits, decoded *gorgonia.Node, invTau float64, opts ...Option) (*gorgonia.Node, error) {
	return jet(kernel.Value, kernel.SoftmaxGate, logits, decoded, nil, softmaxParams(invTau), opts)
}

// SoftmaxJetFirst returns the first channel [n,K,P], first[r][a][c] = ∂ẑ[r][c]/∂logits[r][a].
// Arguments as for SoftmaxJetValue. Its gradient is the second channel contracted with the
// upstream gradient (softmaxjet.Softmax.FirstVJP), never materialised.
func SoftmaxJetFirst(logits, decoded *gorgonia.Node, invTau float64, opts ...Option) (*gorgonia.Node, error) {
	return jet(kernel.First, kernel.SoftmaxGate, logits, decoded, nil, softmaxParams(invTau), opts)
}

// SoftmaxJetSecond returns the second channel [n,K,K,P],
// second[r][a][b][c] = ∂²ẑ[r][c]/∂logits[r][a]∂logits[r][b]. Arguments as for
// SoftmaxJetValue. Its gradient is the O(K²·P) third-order contraction softmaxjet.Softmax.SecondVJP.
func SoftmaxJetSecond(logits, decoded *gorgonia.Node, invTau float64, opts ...Option) (*gorgonia.Node, error) {
	return jet(kernel.Second, kernel.SoftmaxGate, logits, decoded, nil, softmaxParams(invTau), opts)
}

// SoftmaxJetHVP returns the Hessian-vector product [n,K,P],
// hvp[r][a][c] = Σ_b second[r][a][b][c]·v[r][b], without building the second channel. v is
// [n,K] like logits. Differentiable in logits, decoded and v.
func SoftmaxJetHVP(logits, decoded, v *gorgonia.Node, invTau float64, opts ...Option) (*gorgonia.Node, error) {
	return jet(kernel.HVP, kernel.SoftmaxGate, logits, decoded, v, softmaxParams(invTau), opts)
}

// SoftmaxJetGaussNewton returns the Gauss-Newton slabs [n,K,K],
// gn[r][a][b] = Σ_c first[r][a][c]·first[r][b][c], without building the first channel.
// Arguments as for SoftmaxJetValue.
func SoftmaxJetGaussNewton(logits, decoded *gorgonia.Node, invTau float64, opts ...Option) (*gorgonia.Node, error) {
	return jet(kernel.GaussNewton, kernel.SoftmaxGate, logits, decoded, nil, softmaxParams(invTau), opts)
}

// LogisticJetValue returns the value channel [n,P] of the logistic-gated reconstruction,
// ẑ[r][c] = Σ_k σ(alpha[k]·logits[r][k] + beta[k])·decoded[r][k][c]. alpha and beta have
// length K and finite elements; they are copied, and are constants of the graph (no gradient
// is produced for them).
func LogisticJetValue(logits, decoded *gorgonia.Node, alpha, beta []float64, opts ...Option) (*gorgonia.Node, error) {
	return jet(kernel.Value, kernel.LogisticGate, logits, decoded, nil, logisticParams(alpha, beta), opts)
}

// LogisticJetFirst returns the first channel [n,K,P] of the logistic gate,
// first[r][a][c] = α_a σ'_a decoded[r][a][c]. Arguments as for LogisticJetValue.
func LogisticJetFirst(logits, decoded *gorgonia.Node, alpha, beta []float64, opts ...Option) (*gorgonia.Node, error) {
	return jet(kernel.First, kernel.LogisticGate, logits, decoded, nil, logisticParams(alpha, beta), opts)
}

// LogisticJetSecond returns the second channel [n,K,K,P] of the logistic gate (zero off the
// a = b diagonal). Arguments as for LogisticJetValue.
func LogisticJetSecond(logits, decoded *gorgonia.Node, alpha, beta []float64, opts ...Option) (*gorgonia.Node, error) {
	return jet(kernel.Second, kernel.LogisticGate, logits, decoded, nil, logisticParams(alpha, beta), opts)
}

// LogisticJetHVP returns the Hessian-vector product [n,K,P] of the logistic gate with the
// direction v [n,K]. Arguments as for LogisticJetValue.
func LogisticJetHVP(logits, decoded, v *gorgonia.Node, alpha, beta []float64, opts ...Option) (*gorgonia.Node, error) {
	return jet(kernel.HVP, kernel.LogisticGate, logits, decoded, v, logisticParams(alpha, beta), opts)
}

// LogisticJetGaussNewton returns the Gauss-Newton slabs [n,K,K] of the logistic gate.
// Arguments as for LogisticJetValue.
func LogisticJetGaussNewton(logits, decoded *gorgonia.Node, alpha, beta []float64, opts ...Option) (*gorgonia.Node, error) {
	return jet(kernel.GaussNewton, kernel.LogisticGate, logits, decoded, nil, logisticParams(alpha, beta), opts)
}

// jet builds the node of channel c of the gate gk, whose parameters for K atoms params
// returns: the one constructor of every gate's jet ops.
func jet(c channel, gk *kernel.Gate, logits, decoded, v *gorgonia.Node, params gateParams, opts []Option) (*gorgonia.Node, error) {
	op := "ops." + gk.Title + c.String()
	sh, dt, err := checkJetArgs(op, c, logits, decoded, v)
	if err != nil {
		return nil, err
	}
	o, err := applyOptions(op, opts)
	if err != nil {
		return nil, err
	}
	if err := checkOutput(op, dt, outShape(c, sh.N, sh.K, sh.P)); err != nil {
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
	return applyJet(newJetOp(g, c, sh, dt, o), logits, decoded, v)
}

// checkJetArgs validates logits [n,K], decoded [n,K,P] and (HVP) v [n,K].
func checkJetArgs(op string, c channel, logits, decoded, v *gorgonia.Node) (softmaxjet.Shape, tensor.Dtype, error) {
	args := []arg{{"logits", logits}, {"decoded", decoded}}
	if c.HasV() {
		args = append(args, arg{"v", v})
	}
	dt, err := checkArgs(op, args...)
	if err != nil {
		return softmaxjet.Shape{}, dt, err
	}
	sh, err := jetShape(op, c, logits.Shape(), decoded.Shape(), vShape(c, v))
	return sh, dt, err
}

func vShape(c channel, v *gorgonia.Node) tensor.Shape {
	if c.HasV() {
		return v.Shape()
	}
	return nil
}

// checkRows checks logits ls [n,K] and the decoded rows ds [n,K,P], called name, against
// each other.
func checkRows(op, name string, ls, ds tensor.Shape) error {
	if err := checkRank(op, "logits", ls, 2, "[n,K]"); err != nil {
		return err
	}
	if err := checkRank(op, name, ds, 3, "[n,K,P]"); err != nil {
		return err
	}
	if ds[0] != ls[0] {
		return check.Errorf(gatejet.ErrShape, op, name, "want n = %d rows like logits %v, got shape %v", ls[0], ls, ds)
	}
	if ds[1] != ls[1] {
		return check.Errorf(gatejet.ErrShape, op, name, "want K = %d atoms like logits %v, got shape %v", ls[1], ls, ds)
	}
	return nil
}

// jetShape checks the shapes of logits, decoded and (HVP) v against each other and returns
// the batch shape.
func jetShape(op string, c channel, ls, ds, vs tensor.Shape) (softmaxjet.Shape, error) {
	if err := checkRows(op, "decoded", ls, ds); err != nil {
		return softmaxjet.Shape{}, err
	}
	if c.HasV() {
		if err := checkRank(op, "v", vs, 2, "[n,K]"); err != nil {
			return softmaxjet.Shape{}, err
		}
		if !vs.Eq(ls) {
			return softmaxjet.Shape{}, check.Errorf(gatejet.ErrShape, op, "v", "want the shape of logits %v, got %v", ls, vs)
		}
	}
	for _, a := range []struct {
		name string
		s    tensor.Shape
	}{{"logits", ls}, {"decoded", ds}} {
		if err := checkPositiveDims(op, a.name, a.s); err != nil {
			return softmaxjet.Shape{}, err
		}
	}
	sh := softmaxjet.Shape{N: ls[0], K: ls[1], P: ds[2]}
	if err := sh.Check(op); err != nil {
		return sh, err
	}
	return sh, nil
}

func applyJet(op gorgonia.Op, logits, decoded, v *gorgonia.Node) (*gorgonia.Node, error) {
	if v != nil {
		return gorgonia.ApplyOp(op, logits, decoded, v)
	}
	return gorgonia.ApplyOp(op, logits, decoded)
}

// jetOp computes one channel of the row jet. Inputs: logits [n,K], decoded [n,K,P] and, for
// the HVP, v [n,K]. The shapes and dtype are fixed when the node is built.
type jetOp struct {
	seam
	g  *gate
	c  channel
	sh softmaxjet.Shape
	dt tensor.Dtype

	// Precomputed so that Do and UsePreallocDo allocate nothing for them.
	lShape, dShape tensor.Shape
}

func newJetOp(g *gate, c channel, sh softmaxjet.Shape, dt tensor.Dtype, o options) *jetOp {
	op := &jetOp{g: g, c: c, sh: sh, dt: dt,
		lShape: tensor.Shape{sh.N, sh.K},
		dShape: tensor.Shape{sh.N, sh.K, sh.P},
	}
	in := []tensor.Shape{op.lShape, op.dShape}
	if c.HasV() {
		in = append(in, op.lShape)
	}
	op.init(op, "ops."+g.k.Title+c.String(), dt, outShape(c, sh.N, sh.K, sh.P),
		launch{k: g.k.Kernel(c, false), ints: []int{sh.N, sh.K, sh.P}, floats: g.floats, in: in}, o)
	return op
}

// Arity is 2 (logits, decoded), or 3 for the HVP (logits, decoded, v).
func (op *jetOp) Arity() int { return arity(op.c) }

// Type is Tensor-2 a → Tensor-3 a [→ Tensor-2 a] → Tensor-r a, r the rank of the channel.
func (op *jetOp) Type() hm.Type { return fnType(op.types()...) }

// types are the types of the op's inputs and output.
func (op *jetOp) types() []hm.Type {
	a := hm.TypeVariable('a')
	ts := []hm.Type{tensorType(2, a), tensorType(3, a)}
	if op.c.HasV() {
		ts = append(ts, tensorType(2, a))
	}
	return append(ts, tensorType(len(outShape(op.c, 1, 1, 1)), a))
}

// InferShape checks the input shapes and returns the channel's shape. Gorgonia calls it when
// it applies the op; an op built with ReuseOutput is applied once (see ReuseOutput).
func (op *jetOp) InferShape(ds ...gorgonia.DimSizer) (tensor.Shape, error) {
	sh, err := op.inferBatch(ds)
	if err != nil {
		return nil, err
	}
	return op.claim(op.name(), tensor.Shape(outShape(op.c, sh.N, sh.K, sh.P)), nil)
}

func (op *jetOp) inferBatch(ds []gorgonia.DimSizer) (softmaxjet.Shape, error) {
	if len(ds) != op.Arity() {
		return softmaxjet.Shape{}, check.Errorf(gatejet.ErrParam, op.name(), "", "want %d inputs, got %d", op.Arity(), len(ds))
	}
	ls, err := shapeOf(op.name(), ds, 0)
	if err != nil {
		return softmaxjet.Shape{}, err
	}
	dsh, err := shapeOf(op.name(), ds, 1)
	if err != nil {
		return softmaxjet.Shape{}, err
	}
	var vs tensor.Shape
	if op.c.HasV() {
		if vs, err = shapeOf(op.name(), ds, 2); err != nil {
			return softmaxjet.Shape{}, err
		}
	}
	return jetShape(op.name(), op.c, ls, dsh, vs)
}

// WriteHash writes the op's name, its gate's kernel name, channel and gate parameters
// (exact bits).
func (op *jetOp) WriteHash(h hash.Hash) {
	if h == nil {
		return
	}
	fmt.Fprintf(h, "%s/%s%s", op.name(), op.g.k.Name, op.reuseHash())
	op.g.writeHash(h)
}

// String names the op and its gate parameters.
func (op *jetOp) String() string { return fmt.Sprintf("%s{%v}", op.name(), op.g) }

// jetInputs holds the checked input tensors of a jet op or its VJP.
type jetInputs struct {
	l, d, v, up *tensor.Dense
}

// inputs checks the values passed to Do: logits, decoded, [v,] then, when withUp, the
// upstream gradient of the given shape.
func jetValues(op string, f *jetOp, vals []gorgonia.Value, upShape tensor.Shape) (jetInputs, error) {
	var in jetInputs
	c, dt := f.c, f.dt
	want := arity(c)
	if upShape != nil {
		want++
	}
	if len(vals) != want {
		return in, check.Errorf(gatejet.ErrParam, op, "", "want %d inputs, got %d", want, len(vals))
	}
	var err error
	if in.l, err = dense(op, "logits", vals[0], dt, f.lShape); err != nil {
		return in, err
	}
	if in.d, err = dense(op, "decoded", vals[1], dt, f.dShape); err != nil {
		return in, err
	}
	i := 2
	if c.HasV() {
		if in.v, err = dense(op, "v", vals[2], dt, f.lShape); err != nil {
			return in, err
		}
		i++
	}
	if upShape != nil {
		if in.up, err = dense(op, "grad", vals[i], dt, upShape); err != nil {
			return in, err
		}
	}
	return in, nil
}

func (op *jetOp) compute(out *tensor.Dense, vals []gorgonia.Value) error {
	return computeJet(&op.seam, op, nil, out, vals)
}

// computeJet is the computation of a jet op f (upShape nil) or of its VJP (upShape the
// channel's shape), whose seam is s: the values vals are checked and the op's launch writes
// its output into out.
func computeJet(s *seam, f *jetOp, upShape tensor.Shape, out *tensor.Dense, vals []gorgonia.Value) error {
	in, err := jetValues(s.nm, f, vals, upShape)
	if err != nil {
		return err
	}
	// The inputs in the launch's order: logits, decoded, [v,] [grad].
	var ts [kernel.MaxIn]*tensor.Dense
	n := 0
	for _, t := range [...]*tensor.Dense{in.l, in.d, in.v, in.up} {
		if t != nil {
			ts[n] = t
			n++
		}
	}
	return runLaunch(s.nm, &s.run, f.dt, &s.plan, ts[:n], out)
}

// DiffWRT: differentiable in every input.
func (op *jetOp) DiffWRT(inputs int) []bool { return diffMask(inputs, true) }

// SymDiff returns one VJP node per input: the gradient with respect to logits, decoded and
// (HVP) v of ⟨grad, output⟩.
func (op *jetOp) SymDiff(inputs gorgonia.Nodes, output, grad *gorgonia.Node) (gorgonia.Nodes, error) {
	if err := checkDiffNodes(op.name(), op.Arity(), inputs, grad); err != nil {
		return nil, err
	}
	return gradNodes(len(inputs), append(append(gorgonia.Nodes{}, inputs...), grad),
		func(wrt int) gradOp { return newJetVJPOp(op, wrt) })
}

// DoDiff is the LispMachine's reverse step: it computes the gradients of every input from the
// output's gradient in one VJP kernel call and adds them into the inputs' gradients.
func (op *jetOp) DoDiff(ctx gorgonia.ExecutionContext, inputs gorgonia.Nodes, output *gorgonia.Node) error {
	return reverse(ctx, op.name(), op.dt, op.Arity(), inputs, output, inputs, wrtNames, func(vals []gorgonia.Value) ([]*tensor.Dense, error) {
		in, err := jetValues(op.name(), op, vals, op.outShape)
		if err != nil {
			return nil, err
		}
		grads, err := newDenses(op.name(), op.dt, []tensor.Shape{op.lShape, op.dShape, op.lShape}[:len(inputs)]...)
		if err != nil {
			return nil, err
		}
		if op.dt == tensor.Float64 {
			return grads, jetDiff[float64](op, grads, in)
		}
		return grads, jetDiff[float32](op, grads, in)
	})
}

func jetDiff[T gatejet.Float](op *jetOp, grads []*tensor.Dense, in jetInputs) error {
	sh := op.sh
	l, d, up := data[T](in.l, sh.LogitsLen()), data[T](in.d, sh.DecodedLen()), data[T](in.up, in.up.Shape().TotalSize())
	dl, dd := data[T](grads[0], sh.LogitsLen()), data[T](grads[1], sh.DecodedLen())
	var v, dv []T
	if op.c.HasV() {
		v, dv = data[T](in.v, sh.LogitsLen()), data[T](grads[2], sh.LogitsLen())
	}
	return runVJP(op.name(), &op.diffRun, op.g, op.c, dl, dd, dv, l, d, v, up, sh)
}

// jetVJPOp is the gradient of a jetOp with respect to one of its inputs (wrt: 0 logits,
// 1 decoded, 2 v): inputs are the forward op's inputs followed by the upstream gradient of
// the channel; the output has the shape of input wrt. Only the value, first and Gauss-Newton
// channels' are differentiable themselves.
type jetVJPOp struct {
	seam
	wrtOf[*jetOp]
}

func newJetVJPOp(fwd *jetOp, wrt int) *jetVJPOp {
	op := &jetVJPOp{wrtOf: wrtOf[*jetOp]{fwd: fwd, wrt: wrt, tag: "VJP"}}
	p := fwd.plan
	p.k, p.out = fwd.g.k.Kernel(fwd.c, true), wrt
	p.in = append(p.in[:len(p.in):len(p.in)], fwd.outShape)
	op.init(op, fwd.name()+"VJP", fwd.dt, op.wrtShape(), p, fwd.inherited())
	return op
}

var wrtNames = []string{"logits", "decoded", "v"}

// Arity is the forward op's arity plus one (the upstream gradient).
func (op *jetVJPOp) Arity() int { return op.fwd.Arity() + 1 }

// Type is the forward op's input types and its output type, to the type of input wrt.
func (op *jetVJPOp) Type() hm.Type {
	ts := op.fwd.types()
	return fnType(append(ts, ts[op.wrt])...)
}

func (op *jetVJPOp) wrtShape() tensor.Shape {
	if op.wrt == 1 {
		return op.fwd.dShape
	}
	return op.fwd.lShape
}

// InferShape checks the shapes and returns that of input wrt. Gorgonia calls it when it
// applies the op; an op built with ReuseOutput (inherited) is applied once.
func (op *jetVJPOp) InferShape(ds ...gorgonia.DimSizer) (tensor.Shape, error) {
	if len(ds) != op.Arity() {
		return nil, check.Errorf(gatejet.ErrParam, op.name(), "", "want %d inputs, got %d", op.Arity(), len(ds))
	}
	sh, err := op.fwd.inferBatch(ds[:len(ds)-1])
	if err != nil {
		return nil, err
	}
	us, err := shapeOf(op.name(), ds, len(ds)-1)
	if err != nil {
		return nil, err
	}
	if want := tensor.Shape(outShape(op.fwd.c, sh.N, sh.K, sh.P)); !us.Eq(want) {
		return nil, check.Errorf(gatejet.ErrShape, op.name(), "grad", "want %v, got %v", want, us)
	}
	return op.claim(op.name(), op.wrtShape(), nil)
}

// String names the VJP, its gate parameters and wrt.
func (op *jetVJPOp) String() string {
	return fmt.Sprintf("%sVJP{%v, wrt %s}", op.fwd.name(), op.fwd.g, wrtNames[op.wrt])
}

func (op *jetVJPOp) compute(out *tensor.Dense, vals []gorgonia.Value) error {
	return computeJet(&op.seam, op.fwd, op.fwd.outShape, out, vals)
}

// DiffWRT: the value, first and Gauss-Newton channels' VJPs are differentiable (see
// vjpSymDiff). The other channels' VJPs are not (the second channel's and the HVP's would
// need the fourth order of the jet), but are reported differentiable so that a gradient
// through one fails loudly in SymDiff rather than being dropped as if the op were a constant.
// Either way the gradient of a channel linear in D (all but Gauss-Newton, which is quadratic
// in D) with respect to D does not depend on D, nor the HVP's with respect to v on v (the HVP
// is linear in v).
func (op *jetVJPOp) DiffWRT(inputs int) []bool {
	m := diffMask(inputs, true)
	if op.wrt == 1 && op.fwd.c != kernel.GaussNewton && len(m) > 1 {
		m[1] = false
	}
	if op.wrt == 2 && op.fwd.c == kernel.HVP && len(m) > 2 {
		m[2] = false
	}
	return m
}

// SymDiff returns the gradients of the value, first and Gauss-Newton channels' VJPs (see
// vjpSymDiff), and reports that the other channels' VJPs are not differentiable.
func (op *jetVJPOp) SymDiff(inputs gorgonia.Nodes, output, grad *gorgonia.Node) (gorgonia.Nodes, error) {
	if !differentiableVJP(op.fwd.c) {
		return nil, check.Errorf(gatejet.ErrParam, op.name(), "",
			"the gradient of the %s channel is not differentiable (only the value, first and Gauss-Newton channels' are)", op.fwd.c)
	}
	if err := checkDiffNodes(op.name(), op.Arity(), inputs, grad); err != nil {
		return nil, err
	}
	return vjpSymDiff(op, inputs, grad)
}

// DoDiff accepts a zero output gradient and reports an error otherwise (see nonDiff).
func (op *jetVJPOp) DoDiff(ctx gorgonia.ExecutionContext, inputs gorgonia.Nodes, output *gorgonia.Node) error {
	return nonDiff(ctx, op.name(), output)
}

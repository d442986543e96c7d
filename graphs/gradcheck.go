package graphs

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/gatejet/gatejet"
	"github.com/gatejet/gatejet/internal/check"
	"github.com/gatejet/gatejet/internal/strided"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// Machine selects the Gorgonia virtual machine that GradCheck differentiates and
// evaluates the graph with.
type Machine int

const (
	// Tape compiles the graph with gorgonia.NewTapeMachine; the analytic gradient comes
	// from the gradient nodes that gorgonia.Grad adds (each Op's SymDiff).
	Tape Machine = iota
	// Lisp runs the graph with gorgonia.NewLispMachine; the analytic gradient comes
	// from the machine's own reverse pass (each Op's DoDiff) and no nodes are added.
	Lisp
)

// String returns "tape" or "lisp".
func (m Machine) String() string {
	switch m {
	case Tape:
		return "tape"
	case Lisp:
		return "lisp"
	}
	return fmt.Sprintf("Machine(%d)", int(m))
}

// CheckOption configures GradCheck and RequireGradients. (The graph builders of this
// package take ops.Option: the options of the ops they build.)
type CheckOption func(*config)

type config struct {
	step       float64
	rtol, atol float64
	stepSet    bool
	tolSet     bool
	maxElems   int
	seed       uint64
	machine    Machine
}

// WithStep sets the finite-difference step h (default 1e-6 for float64, 1e-3 for
// float32). The derivative is (f(x+h) − f(x−h)) / ((x+h) − (x−h)), the denominator
// taken after rounding to the input's dtype.
func WithStep(h float64) CheckOption {
	return func(c *config) { c.step, c.stepSet = h, true }
}

// WithTolerance sets the tolerance: an element passes when
// |analytic − numeric| ≤ atol + rtol·max(|analytic|, |numeric|).
// The defaults are rtol = atol = 1e-6 for float64 and rtol = atol = 1e-2 for float32.
func WithTolerance(rtol, atol float64) CheckOption {
	return func(c *config) { c.rtol, c.atol, c.tolSet = rtol, atol, true }
}

// WithMaxElements limits the check to at most n elements of each input node, drawn
// without replacement by a generator seeded with seed (different nodes get different
// streams). n ≤ 0 checks every element, which is the default.
func WithMaxElements(n int, seed uint64) CheckOption {
	return func(c *config) { c.maxElems, c.seed = n, seed }
}

// WithMachine selects the machine (default Tape).
func WithMachine(m Machine) CheckOption {
	return func(c *config) { c.machine = m }
}

// Report is what GradCheck measured.
type Report struct {
	Machine Machine      // machine used
	Dtype   tensor.Dtype // dtype of the cost and of every input checked
	Step    float64      // finite-difference step h
	RTol    float64      // relative tolerance
	ATol    float64      // absolute tolerance
	Cost    float64      // value of the cost at the unperturbed inputs
	Nodes   []NodeReport // one per node of wrt, in the same order
}

// NodeReport is the result for one input node.
type NodeReport struct {
	Name      string  // the node's name
	Size      int     // number of elements of the node's value
	Checked   int     // number of elements compared
	Failed    int     // number of elements outside the tolerance
	MaxAbsErr float64 // largest |analytic − numeric| over the checked elements
	MaxRelErr float64 // largest |analytic − numeric| / max(|analytic|, |numeric|)
	Worst     Element // the element furthest outside (or least inside) the tolerance
}

// Element is one compared element of an input node.
type Element struct {
	Index    int     // flat (row-major) index into the node's value
	Coord    []int   // the same index as coordinates in the node's shape
	Analytic float64 // the gradient the graph computed
	Numeric  float64 // the central finite difference
	AbsErr   float64 // |Analytic − Numeric|
	RelErr   float64 // AbsErr / max(|Analytic|, |Numeric|), 0 when both are 0
	// Ratio is AbsErr / (atol + rtol·max(|Analytic|, |Numeric|)): the element passes when
	// Ratio ≤ 1. It is +Inf when either value is NaN or infinite.
	Ratio float64
}

// OK reports whether every checked element of every node is within the tolerance. A nil
// report (what GradCheck returns with an argument or machine error) is not OK.
func (r *Report) OK() bool {
	if r == nil {
		return false
	}
	for i := range r.Nodes {
		if r.Nodes[i].Failed > 0 {
			return false
		}
	}
	return true
}

// String formats the report as one line per node; a nil report formats as
// "gradient check: no report".
func (r *Report) String() string {
	if r == nil {
		return "gradient check: no report"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "gradient check (%s machine, %v, h=%g, rtol=%g, atol=%g, cost=%g)\n",
		r.Machine, r.Dtype, r.Step, r.RTol, r.ATol, r.Cost)
	for i := range r.Nodes {
		n := &r.Nodes[i]
		status := "ok"
		if n.Failed > 0 {
			status = "FAIL"
		}
		fmt.Fprintf(&b, "  %-4s %s: %d/%d checked, %d failed, max abs err %.3g, max rel err %.3g; worst %v: analytic %.10g numeric %.10g (ratio %.3g)\n",
			status, n.Name, n.Checked, n.Size, n.Failed, n.MaxAbsErr, n.MaxRelErr,
			n.Worst.Coord, n.Worst.Analytic, n.Worst.Numeric, n.Worst.Ratio)
	}
	return b.String()
}

const opGradCheck = "graphs.GradCheck"

// GradCheck compares the gradients of the scalar cost with respect to the input nodes wrt
// against central finite differences, element by element, and reports the worst element
// of each node.
//
// For every checked element x_i of an input it sets x_i ± h in the input's bound value,
// re-runs the forward graph, and restores the value, so 2·(elements checked) forward runs
// are made; WithMaxElements bounds that for large inputs. Every node of wrt must be an
// input node (no Op) of the cost's graph with a float64 or float32 value bound (a
// *tensor.Dense or a scalar), of the cost's dtype. A Dense that is a view is replaced by
// a materialised copy with gorgonia.Let first.
//
// What it does to the graph: with the Tape machine (the default) GradCheck differentiates
// the cost with Grad, which adds the gradient nodes to the graph (they stay there) and,
// unlike gorgonia.Grad, ignores derivatives built before, so a cost that holds gradients (a
// gradient penalty, ⟨∇c, v⟩ for a Hessian-vector product) is checked against finite
// differences of the cost itself. Only the subgraph that the cost and the gradients depend on is compiled, so
// unrelated nodes may be left unbound. With the Lisp machine no node is added: the
// gradient comes from a fresh gorgonia.NewLispMachine on the cost's subgraph, whose
// reverse pass accumulates into the inputs' gradients; GradCheck zeroes those gradients
// first, and runs the forward pass alone before it (a failing Lisp forward pass with the
// reverse pass enabled races in Gorgonia v0.9.18). A graph that holds a Repeat (the
// gradient of a Sum builds one, so second-order costs do) is refused on the Lisp machine
// with ErrMachine: Gorgonia v0.9.18's reverse pass of it panics where nothing can recover. Either way, the bound input values are
// left exactly as they were, non-input nodes hold the values of the last run (Tape) or are
// unbound (Lisp; constants, made by gorgonia.NewConstant, stay bound and keep their
// values), and input nodes bound by the Lisp machine keep their dual value. Values stored
// column-major are perturbed and compared in logical row-major order, as Element.Index
// counts.
//
// The returned error is nil when every element is within the tolerance. When some
// element is not, GradCheck returns the full report together with a *gatejet.Error of
// kind ErrGradient that names the worst node, its element, and both values. Invalid
// arguments give a nil report and an error of kind gatejet.ErrParam, ErrShape or
// ErrDType (a nil CheckOption is an ErrParam error naming "opts"); a machine that fails to
// compile or run gives ErrMachine, or the kind of the *gatejet.Error an Op returned.
//
// With the Tape machine GradCheck calls gorgonia.Grad through Grad, which holds this
// package's lock: gorgonia.Grad (v0.9.18) is not safe to call from several goroutines at
// once, even on separate graphs.
func GradCheck(cost *gorgonia.Node, wrt gorgonia.Nodes, opts ...CheckOption) (*Report, error) {
	cfg := config{}
	for i, o := range opts {
		if o == nil {
			return nil, check.Errorf(gatejet.ErrParam, opGradCheck, "opts", "option %d is nil", i)
		}
		o(&cfg)
	}
	dt, err := checkGradArgs(cost, wrt, &cfg)
	if err != nil {
		return nil, err
	}

	accs := make([]*accessor, len(wrt))
	for i, n := range wrt {
		if accs[i], err = newAccessor(n); err != nil {
			return nil, err
		}
	}

	rep := &Report{Machine: cfg.machine, Dtype: dt, Step: cfg.step, RTol: cfg.rtol, ATol: cfg.atol}

	// Analytic gradients (and the cost at the unperturbed point).
	var analytic [][]float64
	switch cfg.machine {
	case Tape:
		analytic, rep.Cost, err = tapeGradients(cost, wrt)
	default:
		analytic, rep.Cost, err = lispGradients(cost, wrt)
	}
	if err != nil {
		return nil, err
	}
	for i, a := range analytic {
		if len(a) != accs[i].size {
			return nil, check.Errorf(ErrMachine, opGradCheck, nodeName(wrt[i]),
				"gradient has %d elements, the node's value has %d", len(a), accs[i].size)
		}
	}

	eval, closeEval, err := newEvaluator(cost, cfg.machine)
	if err != nil {
		return nil, err
	}
	defer closeEval()

	var worstErr *gatejet.Error
	worstRatio := -1.0
	for ni, n := range wrt {
		acc := accs[ni]
		idx := sampleIndices(acc.size, cfg.maxElems, cfg.seed, uint64(ni))
		nr := NodeReport{Name: nodeName(n), Size: acc.size, Checked: len(idx)}
		nr.Worst.Ratio = -1
		for _, i := range idx {
			num, err := acc.centralDifference(i, cfg.step, eval)
			if err != nil {
				return nil, err
			}
			el := compare(i, analytic[ni][i], num, cfg.rtol, cfg.atol)
			if el.Ratio > 1 || math.IsNaN(el.Ratio) {
				nr.Failed++
			}
			nr.MaxAbsErr = nanMax(nr.MaxAbsErr, el.AbsErr)
			nr.MaxRelErr = nanMax(nr.MaxRelErr, el.RelErr)
			if el.Ratio > nr.Worst.Ratio {
				nr.Worst = el
			}
		}
		if nr.Checked > 0 {
			nr.Worst.Coord = coords(nr.Worst.Index, acc.shape)
		} else {
			nr.Worst = Element{}
		}
		rep.Nodes = append(rep.Nodes, nr)
		if nr.Failed > 0 && nr.Worst.Ratio > worstRatio {
			worstRatio = nr.Worst.Ratio
			w := nr.Worst
			worstErr = check.Errorf(ErrGradient, opGradCheck, nr.Name,
				"%d of %d checked elements outside tolerance; worst at %v (flat %d): analytic %.10g, numeric %.10g, |diff| %.3g > atol+rtol·max = %.3g (%s machine, %v, h=%g)",
				nr.Failed, nr.Checked, w.Coord, w.Index, w.Analytic, w.Numeric, w.AbsErr,
				cfg.atol+cfg.rtol*math.Max(math.Abs(w.Analytic), math.Abs(w.Numeric)),
				cfg.machine, dt, cfg.step)
		}
	}
	if worstErr != nil {
		failed := 0
		for i := range rep.Nodes {
			if rep.Nodes[i].Failed > 0 {
				failed++
			}
		}
		if failed > 1 {
			worstErr.Detail += fmt.Sprintf("; %d other node(s) also fail", failed-1)
		}
		return rep, worstErr
	}
	return rep, nil
}

func nanMax(a, b float64) float64 {
	if math.IsNaN(b) {
		return math.Inf(1)
	}
	return math.Max(a, b)
}

// compare builds the Element for one index.
func compare(i int, a, num, rtol, atol float64) Element {
	el := Element{Index: i, Analytic: a, Numeric: num}
	if math.IsNaN(a) || math.IsNaN(num) || math.IsInf(a, 0) || math.IsInf(num, 0) {
		el.AbsErr, el.RelErr, el.Ratio = math.Inf(1), math.Inf(1), math.Inf(1)
		if a == num { // the same infinity: report it, but do not pass it silently
			el.AbsErr, el.RelErr = 0, 0
		}
		return el
	}
	el.AbsErr = math.Abs(a - num)
	scale := math.Max(math.Abs(a), math.Abs(num))
	if scale > 0 {
		el.RelErr = el.AbsErr / scale
	}
	tol := atol + rtol*scale
	switch {
	case el.AbsErr == 0:
		el.Ratio = 0
	case tol == 0:
		el.Ratio = math.Inf(1)
	default:
		el.Ratio = el.AbsErr / tol
	}
	return el
}

func checkGradArgs(cost *gorgonia.Node, wrt gorgonia.Nodes, cfg *config) (tensor.Dtype, error) {
	if cost == nil {
		return tensor.Dtype{}, check.Errorf(gatejet.ErrParam, opGradCheck, "cost", "nil node")
	}
	if !cost.IsScalar() {
		return tensor.Dtype{}, check.Errorf(gatejet.ErrRank, opGradCheck, "cost",
			"want a scalar cost, got shape %v", cost.Shape())
	}
	dt := cost.Dtype()
	if dt != tensor.Float64 && dt != tensor.Float32 {
		return tensor.Dtype{}, check.Errorf(gatejet.ErrDType, opGradCheck, "cost",
			"want float64 or float32, got %v", dt)
	}
	if len(wrt) == 0 {
		return tensor.Dtype{}, check.Errorf(gatejet.ErrParam, opGradCheck, "wrt", "no nodes to check")
	}
	seen := make(map[*gorgonia.Node]bool, len(wrt))
	for i, n := range wrt {
		switch {
		case n == nil:
			return tensor.Dtype{}, check.Errorf(gatejet.ErrParam, opGradCheck, "wrt", "node %d is nil", i)
		case n.Graph() != cost.Graph():
			return tensor.Dtype{}, check.Errorf(gatejet.ErrParam, opGradCheck, "wrt",
				"node %d (%s) is not in the cost's graph", i, nodeName(n))
		case n.Op() != nil:
			return tensor.Dtype{}, check.Errorf(gatejet.ErrParam, opGradCheck, "wrt",
				"node %d (%s) is not an input node (it has op %v)", i, nodeName(n), n.Op())
		case n.Dtype() != dt:
			return tensor.Dtype{}, check.Errorf(gatejet.ErrDType, opGradCheck, "wrt",
				"node %d (%s) has dtype %v, the cost %v", i, nodeName(n), n.Dtype(), dt)
		case n.Value() == nil:
			return tensor.Dtype{}, check.Errorf(gatejet.ErrParam, opGradCheck, "wrt",
				"node %d (%s) has no value bound", i, nodeName(n))
		case seen[n]:
			return tensor.Dtype{}, check.Errorf(gatejet.ErrParam, opGradCheck, "wrt",
				"node %d (%s) appears twice", i, nodeName(n))
		}
		seen[n] = true
	}
	if !cfg.stepSet {
		cfg.step = 1e-6
		if dt == tensor.Float32 {
			cfg.step = 1e-3
		}
	}
	if !(cfg.step > 0) || math.IsInf(cfg.step, 0) {
		return tensor.Dtype{}, check.Errorf(gatejet.ErrParam, opGradCheck, "step",
			"want 0 < h < +Inf, got %v", cfg.step)
	}
	if !cfg.tolSet {
		cfg.rtol, cfg.atol = 1e-6, 1e-6
		if dt == tensor.Float32 {
			cfg.rtol, cfg.atol = 1e-2, 1e-2
		}
	}
	if !(cfg.rtol >= 0) || !(cfg.atol >= 0) || math.IsInf(cfg.rtol, 0) || math.IsInf(cfg.atol, 0) {
		return tensor.Dtype{}, check.Errorf(gatejet.ErrParam, opGradCheck, "tolerance",
			"want finite rtol, atol ≥ 0, got rtol=%v atol=%v", cfg.rtol, cfg.atol)
	}
	if cfg.machine != Tape && cfg.machine != Lisp {
		return tensor.Dtype{}, check.Errorf(gatejet.ErrParam, opGradCheck, "machine",
			"unknown machine %v", cfg.machine)
	}
	return dt, nil
}

func nodeName(n *gorgonia.Node) string {
	if n == nil {
		return "<nil>"
	}
	if s := n.Name(); s != "" {
		return s
	}
	return fmt.Sprintf("node#%d", n.ID())
}

// accessor reads and writes the elements of an input node's bound value.
type accessor struct {
	node  *gorgonia.Node
	shape []int
	size  int
	f64   []float64 // the backing slice, indexed through off
	f32   []float32
	off   []int // logical row-major index → backing index; nil: the same (see strided.Offsets)
	s64   *gorgonia.F64
	s32   *gorgonia.F32
	orig  []float64 // snapshot, restored after every perturbation
}

func newAccessor(n *gorgonia.Node) (*accessor, error) {
	a := &accessor{node: n}
	v := n.Value()
	switch t := v.(type) {
	case *tensor.Dense:
		if t.IsMaterializable() {
			m, ok := t.Materialize().(*tensor.Dense)
			if !ok {
				return nil, check.Errorf(gatejet.ErrParam, opGradCheck, nodeName(n),
					"cannot materialise the view bound to the node")
			}
			if err := gorgonia.Let(n, m); err != nil {
				return nil, check.Errorf(gatejet.ErrParam, opGradCheck, nodeName(n),
					"rebinding the materialised view: %v", err)
			}
			t = m
		}
		a.shape = slices.Clone([]int(t.Shape()))
		a.size = t.Shape().TotalSize()
		var err error
		if a.off, err = strided.Offsets(opGradCheck, nodeName(n), t); err != nil {
			return nil, err
		}
		switch t.Dtype() {
		case tensor.Float64:
			a.f64 = t.Float64s()
		case tensor.Float32:
			a.f32 = t.Float32s()
		default:
			return nil, check.Errorf(gatejet.ErrDType, opGradCheck, nodeName(n),
				"want float64 or float32 data, got %v", t.Dtype())
		}
	case *gorgonia.F64:
		a.s64, a.size = t, 1
	case *gorgonia.F32:
		a.s32, a.size = t, 1
	default:
		return nil, check.Errorf(gatejet.ErrParam, opGradCheck, nodeName(n),
			"bound value of type %T is not supported (want *tensor.Dense, *gorgonia.F64 or *gorgonia.F32)", v)
	}
	a.orig = make([]float64, a.size)
	for i := range a.orig {
		a.orig[i] = a.get(i)
	}
	return a, nil
}

func (a *accessor) get(i int) float64 {
	switch {
	case a.f64 != nil:
		return a.f64[strided.At(a.off, i)]
	case a.f32 != nil:
		return float64(a.f32[strided.At(a.off, i)])
	case a.s64 != nil:
		return float64(*a.s64)
	default:
		return float64(*a.s32)
	}
}

// set stores x (rounded to the dtype) and returns the value actually stored.
func (a *accessor) set(i int, x float64) float64 {
	switch {
	case a.f64 != nil:
		a.f64[strided.At(a.off, i)] = x
	case a.f32 != nil:
		a.f32[strided.At(a.off, i)] = float32(x)
	case a.s64 != nil:
		*a.s64 = gorgonia.F64(x)
	default:
		*a.s32 = gorgonia.F32(float32(x))
	}
	return a.get(i)
}

// restore writes the whole snapshot back, in case a machine wrote into the input.
func (a *accessor) restore() {
	for i, x := range a.orig {
		a.set(i, x)
	}
}

func (a *accessor) centralDifference(i int, h float64, eval func() (float64, error)) (float64, error) {
	x := a.orig[i]
	xp := a.set(i, x+h)
	fp, err := eval()
	if err != nil {
		a.restore()
		return 0, err
	}
	a.restore()
	xm := a.set(i, x-h)
	fm, err := eval()
	a.restore()
	if err != nil {
		return 0, err
	}
	return (fp - fm) / (xp - xm), nil
}

// sampleIndices returns the sorted indices to check: all of [0, size) or m of them,
// drawn with Floyd's algorithm.
func sampleIndices(size, m int, seed, stream uint64) []int {
	if m <= 0 || m >= size {
		idx := make([]int, size)
		for i := range idx {
			idx[i] = i
		}
		return idx
	}
	rng := rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15^stream))
	chosen := make(map[int]bool, m)
	idx := make([]int, 0, m)
	for j := size - m; j < size; j++ {
		t := rng.IntN(j + 1)
		if chosen[t] {
			t = j
		}
		chosen[t] = true
		idx = append(idx, t)
	}
	slices.Sort(idx)
	return idx
}

func coords(i int, shape []int) []int {
	c := make([]int, len(shape))
	for d := len(shape) - 1; d >= 0; d-- {
		if shape[d] > 0 {
			c[d] = i % shape[d]
			i /= shape[d]
		}
	}
	return c
}

// scalarOf converts a scalar Value (or a one-element tensor) to float64.
func scalarOf(v gorgonia.Value) (float64, bool) {
	switch t := v.(type) {
	case *gorgonia.F64:
		return float64(*t), true
	case *gorgonia.F32:
		return float64(*t), true
	case tensor.Tensor:
		if t.Shape().TotalSize() != 1 {
			return 0, false
		}
		switch d := t.Data().(type) {
		case []float64:
			return d[0], true
		case []float32:
			return float64(d[0]), true
		case float64:
			return d, true
		case float32:
			return float64(d), true
		}
	}
	return 0, false
}

// floatsOf copies a Value's elements to float64, in logical row-major order whatever the
// storage order of a Dense (see strided.Offsets).
func floatsOf(v gorgonia.Value) ([]float64, bool) {
	switch t := v.(type) {
	case *gorgonia.F64, *gorgonia.F32:
		x, _ := scalarOf(t)
		return []float64{x}, true
	case *tensor.Dense:
		if t.IsMaterializable() {
			t, _ = t.Materialize().(*tensor.Dense)
			if t == nil {
				return nil, false
			}
		}
		switch t.Dtype() {
		case tensor.Float64:
			d, err := strided.Logical[float64](opGradCheck, "", t)
			if err != nil {
				return nil, false
			}
			return slices.Clone(d), true
		case tensor.Float32:
			d, err := strided.Logical[float32](opGradCheck, "", t)
			if err != nil {
				return nil, false
			}
			out := make([]float64, len(d))
			for i, x := range d {
				out[i] = float64(x)
			}
			return out, true
		}
	}
	return nil, false
}

// machineError converts an error from a machine into a *gatejet.Error: the kind of the
// *gatejet.Error an Op returned (see OpError), ErrMachine otherwise.
func machineError(what string, err error) error {
	kind := ErrMachine
	if ge := OpError(err); ge != nil {
		kind = ge.Kind
	}
	return check.Errorf(kind, opGradCheck, "cost", "%s: %v", what, err)
}

// runVM runs a machine, turning panics from Gorgonia into errors.
func runVM(m gorgonia.VM) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic: %v", r)
		}
	}()
	return m.RunAll()
}

func tapeGradients(cost *gorgonia.Node, wrt gorgonia.Nodes) ([][]float64, float64, error) {
	grads, err := Grad(cost, wrt...)
	if err != nil {
		kind := gatejet.ErrParam
		if ge := OpError(err); ge != nil {
			kind = ge.Kind
		}
		return nil, 0, check.Errorf(kind, opGradCheck, "wrt", "%v", err)
	}
	roots := append(gorgonia.Nodes{cost}, grads...)
	m, err := newTape(cost.Graph().SubgraphRoots(roots...))
	if err != nil {
		return nil, 0, err
	}
	defer m.Close()
	if err := runVM(m); err != nil {
		return nil, 0, machineError("tape machine (gradient run)", err)
	}
	c, ok := scalarOf(cost.Value())
	if !ok {
		return nil, 0, check.Errorf(ErrMachine, opGradCheck, "cost", "cost value %v is not a scalar", cost.Value())
	}
	out := make([][]float64, len(grads))
	for i, gn := range grads {
		if out[i], ok = floatsOf(gn.Value()); !ok {
			return nil, 0, check.Errorf(ErrMachine, opGradCheck, nodeName(wrt[i]),
				"gradient value %T is not readable", gn.Value())
		}
	}
	return out, c, nil
}

func newTape(g *gorgonia.ExprGraph) (m gorgonia.VM, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = check.Errorf(ErrMachine, opGradCheck, "cost", "compiling the tape machine: %v", r)
		}
	}()
	return gorgonia.NewTapeMachine(g), nil
}

func newLisp(g *gorgonia.ExprGraph, opts ...gorgonia.VMOpt) (m gorgonia.VM, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = check.Errorf(ErrMachine, opGradCheck, "cost", "starting the lisp machine: %v", r)
		}
	}()
	return gorgonia.NewLispMachine(g, opts...), nil
}

// runLisp runs a fresh lisp machine and unbinds the nodes that are neither inputs nor
// constants afterwards: a LispMachine cannot run again over the dual values a previous one
// left behind. Constants must stay bound: unbinding a node hands its tensor back to the
// tensor package's pool, and a constant's tensor is the value its op returns on every
// later run, so (*lispMachine).UnbindAll, which unbinds constants too, leaves the next run
// cloning a recycled tensor (a nil-pointer panic in a goroutine Gorgonia v0.9.18 starts,
// which nothing can recover).
func runLisp(g *gorgonia.ExprGraph, read func() error, opts ...gorgonia.VMOpt) error {
	m, err := newLisp(g, opts...)
	if err != nil {
		return err
	}
	defer m.Close()
	defer g.UnbindAllNonInputs()
	if err := runVM(m); err != nil {
		return machineError("lisp machine", err)
	}
	return read()
}

func lispGradients(cost *gorgonia.Node, wrt gorgonia.Nodes) ([][]float64, float64, error) {
	sub := cost.Graph().SubgraphRoots(cost)
	// A LispMachine whose forward pass fails goes on into its reverse pass in the background
	// while RunAll returns (Gorgonia v0.9.18), racing with RunAll's cleanup. A forward-only
	// run fails cleanly, so run one first and differentiate only a graph that runs.
	if err := runLisp(sub, func() error { return nil }, gorgonia.ExecuteFwdOnly()); err != nil {
		return nil, 0, err
	}
	if n := lispCrasher(sub); n != nil {
		return nil, 0, check.Errorf(ErrMachine, opGradCheck, "cost",
			"the LispMachine cannot differentiate node %s (%v): Gorgonia v0.9.18's reverse pass of a Repeat panics in a goroutine of its own, which would end the process; check this graph on the Tape machine",
			nodeName(n), n.Op())
	}
	for _, n := range wrt {
		zeroDualGrad(n)
	}
	var out [][]float64
	var c float64
	err := runLisp(sub, func() error {
		var ok bool
		if c, ok = scalarOf(cost.Value()); !ok {
			return check.Errorf(ErrMachine, opGradCheck, "cost", "cost value %v is not a scalar", cost.Value())
		}
		out = make([][]float64, len(wrt))
		for i, n := range wrt {
			gv, err := n.Grad()
			if err != nil {
				return check.Errorf(ErrMachine, opGradCheck, nodeName(n),
					"no gradient after the lisp machine's reverse pass: %v", err)
			}
			if out[i], ok = floatsOf(gv); !ok {
				return check.Errorf(ErrMachine, opGradCheck, nodeName(n),
					"gradient value %T is not readable", gv)
			}
		}
		return nil
	})
	return out, c, err
}

// lispCrasher returns a node of g whose DoDiff panics in Gorgonia v0.9.18, or nil: a Repeat,
// which the gradient of a Sum builds, so it is in every graph that holds such a gradient
// (its reverse pass meets the scalar it repeats as a *F64 where it wants a tensor). The
// LispMachine runs its reverse pass in a goroutine of its own, where a panic cannot be
// recovered.
func lispCrasher(g *gorgonia.ExprGraph) *gorgonia.Node {
	for _, n := range g.AllNodes() {
		if t := fmt.Sprintf("%T", n.Op()); t == "*gorgonia.repeatOp" || t == "gorgonia.repeatOp" {
			return n
		}
	}
	return nil
}

// zeroDualGrad zeroes the gradient a LispMachine accumulates into an input node's dual
// value; it leaves a gradient node's value (from gorgonia.Grad) alone.
func zeroDualGrad(n *gorgonia.Node) {
	gv, err := n.Grad()
	if err != nil || gv == nil {
		return
	}
	if d := n.Deriv(); d != nil && d.Value() == gv {
		return
	}
	switch t := gv.(type) {
	case *tensor.Dense:
		t.Zero()
	case *gorgonia.F64:
		*t = 0
	case *gorgonia.F32:
		*t = 0
	}
}

// newEvaluator returns a function that runs the cost's forward subgraph and returns the
// cost.
func newEvaluator(cost *gorgonia.Node, kind Machine) (func() (float64, error), func(), error) {
	sub := cost.Graph().SubgraphRoots(cost)
	read := func() (float64, error) {
		c, ok := scalarOf(cost.Value())
		if !ok {
			return 0, check.Errorf(ErrMachine, opGradCheck, "cost", "cost value %v is not a scalar", cost.Value())
		}
		return c, nil
	}
	if kind == Lisp {
		eval := func() (float64, error) {
			var c float64
			err := runLisp(sub, func() error {
				var err error
				c, err = read()
				return err
			}, gorgonia.ExecuteFwdOnly())
			return c, err
		}
		return eval, func() {}, nil
	}
	m, err := newTape(sub)
	if err != nil {
		return nil, nil, err
	}
	eval := func() (float64, error) {
		m.Reset()
		if err := runVM(m); err != nil {
			return 0, machineError("tape machine (forward run)", err)
		}
		return read()
	}
	return eval, func() { m.Close() }, nil
}

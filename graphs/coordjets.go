package graphs

import (
	"fmt"
	"hash"
	"hash/fnv"
	"math"

	"github.com/chewxy/hm"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/gatejet/gatejet"
	"github.com/gatejet/gatejet/internal/basis"
	"github.com/gatejet/gatejet/internal/check"
)

// MonomialJets returns the decoded rows of a latent-coordinate decoder with the monomial basis
// Φ_b(t) = t^b, b = 0..nb−1, and their first two derivatives in t:
//
//	d0[n,k,c] = Σ_b Φ_b(t[n,k])·B[k,b,c],   d1 = ∂d0/∂t,   d2 = ∂²d0/∂t²,
//
// each [N,K,P], for coordinates t [N,K] (N ≥ 1, K ≥ 1: as for the ops, every dimension is at least 1,
// since Gorgonia's machines do not run empty tensors) and coefficients B [K,nb,P] (nb ≥ 1,
// P ≥ 1), both Float64 or both Float32. These are the inputs the coordinate jets read (each
// atom k of row n at its coordinate t[n,k]).
//
// The three nodes are differentiable in t and B with Grad (and gorgonia.Grad) to any order:
// the basis op's gradient in t is the basis op of the next derivative order, and the
// contraction with B is linear in each argument, its gradients the same contractions. The
// ops have SymDiff only (no DoDiff): differentiate on a TapeMachine, not a LispMachine. They
// run on the CPU, in float64 (Float32 values are widened and the results rounded).
//
// Errors are *gatejet.Error values: ErrParam for a nil node, nodes of different graphs or
// none in a graph, ErrRank, ErrShape (K or a dim that disagrees, K, nb or P < 1), ErrDType, and ErrSize when
// a [N,K,nb] or [N,K,P] buffer would exceed gatejet.MaxBytes. t^b of a large |t| may overflow
// to ±Inf, and non-finite t propagates: both are data, not errors.
func MonomialJets(t, B *gorgonia.Node) (d0, d1, d2 *gorgonia.Node, err error) {
	return jets("graphs.MonomialJets", t, B, nil)
}

// BSplineJets is MonomialJets for the cubic B-spline basis on knots u_0 ≤ … ≤ u_{M−1}: nb =
// M − 4 functions, evaluated by the Cox–de Boor recursion, with derivatives exact inside each
// knot interval (the third is piecewise constant, the fourth and higher 0). B is [K, M−4, P].
//
// The knots are used as given: clamped knots (the first four equal, and the last four) make the
// span [u_3, u_{M−4}] the whole knot range. They must be finite and non-decreasing, at least 8
// of them, no value more than 4 times, with u_3 < u_{M−4} and u_{M−1} − u_0 finite (ErrParam,
// ErrNonFinite naming "knots"); the builder copies them.
//
// Every coordinate must lie in the span [u_3, u_{M−4}], where the basis sums to 1: running
// the graph with a t outside it (±Inf included) fails with an ErrParam error naming t, rather
// than extrapolating a cubic piece (a Float32 coordinate equal to an end of the span rounded to
// float32 is that end). Map an unbounded coordinate into the span first (an affine map of a
// logistic, say). A NaN coordinate is data: its row of d0, d1, d2 is NaN. At a
// knot, derivatives that jump take their value from the right (at u_{M−4}, from the left).
func BSplineJets(t, B *gorgonia.Node, knots []float64) (d0, d1, d2 *gorgonia.Node, err error) {
	const op = "graphs.BSplineJets"
	s, err := basis.NewSpline(op, knots)
	if err != nil {
		return nil, nil, nil, err
	}
	return jets(op, t, B, s)
}

// jets checks t and B and builds Decode(Φ^(m)(t), B) for m = 0, 1, 2; s is nil for monomials.
func jets(name string, t, B *gorgonia.Node, s *basis.Spline) (d0, d1, d2 *gorgonia.Node, err error) {
	if _, err := oneGraph(name, []string{"t", "B"}, t, B); err != nil {
		return nil, nil, nil, err
	}
	dt := t.Dtype()
	if dt != tensor.Float64 && dt != tensor.Float32 {
		return nil, nil, nil, check.Errorf(gatejet.ErrDType, name, "t", "want Float64 or Float32, got %v", dt)
	}
	if B.Dtype() != dt {
		return nil, nil, nil, check.Errorf(gatejet.ErrDType, name, "B", "want %v (t's dtype), got %v", dt, B.Dtype())
	}
	ts, bs := t.Shape(), B.Shape()
	if len(ts) != 2 {
		return nil, nil, nil, check.Errorf(gatejet.ErrRank, name, "t", "want rank 2 [N,K], got shape %v", ts)
	}
	if len(bs) != 3 {
		return nil, nil, nil, check.Errorf(gatejet.ErrRank, name, "B", "want rank 3 [K,nb,P], got shape %v", bs)
	}
	N, K, L, P := ts[0], ts[1], bs[1], bs[2]
	if N < 1 || K < 1 {
		return nil, nil, nil, check.Errorf(gatejet.ErrShape, name, "t", "want N ≥ 1, K ≥ 1 (Gorgonia holds no empty tensors), got shape %v", ts)
	}
	if bs[0] != K || L < 1 || P < 1 {
		return nil, nil, nil, check.Errorf(gatejet.ErrShape, name, "B", "want [K=%d, nb ≥ 1, P ≥ 1], got %v", K, bs)
	}
	if s != nil && L != s.Len() {
		return nil, nil, nil, check.Errorf(gatejet.ErrShape, name, "B", "want nb = %d (%d knots − 4), got %v", s.Len(), len(s.Knots()), bs)
	}
	size := int(dt.Size())
	if _, err := check.Alloc(name, "basis", size, N, K, L); err != nil {
		return nil, nil, nil, err
	}
	if _, err := check.Alloc(name, "d0", size, N, K, P); err != nil {
		return nil, nil, nil, err
	}
	dims := coordDims{N: N, K: K, L: L, P: P, dt: dt}
	var out [3]*gorgonia.Node
	for m := range out {
		phi, err := gorgonia.ApplyOp(&coordOp{caller: name, kind: opBasis, d: dims, m: m, spline: s}, t)
		if err != nil {
			return nil, nil, nil, err
		}
		if out[m], err = gorgonia.ApplyOp(&coordOp{caller: name, kind: opDecode, d: dims}, phi, B); err != nil {
			return nil, nil, nil, err
		}
	}
	return out[0], out[1], out[2], nil
}

// oneGraph returns the graph of the nodes, or an ErrParam error naming the argument at fault
// when a node is nil, when two belong to different graphs, or when none belongs to a graph.
// A constant (gorgonia.NewConstant) belongs to none: Gorgonia adds it to the graph of the
// node it feeds.
func oneGraph(op string, names []string, nodes ...*gorgonia.Node) (*gorgonia.ExprGraph, error) {
	var g *gorgonia.ExprGraph
	first := ""
	for i, n := range nodes {
		if n == nil {
			return nil, check.Errorf(gatejet.ErrParam, op, names[i], "nil node")
		}
		switch ng := n.Graph(); {
		case ng == nil:
		case g == nil:
			g, first = ng, names[i]
		case ng != g:
			return nil, check.Errorf(gatejet.ErrParam, op, names[i], "belongs to a different graph from %s", first)
		}
	}
	if g == nil {
		return nil, check.Errorf(gatejet.ErrParam, op, names[0], "no argument belongs to a graph (all are constants)")
	}
	return g, nil
}

// coordKind is what a coordOp computes; with dims N, K, L (basis functions), P:
type coordKind int

const (
	opBasis   coordKind = iota // t [N,K] → Φ^(m)(t) [N,K,L]
	opDecode                   // x [N,K,L], B [K,L,P] → Σ_b x·B [N,K,P]
	opDecodeT                  // g [N,K,P], B [K,L,P] → Σ_c g·B [N,K,L]
	opOuter                    // x [N,K,L], g [N,K,P] → Σ_n x·g [K,L,P]
	opDot                      // a [N,K,L], c [N,K,L] → Σ_b a·c [N,K]
	opScale                    // u [N,K], c [N,K,L] → u·c [N,K,L]
)

var coordKindNames = [...]string{"CoordBasis", "CoordDecode", "CoordDecodeT", "CoordOuter", "CoordDot", "CoordScale"}

type coordDims struct {
	N, K, L, P int
	dt         tensor.Dtype
}

// coordOp is one op of the family that builds the decoded jets: the basis evaluation, whose
// derivative in t is the same op one order up, and bilinear contractions whose derivatives
// are contractions of the family, so gradients of any order stay inside it.
type coordOp struct {
	caller string // the builder, named in errors
	kind   coordKind
	d      coordDims
	m      int           // opBasis: the derivative order
	spline *basis.Spline // opBasis: nil for monomials
}

func (op *coordOp) name() string { return op.caller }

// shapes returns the input shapes and the output shape.
func (op *coordOp) shapes() ([]tensor.Shape, tensor.Shape) {
	d := op.d
	nk, nkl, nkp, klp := tensor.Shape{d.N, d.K}, tensor.Shape{d.N, d.K, d.L}, tensor.Shape{d.N, d.K, d.P}, tensor.Shape{d.K, d.L, d.P}
	switch op.kind {
	case opBasis:
		return []tensor.Shape{nk}, nkl
	case opDecode:
		return []tensor.Shape{nkl, klp}, nkp
	case opDecodeT:
		return []tensor.Shape{nkp, klp}, nkl
	case opOuter:
		return []tensor.Shape{nkl, nkp}, klp
	case opDot:
		return []tensor.Shape{nkl, nkl}, nk
	default: // opScale
		return []tensor.Shape{nk, nkl}, nkl
	}
}

func (op *coordOp) Arity() int {
	in, _ := op.shapes()
	return len(in)
}

func (op *coordOp) Type() hm.Type {
	a := hm.TypeVariable('a')
	in, out := op.shapes()
	ts := make([]hm.Type, 0, len(in)+1)
	for _, s := range in {
		ts = append(ts, gorgonia.TensorType{Dims: len(s), Of: a})
	}
	ts = append(ts, gorgonia.TensorType{Dims: len(out), Of: a})
	return hm.NewFnType(ts...)
}

func (op *coordOp) InferShape(ds ...gorgonia.DimSizer) (tensor.Shape, error) {
	in, out := op.shapes()
	if len(ds) != len(in) {
		return nil, check.Errorf(gatejet.ErrParam, op.name(), "", "want %d inputs, got %d", len(in), len(ds))
	}
	for i, d := range ds {
		if s, ok := d.(tensor.Shape); !ok || !s.Eq(in[i]) {
			return nil, check.Errorf(gatejet.ErrShape, op.name(), fmt.Sprint("input ", i), "want %v, got %v", in[i], d)
		}
	}
	if _, err := check.Alloc(op.name(), "output", int(op.d.dt.Size()), out...); err != nil {
		return nil, err
	}
	return out.Clone(), nil
}

func (op *coordOp) ReturnsPtr() bool     { return false }
func (op *coordOp) CallsExtern() bool    { return false }
func (op *coordOp) OverwritesInput() int { return -1 }

// WriteHash writes everything that sets the op apart: kind, dims, dtype, order and knots
// (exact bits), so that Gorgonia never merges two different ops.
func (op *coordOp) WriteHash(h hash.Hash) {
	d := op.d
	fmt.Fprintf(h, "graphs.%s{%d,%d,%d,%d,%v,m=%d", coordKindNames[op.kind], d.N, d.K, d.L, d.P, d.dt, op.m)
	if op.kind == opBasis {
		if op.spline == nil {
			fmt.Fprint(h, ",monomial")
		} else {
			fmt.Fprint(h, ",knots")
			for _, u := range op.spline.Knots() {
				fmt.Fprintf(h, ",%016x", math.Float64bits(u))
			}
		}
	}
	fmt.Fprint(h, "}")
}

func (op *coordOp) Hashcode() uint32 {
	h := fnv.New32a()
	op.WriteHash(h)
	return h.Sum32()
}

func (op *coordOp) String() string {
	if op.kind != opBasis {
		return coordKindNames[op.kind]
	}
	b := "Monomial"
	if op.spline != nil {
		b = "BSpline"
	}
	return fmt.Sprintf("%s%s{m=%d}", coordKindNames[op.kind], b, op.m)
}

func (op *coordOp) DiffWRT(inputs int) []bool {
	mask := make([]bool, inputs)
	for i := range mask {
		mask[i] = true
	}
	return mask
}

// SymDiff builds the gradients from the family: with g the gradient of the output,
//
//	Φ^(m)(t):     ∂t = Dot(g, Φ^(m+1)(t))
//	Decode(x,B):  ∂x = DecodeT(g,B),  ∂B = Outer(x,g)
//	DecodeT(G,B): ∂G = Decode(g,B),   ∂B = Outer(g,G)
//	Outer(X,G):   ∂X = DecodeT(G,g),  ∂G = Decode(X,g)
//	Dot(a,c):     ∂a = Scale(g,c),    ∂c = Scale(g,a)
//	Scale(u,c):   ∂u = Dot(g,c),      ∂c = Scale(u,g)
func (op *coordOp) SymDiff(inputs gorgonia.Nodes, output, grad *gorgonia.Node) (gorgonia.Nodes, error) {
	if len(inputs) != op.Arity() || grad == nil {
		return nil, check.Errorf(gatejet.ErrParam, op.name(), "", "want %d inputs and a gradient", op.Arity())
	}
	apply := func(k coordKind, a, b *gorgonia.Node) (*gorgonia.Node, error) {
		return gorgonia.ApplyOp(&coordOp{caller: op.caller, kind: k, d: op.d}, a, b)
	}
	x, y, g := inputs[0], (*gorgonia.Node)(nil), grad
	if len(inputs) > 1 {
		y = inputs[1]
	}
	type pair struct {
		k    coordKind
		a, b *gorgonia.Node
	}
	var rules []pair
	switch op.kind {
	case opBasis:
		next, err := gorgonia.ApplyOp(&coordOp{caller: op.caller, kind: opBasis, d: op.d, m: op.m + 1, spline: op.spline}, x)
		if err != nil {
			return nil, err
		}
		rules = []pair{{opDot, g, next}}
	case opDecode:
		rules = []pair{{opDecodeT, g, y}, {opOuter, x, g}}
	case opDecodeT:
		rules = []pair{{opDecode, g, y}, {opOuter, g, x}}
	case opOuter:
		rules = []pair{{opDecodeT, y, g}, {opDecode, x, g}}
	case opDot:
		rules = []pair{{opScale, g, y}, {opScale, g, x}}
	case opScale:
		rules = []pair{{opDot, g, y}, {opScale, x, g}}
	}
	out := make(gorgonia.Nodes, len(rules))
	for i, r := range rules {
		var err error
		if out[i], err = apply(r.k, r.a, r.b); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func (op *coordOp) Do(vals ...gorgonia.Value) (gorgonia.Value, error) {
	in, outShape := op.shapes()
	if len(vals) != len(in) {
		return nil, check.Errorf(gatejet.ErrParam, op.name(), "", "want %d inputs, got %d", len(in), len(vals))
	}
	ts := make([]*tensor.Dense, len(vals))
	for i, v := range vals {
		t, ok := v.(*tensor.Dense)
		if !ok {
			return nil, check.Errorf(gatejet.ErrParam, op.name(), fmt.Sprint("input ", i), "want a *tensor.Dense, got %T", v)
		}
		if t.Dtype() != op.d.dt || !t.Shape().Eq(in[i]) {
			return nil, check.Errorf(gatejet.ErrShape, op.name(), fmt.Sprint("input ", i), "want %v %v, got %v %v", op.d.dt, in[i], t.Dtype(), t.Shape())
		}
		if in[i].TotalSize() > 0 && (t.IsMaterializable() || t.RequiresIterator() || !t.DataOrder().IsRowMajor()) {
			m, ok := t.Materialize().(*tensor.Dense)
			if !ok || m.RequiresIterator() || !m.DataOrder().IsRowMajor() {
				return nil, check.Errorf(gatejet.ErrParam, op.name(), fmt.Sprint("input ", i), "cannot lay the value out row-major")
			}
			t = m
		}
		ts[i] = t
	}
	if _, err := check.Alloc(op.name(), "output", int(op.d.dt.Size()), outShape...); err != nil {
		return nil, err
	}
	out := tensor.New(tensor.Of(op.d.dt), tensor.WithShape(outShape.Clone()...))
	var err error
	if op.d.dt == tensor.Float64 {
		err = coordCompute(op, out.Data().([]float64), ts)
	} else {
		err = coordCompute(op, out.Data().([]float32), ts)
	}
	if err != nil {
		return nil, err
	}
	return out, nil
}

func coordCompute[T gatejet.Float](op *coordOp, out []T, ts []*tensor.Dense) error {
	d := op.d
	x := dataOf[T](ts[0])
	var y []T
	if len(ts) > 1 {
		y = dataOf[T](ts[1])
	}
	switch op.kind {
	case opBasis:
		return evalBasis(op, out, x)
	case opDecode:
		basis.Decode(out, x, y, d.N, d.K, d.L, d.P)
	case opDecodeT:
		basis.DecodeT(out, x, y, d.N, d.K, d.L, d.P)
	case opOuter:
		basis.Outer(out, x, y, d.N, d.K, d.L, d.P)
	case opDot:
		basis.Dot(out, x, y, d.L)
	case opScale:
		basis.Scale(out, x, y, d.L)
	}
	return nil
}

// dataOf returns t's elements, nil for an empty tensor (whose Data is not a slice).
func dataOf[T gatejet.Float](t *tensor.Dense) []T {
	if t.Shape().TotalSize() == 0 {
		return nil
	}
	return t.Data().([]T)
}

// evalBasis writes Φ^(m)(t[r]) into row r of out, in float64. A coordinate outside a
// spline's span is an ErrParam error naming t; NaN gives a NaN row.
func evalBasis[T gatejet.Float](op *coordOp, out, t []T) error {
	L := op.d.L
	row := make([]float64, L)
	for r, tv := range t {
		x := float64(tv)
		if s := op.spline; s == nil {
			basis.Monomial(row, x, op.m)
		} else {
			lo, hi := s.Span()
			// A Float32 coordinate at an end of the span is that end rounded to float32,
			// which may fall just outside it.
			if tv == T(lo) {
				x = lo
			} else if tv == T(hi) {
				x = hi
			}
			if !s.In(x) && !math.IsNaN(x) {
				return check.Errorf(gatejet.ErrParam, op.name(), "t",
					"t[%d,%d] = %v is outside the knots' span [%v, %v]", r/op.d.K, r%op.d.K, x, lo, hi)
			}
			s.Eval(row, x, op.m)
		}
		o := out[r*L : (r+1)*L]
		for b, v := range row {
			o[b] = T(v)
		}
	}
	return nil
}

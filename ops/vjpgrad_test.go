package ops_test

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/floats"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/gatejet/gatejet"
	"github.com/gatejet/gatejet/graphs"
	"github.com/gatejet/gatejet/internal/kernel"
	"github.com/gatejet/gatejet/internal/testkit"
	"github.com/gatejet/gatejet/ops"
)

// invTau is the softmax gate's parameter in the second-order tests.
const invTau = 1.3

// gateFloats returns the floats the second-order tests call gate g with for k atoms: invTau
// for the softmax gate, logistic() for the logistic gate (each test's own), and for any other
// gate of the table the floats the jet cases call it with (ops.SampleFloats).
func gateFloats(g *kernel.Gate, k int, logistic func() []float64) []float64 {
	switch g {
	case kernel.SoftmaxGate:
		return []float64{invTau}
	case kernel.LogisticGate:
		return logistic()
	}
	return ops.SampleFloats(g, k)
}

// gateName names gate g in subtests and messages: "logistic=false" and "logistic=true" for
// the built-in gates (the names these tests have always had), "gate=<Name>" for any other.
func gateName(g *kernel.Gate) string {
	switch g {
	case kernel.SoftmaxGate:
		return "logistic=false"
	case kernel.LogisticGate:
		return "logistic=true"
	}
	return "gate=" + g.Name
}

// valueLoss builds c = Σ (ẑ − y)² + Σ tanh(ẑ) over the value channel of gate g, with logits
// l [n,K] and decoded D [n,K,P] as inputs.
func valueLoss(t *testing.T, gate *kernel.Gate) (l, d, c *G.Node) {
	t.Helper()
	const n, k, p = 3, 4, 2
	rng := rand.New(rand.NewPCG(5, 7))
	vals := func(m int) []float64 {
		x := make([]float64, m)
		for i := range x {
			x[i] = rng.NormFloat64()
		}
		return x
	}
	g := G.NewGraph()
	l = G.NewMatrix(g, tensor.Float64, G.WithShape(n, k), G.WithName("l"),
		G.WithValue(tensor.New(tensor.WithShape(n, k), tensor.WithBacking(vals(n*k)))))
	d = G.NewTensor(g, tensor.Float64, 3, G.WithShape(n, k, p), G.WithName("D"),
		G.WithValue(tensor.New(tensor.WithShape(n, k, p), tensor.WithBacking(vals(n*k*p)))))
	y := G.NewConstant(tensor.New(tensor.WithShape(n, p), tensor.WithBacking(vals(n*p))), G.WithName("y"))
	z, err := ops.JetOp(kernel.Value, gate, l, d, nil, gateFloats(gate, k, func() []float64 {
		return []float64{0.7, 1.3, -0.9, 2, 0.1, -0.2, 0.3, 0} // α, β
	}))
	require.NoError(t, err)
	r := G.Must(G.Sub(z, y))
	c = G.Must(G.Add(G.Must(G.Sum(G.Must(G.Square(r)))), G.Must(G.Sum(G.Must(G.Tanh(z))))))
	return l, d, c
}

// TestValueVJPHessianVectorProduct: the Hessian-vector product of a loss on the value channel,
// Grad of ⟨∇c, v⟩ through the value channel's differentiable VJP, agrees with central
// differences of ∇c along v, for every gate of the table, in the logits and the decoded
// values at once.
func TestValueVJPHessianVectorProduct(t *testing.T) {
	for _, gate := range kernel.Gates() {
		l, d, c := valueLoss(t, gate)
		grads, err := graphs.Grad(c, l, d)
		require.NoError(t, err)
		g := l.Graph()
		vl := G.NewMatrix(g, tensor.Float64, G.WithShape(l.Shape()...), G.WithName("vl"),
			G.WithValue(tensor.New(tensor.WithShape(l.Shape()...), tensor.WithBacking([]float64{
				0.3, -1, 0.5, 0.2, 1.1, 0.4, -0.6, 0.9, -0.2, 0.8, 0.1, -0.7}))))
		vdData := make([]float64, d.Shape().TotalSize())
		for i := range vdData {
			vdData[i] = math.Sin(float64(i) + 0.5)
		}
		vd := G.NewTensor(g, tensor.Float64, 3, G.WithShape(d.Shape()...), G.WithName("vd"),
			G.WithValue(tensor.New(tensor.WithShape(d.Shape()...), tensor.WithBacking(vdData))))
		dir := G.Must(G.Add(G.Must(G.Sum(G.Must(G.HadamardProd(grads[0], vl)))),
			G.Must(G.Sum(G.Must(G.HadamardProd(grads[1], vd))))))
		hv, err := graphs.Grad(dir, l, d)
		require.NoError(t, err)
		got := eval(t, hv[0], hv[1])
		fd := centralDiff(t, []*G.Node{l, d}, [][]float64{vl.Value().Data().([]float64), vdData}, 1e-5, grads[0], grads[1])
		for j, name := range []string{"H·v in l", "H·v in D"} {
			for i, want := range fd[j] {
				if diff := math.Abs(got[j][i] - want); diff > 1e-7*(1+math.Abs(want)) {
					t.Fatalf("%s %s[%d]: got %.12g, central difference %.12g", gateName(gate), name, i, got[j][i], want)
				}
			}
		}
	}
}

// TestSecondVJPNotDifferentiable: the second channel's VJP is not differentiable (the value,
// first and Gauss-Newton channels' are), and Grad says which op stops it.
func TestSecondVJPNotDifferentiable(t *testing.T) {
	g := G.NewGraph()
	l := G.NewMatrix(g, tensor.Float64, G.WithShape(2, 3), G.WithName("l"),
		G.WithValue(tensor.New(tensor.WithShape(2, 3), tensor.WithBacking([]float64{1, 2, 3, 4, 5, 6}))))
	d := G.NewTensor(g, tensor.Float64, 3, G.WithShape(2, 3, 1), G.WithName("D"),
		G.WithValue(tensor.New(tensor.WithShape(2, 3, 1), tensor.WithBacking([]float64{1, 0, 2, 1, 3, 0}))))
	f, err := ops.SoftmaxJetSecond(l, d, 1)
	require.NoError(t, err)
	c := G.Must(G.Sum(G.Must(G.Square(f))))
	gl, err := graphs.Grad(c, l)
	require.NoError(t, err)
	_, err = graphs.Grad(G.Must(G.Sum(G.Must(G.Square(gl[0])))), l)
	require.ErrorIs(t, err, graphs.ErrNotDifferentiable)
	var ge *gatejet.Error
	require.True(t, errors.As(err, &ge))
	require.Contains(t, err.Error(), "SoftmaxJetSecondVJP")
}

// firstShapes are the batch shapes [n,K,P] the first channel's second-order tests run on,
// K = 1 and P = 1 included. (With K = 1 the softmax gate is constant, so its first channel
// and all its derivatives are zero; the logistic gate is not.)
var firstShapes = [][3]int{{3, 4, 2}, {2, 1, 3}, {2, 3, 1}, {1, 1, 1}, {4, 5, 3}}

// firstGraph is a graph on the first channel of a gate of the table: logits l [n,K] and
// decoded D [n,K,P] are inputs, f is the first channel and c = Σ W⊙f + Σ tanh(f), so that
// the Hessian of c in (l, D) is not that of a linear cost.
type firstGraph struct {
	g       *G.ExprGraph
	l, d, f *G.Node
	c       *G.Node
	gate    *kernel.Gate
	floats  []float64 // the gate's parameters
}

// normals returns m standard normal values rounded to float32, so that a float32 graph sees
// the same inputs as a float64 one.
func normals(rng *rand.Rand, m int) []float64 {
	x := make([]float64, m)
	for i := range x {
		x[i] = float64(float32(rng.NormFloat64()))
	}
	return x
}

// variable is an input node of g named name holding vals.
func variable(g *G.ExprGraph, dt tensor.Dtype, name string, shape []int, vals []float64) *G.Node {
	return G.NewTensor(g, dt, len(shape), G.WithShape(shape...), G.WithName(name), G.WithValue(dense(dt, shape, vals)))
}

// newFirstGraph builds a firstGraph of dtype dt for shape sh from seed.
func newFirstGraph(t *testing.T, dt tensor.Dtype, gate *kernel.Gate, sh [3]int, seed uint64, opts ...ops.Option) *firstGraph {
	return lossGraph(t, false, dt, gate, sh, seed, opts...)
}

// newGNGraph is a firstGraph whose channel f is the Gauss-Newton slabs [n,K,K] instead of the
// first channel: c = Σ W⊙GN + Σ tanh(GN).
func newGNGraph(t *testing.T, dt tensor.Dtype, gate *kernel.Gate, sh [3]int, seed uint64, opts ...ops.Option) *firstGraph {
	return lossGraph(t, true, dt, gate, sh, seed, opts...)
}

// lossGraph builds the loss c = Σ W⊙f + Σ tanh(f) of dtype dt for shape sh from seed, f the
// first channel or (gn) the Gauss-Newton slabs of gate.
func lossGraph(t *testing.T, gn bool, dt tensor.Dtype, gate *kernel.Gate, sh [3]int, seed uint64, opts ...ops.Option) *firstGraph {
	t.Helper()
	n, k, p := sh[0], sh[1], sh[2]
	c, stream, wShape := kernel.First, uint64(11), []int{n, k, p}
	if gn {
		c, stream, wShape = kernel.GaussNewton, 17, []int{n, k, k}
	}
	rng := rand.New(rand.NewPCG(seed, stream))
	fg := &firstGraph{g: G.NewGraph(), gate: gate}
	fg.l = variable(fg.g, dt, "l", []int{n, k}, normals(rng, n*k))
	fg.d = variable(fg.g, dt, "D", []int{n, k, p}, normals(rng, n*k*p))
	w := G.NewConstant(dense(dt, wShape, normals(rng, wShape[0]*wShape[1]*wShape[2])), G.WithName("W"))
	fg.floats = gateFloats(gate, k, func() []float64 {
		alpha, beta := normals(rng, k), normals(rng, k)
		for i := range alpha {
			alpha[i] += math.Copysign(0.5, alpha[i]) // |α| ≥ 0.5: a gate that moves
		}
		return slices.Concat(alpha, beta)
	})
	var err error
	fg.f, err = ops.JetOp(c, gate, fg.l, fg.d, nil, fg.floats, opts...)
	require.NoError(t, err)
	fg.c = G.Must(G.Add(inner(fg.f, w), G.Must(G.Sum(G.Must(G.Tanh(fg.f))))))
	return fg
}

// inner is ⟨a, b⟩ as a node.
func inner(a, b *G.Node) *G.Node { return G.Must(G.Sum(G.Must(G.HadamardProd(a, b)))) }

// eval runs each node on its own tape machine (a tape may reuse an intermediate's memory) and
// returns its value as float64.
func eval(t *testing.T, ns ...*G.Node) [][]float64 {
	t.Helper()
	out := make([][]float64, len(ns))
	for i, n := range ns {
		m := G.NewTapeMachine(n.Graph().SubgraphRoots(n))
		require.NoError(t, m.RunAll())
		switch v := n.Value().(type) {
		case *G.F64:
			out[i] = []float64{float64(*v)}
		case *G.F32:
			out[i] = []float64{float64(*v)}
		case *tensor.Dense:
			switch d := v.Data().(type) {
			case []float64:
				out[i] = append([]float64(nil), d...)
			case []float32:
				for _, x := range d {
					out[i] = append(out[i], float64(x))
				}
			}
		}
		m.Close()
	}
	return out
}

// hvp builds the gradient (∇_l c, ∇_D c) and, with graphs.Grad of ⟨∇c, (vl, vd)⟩, the
// Hessian-vector product H·(vl, vd) of the graph's cost, directions given as values.
func (fg *firstGraph) hvp(t *testing.T, vl, vd []float64) (grads, hv G.Nodes) {
	t.Helper()
	grads, err := graphs.Grad(fg.c, fg.l, fg.d)
	require.NoError(t, err)
	hv = fg.hvpOf(t, grads, vl, vd)
	return grads, hv
}

func (fg *firstGraph) hvpOf(t *testing.T, grads G.Nodes, vl, vd []float64) G.Nodes {
	t.Helper()
	dt := fg.l.Dtype()
	vln := G.NewConstant(dense(dt, fg.l.Shape(), vl))
	vdn := G.NewConstant(dense(dt, fg.d.Shape(), vd))
	hv, err := graphs.Grad(G.Must(G.Add(inner(grads[0], vln), inner(grads[1], vdn))), fg.l, fg.d)
	require.NoError(t, err)
	return hv
}

// relErr is max_i |got_i − want_i| / (1 + max_i |want_i|).
func relErr(got, want []float64) float64 {
	scale, e := 1.0, 0.0
	for i := range want {
		scale = math.Max(scale, 1+math.Abs(want[i]))
		e = math.Max(e, math.Abs(got[i]-want[i]))
	}
	return e / scale
}

// centralDiff returns (f(x + h·dir) − f(x − h·dir)) / 2h for the float64 inputs xs with
// directions dirs, each f a node evaluated at the perturbed inputs; the inputs are restored.
func centralDiff(t *testing.T, xs []*G.Node, dirs [][]float64, h float64, fs ...*G.Node) [][]float64 {
	t.Helper()
	data := make([][]float64, len(xs))
	for i, x := range xs {
		data[i] = x.Value().Data().([]float64)
	}
	var lens []int
	d := testkit.FDAlong(data, dirs, h, func() []float64 {
		vals := eval(t, fs...)
		lens = lens[:0]
		for _, v := range vals {
			lens = append(lens, len(v))
		}
		return slices.Concat(vals...)
	})
	out := make([][]float64, len(fs))
	for i, n := range lens {
		out[i], d = d[:n:n], d[n:]
	}
	return out
}

// secondOrder is a channel whose VJP is differentiable: the loss on it that the second-order
// tests differentiate twice (c = Σ W⊙X + Σ tanh(X), logits and decoded variables), and the
// batch shapes [n,K,P] they run on.
type secondOrder struct {
	name   string
	shapes [][3]int
	graph  func(t *testing.T, dt tensor.Dtype, gate *kernel.Gate, sh [3]int, seed uint64, opts ...ops.Option) *firstGraph
}

var secondOrders = []secondOrder{{"first", firstShapes, newFirstGraph}, {"GaussNewton", gnShapes, newGNGraph}}

// forGatesAndShapes runs f as the subtest "<gateName>/[n K P]" for every gate of the table
// (kernel.Gates) and each of shapes, i the shape's index (from which the tests seed their
// inputs).
func forGatesAndShapes(t *testing.T, shapes [][3]int, f func(t *testing.T, gate *kernel.Gate, i int, sh [3]int)) {
	for _, gate := range kernel.Gates() {
		for i, sh := range shapes {
			t.Run(fmt.Sprintf("%s/%v", gateName(gate), sh), func(t *testing.T) { f(t, gate, i, sh) })
		}
	}
}

// requireFD checks a gradient against its central differences, to 1e-7 relative to
// 1 + max |fd|, and logs the error.
func requireFD(t *testing.T, what string, got, fd []float64) {
	t.Helper()
	e := relErr(got, fd)
	t.Logf("%s: max error %.2g", what, e)
	require.LessOrEqual(t, e, 1e-7, "%s: got %v, central differences %v", what, got, fd)
}

// TestVJPHessianVectorProduct: the Hessian-vector product of a loss on the first channel or
// the Gauss-Newton slabs, graphs.Grad of ⟨∇c, v⟩ through the channel's differentiable VJP,
// agrees with central differences of ∇c along v (logits and decoded at once), for every gate
// of the table and several shapes; and the Hessian it implies is symmetric:
// ⟨u, H·v⟩ = ⟨v, H·u⟩ to round-off, which finite differences cannot see at that accuracy.
func TestVJPHessianVectorProduct(t *testing.T) {
	for _, so := range secondOrders {
		t.Run(so.name, func(t *testing.T) {
			forGatesAndShapes(t, so.shapes, func(t *testing.T, gate *kernel.Gate, i int, sh [3]int) {
				fg := so.graph(t, tensor.Float64, gate, sh, uint64(i+1))
				rng := rand.New(rand.NewPCG(uint64(i), 3))
				nl, nd := sh[0]*sh[1], sh[0]*sh[1]*sh[2]
				vl, vd := normals(rng, nl), normals(rng, nd)
				ul, ud := normals(rng, nl), normals(rng, nd)
				grads, hv := fg.hvp(t, vl, vd)
				hu := fg.hvpOf(t, grads, ul, ud)
				got := eval(t, hv[0], hv[1], hu[0], hu[1])
				want := centralDiff(t, []*G.Node{fg.l, fg.d}, [][]float64{vl, vd}, 1e-5, grads[0], grads[1])
				requireFD(t, "H·v in l", got[0], want[0])
				requireFD(t, "H·v in D", got[1], want[1])
				uHv, vHu := floats.Dot(ul, got[0])+floats.Dot(ud, got[1]), floats.Dot(vl, got[2])+floats.Dot(vd, got[3])
				sym := math.Abs(uHv-vHu) / (1 + math.Abs(uHv))
				t.Logf("symmetry: ⟨u,Hv⟩ = %.15g, ⟨v,Hu⟩ = %.15g, relative difference %.2g", uHv, vHu, sym)
				require.LessOrEqual(t, sym, 1e-12)
			})
		})
	}
}

// TestVJPHessianGradCheck: graphs.GradCheck, which differentiates with graphs.Grad and
// compares with central differences of the cost itself, passes on ⟨∇c, v⟩ for a loss on the
// first channel or the Gauss-Newton slabs, in logits and decoded, for every gate of the table,
// in float64 (tight tolerances) and float32 (the default ones).
func TestVJPHessianGradCheck(t *testing.T) {
	for _, so := range secondOrders {
		for _, dt := range []tensor.Dtype{tensor.Float64, tensor.Float32} {
			t.Run(fmt.Sprintf("%s/%v", so.name, dt), func(t *testing.T) {
				forGatesAndShapes(t, so.shapes, func(t *testing.T, gate *kernel.Gate, i int, sh [3]int) {
					fg := so.graph(t, dt, gate, sh, uint64(10+i))
					rng := rand.New(rand.NewPCG(uint64(i), 5))
					grads, err := graphs.Grad(fg.c, fg.l, fg.d)
					require.NoError(t, err)
					vl := G.NewConstant(dense(dt, fg.l.Shape(), normals(rng, fg.l.Shape().TotalSize())))
					vd := G.NewConstant(dense(dt, fg.d.Shape(), normals(rng, fg.d.Shape().TotalSize())))
					dir := G.Must(G.Add(inner(grads[0], vl), inner(grads[1], vd)))
					var opts []graphs.CheckOption
					if dt == tensor.Float64 {
						opts = append(opts, graphs.WithStep(1e-5), graphs.WithTolerance(1e-7, 1e-8))
					}
					rep, err := graphs.GradCheck(dir, G.Nodes{fg.l, fg.d}, opts...)
					require.NoError(t, err, "%v", rep)
					for _, n := range rep.Nodes {
						t.Logf("%s: max abs error %.2g, max rel error %.2g", n.Name, n.MaxAbsErr, n.MaxRelErr)
					}
				})
			})
		}
	}
}

// TestVJPHessianFloat32: the float32 Hessian-vector product of a loss on the first channel or
// the Gauss-Newton slabs agrees with the float64 one (checked above against finite
// differences) at the same inputs, within float32's precision; and with ReuseOutput, which
// the gradient ops inherit, the float64 one is unchanged.
func TestVJPHessianFloat32(t *testing.T) {
	for _, so := range secondOrders {
		t.Run(so.name, func(t *testing.T) {
			forGatesAndShapes(t, so.shapes, func(t *testing.T, gate *kernel.Gate, i int, sh [3]int) {
				rng := rand.New(rand.NewPCG(uint64(i), 13))
				vl, vd := normals(rng, sh[0]*sh[1]), normals(rng, sh[0]*sh[1]*sh[2])
				hvpOf := func(dt tensor.Dtype, opts ...ops.Option) [][]float64 {
					fg := so.graph(t, dt, gate, sh, uint64(30+i), opts...)
					_, hv := fg.hvp(t, vl, vd)
					return eval(t, hv[0], hv[1])
				}
				want, got := hvpOf(tensor.Float64), hvpOf(tensor.Float32)
				reused := hvpOf(tensor.Float64, ops.ReuseOutput())
				for j, name := range []string{"H·v in l", "H·v in D"} {
					e := relErr(got[j], want[j])
					t.Logf("%s: float32 against float64, max error %.2g", name, e)
					require.LessOrEqual(t, e, 1e-6, "%s: float32 %v, float64 %v", name, got[j], want[j])
					require.Equal(t, want[j], reused[j], "%s with ReuseOutput", name)
				}
			})
		})
	}
}

// fdGradients returns central differences (h = 1e-5) of the scalars fs with respect to every
// coordinate of every input xs: out[f][x] approximates ∂fs[f]/∂xs[x].
func fdGradients(t *testing.T, xs []*G.Node, fs ...*G.Node) [][][]float64 {
	t.Helper()
	out := make([][][]float64, len(fs))
	for f := range fs {
		out[f] = make([][]float64, len(xs))
	}
	for xi, x := range xs {
		size := x.Shape().TotalSize()
		for f := range fs {
			out[f][xi] = make([]float64, size)
		}
		for j := range size {
			dirs := make([][]float64, len(xs))
			for i, y := range xs {
				dirs[i] = make([]float64, y.Shape().TotalSize())
			}
			dirs[xi][j] = 1
			fd := centralDiff(t, xs, dirs, 1e-5, fs...)
			for f := range fs {
				out[f][xi][j] = fd[f][0]
			}
		}
	}
	return out
}

// TestFirstVJPPartials checks each gradient of the first channel's VJP ops on its own: with
// dl, dD the VJP of ⟨G, first⟩ (G an input), the gradients of Sl = ⟨Ul, dl⟩ and
// SD = ⟨UD, dD⟩ with respect to logits, decoded and G agree with central differences of Sl
// and SD, and SD does not depend on decoded (graphs.Grad refuses that gradient: the VJP's
// DiffWRT says so). For the logistic gate the gradients are also checked against their
// closed forms (σ at x = α_a l_a + β_a):
//
//	Sl: ∂/∂G = Ul α² σ'' D   ∂/∂D = Ul α² σ'' G   ∂/∂l_a = Ul_a α³ σ''' Σ_c G D
//	SD: ∂/∂G = UD α σ'       ∂/∂l_a = α² σ'' Σ_c UD G
func TestFirstVJPPartials(t *testing.T) {
	forGatesAndShapes(t, firstShapes, func(t *testing.T, gate *kernel.Gate, i int, sh [3]int) {
		n, k, p := sh[0], sh[1], sh[2]
		fg := newFirstGraph(t, tensor.Float64, gate, sh, uint64(20+i))
		vp := newVJPPartials(t, fg, rand.New(rand.NewPCG(uint64(i), 9)), "JetFirstVJP")
		require.Equal(t, []bool{true, true, true}, vp.vjp[0].Op().(G.SDOp).DiffWRT(3))
		require.Equal(t, []bool{true, false, true}, vp.vjp[1].Op().(G.SDOp).DiffWRT(3))
		_, err := graphs.Grad(vp.sd, fg.d)
		require.ErrorIs(t, err, graphs.ErrNotDifferentiable, "dD does not depend on decoded")

		xs := []*G.Node{fg.l, fg.d, vp.gv}
		gl, err := graphs.Grad(vp.sl, xs...)
		require.NoError(t, err)
		gd, err := graphs.Grad(vp.sd, fg.l, vp.gv)
		require.NoError(t, err)
		got := eval(t, gl[0], gl[1], gl[2], gd[0], gd[1])
		gotSl, gotSD := got[:3], [][]float64{got[3], nil, got[4]}

		fd := fdGradients(t, xs, vp.sl, vp.sd)
		for xi, x := range xs {
			requireFD(t, "∂Sl/∂"+x.Name(), gotSl[xi], fd[0][xi])
			if fdSD := fd[1][xi]; x == fg.d {
				require.LessOrEqual(t, relErr(fdSD, make([]float64, len(fdSD))), 1e-9, "SD depends on decoded: %v", fdSD)
			} else {
				requireFD(t, "∂SD/∂"+x.Name(), gotSD[xi], fdSD)
			}
		}
		if gate != kernel.LogisticGate {
			return
		}
		// The logistic gate's closed forms.
		alpha, beta := fg.floats[:k], fg.floats[k:]
		ls, ds, gs := fg.l.Value().Data().([]float64), fg.d.Value().Data().([]float64), vp.gv.Value().Data().([]float64)
		uls, uds := vp.ul.Value().Data().([]float64), vp.ud.Value().Data().([]float64)
		want := [][]float64{make([]float64, n*k), make([]float64, n*k*p), make([]float64, n*k*p), make([]float64, n*k), make([]float64, n*k*p)}
		for r := range n {
			for a := range k {
				ra, al := r*k+a, alpha[a]
				s := 1 / (1 + math.Exp(-(al*ls[ra] + beta[a])))
				s1 := s * (1 - s)
				s2, s3 := s1*(1-2*s), s1*(1-6*s1)
				for c := range p {
					i := ra*p + c
					want[0][ra] += uls[ra] * al * al * al * s3 * gs[i] * ds[i]
					want[1][i] = uls[ra] * al * al * s2 * gs[i]
					want[2][i] = uls[ra] * al * al * s2 * ds[i]
					want[3][ra] += al * al * s2 * uds[i] * gs[i]
					want[4][i] = uds[i] * al * s1
				}
			}
		}
		for j, name := range []string{"∂Sl/∂l", "∂Sl/∂D", "∂Sl/∂G", "∂SD/∂l", "∂SD/∂G"} {
			e := relErr(got[j], want[j])
			t.Logf("%s against the closed form: max error %.2g", name, e)
			require.LessOrEqual(t, e, 1e-12, "%s: got %v, closed form %v", name, got[j], want[j])
		}
	})
}

// vjpPartials are the scalars whose gradients the partials tests check: on a loss graph, with
// G an input of its channel's shape and (dl, dD) the VJP of ⟨G, f⟩, Sl = ⟨Ul, dl⟩ and
// SD = ⟨UD, dD⟩ for constant Ul and UD.
type vjpPartials struct {
	gv, ul, ud *G.Node
	vjp        G.Nodes
	sl, sd     *G.Node
}

// newVJPPartials builds the vjpPartials of fg from rng, checking that the VJP is the op named
// op.
func newVJPPartials(t *testing.T, fg *firstGraph, rng *rand.Rand, op string) vjpPartials {
	t.Helper()
	vals := func(n *G.Node) []float64 { return normals(rng, n.Shape().TotalSize()) }
	vp := vjpPartials{gv: variable(fg.g, tensor.Float64, "G", fg.f.Shape(), vals(fg.f))}
	var err error
	vp.vjp, err = graphs.Grad(inner(fg.f, vp.gv), fg.l, fg.d)
	require.NoError(t, err)
	require.Contains(t, vp.vjp[0].Op().String(), op)
	require.Contains(t, vp.vjp[1].Op().String(), op)
	vp.ul = G.NewConstant(dense(tensor.Float64, fg.l.Shape(), vals(fg.l)))
	vp.ud = G.NewConstant(dense(tensor.Float64, fg.d.Shape(), vals(fg.d)))
	vp.sl, vp.sd = inner(vp.vjp[0], vp.ul), inner(vp.vjp[1], vp.ud)
	return vp
}

// TestVJPThirdOrderNotDifferentiable: a third derivative of a loss on the first channel or
// the Gauss-Newton slabs passes through the HVP's VJP, which is not differentiable.
// graphs.Grad reports it, naming the op, although the logits also reach the cost through
// differentiable ops (the HVP's VJP is not dropped as if it were a constant, which would give
// a wrong third derivative).
func TestVJPThirdOrderNotDifferentiable(t *testing.T) {
	for _, so := range secondOrders {
		for _, gate := range kernel.Gates() {
			fg := so.graph(t, tensor.Float64, gate, [3]int{2, 3, 2}, 1)
			grads, err := graphs.Grad(fg.c, fg.l)
			require.NoError(t, err)
			hv, err := graphs.Grad(G.Must(G.Sum(G.Must(G.Square(grads[0])))), fg.l)
			require.NoError(t, err)
			_, err = graphs.Grad(G.Must(G.Sum(G.Must(G.Square(hv[0])))), fg.l)
			require.ErrorIs(t, err, graphs.ErrNotDifferentiable, "%s, %s", so.name, gateName(gate))
			require.Contains(t, err.Error(), "JetHVPVJP")
		}
	}
}

// TestDoubleBackwardThirdOrderNotDifferentiable: a third derivative through Softmax,
// LogSoftmax or an activation passes through a double backward, which is not differentiable.
// graphs.Grad reports it, naming the op, although x also reaches the cost through
// differentiable ops: the double backward is not dropped as if it were a constant, which
// would give a wrong third derivative.
func TestDoubleBackwardThirdOrderNotDifferentiable(t *testing.T) {
	for _, tc := range []struct {
		name string
		f    func(x *G.Node) (*G.Node, error)
	}{
		{"SoftmaxBackwardGrad", func(x *G.Node) (*G.Node, error) { return ops.Softmax(x, 1) }},
		{"LogSoftmaxBackwardGrad", func(x *G.Node) (*G.Node, error) { return ops.LogSoftmax(x, 1) }},
		{"GELUBackwardGrad", func(x *G.Node) (*G.Node, error) { return ops.GELU(x) }},
		{"SiLUBackwardGrad", func(x *G.Node) (*G.Node, error) { return ops.SiLU(x) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := G.NewGraph()
			x := variable(g, tensor.Float64, "x", []int{2, 3}, []float64{0.3, -0.5, 1.1, 0.2, 0.9, -1})
			y, err := tc.f(x)
			require.NoError(t, err)
			w := G.NewConstant(dense(tensor.Float64, []int{2, 3}, []float64{1, -2, 0.5, 0.3, 2, -1}))
			c := G.Must(G.Add(inner(y, w), G.Must(G.Sum(G.Must(G.Tanh(y))))))
			g1, err := graphs.Grad(c, x)
			require.NoError(t, err)
			g2, err := graphs.Grad(G.Must(G.Sum(G.Must(G.Square(g1[0])))), x)
			require.NoError(t, err)
			_, err = graphs.Grad(G.Must(G.Sum(G.Must(G.Square(g2[0])))), x)
			require.ErrorIs(t, err, graphs.ErrNotDifferentiable)
			require.Contains(t, err.Error(), tc.name)
		})
	}
}

// TestDoubleBackwardIgnoresDy: the gradient of a backward op with respect to its dy
// (SoftmaxBackwardGrad, LogSoftmaxBackwardGrad and the activations' *BackwardGrad, wrt dy)
// does not read dy, so a variable that reaches a cost through that input and also directly
// has a gradient: graphs.Grad gives it, and it agrees with central differences. Here w is the
// dy of a backward op built explicitly, gw = ∇_w Σ c0⊙backward(·, w) is a double backward wrt
// dy, and the cost Σ gw⊙w reaches w both through gw's dy input and directly.
func TestDoubleBackwardIgnoresDy(t *testing.T) {
	for _, tc := range []struct {
		name string
		f    func(y, dy *G.Node) (*G.Node, error)
	}{
		{"SoftmaxBackwardGrad", func(y, dy *G.Node) (*G.Node, error) { return ops.SoftmaxBackward(y, dy, 1) }},
		{"LogSoftmaxBackwardGrad", func(y, dy *G.Node) (*G.Node, error) { return ops.LogSoftmaxBackward(y, dy, 1) }},
		{"GELUBackwardGrad", func(x, dy *G.Node) (*G.Node, error) { return ops.GELUBackward(x, dy) }},
		{"SiLUBackwardGrad", func(x, dy *G.Node) (*G.Node, error) { return ops.SiLUBackward(x, dy) }},
		{"ReLUBackwardGrad", func(x, dy *G.Node) (*G.Node, error) { return ops.ReLUBackward(x, dy) }},
	} {
		for _, dt := range []tensor.Dtype{tensor.Float64, tensor.Float32} {
			t.Run(fmt.Sprintf("%s/%v", tc.name, dt), func(t *testing.T) {
				g := G.NewGraph()
				y := G.NewConstant(dense(dt, []int{2, 3}, []float64{0.2, 0.3, 0.5, -0.1, 0.6, 0.3}), G.WithName("y"))
				w := variable(g, dt, "w", []int{2, 3}, []float64{0.3, -0.5, 1.1, 0.2, 0.9, -1})
				c0 := G.NewConstant(dense(dt, []int{2, 3}, []float64{1, -2, 0.5, 0.3, 2, -1}), G.WithName("c0"))
				s, err := tc.f(y, w)
				require.NoError(t, err)
				gw, err := graphs.Grad(inner(s, c0), w)
				require.NoError(t, err)
				require.Contains(t, gw[0].Op().String(), tc.name)
				require.Contains(t, gw[0].Op().String(), "wrt dy")
				requireGradCheckOfInner(t, gw[0], w)
			})
		}
	}
}

// requireGradCheckOfInner checks the gradient in x of the cost ⟨grad, x⟩, where grad is a
// gradient that does not read x although x is one of its inputs, so that x reaches the cost
// both through grad and directly: graphs.Grad gives it and graphs.GradCheck confirms it
// (tight tolerances in float64, the default ones in float32).
func requireGradCheckOfInner(t *testing.T, grad, x *G.Node) {
	t.Helper()
	cost := inner(grad, x)
	_, err := graphs.Grad(cost, x)
	require.NoError(t, err)
	var opts []graphs.CheckOption
	if x.Dtype() == tensor.Float64 {
		opts = append(opts, graphs.WithStep(1e-6), graphs.WithTolerance(1e-8, 1e-9))
	}
	rep, err := graphs.GradCheck(cost, G.Nodes{x}, opts...)
	require.NoError(t, err, "%v", rep)
}

// TestHVPVJPIgnoresV: the HVP is linear in v, so its VJP with respect to v does not depend on
// v; a v that reaches a cost through that input and also directly has a gradient, which
// graphs.Grad gives and central differences confirm (for every gate of the table, float64 and
// float32).
func TestHVPVJPIgnoresV(t *testing.T) {
	for _, gate := range kernel.Gates() {
		for _, dt := range []tensor.Dtype{tensor.Float64, tensor.Float32} {
			t.Run(fmt.Sprintf("%s/%v", gateName(gate), dt), func(t *testing.T) {
				n, k, p := 2, 3, 2
				rng := rand.New(rand.NewPCG(41, 42))
				g := G.NewGraph()
				l := variable(g, dt, "l", []int{n, k}, normals(rng, n*k))
				d := variable(g, dt, "D", []int{n, k, p}, normals(rng, n*k*p))
				v := variable(g, dt, "v", []int{n, k}, normals(rng, n*k))
				h, err := ops.JetOp(kernel.HVP, gate, l, d, v, gateFloats(gate, k, func() []float64 {
					return []float64{0.9, -1.2, 0.6, 0.1, 0, -0.2} // α, β
				}))
				require.NoError(t, err)
				c0 := G.NewConstant(dense(dt, h.Shape(), normals(rng, h.Shape().TotalSize())))
				gv, err := graphs.Grad(inner(h, c0), v)
				require.NoError(t, err)
				require.Contains(t, gv[0].Op().String(), "JetHVPVJP")
				requireGradCheckOfInner(t, gv[0], v)
			})
		}
	}
}

// gnShapes are the batch shapes [n,K,P] the Gauss-Newton channel's second-order tests run
// on: K = 1, P = 1, K = 2 and P > K included.
var gnShapes = [][3]int{{3, 4, 2}, {2, 1, 3}, {2, 3, 1}, {1, 1, 1}, {2, 2, 5}, {3, 3, 4}}

// firstOf is the first channel of fg's gate at logits l and decoded d.
func (fg *firstGraph) firstOf(t *testing.T, l, d *G.Node) *G.Node {
	t.Helper()
	f, err := ops.JetOp(kernel.First, fg.gate, l, d, nil, fg.floats)
	require.NoError(t, err)
	return f
}

// TestGaussNewtonVJPIsFirstVJP: the Gauss-Newton VJP kernel, at upstream G, agrees to
// round-off with the first channel's VJP at upstream Ĝ = (G + Gᵀ)·first, the identity the
// Gauss-Newton VJP's gradient is built on, for every gate of the table.
func TestGaussNewtonVJPIsFirstVJP(t *testing.T) {
	forGatesAndShapes(t, gnShapes, func(t *testing.T, gate *kernel.Gate, i int, sh [3]int) {
		n, k, p := sh[0], sh[1], sh[2]
		fg := newGNGraph(t, tensor.Float64, gate, sh, uint64(50+i))
		rng := rand.New(rand.NewPCG(uint64(i), 19))
		gs := normals(rng, n*k*k)
		gv := G.NewConstant(dense(tensor.Float64, []int{n, k, k}, gs))
		want, err := graphs.Grad(inner(fg.f, gv), fg.l, fg.d)
		require.NoError(t, err)
		require.Contains(t, want[0].Op().String(), "JetGaussNewtonVJP")

		// Ĝ[r] = (G[r] + G[r]ᵀ)·first[r], by hand.
		f := eval(t, fg.firstOf(t, fg.l, fg.d))[0]
		gHat := make([]float64, n*k*p)
		for r := range n {
			for a := range k {
				for b := range k {
					s := gs[(r*k+a)*k+b] + gs[(r*k+b)*k+a]
					for c := range p {
						gHat[(r*k+a)*p+c] += s * f[(r*k+b)*p+c]
					}
				}
			}
		}
		first := fg.firstOf(t, fg.l, fg.d)
		got, err := graphs.Grad(inner(first, G.NewConstant(dense(tensor.Float64, []int{n, k, p}, gHat))), fg.l, fg.d)
		require.NoError(t, err)
		vals := eval(t, want[0], want[1], got[0], got[1])
		for j, name := range []string{"dl", "dD"} {
			e := relErr(vals[2+j], vals[j])
			t.Logf("%s: FirstVJP(Ĝ) against the Gauss-Newton VJP kernel, max error %.2g", name, e)
			require.LessOrEqual(t, e, 1e-13, "%s: FirstVJP(Ĝ) %v, Gauss-Newton VJP %v", name, vals[2+j], vals[j])
		}
	})
}

// TestGaussNewtonVJPPartials checks each gradient of the Gauss-Newton VJP ops on its own:
// with dl, dD the VJP of ⟨G, GN⟩ (G an input), the gradients of Sl = ⟨Ul, dl⟩ and
// SD = ⟨UD, dD⟩ with respect to logits, decoded and G agree with central differences of Sl
// and SD. GN is quadratic in decoded, so, unlike the other channels' dD, its dD depends on
// decoded, and both VJP ops report every input differentiable.
func TestGaussNewtonVJPPartials(t *testing.T) {
	forGatesAndShapes(t, gnShapes, func(t *testing.T, gate *kernel.Gate, i int, sh [3]int) {
		fg := newGNGraph(t, tensor.Float64, gate, sh, uint64(20+i))
		vp := newVJPPartials(t, fg, rand.New(rand.NewPCG(uint64(i), 9)), "JetGaussNewtonVJP")
		require.Equal(t, []bool{true, true, true}, vp.vjp[0].Op().(G.SDOp).DiffWRT(3))
		require.Equal(t, []bool{true, true, true}, vp.vjp[1].Op().(G.SDOp).DiffWRT(3))

		xs := []*G.Node{fg.l, fg.d, vp.gv}
		gl, err := graphs.Grad(vp.sl, xs...)
		require.NoError(t, err)
		gd, err := graphs.Grad(vp.sd, xs...)
		require.NoError(t, err)
		got := eval(t, gl[0], gl[1], gl[2], gd[0], gd[1], gd[2])
		fd := fdGradients(t, xs, vp.sl, vp.sd)
		for xi, x := range xs {
			requireFD(t, "∂Sl/∂"+x.Name(), got[xi], fd[0][xi])
			requireFD(t, "∂SD/∂"+x.Name(), got[3+xi], fd[1][xi])
		}
	})
}

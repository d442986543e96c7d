package ops_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/gatejet/gatejet"
	"github.com/gatejet/gatejet/graphs"
	"github.com/gatejet/gatejet/internal/basis"
	"github.com/gatejet/gatejet/internal/kernel"
	"github.com/gatejet/gatejet/internal/tower"
	"github.com/gatejet/gatejet/ops"
)

// coordGates are the gates with coordinate-jet constructors.
var coordGates = []*kernel.Gate{kernel.SoftmaxGate, kernel.LogisticGate}

// coordChannels are the coordinate jets' channels.
var coordChannels = []kernel.Channel{kernel.First, kernel.Second, kernel.HVP, kernel.GaussNewton}

// coordNode builds gate's coordinate jet of channel c on in (logits, d0, d1, d2, v; the
// channel takes the first c.CoordIn()) through the exported constructors, the softmax gate
// at invTau, the logistic at alpha, beta.
func coordNode(gate *kernel.Gate, c kernel.Channel, in []*G.Node, alpha, beta []float64, opts ...ops.Option) (*G.Node, error) {
	if gate == kernel.SoftmaxGate {
		switch c {
		case kernel.First:
			return ops.SoftmaxCoordJetFirst(in[0], in[1], in[2], invTau, opts...)
		case kernel.Second:
			return ops.SoftmaxCoordJetSecond(in[0], in[1], in[2], in[3], invTau, opts...)
		case kernel.HVP:
			return ops.SoftmaxCoordJetHVP(in[0], in[1], in[2], in[3], in[4], invTau, opts...)
		}
		return ops.SoftmaxCoordJetGaussNewton(in[0], in[1], in[2], invTau, opts...)
	}
	switch c {
	case kernel.First:
		return ops.LogisticCoordJetFirst(in[0], in[1], in[2], alpha, beta, opts...)
	case kernel.Second:
		return ops.LogisticCoordJetSecond(in[0], in[1], in[2], in[3], alpha, beta, opts...)
	case kernel.HVP:
		return ops.LogisticCoordJetHVP(in[0], in[1], in[2], in[3], in[4], alpha, beta, opts...)
	}
	return ops.LogisticCoordJetGaussNewton(in[0], in[1], in[2], alpha, beta, opts...)
}

// logisticParams draws α (|α| ≥ 0.5) and β for k atoms.
func logisticParams(rng *rand.Rand, k int) (alpha, beta []float64) {
	alpha, beta = normals(rng, k), normals(rng, k)
	for i := range alpha {
		alpha[i] += math.Copysign(0.5, alpha[i])
	}
	return alpha, beta
}

// TestCoordJetAgreesWithTower: every coordinate jet of both gates, in float64 and float32,
// agrees with the tower's row program with latent primaries (a monomial basis of 3 functions
// and a decoder shared by the atoms, from which the test computes d0, d1, d2): the first and
// second channels directly, the Gauss-Newton slab as first·firstᵀ and the HVP as second·v,
// to 1e-12 (float64) and 1e-5 (float32) of the largest value, at several shapes.
func TestCoordJetAgreesWithTower(t *testing.T) {
	const nb = 3
	for _, gate := range coordGates {
		for si, sh := range [][3]int{{3, 3, 2}, {2, 1, 3}, {2, 4, 1}, {1, 6, 5}} {
			n, k, p := sh[0], sh[1], sh[2]
			rng := rand.New(rand.NewPCG(uint64(si), 21))
			alpha, beta := logisticParams(rng, k)
			// Inputs rounded to float32, so that both dtypes see the same values.
			round := func(x []float64) []float64 {
				for i := range x {
					x[i] = float64(float32(x[i]))
				}
				return x
			}
			l, ts, B, v := round(normals(rng, n*k)), round(normals(rng, n*k)), round(normals(rng, nb*p)), round(normals(rng, 2*n*k))
			d := [3][]float64{make([]float64, n*k*p), make([]float64, n*k*p), make([]float64, n*k*p)}
			for i, tk := range ts {
				for c := range p {
					d[0][i*p+c] = B[c] + tk*B[p+c] + tk*tk*B[2*p+c]
					d[1][i*p+c] = B[p+c] + 2*tk*B[2*p+c]
					d[2][i*p+c] = 2 * B[2*p+c]
				}
			}
			spec := tower.ProgramSpec{K: k, P: p, Gate: tower.Softmax(invTau), Basis: basis.Monomials(nb), Decoder: B, LatentPrimaries: true}
			if gate == kernel.LogisticGate {
				spec.Gate = tower.Logistic(alpha, beta)
			}
			pr, err := tower.NewProgram[float64](spec)
			require.NoError(t, err)
			m := 2 * k
			want := map[kernel.Channel][]float64{}
			for r := range n {
				first, second := make([]float64, m*p), make([]float64, m*m*p)
				require.NoError(t, pr.RowLatent(nil, first, second, l[r*k:(r+1)*k], ts[r*k:(r+1)*k]))
				gn, hvp := make([]float64, m*m), make([]float64, m*p)
				for a := range m {
					for b := range m {
						for c := range p {
							gn[a*m+b] += first[a*p+c] * first[b*p+c]
							hvp[a*p+c] += second[(a*m+b)*p+c] * v[r*m+b]
						}
					}
				}
				want[kernel.First] = append(want[kernel.First], first...)
				want[kernel.Second] = append(want[kernel.Second], second...)
				want[kernel.GaussNewton] = append(want[kernel.GaussNewton], gn...)
				want[kernel.HVP] = append(want[kernel.HVP], hvp...)
			}
			for _, dt := range []tensor.Dtype{tensor.Float64, tensor.Float32} {
				for _, c := range coordChannels {
					t.Run(fmt.Sprintf("%s/%v/%v/%v", gateName(gate), sh, dt, c), func(t *testing.T) {
						g := G.NewGraph()
						in := []*G.Node{variable(g, dt, "l", []int{n, k}, l),
							variable(g, dt, "d0", []int{n, k, p}, d[0]), variable(g, dt, "d1", []int{n, k, p}, d[1]),
							variable(g, dt, "d2", []int{n, k, p}, d[2]), variable(g, dt, "v", []int{n, m}, v)}
						out, err := coordNode(gate, c, in, alpha, beta)
						require.NoError(t, err)
						require.Equal(t, tensor.Shape(c.CoordOut().Shape(n, k, p)), out.Shape())
						got := eval(t, out)[0]
						tol := 1e-12
						if dt == tensor.Float32 {
							tol = 1e-5
						}
						scale := 1.0
						for _, w := range want[c] {
							scale = math.Max(scale, math.Abs(w))
						}
						require.Len(t, got, len(want[c]))
						for i, w := range want[c] {
							require.InDelta(t, w, got[i], tol*scale, "element %d", i)
						}
					})
				}
			}
		}
	}
}

// coordGraph is a loss c = Σ W⊙f + Σ tanh(f) on a coordinate jet f, with the jet's inputs
// as variables.
type coordGraph struct {
	in []*G.Node // logits, d0, d1 [, d2] [, v]
	f  *G.Node
	c  *G.Node
}

func newCoordGraph(t testing.TB, dt tensor.Dtype, gate *kernel.Gate, c kernel.Channel, sh [3]int, seed uint64) *coordGraph {
	t.Helper()
	n, k, p := sh[0], sh[1], sh[2]
	rng := rand.New(rand.NewPCG(seed, 23))
	g := G.NewGraph()
	shapes := [][]int{{n, k}, {n, k, p}, {n, k, p}, {n, k, p}, {n, 2 * k}}
	cg := &coordGraph{}
	for i, name := range []string{"l", "d0", "d1", "d2", "v"}[:c.CoordIn()] {
		size := 1
		for _, x := range shapes[i] {
			size *= x
		}
		cg.in = append(cg.in, variable(g, dt, name, shapes[i], normals(rng, size)))
	}
	alpha, beta := logisticParams(rng, k)
	var err error
	cg.f, err = coordNode(gate, c, cg.in, alpha, beta)
	require.NoError(t, err)
	w := G.NewConstant(dense(dt, cg.f.Shape(), normals(rng, cg.f.Shape().TotalSize())), G.WithName("W"))
	cg.c = G.Must(G.Add(inner(cg.f, w), G.Must(G.Sum(G.Must(G.Tanh(cg.f))))))
	return cg
}

// direction is ⟨∇c, v⟩ for random directions v of each input: the cost whose gradient is the
// Hessian-vector product of c.
func (cg *coordGraph) direction(t *testing.T, seed uint64) *G.Node {
	t.Helper()
	grads, err := graphs.Grad(cg.c, cg.in...)
	require.NoError(t, err)
	rng := rand.New(rand.NewPCG(seed, 29))
	var dir *G.Node
	for i, x := range cg.in {
		v := G.NewConstant(dense(x.Dtype(), x.Shape(), normals(rng, x.Shape().TotalSize())))
		term := inner(grads[i], v)
		if dir == nil {
			dir = term
		} else {
			dir = G.Must(G.Add(dir, term))
		}
	}
	return dir
}

// TestCoordJetSecondOrder: a loss on any coordinate jet (first, second, HVP, Gauss-Newton)
// of either built-in gate is twice differentiable: graphs.GradCheck of ⟨∇c, v⟩ (the Hessian-vector product of
// c) against central differences, in every input, float64 with tight tolerances and float32
// with GradCheck's.
func TestCoordJetSecondOrder(t *testing.T) {
	for _, c := range coordChannels {
		for _, gate := range coordGates {
			for i, sh := range [][3]int{{2, 3, 2}, {1, 1, 2}, {2, 2, 1}} {
				for _, dt := range []tensor.Dtype{tensor.Float64, tensor.Float32} {
					t.Run(fmt.Sprintf("%v/%s/%v/%v", c, gateName(gate), sh, dt), func(t *testing.T) {
						cg := newCoordGraph(t, dt, gate, c, sh, uint64(40+i))
						dir := cg.direction(t, uint64(i))
						var opts []graphs.CheckOption
						if dt == tensor.Float64 {
							opts = append(opts, graphs.WithStep(1e-5), graphs.WithTolerance(1e-7, 1e-8))
						}
						rep, err := graphs.GradCheck(dir, cg.in, opts...)
						require.NoError(t, err, "%v", rep)
						for _, n := range rep.Nodes {
							t.Logf("%s: max abs error %.2g, max rel error %.2g", n.Name, n.MaxAbsErr, n.MaxRelErr)
						}
					})
				}
			}
		}
	}
}

// TestCoordJetOnceDifferentiable: for a gate without closed forms of its own (a gate of the
// table other than the built-in ones), the gradients of the second channel and the HVP use
// the row second channel's and HVP's VJP ops, which are not differentiable: a second gradient
// through them fails with ErrNotDifferentiable rather than dropping a term, while their first
// gradient is checked (TestCoordJetGradients covers every gate of the table).
func TestCoordJetOnceDifferentiable(t *testing.T) {
	others := 0
	for _, gate := range kernel.Gates() {
		if gate == kernel.SoftmaxGate || gate == kernel.LogisticGate {
			continue
		}
		others++
		for _, c := range []kernel.Channel{kernel.Second, kernel.HVP} {
			const n, k, p = 2, 2, 2
			rng := rand.New(rand.NewPCG(3, 4))
			g := G.NewGraph()
			in := []*G.Node{variable(g, tensor.Float64, "l", []int{n, k}, normals(rng, n*k)),
				variable(g, tensor.Float64, "d0", []int{n, k, p}, normals(rng, n*k*p)),
				variable(g, tensor.Float64, "d1", []int{n, k, p}, normals(rng, n*k*p)),
				variable(g, tensor.Float64, "d2", []int{n, k, p}, normals(rng, n*k*p)),
				variable(g, tensor.Float64, "v", []int{n, 2 * k}, normals(rng, 2*n*k))}[:c.CoordIn()]
			f, err := ops.CoordOp(c, gate, in, ops.SampleFloats(gate, k))
			require.NoError(t, err)
			cost := G.Must(G.Sum(G.Must(G.Tanh(f))))
			grads, err := graphs.Grad(cost, in...)
			require.NoError(t, err)
			_, err = graphs.Grad(G.Must(G.Sum(grads[0])), in[0])
			require.ErrorIs(t, err, graphs.ErrNotDifferentiable, "%v %s", c, gateName(gate))
		}
	}
	require.Positive(t, others, "the tests register a gate of their own")
}

// TestCoordJetErrors: every refusal of the coordinate-jet constructors, for each channel and
// gate, is a *gatejet.Error of the documented kind.
func TestCoordJetErrors(t *testing.T) {
	const n, k, p = 2, 3, 2
	alpha, beta := []float64{1, -1, 0.5}, []float64{0, 0.1, -0.2}
	type inputs struct {
		g  *G.ExprGraph
		in []*G.Node
	}
	mk := func(dt tensor.Dtype) inputs {
		g := G.NewGraph()
		rng := rand.New(rand.NewPCG(1, 2))
		return inputs{g, []*G.Node{variable(g, dt, "l", []int{n, k}, normals(rng, n*k)),
			variable(g, dt, "d0", []int{n, k, p}, normals(rng, n*k*p)), variable(g, dt, "d1", []int{n, k, p}, normals(rng, n*k*p)),
			variable(g, dt, "d2", []int{n, k, p}, normals(rng, n*k*p)), variable(g, dt, "v", []int{n, 2 * k}, normals(rng, 2*n*k))}}
	}
	for _, gate := range coordGates {
		for _, c := range coordChannels {
			name := fmt.Sprintf("%s/%v", gateName(gate), c)
			build := func(in []*G.Node, a, b []float64, opts ...ops.Option) error {
				_, err := coordNode(gate, c, in, a, b, opts...)
				return err
			}
			ok := mk(tensor.Float64)
			require.NoError(t, build(ok.in, alpha, beta), name)
			for i := range c.CoordIn() {
				in := append([]*G.Node(nil), ok.in...)
				in[i] = nil
				require.ErrorIs(t, build(in, alpha, beta), gatejet.ErrParam, "%s: nil input %d", name, i)
				in = append([]*G.Node(nil), ok.in...)
				in[i] = G.NewTensor(ok.g, tensor.Float32, len(ok.in[i].Shape()), G.WithShape(ok.in[i].Shape()...), G.WithName(fmt.Sprintf("f32_%d", i)))
				require.ErrorIs(t, build(in, alpha, beta), gatejet.ErrDType, "%s: float32 input %d", name, i)
				in[i] = G.NewTensor(ok.g, tensor.Float64, 4, G.WithShape(1, 1, 1, 1), G.WithName(fmt.Sprintf("rank4_%d", i)))
				require.ErrorIs(t, build(in, alpha, beta), gatejet.ErrRank, "%s: rank of input %d", name, i)
				other := mk(tensor.Float64)
				in = append([]*G.Node(nil), ok.in...)
				in[i] = other.in[i]
				if i > 0 {
					require.ErrorIs(t, build(in, alpha, beta), gatejet.ErrParam, "%s: input %d of another graph", name, i)
				}
			}
			// Shapes that disagree.
			bad := func(i int, shape ...int) []*G.Node {
				in := append([]*G.Node(nil), ok.in...)
				in[i] = G.NewTensor(ok.g, tensor.Float64, len(shape), G.WithShape(shape...), G.WithName(fmt.Sprintf("bad%d%v", i, shape)))
				return in
			}
			for _, in := range [][]*G.Node{bad(1, n+1, k, p), bad(1, n, k+1, p), bad(2, n, k, p+1), bad(0, n, k+1)} {
				require.ErrorIs(t, build(in, alpha, beta), gatejet.ErrShape, name)
			}
			if c == kernel.Second || c == kernel.HVP {
				require.ErrorIs(t, build(bad(3, n, k, p+1), alpha, beta), gatejet.ErrShape, name)
			}
			if c == kernel.HVP {
				require.ErrorIs(t, build(bad(4, n, k), alpha, beta), gatejet.ErrShape, name)
				require.ErrorIs(t, build(bad(4, n, 2*k+1), alpha, beta), gatejet.ErrShape, name)
				require.ErrorIs(t, build(bad(4, n+1, 2*k), alpha, beta), gatejet.ErrShape, name)
			}
			require.ErrorIs(t, build(ok.in, alpha, beta, nil), gatejet.ErrParam, "%s: nil option", name)
			// Gate parameters.
			if gate == kernel.LogisticGate {
				require.ErrorIs(t, build(ok.in, alpha[:2], beta), gatejet.ErrParam, name)
				require.ErrorIs(t, build(ok.in, alpha, append(beta, 1)), gatejet.ErrParam, name)
				require.ErrorIs(t, build(ok.in, alpha, []float64{0, math.NaN(), 0}), gatejet.ErrNonFinite, name)
			} else {
				for _, s := range []float64{0, -1, math.NaN(), math.Inf(1)} {
					in := ok.in
					var err error
					switch c {
					case kernel.First:
						_, err = ops.SoftmaxCoordJetFirst(in[0], in[1], in[2], s)
					case kernel.Second:
						_, err = ops.SoftmaxCoordJetSecond(in[0], in[1], in[2], in[3], s)
					case kernel.HVP:
						_, err = ops.SoftmaxCoordJetHVP(in[0], in[1], in[2], in[3], in[4], s)
					default:
						_, err = ops.SoftmaxCoordJetGaussNewton(in[0], in[1], in[2], s)
					}
					require.ErrorIs(t, err, gatejet.ErrTemperature, "%s: invTau %v", name, s)
				}
			}
			// An output beyond gatejet.MaxBytes, refused when the node is built.
			big := mk(tensor.Float64)
			old := gatejet.SetMaxBytes(int64(8 * 2 * n * k * p))
			err := build(big.in, alpha, beta)
			gatejet.SetMaxBytes(old)
			if c == kernel.Second || c == kernel.GaussNewton && 4*n*k*k > 2*n*k*p {
				require.ErrorIs(t, err, gatejet.ErrSize, name)
			} else {
				require.NoError(t, err, name)
			}
		}
	}
}

// TestCoordJetHugeShapes: shapes whose outputs overflow int are ErrSize, before anything is
// allocated (the nodes hold no values).
func TestCoordJetHugeShapes(t *testing.T) {
	g := G.NewGraph()
	const k = 1 << 31
	l := G.NewTensor(g, tensor.Float64, 2, G.WithShape(1<<20, k), G.WithName("l"))
	d := G.NewTensor(g, tensor.Float64, 3, G.WithShape(1<<20, k, 4), G.WithName("d"))
	_, err := ops.SoftmaxCoordJetSecond(l, d, d, d, 1)
	require.ErrorIs(t, err, gatejet.ErrSize)
	_, err = ops.LogisticCoordJetGaussNewton(l, d, d, nil, nil)
	require.ErrorIs(t, err, gatejet.ErrSize, "the sizes are checked before the gate's parameters")
	v := G.NewTensor(g, tensor.Float64, 2, G.WithShape(1<<20, 2*k), G.WithName("v"))
	_, err = ops.SoftmaxCoordJetHVP(l, d, d, d, v, 1)
	require.ErrorIs(t, err, gatejet.ErrSize)
}

// TestCoordJetDo: the op's Do refuses values of the wrong shape or dtype, UsePreallocDo
// writes what Do computes and refuses an output that overlaps an input, and a coordinate jet
// of an empty batch (N = 0) is a valid kernel call that writes nothing.
func TestCoordJetDo(t *testing.T) {
	const n, k, p = 2, 3, 2
	rng := rand.New(rand.NewPCG(4, 5))
	g := G.NewGraph()
	in := []*G.Node{variable(g, tensor.Float64, "l", []int{n, k}, normals(rng, n*k)),
		variable(g, tensor.Float64, "d0", []int{n, k, p}, normals(rng, n*k*p)),
		variable(g, tensor.Float64, "d1", []int{n, k, p}, normals(rng, n*k*p))}
	out, err := ops.SoftmaxCoordJetFirst(in[0], in[1], in[2], invTau)
	require.NoError(t, err)
	vals := []G.Value{in[0].Value(), in[1].Value(), in[2].Value()}
	want, err := out.Op().Do(vals...)
	require.NoError(t, err)
	pre := tensor.New(tensor.WithShape(n, 2*k, p), tensor.Of(tensor.Float64))
	got, err := out.Op().(G.UsePreallocDoer).UsePreallocDo(pre, vals...)
	require.NoError(t, err)
	require.Equal(t, want.Data(), got.Data())

	_, err = out.Op().Do(vals[0], vals[1])
	require.ErrorIs(t, err, gatejet.ErrParam)
	_, err = out.Op().Do(vals[0], vals[1], tensor.New(tensor.WithShape(n, k, p+1), tensor.Of(tensor.Float64)))
	require.ErrorIs(t, err, gatejet.ErrShape)
	_, err = out.Op().Do(vals[0], vals[1], tensor.New(tensor.WithShape(n, k, p), tensor.Of(tensor.Float32)))
	require.ErrorIs(t, err, gatejet.ErrDType)

	// An output over d1's memory.
	backing := make([]float64, 2*n*k*p)
	copy(backing, vals[2].Data().([]float64))
	d1 := tensor.New(tensor.WithShape(n, k, p), tensor.WithBacking(backing[:n*k*p]))
	_, err = out.Op().(G.UsePreallocDoer).UsePreallocDo(tensor.New(tensor.WithShape(n, 2*k, p), tensor.WithBacking(backing)), vals[0], vals[1], d1)
	require.ErrorIs(t, err, gatejet.ErrParam)

	for _, c := range coordChannels {
		for _, gate := range coordGates {
			id := gate.CoordKernel(c)
			floats := []float64{invTau}
			if gate == kernel.LogisticGate {
				floats = []float64{1, 1, 1, 0, 0, 0}
			}
			var o kernel.Operands[float64]
			for i := range id.NumIn() {
				o.In[i] = []float64{}
			}
			o.Out[0] = []float64{}
			require.NoError(t, kernel.Run("test", id, &o, []int{0, k, p}, floats), "%v: N = 0", id)
		}
	}
}

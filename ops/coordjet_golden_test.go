package ops_test

import (
	"fmt"
	"maps"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/gatejet/gatejet/graphs"
	"github.com/gatejet/gatejet/internal/golden"
	"github.com/gatejet/gatejet/ops"
)

// The coordinate-jet ops against PyTorch: testdata/golden/coord_jet_*.json.gz (written by
// make_coord_golden.py with torch's autograd in float64). Per file and channel, a graph with
// the op on the file's inputs and the cost Σ G⊙out for the file's upstream gradient G; the
// output and the gradients of the cost in every input (graphs.Grad on a TapeMachine, and a
// LispMachine's reverse pass: the ops' VJPs) are compared with torch at normwise relative error 1e-12 in float64 and 1e-5 in
// float32 (inputs rounded to float32, compared with the float64 answer).

const coordGoldenDir = "../testdata/golden"

// goldenCoordInput is an input of a golden graph.
type goldenCoordInput struct {
	name  string
	shape []int
	vals  []float64
}

func (in goldenCoordInput) node(g *G.ExprGraph, dt tensor.Dtype) *G.Node {
	var back any = slices.Clone(in.vals)
	if dt == tensor.Float32 {
		f := make([]float32, len(in.vals))
		for i, v := range in.vals {
			f[i] = float32(v)
		}
		back = f
	}
	return G.NewTensor(g, dt, len(in.shape), G.WithShape(in.shape...), G.WithName(in.name),
		G.WithValue(tensor.New(tensor.WithShape(in.shape...), tensor.WithBacking(back))))
}

// goldenCoordGraph is one coordinate-jet op on a file's inputs.
type goldenCoordGraph struct {
	file, op  string
	inputs    []goldenCoordInput
	build     func(in []*G.Node) (*G.Node, error)
	w         []float64   // upstream gradient on the output
	want      []float64   // expected output
	wantGrads [][]float64 // expected gradient of Σ w⊙out per input
}

func goldenFloat64s(v G.Value) []float64 {
	d := v.(*tensor.Dense)
	if d.Dtype() == tensor.Float32 {
		f := d.Float32s()
		out := make([]float64, len(f))
		for i, x := range f {
			out[i] = float64(x)
		}
		return out
	}
	return slices.Clone(d.Float64s())
}

// run builds the graph and returns the op's output and the cost's gradient in every input:
// from graphs.Grad on a TapeMachine (lisp false) or the LispMachine's reverse pass (DoDiff).
func (c goldenCoordGraph) run(t *testing.T, dt tensor.Dtype, lisp bool) ([]float64, [][]float64) {
	t.Helper()
	g := G.NewGraph()
	nodes := make([]*G.Node, len(c.inputs))
	for i, in := range c.inputs {
		nodes[i] = in.node(g, dt)
	}
	out, err := c.build(nodes)
	require.NoError(t, err, "%s %s", c.file, c.op)
	w := goldenCoordInput{"w", out.Shape().Clone(), c.w}.node(g, dt)
	cost, err := G.Sum(G.Must(G.HadamardProd(out, w)))
	require.NoError(t, err)
	got := make([][]float64, len(nodes))
	if lisp {
		vm := G.NewLispMachine(g)
		defer vm.Close()
		require.NoError(t, vm.RunAll(), "%s %s", c.file, c.op)
		for i, n := range nodes {
			gv, err := n.Grad()
			require.NoError(t, err, "%s %s: gradient in %s", c.file, c.op, c.inputs[i].name)
			got[i] = goldenFloat64s(gv)
		}
		return goldenFloat64s(out.Value()), got
	}
	grads, err := graphs.Grad(cost, nodes...)
	require.NoError(t, err, "%s %s", c.file, c.op)
	vm := G.NewTapeMachine(g)
	defer vm.Close()
	require.NoError(t, vm.RunAll(), "%s %s", c.file, c.op)
	for i, gr := range grads {
		got[i] = goldenFloat64s(gr.Value())
	}
	return goldenFloat64s(out.Value()), got
}

func goldenCoordGraphs(j *golden.CoordJet) []goldenCoordGraph {
	N, K, P := j.N, j.K, j.P
	l := goldenCoordInput{"logits", []int{N, K}, j.Logits}
	d0 := goldenCoordInput{"d0", []int{N, K, P}, j.D0}
	d1 := goldenCoordInput{"d1", []int{N, K, P}, j.D1}
	d2 := goldenCoordInput{"d2", []int{N, K, P}, j.D2}
	v := goldenCoordInput{"v", []int{N, 2 * K}, j.V}
	var first, gn func(l, d0, d1 *G.Node) (*G.Node, error)
	var second func(l, d0, d1, d2 *G.Node) (*G.Node, error)
	var hvp func(l, d0, d1, d2, v *G.Node) (*G.Node, error)
	gate := "Softmax"
	if j.Gate == "softmax" {
		s := j.InvTau
		first = func(l, d0, d1 *G.Node) (*G.Node, error) { return ops.SoftmaxCoordJetFirst(l, d0, d1, s) }
		gn = func(l, d0, d1 *G.Node) (*G.Node, error) { return ops.SoftmaxCoordJetGaussNewton(l, d0, d1, s) }
		second = func(l, d0, d1, d2 *G.Node) (*G.Node, error) { return ops.SoftmaxCoordJetSecond(l, d0, d1, d2, s) }
		hvp = func(l, d0, d1, d2, v *G.Node) (*G.Node, error) { return ops.SoftmaxCoordJetHVP(l, d0, d1, d2, v, s) }
	} else {
		gate = "Logistic"
		a, b := j.Alpha, j.Beta
		first = func(l, d0, d1 *G.Node) (*G.Node, error) { return ops.LogisticCoordJetFirst(l, d0, d1, a, b) }
		gn = func(l, d0, d1 *G.Node) (*G.Node, error) { return ops.LogisticCoordJetGaussNewton(l, d0, d1, a, b) }
		second = func(l, d0, d1, d2 *G.Node) (*G.Node, error) { return ops.LogisticCoordJetSecond(l, d0, d1, d2, a, b) }
		hvp = func(l, d0, d1, d2, v *G.Node) (*G.Node, error) {
			return ops.LogisticCoordJetHVP(l, d0, d1, d2, v, a, b)
		}
	}
	three := []goldenCoordInput{l, d0, d1}
	return []goldenCoordGraph{
		{file: j.File, op: gate + "CoordJetFirst", inputs: three, w: j.FirstVJP.G, want: j.First,
			wantGrads: [][]float64{j.FirstVJP.DLogits, j.FirstVJP.DD0, j.FirstVJP.DD1},
			build:     func(in []*G.Node) (*G.Node, error) { return first(in[0], in[1], in[2]) }},
		{file: j.File, op: gate + "CoordJetGaussNewton", inputs: three, w: j.GaussNewtonVJP.G, want: j.GaussNewton,
			wantGrads: [][]float64{j.GaussNewtonVJP.DLogits, j.GaussNewtonVJP.DD0, j.GaussNewtonVJP.DD1},
			build:     func(in []*G.Node) (*G.Node, error) { return gn(in[0], in[1], in[2]) }},
		{file: j.File, op: gate + "CoordJetSecond", inputs: []goldenCoordInput{l, d0, d1, d2}, w: j.SecondVJP.G, want: j.Second,
			wantGrads: [][]float64{j.SecondVJP.DLogits, j.SecondVJP.DD0, j.SecondVJP.DD1, j.SecondVJP.DD2},
			build:     func(in []*G.Node) (*G.Node, error) { return second(in[0], in[1], in[2], in[3]) }},
		{file: j.File, op: gate + "CoordJetHVP", inputs: []goldenCoordInput{l, d0, d1, d2, v}, w: j.HVPVJP.G, want: j.HVP,
			wantGrads: [][]float64{j.HVPVJP.DLogits, j.HVPVJP.DD0, j.HVPVJP.DD1, j.HVPVJP.DD2, j.HVPVJP.DV},
			build:     func(in []*G.Node) (*G.Node, error) { return hvp(in[0], in[1], in[2], in[3], in[4]) }},
	}
}

func TestCoordJetGoldenPyTorch(t *testing.T) {
	jets, err := golden.CoordJets(coordGoldenDir)
	require.NoError(t, err)
	worst := map[string]float64{}
	for _, j := range jets {
		for _, c := range goldenCoordGraphs(j) {
			for _, p := range []struct {
				dt  tensor.Dtype
				tol float64
			}{{tensor.Float64, golden.Tol}, {tensor.Float32, 1e-5}} {
				for _, lisp := range []bool{false, true} {
					vm := map[bool]string{false: "tape", true: "lisp"}[lisp]
					got, grads := c.run(t, p.dt, lisp)
					check := func(what string, got, want []float64) {
						e := golden.RelErr(got, want)
						assert.LessOrEqual(t, e, p.tol, "%s %s %v %s %s: normwise relative error %.3g against torch", c.file, c.op, p.dt, vm, what, e)
						key := fmt.Sprintf("%s %v %s", c.op, p.dt, what)
						worst[key] = max(worst[key], e)
					}
					check("output", got, c.want)
					for i, want := range c.wantGrads {
						check("d/d"+c.inputs[i].name, grads[i], want)
					}
				}
			}
		}
	}
	for _, k := range slices.Sorted(maps.Keys(worst)) {
		t.Logf("max normwise relative error %-52s %.3g", k, worst[k])
	}
}

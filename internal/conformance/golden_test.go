package conformance

import (
	"fmt"
	"maps"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/gatejet/gatejet/backward"
	"github.com/gatejet/gatejet/internal/cpuref"
	"github.com/gatejet/gatejet/internal/golden"
	"github.com/gatejet/gatejet/ops"
	"github.com/gatejet/gatejet/softmaxjet"
)

// The PyTorch golden files (testdata/golden, written by make_golden.py with torch's autograd
// in float64) against the CPU kernels of softmaxjet and backward, called directly and through
// cpuref, and against the Gorgonia ops on both virtual machines. The emulated device kernels
// are compared with the same files in cudaops/internal/emu TestGoldenPyTorch. A missing or
// malformed file fails these tests.

const goldenDir = "../../testdata/golden"

func goldenFiles(t *testing.T) ([]*golden.Jet, []*golden.Axis) {
	t.Helper()
	jets, err := golden.Jets(goldenDir)
	require.NoError(t, err)
	axes, err := golden.Axes(goldenDir)
	require.NoError(t, err)
	return jets, axes
}

// errTable keeps the largest normwise error seen per channel and fails the test on any error
// above golden.Tol, going on with the other channels; log prints the table (go test -v shows
// the margins; a failing run shows which channels are off and by how much).
type errTable map[string]float64

func (m errTable) check(t *testing.T, channel, file string, got, want []float64) {
	t.Helper()
	e := golden.RelErr(got, want)
	m[channel] = max(m[channel], e)
	assert.LessOrEqual(t, e, golden.Tol, "%s %s: normwise relative error %.3g against torch", file, channel, e)
}

func (m errTable) log(t *testing.T, what string) {
	for _, k := range slices.Sorted(maps.Keys(m)) {
		t.Logf("%s: max normwise relative error %-36s %.3g", what, k, m[k])
	}
}

// TestGoldenCPUKernels calls every softmaxjet softmax-gate kernel and every backward
// softmax-family kernel directly, with the file's shape and axis (and the same axis counted
// from the end).
func TestGoldenCPUKernels(t *testing.T) {
	jets, axes := goldenFiles(t)
	errs := errTable{}
	for _, j := range jets {
		sh := softmaxjet.Shape{N: j.N, K: j.K, P: j.P}
		l, d, v, s := j.Logits, j.Decoded, j.V, j.InvTau
		out := func(n int) []float64 { return make([]float64, n) }

		value, first, second := out(sh.ValueLen()), out(sh.FirstLen()), out(sh.SecondLen())
		hvp, gn := out(sh.FirstLen()), out(sh.GNLen())
		require.NoError(t, softmaxjet.Softmax[float64]{InvTau: s}.Value(value, l, d, sh))
		require.NoError(t, softmaxjet.Softmax[float64]{InvTau: s}.First(first, l, d, sh))
		require.NoError(t, softmaxjet.Softmax[float64]{InvTau: s}.Second(second, l, d, sh))
		require.NoError(t, softmaxjet.Softmax[float64]{InvTau: s}.HVP(hvp, l, d, v, sh))
		require.NoError(t, softmaxjet.Softmax[float64]{InvTau: s}.GaussNewton(gn, l, d, sh))
		errs.check(t, "value", j.File, value, j.Value)
		errs.check(t, "first", j.File, first, j.First)
		errs.check(t, "second", j.File, second, j.Second)
		errs.check(t, "hvp", j.File, hvp, j.HVP)
		errs.check(t, "gauss_newton", j.File, gn, j.GaussNewton)

		type vjpFn func(dl, dd []float64, w *golden.VJP) error
		for _, c := range []struct {
			name string
			w    *golden.VJP
			fn   vjpFn
		}{
			{"value_vjp", &j.ValueVJP, func(dl, dd []float64, w *golden.VJP) error {
				return softmaxjet.Softmax[float64]{InvTau: s}.ValueVJP(dl, dd, l, d, w.G, sh)
			}},
			{"first_vjp", &j.FirstVJP, func(dl, dd []float64, w *golden.VJP) error {
				return softmaxjet.Softmax[float64]{InvTau: s}.FirstVJP(dl, dd, l, d, w.G, sh)
			}},
			{"second_vjp", &j.SecondVJP, func(dl, dd []float64, w *golden.VJP) error {
				return softmaxjet.Softmax[float64]{InvTau: s}.SecondVJP(dl, dd, l, d, w.G, sh)
			}},
			{"gauss_newton_vjp", &j.GaussNewtonVJP, func(dl, dd []float64, w *golden.VJP) error {
				return softmaxjet.Softmax[float64]{InvTau: s}.GaussNewtonVJP(dl, dd, l, d, w.G, sh)
			}},
		} {
			dl, dd := out(sh.LogitsLen()), out(sh.DecodedLen())
			require.NoError(t, c.fn(dl, dd, c.w), c.name)
			errs.check(t, c.name+".d_logits", j.File, dl, c.w.DLogits)
			errs.check(t, c.name+".d_decoded", j.File, dd, c.w.DDecoded)
		}
		dl, dd, dv := out(sh.LogitsLen()), out(sh.DecodedLen()), out(sh.LogitsLen())
		require.NoError(t, softmaxjet.Softmax[float64]{InvTau: s}.HVPVJP(dl, dd, dv, l, d, v, j.HVPVJP.G, sh))
		errs.check(t, "hvp_vjp.d_logits", j.File, dl, j.HVPVJP.DLogits)
		errs.check(t, "hvp_vjp.d_decoded", j.File, dd, j.HVPVJP.DDecoded)
		errs.check(t, "hvp_vjp.d_v", j.File, dv, j.HVPVJP.DV)
	}
	for _, a := range axes {
		n := len(a.DY)
		for _, axis := range []int{a.Axis, a.Axis - len(a.Shape)} {
			file := fmt.Sprintf("%s axis=%d", a.File, axis)
			for _, f := range []struct {
				name string
				fam  *golden.AxisFamily
				bwd  func(dx, y, dy []float64, shape []int, axis int) error
				grad func(gy, gdy, y, dy, g []float64, shape []int, axis int) error
			}{
				{"softmax", &a.Softmax, backward.SoftmaxBackward[float64], backward.SoftmaxBackwardGrad[float64]},
				{"log_softmax", &a.LogSoftmax, backward.LogSoftmaxBackward[float64], backward.LogSoftmaxBackwardGrad[float64]},
			} {
				dx, gy, gdy := make([]float64, n), make([]float64, n), make([]float64, n)
				require.NoError(t, f.bwd(dx, f.fam.Y, a.DY, a.Shape, axis))
				require.NoError(t, f.grad(gy, gdy, f.fam.Y, a.DY, a.G, a.Shape, axis))
				errs.check(t, f.name+".dx", file, dx, f.fam.DX)
				errs.check(t, f.name+".grad_y", file, gy, f.fam.GradY)
				errs.check(t, f.name+".grad_dy", file, gdy, f.fam.GradDY)
			}
		}
	}
	errs.log(t, "softmaxjet/backward")
}

// TestGoldenCPURef runs the golden cases as dispatch.Calls through cpuref, the oracle of the
// emulator and device tests: the calls (and the [outer, n, inner] folding of the axis files)
// that TestGoldenPyTorch gives the emulator are right on the CPU as well.
func TestGoldenCPURef(t *testing.T) {
	jets, axes := goldenFiles(t)
	var cases []golden.Case
	for _, j := range jets {
		cases = append(cases, j.Cases()...)
	}
	for _, a := range axes {
		cases = append(cases, a.Cases()...)
	}
	errs := errTable{}
	for _, c := range cases {
		require.NoError(t, cpuref.Run(c.Call), c.Name)
		for i, want := range c.Want {
			errs.check(t, fmt.Sprintf("%s[%d]", c.Call.Kernel, i), c.Name, c.Call.F64.Out[i], want)
		}
	}
	errs.log(t, "cpuref")
}

// goldenInput is a float64 input node of a golden graph.
type goldenInput struct {
	name  string
	shape []int
	vals  []float64
}

func (in goldenInput) node(g *G.ExprGraph) *G.Node {
	return G.NewTensor(g, f64, len(in.shape), G.WithShape(in.shape...), G.WithName(in.name),
		G.WithValue(tensor.New(tensor.WithShape(in.shape...), tensor.WithBacking(slices.Clone(in.vals)))))
}

// goldenGraph is one op of package ops on golden inputs, with the upstream gradient w on its
// output and the expected output and input gradients.
type goldenGraph struct {
	file, op  string
	inputs    []goldenInput
	build     func(in []*G.Node) (*G.Node, error)
	w         []float64   // upstream gradient on the output: cost = Σ w⊙out
	want      []float64   // expected output
	wantGrads [][]float64 // expected gradient of the cost per input
}

// run builds the graph and returns the op's output and the cost's gradient with respect to
// every input, from gorgonia.Grad on a TapeMachine (lisp false) or DoDiff on a LispMachine.
func (c goldenGraph) run(t *testing.T, lisp bool) ([]float64, [][]float64) {
	t.Helper()
	g := G.NewGraph()
	nodes := make([]*G.Node, len(c.inputs))
	for i, in := range c.inputs {
		nodes[i] = in.node(g)
	}
	out, err := c.build(nodes)
	require.NoError(t, err, "%s %s", c.file, c.op)
	w := goldenInput{"w", out.Shape().Clone(), c.w}.node(g)
	cost, err := G.Sum(G.Must(G.HadamardProd(out, w)))
	require.NoError(t, err, "%s %s", c.file, c.op)
	var vm G.VM
	if lisp {
		vm = G.NewLispMachine(g)
	} else {
		_, err := G.Grad(cost, nodes...)
		require.NoError(t, err, "%s %s", c.file, c.op)
		vm = G.NewTapeMachine(g, G.BindDualValues(nodes...))
	}
	defer vm.Close()
	require.NoError(t, vm.RunAll(), "%s %s", c.file, c.op)
	got := out.Value().(*tensor.Dense).Float64s()
	grads := make([][]float64, len(nodes))
	for i, n := range nodes {
		gv, err := n.Grad()
		require.NoError(t, err, "%s %s: gradient wrt %s", c.file, c.op, c.inputs[i].name)
		grads[i] = slices.Clone(gv.(*tensor.Dense).Float64s())
	}
	return slices.Clone(got), grads
}

func goldenGraphs(jets []*golden.Jet, axes []*golden.Axis) []goldenGraph {
	var out []goldenGraph
	for _, j := range jets {
		s := j.InvTau
		l := goldenInput{"logits", []int{j.N, j.K}, j.Logits}
		d := goldenInput{"decoded", []int{j.N, j.K, j.P}, j.Decoded}
		v := goldenInput{"v", []int{j.N, j.K}, j.V}
		ld := []goldenInput{l, d}
		jet := func(name string, f func(l, d *G.Node, s float64, o ...ops.Option) (*G.Node, error), want []float64, w *golden.VJP) goldenGraph {
			return goldenGraph{file: j.File, op: name, inputs: ld, w: w.G, want: want, wantGrads: [][]float64{w.DLogits, w.DDecoded},
				build: func(in []*G.Node) (*G.Node, error) { return f(in[0], in[1], s) }}
		}
		out = append(out,
			jet("SoftmaxJetValue", ops.SoftmaxJetValue, j.Value, &j.ValueVJP),
			jet("SoftmaxJetFirst", ops.SoftmaxJetFirst, j.First, &j.FirstVJP),
			jet("SoftmaxJetSecond", ops.SoftmaxJetSecond, j.Second, &j.SecondVJP),
			jet("SoftmaxJetGaussNewton", ops.SoftmaxJetGaussNewton, j.GaussNewton, &j.GaussNewtonVJP),
			goldenGraph{file: j.File, op: "SoftmaxJetHVP", inputs: []goldenInput{l, d, v}, w: j.HVPVJP.G, want: j.HVP,
				wantGrads: [][]float64{j.HVPVJP.DLogits, j.HVPVJP.DDecoded, j.HVPVJP.DV},
				build:     func(in []*G.Node) (*G.Node, error) { return ops.SoftmaxJetHVP(in[0], in[1], in[2], s) }},
		)
	}
	for _, a := range axes {
		for _, f := range []struct {
			name string
			fam  *golden.AxisFamily
			op   func(y, dy *G.Node, axis int, o ...ops.Option) (*G.Node, error)
		}{{"SoftmaxBackward", &a.Softmax, ops.SoftmaxBackward}, {"LogSoftmaxBackward", &a.LogSoftmax, ops.LogSoftmaxBackward}} {
			axis := a.Axis
			out = append(out, goldenGraph{file: a.File, op: f.name,
				inputs: []goldenInput{{"y", a.Shape, f.fam.Y}, {"dy", a.Shape, a.DY}}, w: a.G, want: f.fam.DX,
				wantGrads: [][]float64{f.fam.GradY, f.fam.GradDY},
				build:     func(in []*G.Node) (*G.Node, error) { return f.op(in[0], in[1], axis) }})
		}
	}
	return out
}

// TestGoldenOps builds, per golden file and op, a graph with the op on the file's inputs and
// the cost Σ G⊙out for the file's upstream gradient G, and compares the output and the
// gradients of the cost (the ops' VJP and double-backward ops) with torch, on a TapeMachine
// (gorgonia.Grad) and a LispMachine (DoDiff).
func TestGoldenOps(t *testing.T) {
	jets, axes := goldenFiles(t)
	errs := errTable{}
	for _, c := range goldenGraphs(jets, axes) {
		for _, lisp := range []bool{false, true} {
			vm := map[bool]string{false: "tape", true: "lisp"}[lisp]
			got, grads := c.run(t, lisp)
			errs.check(t, c.op+" "+vm, c.file, got, c.want)
			for i, want := range c.wantGrads {
				errs.check(t, fmt.Sprintf("%s %s d/d%s", c.op, vm, c.inputs[i].name), c.file, grads[i], want)
			}
		}
	}
	errs.log(t, "ops")
}

package ops

import (
	"fmt"
	"math"
	"math/rand"
	"testing"

	"github.com/stretchr/testify/require"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// machine is the Gorgonia VM a test runs on.
type machine int

const (
	tape machine = iota // gradients from gorgonia.Grad (SymDiff)
	lisp                // gradients from DoDiff
)

func (m machine) String() string { return [...]string{"tape", "lisp"}[m] }

var (
	machines = []machine{tape, lisp}
	dtypes   = []tensor.Dtype{tensor.Float64, tensor.Float32}
)

// input is a named input of a test graph with its shape and float64 values (rounded to
// float32 so that both dtypes see the same numbers).
type input struct {
	name  string
	shape tensor.Shape
	vals  []float64
}

func randInput(rng *rand.Rand, name string, shape tensor.Shape, lo, hi float64) input {
	v := make([]float64, shape.TotalSize())
	for i := range v {
		v[i] = float64(float32(lo + (hi-lo)*rng.Float64()))
	}
	return input{name, shape, v}
}

// awayFromZero moves values with |x| < m to ±m (kinks of ReLU).
func awayFromZero(in input, m float64) input {
	for i, x := range in.vals {
		if math.Abs(x) < m {
			in.vals[i] = math.Copysign(m, x)
		}
	}
	return in
}

// toDense builds a tensor of dtype dt holding vals.
func toDense(dt tensor.Dtype, shape tensor.Shape, vals []float64) *tensor.Dense {
	if dt == tensor.Float64 {
		return tensor.New(tensor.WithShape(shape.Clone()...), tensor.WithBacking(append([]float64(nil), vals...)))
	}
	f := make([]float32, len(vals))
	for i, x := range vals {
		f[i] = float32(x)
	}
	return tensor.New(tensor.WithShape(shape.Clone()...), tensor.WithBacking(f))
}

// floats returns the elements of a tensor or scalar value as float64.
func floats(t testing.TB, v G.Value) []float64 {
	t.Helper()
	switch x := v.(type) {
	case *G.F64:
		return []float64{float64(*x)}
	case *G.F32:
		return []float64{float64(*x)}
	case *tensor.Dense:
		x = x.Materialize().(*tensor.Dense)
		switch d := x.Data().(type) {
		case []float64:
			return append([]float64(nil), d...)
		case []float32:
			out := make([]float64, len(d))
			for i, f := range d {
				out[i] = float64(f)
			}
			return out
		case float64:
			return []float64{d}
		case float32:
			return []float64{float64(d)}
		}
	}
	t.Fatalf("unexpected value %T", v)
	return nil
}

// graphCase is a graph under test: the op output built from input nodes.
type graphCase struct {
	name   string
	inputs []input
	build  func(g *G.ExprGraph, in []*G.Node) (*G.Node, error)
	// cpuOnly: the case's kernels have no device entry points (a gate declared with no
	// Device), so its ops run on the CPU whatever backend is registered.
	cpuOnly bool
}

// costOf is the scalar cost used for gradient checks: Σ W⊙out + ½·Σ out², which exercises a
// constant and a data-dependent upstream gradient. W is a fixed pseudo-random input.
func costOf(g *G.ExprGraph, out *G.Node) (*G.Node, error) {
	w := G.NewTensor(g, out.Dtype(), out.Dims(), G.WithShape(out.Shape()...), G.WithName("W"),
		G.WithValue(toDense(out.Dtype(), out.Shape(), weights(out.Shape().TotalSize()))))
	lin, err := G.Sum(G.Must(G.HadamardProd(out, w)))
	if err != nil {
		return nil, err
	}
	sq, err := G.Sum(G.Must(G.Square(out)))
	if err != nil {
		return nil, err
	}
	half := G.NewConstant(0.5)
	if out.Dtype() == tensor.Float32 {
		half = G.NewConstant(float32(0.5))
	}
	return G.Add(lin, G.Must(G.Mul(sq, half)))
}

func weights(n int) []float64 {
	w := make([]float64, n)
	for i := range w {
		w[i] = float64(float32(math.Sin(float64(3*i+1)) * 1.3))
	}
	return w
}

// buildCase makes a fresh graph with the case's inputs bound to values of dtype dt.
func buildCase(t testing.TB, c graphCase, dt tensor.Dtype) (*G.ExprGraph, []*G.Node, *G.Node) {
	t.Helper()
	g := G.NewGraph()
	nodes := make([]*G.Node, len(c.inputs))
	for i, in := range c.inputs {
		nodes[i] = G.NewTensor(g, dt, len(in.shape), G.WithShape(in.shape...), G.WithName(in.name),
			G.WithValue(toDense(dt, in.shape, in.vals)))
	}
	out, err := c.build(g, nodes)
	require.NoError(t, err)
	return g, nodes, out
}

// analyticGrads returns the cost and its gradient with respect to every input, on machine m.
func analyticGrads(t testing.TB, c graphCase, dt tensor.Dtype, m machine) (float64, [][]float64) {
	t.Helper()
	g, nodes, out := buildCase(t, c, dt)
	cost, err := costOf(g, out)
	require.NoError(t, err)
	grads := runGrads(t, g, cost, nodes, m)
	return floats(t, cost.Value())[0], grads
}

// runGrads runs g on machine m (on the tape, after gorgonia.Grad of cost) and returns the
// gradient of cost with respect to every node.
func runGrads(t testing.TB, g *G.ExprGraph, cost *G.Node, nodes []*G.Node, m machine) [][]float64 {
	t.Helper()
	var vm G.VM
	if m == tape {
		_, err := G.Grad(cost, nodes...)
		require.NoError(t, err)
		vm = G.NewTapeMachine(g, G.BindDualValues(nodes...))
	} else {
		vm = G.NewLispMachine(g)
	}
	defer vm.Close()
	require.NoError(t, vm.RunAll())
	grads := make([][]float64, len(nodes))
	for i, n := range nodes {
		gv, err := n.Grad()
		require.NoError(t, err)
		grads[i] = floats(t, gv)
	}
	return grads
}

// numericGrads returns the central finite differences of the cost with respect to every input
// element, in float64 on a TapeMachine re-run with perturbed inputs.
func numericGrads(t testing.TB, c graphCase) [][]float64 {
	t.Helper()
	g, nodes, out := buildCase(t, c, tensor.Float64)
	cost, err := costOf(g, out)
	require.NoError(t, err)
	vm := G.NewTapeMachine(g)
	defer vm.Close()
	eval := func() float64 {
		require.NoError(t, vm.RunAll())
		vm.Reset()
		return floats(t, cost.Value())[0]
	}
	grads := make([][]float64, len(nodes))
	for i, n := range nodes {
		x := n.Value().(*tensor.Dense).Float64s()
		grads[i] = make([]float64, len(x))
		for j := range x {
			x0 := x[j]
			h := 1e-5 * math.Max(1, math.Abs(x0))
			x[j] = x0 + h
			fp := eval()
			x[j] = x0 - h
			fm := eval()
			x[j] = x0
			grads[i][j] = (fp - fm) / (2 * h)
		}
	}
	return grads
}

// requireClose checks got against want elementwise: |got − want| ≤ tol·(1 + max|want|).
func requireClose(t testing.TB, want, got []float64, tol float64, msg string, args ...any) {
	t.Helper()
	require.Len(t, got, len(want), msg)
	scale := 1.0
	for _, w := range want {
		scale = math.Max(scale, math.Abs(w))
	}
	for i := range want {
		if !(math.Abs(got[i]-want[i]) <= tol*scale) {
			require.Failf(t, "values differ", "%s: element %d: want %.12g, got %.12g (tol %g·%g)\nwant %v\ngot  %v",
				fmt.Sprintf(msg, args...), i, want[i], got[i], tol, scale, want, got)
		}
	}
}

// gradTol is the tolerance of an analytic gradient of dtype dt against float64 finite
// differences.
func gradTol(dt tensor.Dtype) float64 {
	if dt == tensor.Float32 {
		return 2e-4
	}
	return 1e-6
}

// roundoffTol is the tolerance, relative to the largest value, of two computations of the
// same values in dtype dt that differ only in rounding (the device against the host, ours
// against Gorgonia's).
func roundoffTol(dt tensor.Dtype) float64 {
	if dt == tensor.Float32 {
		return 1e-5
	}
	return 1e-12
}

// checkGradients compares, for every machine and dtype, the analytic gradients of the case's
// cost with finite differences.
func checkGradients(t *testing.T, c graphCase) {
	t.Helper()
	num := numericGrads(t, c)
	for _, dt := range dtypes {
		for _, m := range machines {
			_, got := analyticGrads(t, c, dt, m)
			for i := range c.inputs {
				requireClose(t, num[i], got[i], gradTol(dt), "%s %v %v: gradient wrt %s", c.name, dt, m, c.inputs[i].name)
			}
		}
	}
}

// forwardValue runs the case's graph forward only on machine m and returns the op's output.
func forwardValue(t testing.TB, c graphCase, dt tensor.Dtype, m machine) []float64 {
	t.Helper()
	g, _, out := buildCase(t, c, dt)
	var vm G.VM
	if m == tape {
		vm = G.NewTapeMachine(g)
	} else {
		vm = G.NewLispMachine(g, G.ExecuteFwdOnly())
	}
	defer vm.Close()
	require.NoError(t, vm.RunAll())
	return floats(t, out.Value())
}

// requireKernelValue checks, for every dtype and machine, that the forward value of c is
// exactly what its kernel called directly on c's inputs computes: want64 in float64,
// want32 in float32.
func requireKernelValue(t *testing.T, c graphCase, want64, want32 func(t *testing.T) []float64, msg ...any) {
	t.Helper()
	for _, dt := range dtypes {
		for _, m := range machines {
			t.Run(fmt.Sprintf("%s/%v/%v", c.name, dt, m), func(t *testing.T) {
				got := forwardValue(t, c, dt, m)
				want := want32
				if dt == tensor.Float64 {
					want = want64
				}
				require.Equal(t, want(t), got, msg...)
			})
		}
	}
}

// gradOf differentiates the sum of n with gorgonia.Grad with respect to its inputs, the first
// of nodes.
func gradOf(t *testing.T, n *G.Node, nodes []*G.Node) {
	t.Helper()
	cost, err := G.Sum(n)
	require.NoError(t, err)
	_, err = G.Grad(cost, nodes[:n.Op().Arity()]...)
	require.NoError(t, err)
}

// childrenOf returns the node's children in order (ExprGraph.From lists them so).
func childrenOf(n *G.Node) G.Nodes {
	var out G.Nodes
	for it := n.Graph().From(n.ID()); it.Next(); {
		out = append(out, it.Node().(*G.Node))
	}
	return out
}

// opsOf returns the nodes of g whose op is a T, and their ops.
func opsOf[T any](g *G.ExprGraph) (nodes []*G.Node, ops []T) {
	for _, nd := range g.AllNodes() {
		if op, ok := nd.Op().(T); ok {
			nodes, ops = append(nodes, nd), append(ops, op)
		}
	}
	return nodes, ops
}

//go:build cuda

package ops

import (
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"math/rand"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"gorgonia.org/cu"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/gatejet/gatejet"
	"github.com/gatejet/gatejet/cudaops/cudadoer"
	"github.com/gatejet/gatejet/internal/dispatch"
)

// gorgoniaStdLib is the result of registering Gorgonia's own CUDA functions (TestMain): nil
// when they are registered, else why not. Written before the tests run, only read after.
var gorgoniaStdLib = errors.New("not registered: no CUDA device")

// TestMain registers Gorgonia's own CUDA functions (its device Add, Sub, Mul, HadamardProd,
// Exp …, compiled with NVRTC from its sources as its cmd/cudagen would with nvcc) before any
// machine is made: Gorgonia v0.9.18 loads only registered functions into its machines, and
// its device ops fail without them ("does not have the function").
func TestMain(m *testing.M) {
	if n, err := cu.NumDevices(); err == nil && n > 0 {
		_, gorgoniaStdLib = cudadoer.AddGorgoniaStdLib("")
	}
	os.Exit(m.Run())
}

// needGorgoniaStdLib skips a test whose graph holds Gorgonia's device ops when Gorgonia's
// CUDA sources were not found, saying how to provide them, and fails it on any other failure
// to register them.
func needGorgoniaStdLib(t *testing.T) {
	t.Helper()
	if errors.Is(gorgoniaStdLib, cudadoer.ErrNoGorgoniaSources) {
		t.Skipf("Gorgonia's own CUDA functions (Add, Mul, HadamardProd …) are not registered, so its device ops "+
			"cannot run: %v. Set %s to a copy of the directory \"$(go list -m -f '{{.Dir}}' gorgonia.org/gorgonia)/cuda modules/src\" "+
			"(the GPU bundle of scripts/gpu-bundle carries a copy and sets it)", gorgoniaStdLib, cudadoer.GorgoniaSourcesEnv)
	}
	require.NoError(t, gorgoniaStdLib, "registering Gorgonia's own CUDA functions")
}

// Sizes of the graphs below: n rows, K atoms, P columns; x is [n, M].
const cudaN, cudaK, cudaP, cudaM = 3, 3, 2, 4

// cudaConstructors builds a node with every exported constructor of the package, on the
// inputs l [n,K], d [n,K,P], v [n,K], x [n,M], y and dy [n,M] and H [n,K,K] of graph g.
var cudaConstructors = map[string]func(in cudaInputs) (*G.Node, error){
	"SoftmaxJetValue":       func(in cudaInputs) (*G.Node, error) { return SoftmaxJetValue(in.l, in.d, 0.7) },
	"SoftmaxJetFirst":       func(in cudaInputs) (*G.Node, error) { return SoftmaxJetFirst(in.l, in.d, 0.7) },
	"SoftmaxJetSecond":      func(in cudaInputs) (*G.Node, error) { return SoftmaxJetSecond(in.l, in.d, 0.7) },
	"SoftmaxJetHVP":         func(in cudaInputs) (*G.Node, error) { return SoftmaxJetHVP(in.l, in.d, in.v, 0.7) },
	"SoftmaxJetGaussNewton": func(in cudaInputs) (*G.Node, error) { return SoftmaxJetGaussNewton(in.l, in.d, 0.7) },
	"LogisticJetValue": func(in cudaInputs) (*G.Node, error) {
		return LogisticJetValue(in.l, in.d, cudaAlpha, cudaBeta)
	},
	"LogisticJetFirst": func(in cudaInputs) (*G.Node, error) {
		return LogisticJetFirst(in.l, in.d, cudaAlpha, cudaBeta)
	},
	"LogisticJetSecond": func(in cudaInputs) (*G.Node, error) {
		return LogisticJetSecond(in.l, in.d, cudaAlpha, cudaBeta)
	},
	"LogisticJetHVP": func(in cudaInputs) (*G.Node, error) {
		return LogisticJetHVP(in.l, in.d, in.v, cudaAlpha, cudaBeta)
	},
	"LogisticJetGaussNewton": func(in cudaInputs) (*G.Node, error) {
		return LogisticJetGaussNewton(in.l, in.d, cudaAlpha, cudaBeta)
	},
	"SoftmaxCoordJetFirst": func(in cudaInputs) (*G.Node, error) { return SoftmaxCoordJetFirst(in.l, in.d, in.d1, 0.7) },
	"SoftmaxCoordJetSecond": func(in cudaInputs) (*G.Node, error) {
		return SoftmaxCoordJetSecond(in.l, in.d, in.d1, in.d2, 0.7)
	},
	"SoftmaxCoordJetHVP": func(in cudaInputs) (*G.Node, error) {
		return SoftmaxCoordJetHVP(in.l, in.d, in.d1, in.d2, in.v2, 0.7)
	},
	"SoftmaxCoordJetGaussNewton": func(in cudaInputs) (*G.Node, error) {
		return SoftmaxCoordJetGaussNewton(in.l, in.d, in.d1, 0.7)
	},
	"LogisticCoordJetFirst": func(in cudaInputs) (*G.Node, error) {
		return LogisticCoordJetFirst(in.l, in.d, in.d1, cudaAlpha, cudaBeta)
	},
	"LogisticCoordJetSecond": func(in cudaInputs) (*G.Node, error) {
		return LogisticCoordJetSecond(in.l, in.d, in.d1, in.d2, cudaAlpha, cudaBeta)
	},
	"LogisticCoordJetHVP": func(in cudaInputs) (*G.Node, error) {
		return LogisticCoordJetHVP(in.l, in.d, in.d1, in.d2, in.v2, cudaAlpha, cudaBeta)
	},
	"LogisticCoordJetGaussNewton": func(in cudaInputs) (*G.Node, error) {
		return LogisticCoordJetGaussNewton(in.l, in.d, in.d1, cudaAlpha, cudaBeta)
	},
	"Softmax":            func(in cudaInputs) (*G.Node, error) { return Softmax(in.x, -1) },
	"LogSoftmax":         func(in cudaInputs) (*G.Node, error) { return LogSoftmax(in.x, 0) },
	"SoftmaxBackward":    func(in cudaInputs) (*G.Node, error) { return SoftmaxBackward(in.y, in.dy, 1) },
	"LogSoftmaxBackward": func(in cudaInputs) (*G.Node, error) { return LogSoftmaxBackward(in.y, in.dy, -2) },
	"ReLU":               func(in cudaInputs) (*G.Node, error) { return ReLU(in.x) },
	"GELU":               func(in cudaInputs) (*G.Node, error) { return GELU(in.x) },
	"SiLU":               func(in cudaInputs) (*G.Node, error) { return SiLU(in.x) },
	"ReLUBackward":       func(in cudaInputs) (*G.Node, error) { return ReLUBackward(in.x, in.dy) },
	"GELUBackward":       func(in cudaInputs) (*G.Node, error) { return GELUBackward(in.x, in.dy) },
	"SiLUBackward":       func(in cudaInputs) (*G.Node, error) { return SiLUBackward(in.x, in.dy) },
	"SoftArgmin":         func(in cudaInputs) (*G.Node, error) { return softArgmin(in.x, 1.5) },
	"LogDetPlusRidge":    func(in cudaInputs) (*G.Node, error) { return logDetPlusRidge(in.h, 0.5) },
}

var (
	cudaAlpha = []float64{1.2, -0.8, 0.6}
	cudaBeta  = []float64{0.1, -0.3, 0.2}
)

type cudaInputs struct {
	g                    *G.ExprGraph
	l, d, v, x, y, dy, h *G.Node
	d1, d2, v2           *G.Node // the coordinate jets' derivatives of d and direction [n,2K]
}

// newCUDAInputs makes the input nodes of dtype dt in a new graph, bound to values.
func newCUDAInputs(dt tensor.Dtype) cudaInputs {
	rng := rand.New(rand.NewSource(14))
	g := G.NewGraph()
	node := func(name string, lo, hi float64, shape ...int) *G.Node {
		in := randInput(rng, name, shape, lo, hi)
		return G.NewTensor(g, dt, len(shape), G.WithShape(shape...), G.WithName(name), G.WithValue(toDense(dt, in.shape, in.vals)))
	}
	// H: a symmetric positive definite matrix per row (diagonal 3, small off-diagonal).
	hv := make([]float64, cudaN*cudaK*cudaK)
	for r := 0; r < cudaN; r++ {
		for a := 0; a < cudaK; a++ {
			for b := 0; b < cudaK; b++ {
				x := 0.1 * float64(float32(float64(r+a+b)/7))
				if a == b {
					x = 3 + float64(r)
				}
				hv[(r*cudaK+a)*cudaK+b] = x
			}
		}
	}
	return cudaInputs{
		g:  g,
		l:  node("l", -1, 1, cudaN, cudaK),
		d:  node("d", -1, 1, cudaN, cudaK, cudaP),
		v:  node("v", -1, 1, cudaN, cudaK),
		d1: node("d1", -1, 1, cudaN, cudaK, cudaP),
		d2: node("d2", -1, 1, cudaN, cudaK, cudaP),
		v2: node("v2", -1, 1, cudaN, 2*cudaK),
		x:  node("x", -1.5, 1.5, cudaN, cudaM),
		y:  node("y", 0.05, 0.5, cudaN, cudaM),
		dy: node("dy", -1, 1, cudaN, cudaM),
		h: G.NewTensor(g, dt, 3, G.WithShape(cudaN, cudaK, cudaK), G.WithName("H"),
			G.WithValue(toDense(dt, tensor.Shape{cudaN, cudaK, cudaK}, hv))),
	}
}

// exportedConstructors lists the exported functions of the package's non-test files that
// return (*gorgonia.Node, error): its op constructors.
func exportedConstructors(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob("*.go")
	require.NoError(t, err)
	var names []string
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.SkipObjectResolution)
		require.NoError(t, err)
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Recv != nil || !fn.Name.IsExported() || fn.Type.Results == nil || len(fn.Type.Results.List) != 2 {
				continue
			}
			star, ok := fn.Type.Results.List[0].Type.(*ast.StarExpr)
			if !ok {
				continue
			}
			if sel, ok := star.X.(*ast.SelectorExpr); ok && sel.Sel.Name == "Node" {
				names = append(names, fn.Name.Name)
			}
		}
	}
	sort.Strings(names)
	return names
}

// TestCUDADoerEveryOp builds a node with every exported constructor, and the gradient nodes
// each op's SymDiff builds (and theirs, to the double backward), and checks that the op of
// every node of this package is a gorgonia.CUDADoer with a CUDAFuncName, and which ops are
// staged through host. It needs no GPU (only the cuda build).
func TestCUDADoerEveryOp(t *testing.T) {
	var listed []string
	for name := range cudaConstructors {
		listed = append(listed, name)
	}
	sort.Strings(listed)
	// The ops of graphs.SoftArgmin and graphs.LogDetPlusRidge live here, unexported.
	want := append(exportedConstructors(t), "LogDetPlusRidge", "SoftArgmin")
	sort.Strings(want)
	require.Equal(t, want, listed, "cudaConstructors must build every exported constructor and the graphs ops")

	for _, dt := range dtypes {
		in := newCUDAInputs(dt)
		var work []*G.Node
		for _, name := range listed {
			n, err := cudaConstructors[name](in)
			require.NoError(t, err, name)
			work = append(work, n)
		}
		// SymDiff of every differentiable op, on a fresh upstream gradient, to depth 3.
		for depth := 0; depth < 3; depth++ {
			var next []*G.Node
			for _, n := range work {
				sd, ok := n.Op().(G.SDOp)
				if _, ours := n.Op().(dispatch.PathReporter); !ok || !ours || !slices.Contains(sd.DiffWRT(n.Op().Arity()), true) {
					continue
				}
				grad := G.NewTensor(in.g, dt, n.Dims(), G.WithShape(n.Shape()...))
				gs, err := sd.SymDiff(childrenOf(n), n, grad)
				if err != nil {
					// Not differentiable (a double backward, a VJP of a channel above the value).
					require.ErrorIs(t, err, gatejet.ErrParam, "%v", n.Op())
					continue
				}
				for _, gn := range gs {
					if gn != nil {
						next = append(next, gn)
					}
				}
			}
			work = next
		}

		types := map[string]bool{}
		var staged []string
		for _, n := range in.g.AllNodes() {
			if _, ours := n.Op().(dispatch.PathReporter); !ours {
				continue
			}
			op, ok := n.Op().(deviceOp)
			if !ok {
				t.Errorf("%v (%T) does not implement gorgonia.CUDADoer and CUDAFuncName", n.Op(), n.Op())
				continue
			}
			types[fmt.Sprintf("%T", n.Op())] = true
			require.NotEmpty(t, op.CUDAFuncName(), "%v", n.Op())
			if s := n.Op().(interface{ stagedThroughHost() bool }); s.stagedThroughHost() {
				staged = append(staged, fmt.Sprintf("%T", n.Op()))
			}
		}
		for _, want := range []string{"*ops.jetOp", "*ops.jetVJPOp", "*ops.softmaxOp", "*ops.axisOp", "*ops.axisGradOp",
			"*ops.actOp", "*ops.softArgminOp", "*ops.logDetOp", "*ops.logDetGradOp", "*ops.coordOp"} {
			require.True(t, types[want], "%v: no node of op type %s was built", dt, want)
		}
		// docs/gpu.md ("CUDADoer ops") lists these as staged through host.
		slices.Sort(staged)
		require.Equal(t, []string{"*ops.logDetGradOp", "*ops.logDetOp", "*ops.rowOp", "*ops.softArgminOp"}, slices.Compact(staged), "%v", dt)
	}
}

// TestCUDADoErrors: what CUDADo refuses, as errors, before anything reaches a device (a
// machine with no engines, as Gorgonia's ExternMetadata is before it is initialised).
func TestCUDADoErrors(t *testing.T) {
	in := newCUDAInputs(tensor.Float64)
	jet, err := SoftmaxJetSecond(in.l, in.d, 0.7)
	require.NoError(t, err)
	ld, err := logDetPlusRidge(in.h, 0.5)
	require.NoError(t, err)
	// Headers over memory that is not Go's, like the machine's device values; nothing here
	// dereferences it.
	dev := func(dt tensor.Dtype, shape ...int) *tensor.Dense {
		return tensor.New(tensor.Of(dt), tensor.WithShape(shape...),
			tensor.FromMemory(uintptr(0x7f0000000000), uintptr(tensor.Shape(shape).TotalSize()*int(dt.Size()))))
	}
	machine := new(G.ExternMetadata)
	l, d := dev(tensor.Float64, cudaN, cudaK), dev(tensor.Float64, cudaN, cudaK, cudaP)
	out := dev(tensor.Float64, cudaN, cudaK, cudaK, cudaP)
	op := jet.Op().(G.CUDADoer)
	cases := []struct {
		name     string
		extern   G.External
		prealloc G.Value
		inputs   []G.Value
		kind     error
	}{
		{"not a CUDA machine", nil, out, []G.Value{l, d}, gatejet.ErrDevice},
		{"nil prealloc", machine, nil, []G.Value{l, d}, gatejet.ErrParam},
		{"prealloc dtype", machine, dev(tensor.Float32, cudaN, cudaK, cudaK, cudaP), []G.Value{l, d}, gatejet.ErrDType},
		{"prealloc shape", machine, dev(tensor.Float64, cudaN, cudaK*cudaK, cudaP), []G.Value{l, d}, gatejet.ErrShape},
		{"input count", machine, out, []G.Value{l}, gatejet.ErrParam},
		{"nil input", machine, out, []G.Value{l, nil}, gatejet.ErrParam},
		{"input shape", machine, out, []G.Value{l, dev(tensor.Float64, cudaN, cudaK*cudaP)}, gatejet.ErrShape},
		{"host input", machine, out, []G.Value{l, tensor.New(tensor.Of(tensor.Float64), tensor.WithShape(cudaN, cudaK, cudaP))}, gatejet.ErrDevice},
		{"no engine", machine, out, []G.Value{l, d}, gatejet.ErrDevice},
	}
	for _, c := range cases {
		_, err := op.CUDADo(c.extern, G.Device(0), c.prealloc, c.inputs...)
		require.ErrorIs(t, err, c.kind, c.name)
		require.Contains(t, err.Error(), "ops.SoftmaxJetSecond", c.name)
	}
	// A staged op: the copy to host finds no engine.
	_, err = ld.Op().(G.CUDADoer).CUDADo(machine, G.Device(0), dev(tensor.Float64, cudaN), dev(tensor.Float64, cudaN, cudaK, cudaK))
	require.ErrorIs(t, err, gatejet.ErrDevice)
	require.Zero(t, ld.Op().(dispatch.PathReporter).PathCounts().Staged)
}

// cudaGraph builds the mixed graph of TestCUDATapeMachine on the inputs (cudaCost) and the
// gradients of its cost with respect to l, d and x ("dcost/dl" ...). It returns the nodes
// whose values are compared.
func cudaGraph(t *testing.T, in cudaInputs, dt tensor.Dtype) map[string]*G.Node {
	t.Helper()
	out := cudaCost(t, in, dt)
	grads, err := G.Grad(out["cost"], in.l, in.d, in.x)
	require.NoError(t, err)
	for i, name := range []string{"l", "d", "x"} {
		out["dcost/d"+name] = grads[i]
	}
	return out
}

// cudaCost builds a mixed graph on the inputs l, d and x: Gorgonia's Exp, Mul (by a scalar),
// HadamardProd, Sub, Square, Add and Sum around gatejet ops, one staged through host
// (LogDetPlusRidge), and a scalar cost ("cost") that depends on all of them.
func cudaCost(t *testing.T, in cudaInputs, dt tensor.Dtype) map[string]*G.Node {
	t.Helper()
	scalar := func(x float64) *G.Node {
		if dt == tensor.Float32 {
			return G.NewConstant(float32(x))
		}
		return G.NewConstant(x)
	}
	out := map[string]*G.Node{}
	el := G.Must(G.Exp(in.l))
	second, err := SoftmaxJetSecond(el, in.d, 0.7)
	require.NoError(t, err)
	out["SoftmaxJetSecond(Exp(l), d)"] = second
	sm, err := Softmax(G.Must(G.Exp(in.x)), -1)
	require.NoError(t, err)
	out["Softmax(Exp(x))"] = sm
	r, err := ReLU(G.Must(G.Sub(sm, scalar(0.2))))
	require.NoError(t, err)
	out["ReLU(Softmax - 0.2)"] = r
	gn, err := SoftmaxJetGaussNewton(in.l, in.d, 0.7)
	require.NoError(t, err)
	ld, err := logDetPlusRidge(G.Must(G.Mul(gn, scalar(2))), 0.5)
	require.NoError(t, err)
	out["LogDetPlusRidge(2·GaussNewton)"] = ld
	value, err := SoftmaxJetValue(in.l, in.d, 0.7)
	require.NoError(t, err)
	cost := G.Must(G.Add(G.Must(G.Sum(G.Must(G.HadamardProd(second, second)))), G.Must(G.Sum(r))))
	cost = G.Must(G.Add(cost, G.Must(G.Sum(ld))))
	cost = G.Must(G.Add(cost, G.Must(G.Sum(G.Must(G.Square(value))))))
	out["cost"] = cost
	return out
}

// hostValues evaluates every node of g on the host, in topological order, with each op's Do
// (gatejet's host path, Gorgonia's CPU implementations): the CPU graph.
func hostValues(t *testing.T, g *G.ExprGraph) map[*G.Node]G.Value {
	t.Helper()
	sorted, err := G.Sort(g)
	require.NoError(t, err)
	vals := map[*G.Node]G.Value{}
	for i := len(sorted) - 1; i >= 0; i-- {
		n := sorted[i]
		kids := childrenOf(n)
		if len(kids) == 0 {
			if n.Value() != nil {
				vals[n] = n.Value()
				continue
			}
			v, err := n.Op().Do()
			require.NoError(t, err, "%v", n)
			vals[n] = v
			continue
		}
		args := make([]G.Value, len(kids))
		for j, c := range kids {
			args[j] = vals[c]
		}
		v, err := n.Op().Do(args...)
		require.NoError(t, err, "%v", n)
		vals[n] = v
	}
	return vals
}

// TestCUDATapeMachine runs a graph mixing gatejet's ops and Gorgonia's on a TapeMachine of
// Gorgonia's cuda build, which keeps the values of CUDADoer ops on the device, and compares
// its values and gradients with the same graph evaluated on the host.
func TestCUDATapeMachine(t *testing.T) {
	forCUDADtypes(t, "the TapeMachine test", func(t *testing.T, dt tensor.Dtype, want map[string][]float64, in cudaInputs) {
		nodes := cudaGraph(t, in, dt)
		got := readOnTape(t, in.g, nodes)
		for name := range nodes {
			requireClose(t, want[name], got[name], roundoffTol(dt), "%v %s: device graph against the host graph", dt, name)
		}
		// Every gatejet node ran through CUDADo: on the device, or staged through host.
		for _, n := range in.g.AllNodes() {
			r, ok := n.Op().(dispatch.PathReporter)
			if !ok {
				continue
			}
			c := r.PathCounts()
			if n.Op().(interface{ stagedThroughHost() bool }).stagedThroughHost() {
				require.NotZero(t, c.Staged, "%v: staged through host", n.Op())
			} else {
				require.NotZero(t, c.GPU, "%v: launched on the device", n.Op())
			}
		}
	})
}

// skipWithoutDevice skips a test that runs a machine of Gorgonia's cuda build when no CUDA
// device is found.
func skipWithoutDevice(t *testing.T, what string) {
	t.Helper()
	if n, err := cu.NumDevices(); err != nil || n == 0 {
		t.Skipf("no CUDA device found (cu.NumDevices: %d, %v): %s needs a GPU", n, err, what)
	}
}

// forCUDADtypes runs f as a subtest for each dtype, with the host's values of the graph of
// cudaGraph (hostReference) and new inputs, unless the test (what) is skipped for want of a
// device or of Gorgonia's own CUDA functions.
func forCUDADtypes(t *testing.T, what string, f func(t *testing.T, dt tensor.Dtype, want map[string][]float64, in cudaInputs)) {
	skipWithoutDevice(t, what)
	needGorgoniaStdLib(t)
	for _, dt := range dtypes {
		t.Run(dt.String(), func(t *testing.T) { f(t, dt, hostReference(t, dt), newCUDAInputs(dt)) })
	}
}

// hostReference evaluates the graph of cudaGraph on the host (each op's Do) for dtype dt and
// returns the values of its nodes by name: the reference of the device machines.
func hostReference(t *testing.T, dt tensor.Dtype) map[string][]float64 {
	t.Helper()
	in := newCUDAInputs(dt)
	nodes := cudaGraph(t, in, dt)
	vals := hostValues(t, in.g)
	want := map[string][]float64{}
	for name, n := range nodes {
		want[name] = floats(t, vals[n])
	}
	return want
}

// readOnTape runs g on a TapeMachine with opts, closed when the test ends (the values of a
// machine of Gorgonia's cuda build live on the device until then), and returns the values
// of nodes as they were read while it ran.
func readOnTape(t *testing.T, g *G.ExprGraph, nodes map[string]*G.Node, opts ...G.VMOpt) map[string][]float64 {
	t.Helper()
	read := map[string]*G.Value{}
	for name, n := range nodes {
		read[name] = new(G.Value)
		G.Read(n, read[name])
	}
	vm := G.NewTapeMachine(g, opts...)
	t.Cleanup(func() { vm.Close() })
	require.NoError(t, vm.RunAll())
	got := map[string][]float64{}
	for name, v := range read {
		require.NotNil(t, *v, name)
		got[name] = floats(t, *v)
	}
	return got
}

// TestCUDATapeMachineDualValues runs the graph of TestCUDATapeMachine with its gradient nodes
// on a TapeMachine with BindDualValues (the usual training setup), which sends each gradient
// node on the device down the device branch of Gorgonia's dual-value accumulation (copies and
// an add queued in the batched context; see docs/gpu.md), and compares the dual values of l, d
// and x with the host's gradients, as well as the gradient nodes' own values.
func TestCUDATapeMachineDualValues(t *testing.T) {
	forCUDADtypes(t, "the TapeMachine test with BindDualValues", func(t *testing.T, dt tensor.Dtype, want map[string][]float64, in cudaInputs) {
		nodes := cudaGraph(t, in, dt)
		grads := map[string]*G.Node{}
		for _, name := range []string{"dcost/dl", "dcost/dd", "dcost/dx"} {
			grads[name] = nodes[name]
		}
		got := readOnTape(t, in.g, grads, G.BindDualValues(in.l, in.d, in.x))
		for name := range grads {
			requireClose(t, want[name], got[name], roundoffTol(dt), "%v %s: gradient node against the host", dt, name)
		}
		for name, n := range map[string]*G.Node{"l": in.l, "d": in.d, "x": in.x} {
			g, err := n.Grad()
			require.NoError(t, err, name)
			requireClose(t, want["dcost/d"+name], floats(t, g), roundoffTol(dt), "%v: dual value of %s against the host gradient", dt, name)
		}
	})
}

// TestCUDALispMachine runs the mixed graph of cudaCost on a LispMachine of Gorgonia's cuda
// build, which puts every CUDADoer node on the device and runs its reverse pass through
// DoDiff (gatejet's read device values through host copies after waiting for the machine's
// queued work), and compares the gradients of the cost with respect to l, d and x with the
// host's (the gradient graph of gorgonia.Grad evaluated with each op's Do).
func TestCUDALispMachine(t *testing.T) {
	forCUDADtypes(t, "the LispMachine test", func(t *testing.T, dt tensor.Dtype, want map[string][]float64, in cudaInputs) {
		nodes := cudaCost(t, in, dt)
		// The graph of the cost alone: the unused inputs would be non-scalar roots.
		g := in.g.SubgraphRoots(nodes["cost"])
		vm := G.NewLispMachine(g)
		defer vm.Close()
		require.NoError(t, vm.RunAll())
		for name, n := range map[string]*G.Node{"l": in.l, "d": in.d, "x": in.x} {
			grad, err := n.Grad()
			require.NoError(t, err, name)
			requireClose(t, want["dcost/d"+name], floats(t, grad), roundoffTol(dt), "%v: LispMachine gradient of %s against the host", dt, name)
		}
		// Every gatejet op ran on the device (or staged) and its DoDiff ran.
		for _, n := range g.AllNodes() {
			r, ok := n.Op().(dispatch.PathReporter)
			if !ok {
				continue
			}
			c, dc := r.PathCounts(), r.DiffPathCounts()
			require.NotZero(t, c.GPU+c.Staged, "%v: CUDADo", n.Op())
			require.NotZero(t, dc.CPU+dc.GPU+dc.CPUFallback, "%v: DoDiff", n.Op())
		}
	})
}

// TestCUDAWarpAndBlockRows runs row jets, and the VJPs of the first channel, through CUDADo on
// a TapeMachine at sizes on both sides of the launch planner's switch between the
// warp-per-row and the block-per-row entry points (launch.WarpRows: K ≤ 32 and K·P ≤ 1024;
// TestPlanWarpRows pins these sizes), and compares them with each op's Do on the host. The
// graph holds gatejet's ops alone: it needs no function of Gorgonia's.
func TestCUDAWarpAndBlockRows(t *testing.T) {
	skipWithoutDevice(t, "the warp and block row test")
	for _, sz := range []struct {
		name string
		K, P int
	}{{"warp K=4 P=4", 4, 4}, {"block K=64 P=32", 64, 32}} {
		for _, dt := range dtypes {
			t.Run(fmt.Sprintf("%s/%v", sz.name, dt), func(t *testing.T) {
				const n = 11 // not a multiple of the warp variant's 8 rows a block
				rng := rand.New(rand.NewSource(int64(sz.K*100 + sz.P)))
				g := G.NewGraph()
				node := func(name string, shape ...int) *G.Node {
					in := randInput(rng, name, shape, -1, 1)
					return G.NewTensor(g, dt, len(shape), G.WithShape(shape...), G.WithName(name), G.WithValue(toDense(dt, in.shape, in.vals)))
				}
				l, d, v := node("l", n, sz.K), node("d", n, sz.K, sz.P), node("v", n, sz.K)
				alpha, beta := make([]float64, sz.K), make([]float64, sz.K)
				for k := range alpha {
					alpha[k], beta[k] = 0.5+1.5*rng.Float64(), rng.NormFloat64()
				}
				nodes := map[string]*G.Node{}
				add := func(name string, x *G.Node, err error) {
					require.NoError(t, err, name)
					nodes[name] = x
				}
				x, err := SoftmaxJetValue(l, d, 0.7)
				add("SoftmaxJetValue", x, err)
				first, err := SoftmaxJetFirst(l, d, 0.7)
				add("SoftmaxJetFirst", first, err)
				x, err = SoftmaxJetHVP(l, d, v, 0.7)
				add("SoftmaxJetHVP", x, err)
				x, err = LogisticJetFirst(l, d, alpha, beta)
				add("LogisticJetFirst", x, err)
				up := node("up", first.Shape()...)
				grads, err := first.Op().(G.SDOp).SymDiff(childrenOf(first), first, up)
				require.NoError(t, err)
				require.Len(t, grads, 2)
				nodes["SoftmaxJetFirst VJP l"], nodes["SoftmaxJetFirst VJP d"] = grads[0], grads[1]

				want := hostValues(t, g)
				got := readOnTape(t, g, nodes)
				for name, x := range nodes {
					requireClose(t, floats(t, want[x]), got[name], roundoffTol(dt), "%s %v %s: device against host", sz.name, dt, name)
					require.NotZero(t, x.Op().(dispatch.PathReporter).PathCounts().GPU, "%s: launched on the device", name)
				}
			})
		}
	}
}

// TestCUDACoordJets runs the coordinate jets of both gates, every channel (the HVP with its
// fifth input, v [n,2K]), through CUDADo on a TapeMachine, and compares them with each op's
// Do on the host; each must have launched on the device. The graph holds gatejet's ops alone.
func TestCUDACoordJets(t *testing.T) {
	skipWithoutDevice(t, "the coordinate-jet test")
	for _, sz := range []struct{ K, P int }{{1, 3}, {4, 5}} {
		for _, dt := range dtypes {
			t.Run(fmt.Sprintf("K=%d P=%d/%v", sz.K, sz.P, dt), func(t *testing.T) {
				const n = 11
				rng := rand.New(rand.NewSource(int64(sz.K*100 + sz.P)))
				g := G.NewGraph()
				node := func(name string, shape ...int) *G.Node {
					in := randInput(rng, name, shape, -1, 1)
					return G.NewTensor(g, dt, len(shape), G.WithShape(shape...), G.WithName(name), G.WithValue(toDense(dt, in.shape, in.vals)))
				}
				l, d0, d1, d2 := node("l", n, sz.K), node("d0", n, sz.K, sz.P), node("d1", n, sz.K, sz.P), node("d2", n, sz.K, sz.P)
				v := node("v", n, 2*sz.K)
				alpha, beta := make([]float64, sz.K), make([]float64, sz.K)
				for k := range alpha {
					alpha[k], beta[k] = 0.5+1.5*rng.Float64(), rng.NormFloat64()
				}
				nodes := map[string]*G.Node{}
				add := func(name string, x *G.Node, err error) {
					require.NoError(t, err, name)
					nodes[name] = x
				}
				x, err := SoftmaxCoordJetFirst(l, d0, d1, 0.7)
				add("SoftmaxCoordJetFirst", x, err)
				x, err = SoftmaxCoordJetSecond(l, d0, d1, d2, 0.7)
				add("SoftmaxCoordJetSecond", x, err)
				x, err = SoftmaxCoordJetHVP(l, d0, d1, d2, v, 0.7)
				add("SoftmaxCoordJetHVP", x, err)
				x, err = SoftmaxCoordJetGaussNewton(l, d0, d1, 0.7)
				add("SoftmaxCoordJetGaussNewton", x, err)
				x, err = LogisticCoordJetFirst(l, d0, d1, alpha, beta)
				add("LogisticCoordJetFirst", x, err)
				x, err = LogisticCoordJetSecond(l, d0, d1, d2, alpha, beta)
				add("LogisticCoordJetSecond", x, err)
				x, err = LogisticCoordJetHVP(l, d0, d1, d2, v, alpha, beta)
				add("LogisticCoordJetHVP", x, err)
				x, err = LogisticCoordJetGaussNewton(l, d0, d1, alpha, beta)
				add("LogisticCoordJetGaussNewton", x, err)

				want := hostValues(t, g)
				got := readOnTape(t, g, nodes)
				for name, x := range nodes {
					requireClose(t, floats(t, want[x]), got[name], roundoffTol(dt), "%v %v %s: device against host", sz, dt, name)
					require.NotZero(t, x.Op().(dispatch.PathReporter).PathCounts().GPU, "%s: launched on the device", name)
				}
			})
		}
	}
}

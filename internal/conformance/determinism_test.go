package conformance

import (
	"fmt"
	"runtime"
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/gatejet/gatejet/ops"
)

// detGraphs builds, for dtype dt, two graphs exercising every op family: a forward-only one
// (whose outputs are compared) and one with the gradients of a linear cost with respect to
// every input (whose gradient nodes are compared). Forward values are read from the
// forward-only graph because a TapeMachine may reuse an output's memory for the gradient
// computations (see TestConcurrentMachinesSharedOps).
func detGraphs(t testing.TB, dt tensor.Dtype) (fwd *G.ExprGraph, fwdOut G.Nodes, bwd *G.ExprGraph, bwdOut G.Nodes) {
	t.Helper()
	const n, k, p = 37, 7, 3 // enough rows to be split into chunks
	build := func(grad bool) (*G.ExprGraph, G.Nodes) {
		g := G.NewGraph()
		l := input(g, dt, "l", []int{n, k}, seq(71, n*k, -3, 3))
		d := input(g, dt, "d", []int{n, k, p}, seq(72, n*k*p, -2, 2))
		v := input(g, dt, "v", []int{n, k}, seq(73, n*k, -1, 1))
		y := input(g, dt, "y", []int{5, n, 4}, seq(74, 5*n*4, 0, 1))
		dy := input(g, dt, "dy", []int{5, n, 4}, seq(75, 5*n*4, -1, 1))
		alpha, beta := seq(76, k, -2, 2), seq(77, k, -1, 1)
		var outs G.Nodes
		for _, b := range []func() (*G.Node, error){
			func() (*G.Node, error) { return ops.SoftmaxJetValue(l, d, 0.9) },
			func() (*G.Node, error) { return ops.SoftmaxJetFirst(l, d, 0.9) },
			func() (*G.Node, error) { return ops.SoftmaxJetSecond(l, d, 0.9) },
			func() (*G.Node, error) { return ops.SoftmaxJetHVP(l, d, v, 0.9) },
			func() (*G.Node, error) { return ops.SoftmaxJetGaussNewton(l, d, 0.9) },
			func() (*G.Node, error) { return ops.LogisticJetSecond(l, d, alpha, beta) },
			func() (*G.Node, error) { return ops.LogisticJetHVP(l, d, v, alpha, beta) },
			func() (*G.Node, error) { return ops.SoftmaxBackward(y, dy, 1) },
			func() (*G.Node, error) { return ops.LogSoftmaxBackward(y, dy, -1) },
			func() (*G.Node, error) { return ops.GELU(dy) },
			func() (*G.Node, error) { return ops.SiLUBackward(y, dy) },
		} {
			o, err := b()
			if err != nil {
				t.Fatalf("%v: %v", dt, err)
			}
			outs = append(outs, o)
		}
		if !grad {
			return g, outs
		}
		var cost *G.Node
		for i, o := range outs {
			w := input(g, dt, fmt.Sprintf("w%d", i), o.Shape(), seq(uint64(80+i), o.Shape().TotalSize(), -1, 1))
			term := G.Must(G.Sum(G.Must(G.HadamardProd(o, w))))
			if cost == nil {
				cost = term
			} else {
				cost = G.Must(G.Add(cost, term))
			}
		}
		grads, err := G.Grad(cost, l, d, v, y, dy)
		if err != nil {
			t.Fatalf("%v: Grad: %v", dt, err)
		}
		return g, grads
	}
	fwd, fwdOut = build(false)
	bwd, bwdOut = build(true)
	return
}

// detRun runs the forward and the gradient graphs and returns every compared value.
func detRun(t testing.TB, dt tensor.Dtype) [][]float64 {
	t.Helper()
	fg, fo, bg, bo := detGraphs(t, dt)
	a, err := runTape(fg, fo...)
	if err != nil {
		t.Fatalf("%v forward: %v", dt, err)
	}
	b, err := runTape(bg, bo...)
	if err != nil {
		t.Fatalf("%v gradients: %v", dt, err)
	}
	return append(a, b...)
}

// TestDeterminism: repeated runs, and par.SetMaxProcs(1, 2, 4) with par.SetMinWork(0) (rows
// always split, with 4 goroutines even on 2 cores), give bit-identical results through every
// op family, forward and gradients, for both dtypes, on the CPU.
func TestDeterminism(t *testing.T) {
	cpuOnly(t)
	if runtime.GOMAXPROCS(0) < 4 {
		old := runtime.GOMAXPROCS(4)
		t.Cleanup(func() { runtime.GOMAXPROCS(old) })
	}
	for _, dt := range bothDtypes {
		setPar(t, 1, 0)
		ref := detRun(t, dt)
		for _, procs := range []int{1, 2, 4, 0} {
			setPar(t, procs, 0)
			for rep := range 2 {
				got := detRun(t, dt)
				for i := range ref {
					if j := firstDiff(ref[i], got[i]); j >= 0 {
						t.Fatalf("%v procs=%d run %d: value %d element %d: %v, want %v (1 proc)", dt, procs, rep, i, j, got[i][j], ref[i][j])
					}
				}
			}
		}
		// The default break-even too (no split for small calls).
		setPar(t, 0, 1<<15)
		got := detRun(t, dt)
		for i := range ref {
			if j := firstDiff(ref[i], got[i]); j >= 0 {
				t.Fatalf("%v default par: value %d element %d: %v, want %v", dt, i, j, got[i][j], ref[i][j])
			}
		}
	}
}

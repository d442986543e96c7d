package conformance

import (
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/gatejet/gatejet/graphs"
	"github.com/gatejet/gatejet/internal/floats"
	"github.com/gatejet/gatejet/ops"
)

// TestVectorEquivalentShapesAccepted documents a leniency rather than an error: the "same
// shape" checks of the ops use Gorgonia's tensor.Shape.Eq, for which a vector [5] equals a
// column [5,1] and a row [1,5]. Such pairs are accepted; the layout is the same row-major one,
// so the result must equal the result with the exact shape.
func TestVectorEquivalentShapesAccepted(t *testing.T) {
	cpuOnly(t)
	xs := []float64{-1, 2, 0.5, -4, 5}
	dys := []float64{1, 2, 3, 4, 5}
	run := func(dyShape []int, build func(x, dy *G.Node) (*G.Node, error), xShape []int) []float64 {
		t.Helper()
		g := G.NewGraph()
		x := input(g, f64, "x", xShape, xs)
		dy := input(g, f64, "dy", dyShape, dys)
		n, err := build(x, dy)
		if err != nil {
			t.Fatalf("build with x %v, dy %v: %v", xShape, dyShape, err)
		}
		out, err := runTape(g, n)
		if err != nil {
			t.Fatalf("run: %v", err)
		}
		return out[0]
	}
	softmax := func(x, dy *G.Node) (*G.Node, error) { return ops.SoftmaxBackward(x, dy, -1) }
	for _, b := range []struct {
		name  string
		build func(x, dy *G.Node) (*G.Node, error)
		x     []int
		dys   [][]int // shapes Gorgonia's Shape.Eq takes for x's
	}{
		{"ReLUBackward", func(x, dy *G.Node) (*G.Node, error) { return ops.ReLUBackward(x, dy) }, []int{5}, [][]int{{5, 1}, {1, 5}}},
		{"GELUBackward", func(x, dy *G.Node) (*G.Node, error) { return ops.GELUBackward(x, dy) }, []int{5}, [][]int{{5, 1}, {1, 5}}},
		{"SoftmaxBackward", softmax, []int{1, 5}, [][]int{{5}}},
	} {
		want := run(b.x, b.build, b.x)
		for _, s := range b.dys {
			if got := run(s, b.build, b.x); !floats.BitsEqual(want, got) {
				t.Errorf("%s: x %v, dy %v: got %v, want %v", b.name, b.x, s, got, want)
			}
		}
	}
}

// TestViewInputs: a view bound to an input node (rows sliced out of a larger tensor, columns
// sliced, a transpose) gives the same bits as its materialised copy through the ops and the
// graph ops; no op may read a view's backing array as if it were contiguous.
func TestViewInputs(t *testing.T) {
	cpuOnly(t)
	rows, err := dense(f64, []int{8, 3}, seq(1, 24, -2, 2)).Slice(G.S(2, 6))
	if err != nil {
		t.Fatal(err)
	}
	cols, err := dense(f64, []int{4, 6}, seq(3, 24, -2, 2)).Slice(nil, G.S(1, 4))
	if err != nil {
		t.Fatal(err)
	}
	tr := dense(f64, []int{3, 4}, seq(4, 12, -2, 2))
	if err := tr.T(); err != nil {
		t.Fatal(err)
	}
	hv, err := dense(f64, []int{4, 3, 3}, seq(5, 36, -1, 1)).Slice(G.S(1, 3)) // matrices 1 and 2
	if err != nil {
		t.Fatal(err)
	}
	h := hv.(*tensor.Dense)
	dv := dense(f64, []int{4, 3, 2}, seq(2, 24, -2, 2))
	for name, v := range map[string]tensor.Tensor{"rows": rows, "cols": cols, "transposed": tr} {
		view := v.(*tensor.Dense)
		run := func(val *tensor.Dense) [][]float64 {
			t.Helper()
			g := G.NewGraph()
			l := G.NewMatrix(g, f64, G.WithShape(4, 3), G.WithName("l"), G.WithValue(val))
			d := G.NewTensor(g, f64, 3, G.WithShape(4, 3, 2), G.WithName("d"), G.WithValue(dv))
			var outs []*G.Node
			for _, b := range []func() (*G.Node, error){
				func() (*G.Node, error) { return ops.SoftmaxJetFirst(l, d, 1.2) },
				func() (*G.Node, error) { return ops.SoftmaxJetHVP(l, d, l, 1.2) },
				func() (*G.Node, error) { return ops.LogisticJetSecond(l, d, []float64{1, 2, 3}, []float64{0, 1, -1}) },
				func() (*G.Node, error) { return ops.SoftmaxBackward(l, l, 0) },
				func() (*G.Node, error) { return ops.GELUBackward(l, l) },
				func() (*G.Node, error) { return graphs.SoftArgmin(l, 2) },
			} {
				o, err := b()
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				outs = append(outs, o)
			}
			res, err := runTape(g, outs...)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			return res
		}
		got, want := run(view), run(view.Materialize().(*tensor.Dense))
		if d := diffResults(want, got, "materialised"); d != "" {
			t.Errorf("%s view: %s", name, d)
		}
	}
	logdet := func(val *tensor.Dense) []float64 {
		g := G.NewGraph()
		hn := G.NewTensor(g, f64, 3, G.WithShape(2, 3, 3), G.WithName("H"), G.WithValue(val))
		o, err := graphs.LogDetPlusRidge(hn, 5)
		if err != nil {
			t.Fatal(err)
		}
		res, err := runTape(g, o)
		if err != nil {
			t.Fatal(err)
		}
		return res[0]
	}
	if got, want := logdet(h), logdet(h.Materialize().(*tensor.Dense)); firstDiff(want, got) >= 0 {
		t.Errorf("LogDetPlusRidge of a sliced view: %v, materialised %v", got, want)
	}
}

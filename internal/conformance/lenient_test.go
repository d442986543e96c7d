package conformance

import (
	"testing"

	G "gorgonia.org/gorgonia"

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
		{"ReLUBackward", ops.ReLUBackward, []int{5}, [][]int{{5, 1}, {1, 5}}},
		{"GELUBackward", ops.GELUBackward, []int{5}, [][]int{{5, 1}, {1, 5}}},
		{"SoftmaxBackward", softmax, []int{1, 5}, [][]int{{5}}},
	} {
		want := run(b.x, b.build, b.x)
		for _, s := range b.dys {
			if got := run(s, b.build, b.x); !bitsEqual(want, got) {
				t.Errorf("%s: x %v, dy %v: got %v, want %v", b.name, b.x, s, got, want)
			}
		}
	}
}

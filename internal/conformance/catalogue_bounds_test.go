package conformance

import (
	G "gorgonia.org/gorgonia"

	"github.com/gatejet/gatejet"
	"github.com/gatejet/gatejet/internal/dispatch"
	"github.com/gatejet/gatejet/ops"
)

// The logistic slope bound (gatejet.MaxLogisticAlpha) where the ops and the dispatch seam
// take gate parameters: the node is refused when it is built, and a Call before any kernel
// (device or emulator) sees it.
func init() {
	moreCatalogues = append(moreCatalogues, func() []badCase {
		g := G.NewGraph()
		l := G.NewMatrix(g, f64, G.WithShape(4, 3), G.WithName("l"))
		d := G.NewTensor(g, f64, 3, G.WithShape(4, 3, 2), G.WithName("d"))
		beta := []float64{0, 0, 0}
		big := 2 * gatejet.MaxLogisticAlpha
		return []badCase{
			{name: "ops alpha past MaxLogisticAlpha", call: func() (any, error) {
				return node(ops.LogisticJetSecond(l, d, []float64{1, -big, 1}, beta))
			}, kind: gatejet.ErrParam, op: "ops.LogisticJetSecond", arg: "alpha"},
			{name: "Call alpha past MaxLogisticAlpha", call: func() (any, error) {
				c := dispatch.NewCall(dispatch.KernelLogisticSecond, [][]float64{make([]float64, 3), make([]float64, 6)},
					[][]float64{make([]float64, 18)}, []int{1, 3, 2}, []float64{1, big, 1, 0, 0, 0})
				return only(c.Check())
			}, kind: gatejet.ErrParam, op: "cudaops.Call", arg: "alpha"},
		}
	})
}

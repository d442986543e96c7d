package conformance

import (
	"math"

	G "gorgonia.org/gorgonia"

	"github.com/gatejet/gatejet"
	"github.com/gatejet/gatejet/graphs"
)

// jets is the result of graphs.MonomialJets and graphs.BSplineJets: nil when all three nodes
// are.
func jets(d0, d1, d2 *G.Node, err error) (any, error) {
	if d0 == nil && d1 == nil && d2 == nil {
		return nil, err
	}
	return []*G.Node{d0, d1, d2}, err
}

// Bad inputs of the decoded-jet builders: nodes, shapes, dtypes and knots.
func init() {
	moreCatalogues = append(moreCatalogues, func() []badCase {
		const (
			mj = "graphs.MonomialJets"
			bj = "graphs.BSplineJets"
		)
		P, S := gatejet.ErrParam, gatejet.ErrShape
		g := G.NewGraph()
		t := input(g, f64, "t", []int{2, 3}, []float64{0.1, 0.2, 0.3, 0.4, 0.5, 0.6})
		B := input(g, f64, "B", []int{3, 4, 1}, make([]float64, 12))
		B32 := input(g, f32, "B32", []int{3, 4, 1}, make([]float64, 12))
		B5 := input(g, f64, "B5", []int{3, 5, 1}, make([]float64, 15))
		knots := []float64{0, 0, 0, 0, 1, 1, 1, 1}
		return []badCase{
			{name: "MonomialJets nil t", call: func() (any, error) { return jets(graphs.MonomialJets(nil, B)) }, kind: P, op: mj, arg: "t"},
			{name: "MonomialJets B of another K", call: func() (any, error) {
				return jets(graphs.MonomialJets(t, input(g, f64, "Bk", []int{2, 4, 1}, make([]float64, 8))))
			}, kind: S, op: mj, arg: "B"},
			{name: "MonomialJets float32 B", call: func() (any, error) { return jets(graphs.MonomialJets(t, B32)) }, kind: gatejet.ErrDType, op: mj, arg: "B"},
			{name: "MonomialJets rank-1 t", call: func() (any, error) {
				return jets(graphs.MonomialJets(input(g, f64, "t1", []int{3}, []float64{1, 2, 3}), B))
			}, kind: gatejet.ErrRank, op: mj, arg: "t"},
			{name: "BSplineJets B's nb against the knots", call: func() (any, error) { return jets(graphs.BSplineJets(t, B5, knots)) }, kind: S, op: bj, arg: "B"},
			{name: "BSplineJets decreasing knots", call: func() (any, error) { return jets(graphs.BSplineJets(t, B, []float64{0, 0, 0, 1, 0, 1, 1, 1})) }, kind: P, op: bj, arg: "knots"},
			{name: "BSplineJets seven knots", call: func() (any, error) { return jets(graphs.BSplineJets(t, B, knots[:7])) }, kind: P, op: bj, arg: "knots"},
			{name: "BSplineJets NaN knot", call: func() (any, error) {
				return jets(graphs.BSplineJets(t, B, []float64{0, 0, 0, 0, math.NaN(), 1, 1, 1}))
			}, kind: gatejet.ErrNonFinite, op: bj, arg: "knots"},
		}
	})
}

package conformance

import (
	G "gorgonia.org/gorgonia"

	"github.com/gatejet/gatejet"
	"github.com/gatejet/gatejet/graphs"
)

// Bad inputs of graphs.CoordGaussNewtonLogDet: nodes, graphs, dtypes, ranks and scalars, and
// the coordinate Gauss-Newton op's own refusal of a d1 that does not fit.
func init() {
	moreCatalogues = append(moreCatalogues, func() []badCase {
		const ev = "graphs.CoordGaussNewtonLogDet"
		g := G.NewGraph()
		l := input(g, f64, "logits", []int{2, 3}, make([]float64, 6))
		d0 := input(g, f64, "d0", []int{2, 3, 4}, make([]float64, 24))
		d1 := input(g, f64, "d1", []int{2, 3, 4}, make([]float64, 24))
		d1Short := input(g, f64, "d1short", []int{2, 3, 3}, make([]float64, 18))
		scalar := func(g *G.ExprGraph, name string) *G.Node {
			return G.NewScalar(g, f64, G.WithName(name), G.WithValue(0.5))
		}
		s, ls, ll := scalar(g, "s"), scalar(g, "ls"), scalar(g, "ll")
		s32 := G.NewScalar(g, f32, G.WithName("s32"), G.WithValue(float32(1)))
		vec := input(g, f64, "vec", []int{1}, []float64{1})
		other := scalar(G.NewGraph(), "other")
		call := func(l, d0, d1, s, ls, ll *G.Node) func() (any, error) {
			return func() (any, error) { return node(graphs.CoordGaussNewtonLogDet(l, d0, d1, s, ls, ll)) }
		}
		return []badCase{
			{name: "CoordGaussNewtonLogDet nil logits", call: call(nil, d0, d1, s, ls, ll), kind: gatejet.ErrParam, op: ev, arg: "logits"},
			{name: "CoordGaussNewtonLogDet nil logLambda", call: call(l, d0, d1, s, ls, nil), kind: gatejet.ErrParam, op: ev, arg: "logLambda"},
			{name: "CoordGaussNewtonLogDet logSigma of another graph", call: call(l, d0, d1, s, other, ll), kind: gatejet.ErrParam, op: ev, arg: "logSigma"},
			{name: "CoordGaussNewtonLogDet float32 invTau", call: call(l, d0, d1, s32, ls, ll), kind: gatejet.ErrDType, op: ev, arg: "invTau"},
			{name: "CoordGaussNewtonLogDet vector logLambda", call: call(l, d0, d1, s, ls, vec), kind: gatejet.ErrShape, op: ev, arg: "logLambda"},
			{name: "CoordGaussNewtonLogDet rank-3 logits", call: call(d0, d0, d1, s, ls, ll), kind: gatejet.ErrRank, op: ev, arg: "logits"},
			{name: "CoordGaussNewtonLogDet d1 of another P", call: call(l, d0, d1Short, s, ls, ll), kind: gatejet.ErrShape, op: "ops.SoftmaxCoordJetGaussNewton", arg: "d1"},
		}
	})
}

package conformance

import (
	"math"

	G "gorgonia.org/gorgonia"

	"github.com/gatejet/gatejet"
	"github.com/gatejet/gatejet/graphs"
)

// Bad inputs of package graphs beyond the main catalogue: nil options, temperatures out
// of range (including one that only Float32 costs cannot take).
func init() {
	moreCatalogues = append(moreCatalogues, func() []badCase {
		const (
			gc = "graphs.GradCheck"
			sa = "graphs.SoftArgmin"
		)
		P, T := gatejet.ErrParam, gatejet.ErrTemperature
		nan, inf := math.NaN(), math.Inf(1)
		g := G.NewGraph()
		w := input(g, f64, "w", []int{2, 2}, []float64{1, 2, 3, 4})
		cost := G.Must(G.Sum(G.Must(G.Square(w))))
		c32 := input(g, f32, "c32", []int{2, 3}, []float64{1, 2, 3, 4, 5, 6})
		c64 := input(g, f64, "c64", []int{2, 3}, []float64{1, 2, 3, 4, 5, 6})
		return []badCase{
			{name: "GradCheck nil option", call: func() (any, error) { return report(graphs.GradCheck(cost, G.Nodes{w}, nil)) }, kind: P, op: gc, arg: "opts"},
			{name: "GradCheck nil option after a valid one", call: func() (any, error) {
				return report(graphs.GradCheck(cost, G.Nodes{w}, graphs.WithMachine(graphs.Lisp), nil))
			}, kind: P, op: gc, arg: "opts"},
			{name: "RequireGradients nil TB nil cost", call: func() (any, error) {
				// a nil TB cannot be failed: the nil report is the answer, and the error
				// is the one GradCheck gives
				if r := graphs.RequireGradients(nil, nil, G.Nodes{w}); r != nil {
					return r, nil
				}
				return report(graphs.GradCheck(nil, G.Nodes{w}))
			}, kind: P, op: gc, arg: "cost"},
			{name: "SoftArgmin float32 invTau above MaxFloat32", call: func() (any, error) { return node(graphs.SoftArgmin(c32, 1e39)) }, kind: T, op: sa, arg: "invTau"},
			{name: "SoftArgmin invTau +Inf", call: func() (any, error) { return node(graphs.SoftArgmin(c64, inf)) }, kind: T, op: sa, arg: "invTau"},
			{name: "SoftArgmin invTau NaN", call: func() (any, error) { return node(graphs.SoftArgmin(c64, nan)) }, kind: T, op: sa, arg: "invTau"},
			{name: "SoftArgminProbs invTau NaN", call: func() (any, error) { return graphs.SoftArgminProbs([]float64{1, 2}, nan) }, kind: T, op: "graphs.SoftArgminProbs", arg: "invTau"},
			{name: "SoftArgminProbs invTau +Inf", call: func() (any, error) { return graphs.SoftArgminProbs([]float64{1e308, -1e308}, inf) }, kind: T, op: "graphs.SoftArgminProbs", arg: "invTau"},
			{name: "SoftArgminProbs invTau -1", call: func() (any, error) { return graphs.SoftArgminProbs([]float64{1}, -1) }, kind: T, op: "graphs.SoftArgminProbs", arg: "invTau"},
			{name: "SoftArgminVJP invTau +Inf", call: func() (any, error) { return graphs.SoftArgminVJP([]float64{1}, []float64{1}, inf) }, kind: T, op: "graphs.SoftArgminVJP", arg: "invTau"},
			{name: "NaturalGradient lambda NaN", call: func() (any, error) { return graphs.NaturalGradient([]float64{1}, []float64{1}, nan) }, kind: P, op: "graphs.NaturalGradient", arg: "lambda"},
			{name: "Grad nil cost", call: func() (any, error) { return nodes(graphs.Grad(nil, w)) }, kind: P, op: "graphs.Grad", arg: "cost"},
			{name: "Grad tensor cost", call: func() (any, error) { return nodes(graphs.Grad(w, w)) }, kind: gatejet.ErrRank, op: "graphs.Grad", arg: "cost"},
			{name: "Grad no wrt", call: func() (any, error) { return nodes(graphs.Grad(cost)) }, kind: P, op: "graphs.Grad", arg: "wrt"},
		}
	})
}

package conformance

import (
	"math"

	G "gorgonia.org/gorgonia"

	"github.com/gatejet/gatejet"
	"github.com/gatejet/gatejet/ops"
)

// Bad inputs of the coordinate-jet ops: nodes, ranks, shapes, dtypes, gate parameters and
// sizes, each naming the op and the argument at fault.
func init() {
	moreCatalogues = append(moreCatalogues, func() []badCase {
		const (
			sf  = "ops.SoftmaxCoordJetFirst"
			ss  = "ops.SoftmaxCoordJetSecond"
			sh  = "ops.SoftmaxCoordJetHVP"
			sg  = "ops.SoftmaxCoordJetGaussNewton"
			lf  = "ops.LogisticCoordJetFirst"
			ls  = "ops.LogisticCoordJetSecond"
			lh  = "ops.LogisticCoordJetHVP"
			lgn = "ops.LogisticCoordJetGaussNewton"
		)
		P, S, R, D := gatejet.ErrParam, gatejet.ErrShape, gatejet.ErrRank, gatejet.ErrDType
		g := G.NewGraph()
		l := input(g, f64, "cl", []int{2, 3}, make([]float64, 6))
		d := input(g, f64, "cd", []int{2, 3, 2}, make([]float64, 12))
		dP := input(g, f64, "cdP", []int{2, 3, 3}, make([]float64, 18))
		dN := input(g, f64, "cdN", []int{1, 3, 2}, make([]float64, 6))
		d32 := input(g, f32, "cd32", []int{2, 3, 2}, make([]float64, 12))
		v := input(g, f64, "cv", []int{2, 6}, make([]float64, 12))
		lK := input(g, f64, "clK", []int{2, 4}, make([]float64, 8))
		vK := input(g, f64, "cvK", []int{2, 3}, make([]float64, 6))
		a, b := []float64{1, 1, 1}, []float64{0, 0, 0}
		return []badCase{
			{name: "coord first nil d1", call: func() (any, error) { return node(ops.SoftmaxCoordJetFirst(l, d, nil, 1)) }, kind: P, op: sf, arg: "d1"},
			{name: "coord first d1 of another P", call: func() (any, error) { return node(ops.SoftmaxCoordJetFirst(l, d, dP, 1)) }, kind: S, op: sf, arg: "d1"},
			{name: "coord first d0 of another n", call: func() (any, error) { return node(ops.SoftmaxCoordJetFirst(l, dN, dN, 1)) }, kind: S, op: sf, arg: "d0"},
			{name: "coord first invTau 0", call: func() (any, error) { return node(ops.SoftmaxCoordJetFirst(l, d, d, 0)) }, kind: gatejet.ErrTemperature, op: sf, arg: "invTau"},
			{name: "coord second float32 d2", call: func() (any, error) { return node(ops.SoftmaxCoordJetSecond(l, d, d, d32, 1)) }, kind: D, op: ss, arg: "d2"},
			{name: "coord second rank-2 d2", call: func() (any, error) { return node(ops.SoftmaxCoordJetSecond(l, d, d, l, 1)) }, kind: R, op: ss, arg: "d2"},
			{name: "coord hvp v [n,K]", call: func() (any, error) { return node(ops.SoftmaxCoordJetHVP(l, d, d, d, vK, 1)) }, kind: S, op: sh, arg: "v"},
			// K of logits against the rest: d0 is named, whatever the channel's other arguments.
			{name: "coord hvp d0 of another K", call: func() (any, error) { return node(ops.SoftmaxCoordJetHVP(lK, d, d, d, v, 1)) }, kind: S, op: sh, arg: "d0"},
			{name: "coord hvp rank-3 v", call: func() (any, error) { return node(ops.SoftmaxCoordJetHVP(l, d, d, d, d, 1)) }, kind: R, op: sh, arg: "v"},
			{name: "coord gauss-newton rank-3 logits", call: func() (any, error) { return node(ops.SoftmaxCoordJetGaussNewton(d, d, d, 1)) }, kind: R, op: sg, arg: "logits"},
			{name: "coord gauss-newton over MaxBytes", call: func() (any, error) { return node(ops.SoftmaxCoordJetGaussNewton(l, d, d, 1)) },
				kind: gatejet.ErrSize, op: sg, arg: "output", setup: maxBytes(8*2*6*6 - 1)},
			{name: "coord logistic first short alpha", call: func() (any, error) { return node(ops.LogisticCoordJetFirst(l, d, d, a[:2], b)) }, kind: P, op: lf, arg: "alpha"},
			{name: "coord logistic second NaN beta", call: func() (any, error) {
				return node(ops.LogisticCoordJetSecond(l, d, d, d, a, []float64{0, math.NaN(), 0}))
			}, kind: gatejet.ErrNonFinite, op: ls, arg: "beta"},
			{name: "coord logistic hvp nil v", call: func() (any, error) { return node(ops.LogisticCoordJetHVP(l, d, d, d, nil, a, b)) }, kind: P, op: lh, arg: "v"},
			{name: "coord logistic hvp v of another graph", call: func() (any, error) {
				return node(ops.LogisticCoordJetHVP(l, d, d, d, input(G.NewGraph(), f64, "cv2", []int{2, 6}, make([]float64, 12)), a, b))
			}, kind: P, op: lh, arg: "v"},
			{name: "coord logistic gauss-newton float32 d1", call: func() (any, error) { return node(ops.LogisticCoordJetGaussNewton(l, d, d32, a, b)) }, kind: D, op: lgn, arg: "d1"},
			{name: "coord logistic gauss-newton nil option", call: func() (any, error) { return node(ops.LogisticCoordJetGaussNewton(l, d, d, a, b, nil)) }, kind: P, op: lgn, arg: "opts"},
			{name: "coord hvp invTau +Inf", call: func() (any, error) { return node(ops.SoftmaxCoordJetHVP(l, d, d, d, v, math.Inf(1))) }, kind: gatejet.ErrTemperature, op: sh, arg: "invTau"},
		}
	})
}

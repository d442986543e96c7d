package conformance

import (
	"math"

	"github.com/gatejet/gatejet"
	"github.com/gatejet/gatejet/softmaxjet"
)

// Bad inputs of the coordinate-jet kernels of softmaxjet: shapes, sizes, lengths, overlaps
// and the gate's parameters.
func init() {
	moreCatalogues = append(moreCatalogues, func() []badCase {
		const (
			cf = "softmaxjet.CoordFirst"
			cs = "softmaxjet.CoordSecond"
			cg = "softmaxjet.CoordGaussNewton"
			ch = "softmaxjet.CoordHVP"
		)
		sh := softmaxjet.Shape{N: 2, K: 3, P: 2}
		buf := func(n int) []float64 { return make([]float64, n) }
		l, d := buf(6), buf(12)
		var sm softmaxjet.Gate[float64] = softmaxjet.Softmax[float64]{InvTau: 1}
		var lg softmaxjet.Gate[float32] = softmaxjet.Logistic[float32]{Alpha: []float64{1, math.Inf(1), 1}, Beta: []float64{0, 0, 0}}
		arena := buf(200)
		return []badCase{
			{name: "CoordFirst K = 0", call: func() (any, error) {
				return only(softmaxjet.CoordFirst(sm, buf(0), buf(0), buf(0), buf(0), softmaxjet.Shape{N: 2, K: 0, P: 2}))
			}, kind: gatejet.ErrShape, op: cf, arg: "shape"},
			{name: "CoordSecond 4·N·K²·P overflows", call: func() (any, error) {
				return only(softmaxjet.CoordSecond(sm, nil, nil, nil, nil, nil, softmaxjet.Shape{N: 1, K: 1 << 20, P: 1 << 21}))
			}, kind: gatejet.ErrSize, op: cs, arg: "shape"},
			{name: "CoordSecond short d2", call: func() (any, error) {
				return only(softmaxjet.CoordSecond(sm, buf(144), l, d, d, d[1:], sh))
			}, kind: gatejet.ErrSize, op: cs, arg: "d2"},
			{name: "CoordGaussNewton dst overlaps d1", call: func() (any, error) {
				return only(softmaxjet.CoordGaussNewton(sm, arena[:72], l, d, arena[60:72], sh))
			}, kind: gatejet.ErrParam, op: cg, arg: "dst"},
			{name: "CoordHVP v of K per row", call: func() (any, error) {
				return only(softmaxjet.CoordHVP(sm, buf(24), l, d, d, d, buf(6), sh))
			}, kind: gatejet.ErrSize, op: ch, arg: "v"},
			{name: "CoordHVP logistic +Inf alpha", call: func() (any, error) {
				f := make([]float32, 12)
				return only(softmaxjet.CoordHVP(lg, make([]float32, 24), f[:6], f, f, f, f, sh))
			}, kind: gatejet.ErrNonFinite, op: ch, arg: "alpha"},
			{name: "CoordFirst nil gate", call: func() (any, error) {
				return only(softmaxjet.CoordFirst[float64](nil, buf(24), l, d, d, sh))
			}, kind: gatejet.ErrParam, op: cf, arg: "g"},
		}
	})
}

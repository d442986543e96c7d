package conformance

import (
	"math"
	"testing"

	"github.com/gatejet/gatejet"
	"github.com/gatejet/gatejet/backward"
	"github.com/gatejet/gatejet/internal/check"
	"github.com/gatejet/gatejet/internal/tower"
	"github.com/gatejet/gatejet/softmaxjet"
)

// The maths kernels' part of the error catalogue: parameters beyond the accepted ranges
// (gatejet.MaxInvTau, gatejet.MaxLogisticAlpha), sizes beyond gatejet.MaxBytes found before
// anything is allocated, and outputs that overlap other arguments.

// growingBasis is a tower.Basis whose Len() can be changed after NewProgram has read it.
type growingBasis struct{ nb *int }

func (b growingBasis) Len() int { return *b.nb }
func (b growingBasis) Dim() int { return 1 }
func (b growingBasis) Eval(t, phi, dphi, d2phi []float64) {
	for i := 0; i < *b.nb; i++ {
		phi[i] = 1
	}
}

// hugeBasis has a small Len() and a Dim() whose ∂²Φ buffer (Len·Dim² float64s) is 8 TiB.
type hugeBasis struct{}

func (hugeBasis) Len() int                           { return 1 }
func (hugeBasis) Dim() int                           { return 1 << 20 }
func (hugeBasis) Eval(t, phi, dphi, d2phi []float64) {}

// maxBytes is a setup that lowers gatejet.MaxBytes for one case.
func maxBytes(n int64) func(t *testing.T) {
	return func(t *testing.T) {
		cpuOnly(t)
		prev := gatejet.SetMaxBytes(n)
		t.Cleanup(func() { gatejet.SetMaxBytes(prev) })
	}
}

func init() {
	moreCatalogues = append(moreCatalogues, func() []badCase {
		T, S, P := gatejet.ErrTemperature, gatejet.ErrSize, gatejet.ErrParam
		sh := softmaxjet.Shape{N: 2, K: 3, P: 2}
		buf := func(n int) []float64 { return make([]float64, n) }
		l6, d12, v6 := buf(6), buf(12), buf(6)
		alpha, beta := []float64{1, 2, 3}, []float64{0, 0, 0}
		arena := buf(128)
		program := func(spec tower.ProgramSpec) (any, error) {
			p, err := tower.NewProgram[float64](spec)
			return p, err
		}
		program32 := func(spec tower.ProgramSpec) (any, error) {
			p, err := tower.NewProgram[float32](spec)
			return p, err
		}
		shape := []int{3, 4}
		return []badCase{
			// ---- parameters beyond the accepted ranges ----
			{name: "maths invTau above MaxInvTau", call: func() (any, error) {
				return only(softmaxjet.Softmax[float64]{InvTau: math.Nextafter(gatejet.MaxInvTau, math.Inf(1))}.Second(buf(36), l6, d12, sh))
			}, kind: T, op: "softmaxjet.Softmax.Second", arg: "invTau"},
			{name: "maths invTau s³ overflows", call: func() (any, error) {
				return only(softmaxjet.Softmax[float64]{InvTau: 5.7e102}.SecondVJP(buf(6), nil, l6, d12, buf(36), sh))
			}, kind: T, op: "softmaxjet.Softmax.SecondVJP", arg: "invTau"},
			{name: "maths invTau s² overflows", call: func() (any, error) {
				return only(softmaxjet.Softmax[float64]{InvTau: 1.35e154}.HVPVJP(buf(6), nil, nil, l6, d12, v6, buf(12), sh))
			}, kind: T, op: "softmaxjet.Softmax.HVPVJP", arg: "invTau"},
			{name: "maths invTau MaxFloat64", call: func() (any, error) {
				return only(softmaxjet.Softmax[float64]{InvTau: math.MaxFloat64}.FirstVJP(buf(6), nil, l6, d12, buf(12), sh))
			}, kind: T, op: "softmaxjet.Softmax.FirstVJP", arg: "invTau"},
			{name: "maths program invTau 1e200", call: func() (any, error) {
				return program(tower.ProgramSpec{K: 2, P: 1, Gate: tower.Softmax(1e200)})
			}, kind: T, op: "tower.NewProgram", arg: "invTau"},
			{name: "maths float32 program invTau beyond its jets", call: func() (any, error) {
				return program32(tower.ProgramSpec{K: 2, P: 1, Gate: tower.Softmax(1e19)})
			}, kind: T, op: "tower.NewProgram", arg: "invTau"},
			{name: "maths float32 tower invTau beyond its jets", call: func() (any, error) {
				return only(tower.TowerChannels(nil, make([]float32, 12), nil, make([]float32, 6), make([]float32, 12), tower.Shape(sh), 1e30))
			}, kind: T, op: "tower.TowerChannels", arg: "invTau"},
			{name: "maths logistic alpha above MaxLogisticAlpha", call: func() (any, error) {
				return only(softmaxjet.Logistic[float64]{Alpha: []float64{1, 1e200, 1}, Beta: beta}.Second(buf(36), l6, d12, sh))
			}, kind: P, op: "softmaxjet.Logistic.Second", arg: "alpha"},
			{name: "maths logistic alpha below -MaxLogisticAlpha", call: func() (any, error) {
				return only(softmaxjet.Logistic[float64]{Alpha: []float64{-1e101, 1, 1}, Beta: beta}.HVPVJP(buf(6), nil, nil, l6, d12, v6, buf(12), sh))
			}, kind: P, op: "softmaxjet.Logistic.HVPVJP", arg: "alpha"},
			{name: "maths tower logistic alpha above MaxLogisticAlpha", call: func() (any, error) {
				return only(tower.TowerLogisticChannels(buf(4), nil, nil, l6, d12, tower.Shape(sh), []float64{1, 1, 1e101}, beta))
			}, kind: P, op: "tower.TowerLogisticChannels", arg: "alpha"},
			{name: "maths program alpha above MaxLogisticAlpha", call: func() (any, error) {
				return program(tower.ProgramSpec{K: 1, P: 1, Gate: tower.Logistic([]float64{1e150}, []float64{0})})
			}, kind: P, op: "tower.NewProgram", arg: "alpha"},

			// ---- sizes checked before allocating ----
			{name: "maths program K=P=2^40", call: func() (any, error) {
				return program(tower.ProgramSpec{K: 1 << 40, P: 1 << 40, Gate: tower.Softmax(1)})
			}, kind: S, op: "tower.NewProgram", arg: "shape"},
			{name: "maths program K=2^62", call: func() (any, error) {
				return program(tower.ProgramSpec{K: 1 << 62, P: 1, Gate: tower.Softmax(1)})
			}, kind: S, op: "tower.NewProgram", arg: "shape"},
			{name: "maths program K=2^17 jets", call: func() (any, error) {
				return program(tower.ProgramSpec{K: 1 << 17, P: 1, Gate: tower.Softmax(1)})
			}, kind: S, op: "tower.NewProgram", arg: "shape"},
			{name: "maths program basis buffers", call: func() (any, error) {
				return program(tower.ProgramSpec{K: 2, P: 1, Gate: tower.Softmax(1), Basis: hugeBasis{}, Decoder: []float64{1}})
			}, kind: S, op: "tower.NewProgram", arg: "Basis"},
			{name: "maths tower workspace over MaxBytes", setup: maxBytes(1 << 20), call: func() (any, error) {
				const K = 64 // 67 jets of 64 + 64² float64s: 2.1 MiB
				return only(tower.TowerChannels(buf(1), nil, nil, buf(K), buf(K), tower.Shape{N: 1, K: K, P: 1}, 1))
			}, kind: S, op: "tower.TowerChannels", arg: "shape"},
			{name: "maths kernel scratch over MaxBytes", setup: maxBytes(1 << 10), call: func() (any, error) {
				s := softmaxjet.Shape{N: 1, K: 16, P: 16}
				return only(softmaxjet.Softmax[float64]{InvTau: 1}.Second(buf(s.SecondLen()), buf(s.LogitsLen()), buf(s.DecodedLen()), s))
			}, kind: S, op: "softmaxjet.Softmax.Second", arg: "shape"},
			{name: "maths Shape.Check K = 0", call: func() (any, error) {
				return only(softmaxjet.Shape{N: 1, K: 0, P: 1}.Check("caller.Op"))
			}, kind: gatejet.ErrShape, op: "caller.Op", arg: "shape"},
			{name: "maths backward partial sums over MaxBytes", setup: maxBytes(40), call: func() (any, error) {
				n := 2 * 70000
				return only(backward.SoftmaxBackward(buf(n), buf(n), buf(n), []int{2, 70000}, -1))
			}, kind: S, op: "backward.SoftmaxBackward", arg: "shape"},
			{name: "maths program basis changed its Len", call: func() (any, error) {
				nb := 2
				p, err := tower.NewProgram[float64](tower.ProgramSpec{K: 2, P: 1, Gate: tower.Softmax(1), Basis: growingBasis{&nb}, Decoder: []float64{1, 2}})
				if err != nil {
					return p, err
				}
				nb = 3
				return only(p.RowLatent(buf(1), nil, nil, []float64{0, 1}, []float64{0.5, 0.25}))
			}, kind: P, op: "tower.Program.RowLatent", arg: "Basis"},

			// ---- overlapping outputs ----
			{name: "maths kernel dst over logits", call: func() (any, error) {
				return only(softmaxjet.Softmax[float64]{InvTau: 1}.First(arena[3:15], arena[0:6], d12, sh))
			}, kind: P, op: "softmaxjet.Softmax.First", arg: "dst"},
			{name: "maths kernel dst is decoded", call: func() (any, error) {
				return only(softmaxjet.Softmax[float64]{InvTau: 1}.HVP(d12, l6, d12, v6, sh))
			}, kind: P, op: "softmaxjet.Softmax.HVP", arg: "dst"},
			{name: "maths vjp outputs overlap", call: func() (any, error) {
				return only(softmaxjet.Softmax[float64]{InvTau: 1}.ValueVJP(arena[0:6], arena[4:16], l6, d12, buf(4), sh))
			}, kind: P, op: "softmaxjet.Softmax.ValueVJP", arg: "dLogits"},
			{name: "maths vjp output over upstream", call: func() (any, error) {
				return only(softmaxjet.Softmax[float64]{InvTau: 1}.GaussNewtonVJP(nil, arena[10:22], l6, d12, arena[0:18], sh))
			}, kind: P, op: "softmaxjet.Softmax.GaussNewtonVJP", arg: "dDecoded"},
			{name: "maths logistic dst over alpha", call: func() (any, error) {
				return only(softmaxjet.Logistic[float64]{Alpha: arena[10:13], Beta: beta}.First(arena[0:12], l6, d12, sh))
			}, kind: P, op: "softmaxjet.Logistic.First", arg: "dst"},
			{name: "maths logistic vjp dV over dLogits", call: func() (any, error) {
				return only(softmaxjet.Logistic[float64]{Alpha: alpha, Beta: beta}.HVPVJP(arena[0:6], nil, arena[5:11], l6, d12, v6, buf(12), sh))
			}, kind: P, op: "softmaxjet.Logistic.HVPVJP", arg: "dLogits"},
			{name: "maths tower second over decoded", call: func() (any, error) {
				return only(tower.TowerChannels(nil, nil, arena[0:36], l6, arena[30:42], tower.Shape(sh), 1))
			}, kind: P, op: "tower.TowerChannels", arg: "second"},
			{name: "maths program row first over logits", call: func() (any, error) {
				p, err := tower.NewProgram[float64](tower.ProgramSpec{K: 3, P: 2, Gate: tower.Softmax(1)})
				if err != nil {
					return p, err
				}
				return only(p.RowDecoded(nil, arena[0:6], nil, arena[5:8], buf(6)))
			}, kind: P, op: "tower.Program.RowDecoded", arg: "first"},
			{name: "maths backward dx partly over y", call: func() (any, error) {
				return only(backward.SoftmaxBackward(arena[5:17], arena[0:12], buf(12), shape, -1))
			}, kind: P, op: "backward.SoftmaxBackward", arg: "dx"},
			{name: "maths backward dx partly over dy", call: func() (any, error) {
				return only(backward.LogSoftmaxBackward(arena[0:12], buf(12), arena[11:23], shape, 0))
			}, kind: P, op: "backward.LogSoftmaxBackward", arg: "dx"},
			{name: "maths backward grad gy is gdy", call: func() (any, error) {
				g := buf(12)
				return only(backward.SoftmaxBackwardGrad(g, g, buf(12), buf(12), buf(12), shape, -1))
			}, kind: P, op: "backward.SoftmaxBackwardGrad", arg: "gy"},
			{name: "maths backward grad gdy partly over g", call: func() (any, error) {
				return only(backward.LogSoftmaxBackwardGrad(nil, arena[0:12], buf(12), buf(12), arena[6:18], shape, 1))
			}, kind: P, op: "backward.LogSoftmaxBackwardGrad", arg: "gdy"},
			{name: "maths activation y partly over x", call: func() (any, error) {
				return only(backward.GELU(arena[1:13], arena[0:12]))
			}, kind: P, op: "backward.GELU", arg: "y"},
			{name: "maths activation backward dx partly over dy", call: func() (any, error) {
				return only(backward.SiLUBackward(arena[0:12], buf(12), arena[2:14]))
			}, kind: P, op: "backward.SiLUBackward", arg: "dx"},
			{name: "maths logistic value VJP g short", call: func() (any, error) {
				return only(softmaxjet.Logistic[float64]{Alpha: alpha, Beta: beta}.ValueVJP(buf(6), buf(12), l6, d12, buf(3), sh))
			}, kind: S, op: "softmaxjet.Logistic.ValueVJP", arg: "g"},
			{name: "maths logistic first VJP beta NaN", call: func() (any, error) {
				return only(softmaxjet.Logistic[float64]{Alpha: alpha, Beta: []float64{0, math.NaN(), 0}}.FirstVJP(buf(6), buf(12), l6, d12, buf(12), sh))
			}, kind: gatejet.ErrNonFinite, op: "softmaxjet.Logistic.FirstVJP", arg: "beta"},
			{name: "maths logistic second VJP dDecoded partly over decoded", call: func() (any, error) {
				return only(softmaxjet.Logistic[float64]{Alpha: alpha, Beta: beta}.SecondVJP(buf(6), arena[0:12], l6, arena[6:18], buf(36), sh))
			}, kind: P, op: "softmaxjet.Logistic.SecondVJP", arg: "dDecoded"},
			{name: "maths logistic Gauss-Newton alpha short", call: func() (any, error) {
				return only(softmaxjet.Logistic[float64]{Alpha: alpha[:2], Beta: beta}.GaussNewton(buf(18), l6, d12, sh))
			}, kind: P, op: "softmaxjet.Logistic.GaussNewton", arg: "alpha"},
			{name: "maths logistic Gauss-Newton VJP K 0", call: func() (any, error) {
				return only(softmaxjet.Logistic[float64]{Alpha: nil, Beta: nil}.GaussNewtonVJP(nil, nil, nil, nil, nil, softmaxjet.Shape{N: 1, K: 0, P: 1}))
			}, kind: gatejet.ErrShape, op: "softmaxjet.Logistic.GaussNewtonVJP", arg: "shape"},
			{name: "maths activation SiLU lengths", call: func() (any, error) {
				return only(backward.SiLU(buf(2), buf(3)))
			}, kind: S, op: "backward.SiLU", arg: "y"},
			{name: "maths activation ReLU backward dx partly over dy", call: func() (any, error) {
				return only(backward.ReLUBackward(arena[0:12], buf(12), arena[3:15]))
			}, kind: P, op: "backward.ReLUBackward", arg: "dx"},
			{name: "maths activation GELU grad g short", call: func() (any, error) {
				return only(backward.GELUBackwardGrad(buf(4), buf(4), buf(4), buf(4), buf(3)))
			}, kind: S, op: "backward.GELUBackwardGrad", arg: "g"},
			{name: "maths AxisLayout axis out of range", call: func() (any, error) {
				return layout(check.AxisLayout("backward.SoftmaxBackward", []int{2, 3}, 2))
			}, kind: gatejet.ErrAxis, op: "backward.SoftmaxBackward", arg: "axis"},
			{name: "maths AxisLayout rank 9", call: func() (any, error) {
				return layout(check.AxisLayout("backward.SoftmaxBackward", []int{1, 1, 1, 1, 1, 1, 1, 1, 1}, 0))
			}, kind: gatejet.ErrRank, op: "backward.SoftmaxBackward", arg: "shape"},
			{name: "maths activation grad gx is gdy", call: func() (any, error) {
				g := buf(12)
				return only(backward.ReLUBackwardGrad(g, g, buf(12), buf(12), buf(12)))
			}, kind: P, op: "backward.ReLUBackwardGrad", arg: "gx"},
		}
	})
}

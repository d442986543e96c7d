package conformance

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/gatejet/gatejet"
	"github.com/gatejet/gatejet/backward"
	"github.com/gatejet/gatejet/graphs"
	"github.com/gatejet/gatejet/internal/check"
	"github.com/gatejet/gatejet/internal/floats"
	"github.com/gatejet/gatejet/ops"
	"github.com/gatejet/gatejet/softmaxjet"
)

// ---------------------------------------------------------------------------------------------
// FuzzOpConstructors
// ---------------------------------------------------------------------------------------------

// argSpec describes one node argument a fuzz input asks for.
type argSpec struct {
	isNil bool
	other bool // in the second graph
	dt    tensor.Dtype
	shape []int
}

func (a argSpec) String() string {
	switch {
	case a.isNil:
		return "nil"
	case a.other:
		return fmt.Sprintf("%v%v@other", a.dt, a.shape)
	}
	return fmt.Sprintf("%v%v", a.dt, a.shape)
}

// ctorParams are the scalar arguments of a constructor.
type ctorParams struct {
	axis        int
	param       float64 // invTau, lambda or weight
	alpha, beta []float64
}

// ctor is one public constructor under fuzzing, with an oracle of its documented rules.
type ctor struct {
	name  string
	nargs int
	jet   bool // arguments logits [n,K], decoded [n,K,P] (, v [n,K])
	build func(a []*G.Node, p ctorParams) (*G.Node, error)
	// expect returns the sentinels of every documented rule the arguments break (empty: the
	// call is valid) and, for a valid call, the documented output shape.
	expect func(a []argSpec, p ctorParams) (kinds []error, shape []int)
}

func isFloat(dt tensor.Dtype) bool { return dt == f64 || dt == f32 }

func validInvTau(s float64) bool { return check.InvTau("", s) == nil }

func positiveDims(s []int) bool {
	for _, d := range s {
		if d < 1 {
			return false
		}
	}
	return true
}

// commonKinds: what every ops constructor checks of its node arguments (nil, one graph, one
// float dtype).
func commonKinds(a []argSpec) []error {
	var ks []error
	graphsUsed := map[bool]bool{}
	var dts []tensor.Dtype
	for _, s := range a {
		if s.isNil {
			ks = append(ks, gatejet.ErrParam)
			continue
		}
		graphsUsed[s.other] = true
		if !isFloat(s.dt) {
			ks = append(ks, gatejet.ErrDType)
		}
		dts = append(dts, s.dt)
	}
	if len(graphsUsed) > 1 {
		ks = append(ks, gatejet.ErrParam)
	}
	for _, d := range dts {
		if d != dts[0] {
			ks = append(ks, gatejet.ErrDType)
		}
	}
	return ks
}

// jetChannel is the output shape of a jet channel.
type jetChannel func(n, k, p int) []int

var (
	chValue  jetChannel = func(n, k, p int) []int { return []int{n, p} }
	chFirst  jetChannel = func(n, k, p int) []int { return []int{n, k, p} }
	chSecond jetChannel = func(n, k, p int) []int { return []int{n, k, k, p} }
	chGN     jetChannel = func(n, k, p int) []int { return []int{n, k, k} }
)

// jetExpect is the oracle of the ops.SoftmaxJet* and ops.LogisticJet* constructors.
func jetExpect(out jetChannel, hasV, logistic bool) func(a []argSpec, p ctorParams) ([]error, []int) {
	return func(a []argSpec, p ctorParams) ([]error, []int) {
		ks := commonKinds(a)
		l, d := a[0], a[1]
		var shape []int
		shapesOK := false
		if !l.isNil && !d.isNil {
			ok := true
			if len(l.shape) != 2 {
				ks, ok = append(ks, gatejet.ErrRank), false
			}
			if len(d.shape) != 3 {
				ks, ok = append(ks, gatejet.ErrRank), false
			}
			if ok {
				if d.shape[0] != l.shape[0] || d.shape[1] != l.shape[1] {
					ks, ok = append(ks, gatejet.ErrShape), false
				}
				if !positiveDims(l.shape) || !positiveDims(d.shape) {
					ks, ok = append(ks, gatejet.ErrShape), false
				}
			}
			if hasV && !a[2].isNil {
				v := a[2]
				if len(v.shape) != 2 {
					ks, ok = append(ks, gatejet.ErrRank), false
				} else if !slices.Equal(v.shape, l.shape) {
					ks, ok = append(ks, gatejet.ErrShape), false
				}
			}
			if ok {
				shapesOK = true
				shape = out(l.shape[0], l.shape[1], d.shape[2])
			}
		}
		if logistic {
			if shapesOK {
				k := l.shape[1]
				for _, v := range [][]float64{p.alpha, p.beta} {
					if len(v) != k {
						ks = append(ks, gatejet.ErrParam)
					}
					for _, x := range v {
						if math.IsNaN(x) || math.IsInf(x, 0) {
							ks = append(ks, gatejet.ErrNonFinite)
						}
					}
				}
			}
		} else if !validInvTau(p.param) {
			ks = append(ks, gatejet.ErrTemperature)
		}
		return ks, shape
	}
}

// The coordinate jets' output shapes.
var (
	chCoordFirst  jetChannel = func(n, k, p int) []int { return []int{n, 2 * k, p} }
	chCoordSecond jetChannel = func(n, k, p int) []int { return []int{n, 2 * k, 2 * k, p} }
	chCoordGN     jetChannel = func(n, k, p int) []int { return []int{n, 2 * k, 2 * k} }
)

// coordExpect is the oracle of a coordinate jet of arguments logits, d0, d1 [, d2] [, v]:
// the row jet's rules for logits and d0, every argument's common ones, d1 and d2 of d0's
// shape, and v [n,2K] for logits [n,K].
func coordExpect(out jetChannel, logistic bool) func(a []argSpec, p ctorParams) ([]error, []int) {
	return func(a []argSpec, p ctorParams) ([]error, []int) {
		ks, shape := jetExpect(chValue, false, logistic)(a[:2], p)
		ks = append(ks, commonKinds(a)...)
		for i := 2; i < len(a) && i < 4; i++ { // d1, d2
			if d := a[i]; !d.isNil {
				if len(d.shape) != 3 {
					ks, shape = append(ks, gatejet.ErrRank), nil
				} else if !a[1].isNil && !slices.Equal(d.shape, a[1].shape) {
					ks, shape = append(ks, gatejet.ErrShape), nil
				}
			}
		}
		if len(a) == 5 && !a[4].isNil {
			l, v := a[0], a[4]
			if len(v.shape) != 2 {
				ks, shape = append(ks, gatejet.ErrRank), nil
			} else if !l.isNil && len(l.shape) == 2 && (v.shape[0] != l.shape[0] || v.shape[1] != 2*l.shape[1]) {
				ks, shape = append(ks, gatejet.ErrShape), nil
			}
		}
		if shape != nil {
			shape = out(a[0].shape[0], a[0].shape[1], a[1].shape[2])
		}
		return ks, shape
	}
}

// axisExpect is the oracle of ops.SoftmaxBackward and ops.LogSoftmaxBackward.
func axisExpect(a []argSpec, p ctorParams) ([]error, []int) {
	ks := commonKinds(a)
	y, dy := a[0], a[1]
	if y.isNil || dy.isNil {
		return ks, nil
	}
	r := len(y.shape)
	ok := true
	if r < 1 || r > 8 {
		ks, ok = append(ks, gatejet.ErrRank), false
	}
	if !tensor.Shape(dy.shape).Eq(tensor.Shape(y.shape)) { // the documented leniency, see lenient_test.go
		ks, ok = append(ks, gatejet.ErrShape), false
	}
	if p.axis < -r || p.axis >= r {
		ks, ok = append(ks, gatejet.ErrAxis), false
	}
	if !positiveDims(y.shape) {
		ks, ok = append(ks, gatejet.ErrShape), false
	}
	if !ok {
		return ks, nil
	}
	return ks, y.shape
}

// softmaxExpect is the oracle of ops.Softmax and ops.LogSoftmax: axisExpect with x in both
// places.
func softmaxExpect(a []argSpec, p ctorParams) ([]error, []int) {
	return axisExpect([]argSpec{a[0], a[0]}, p)
}

// firstArg makes the oracle of a constructor whose rules are about its first argument:
// commonKinds, then, unless that argument is nil, what check adds about it.
func firstArg(check func(ks []error, x argSpec, a []argSpec, p ctorParams) ([]error, []int)) func([]argSpec, ctorParams) ([]error, []int) {
	return func(a []argSpec, p ctorParams) ([]error, []int) {
		ks := commonKinds(a)
		if a[0].isNil {
			return ks, nil
		}
		return check(ks, a[0], a, p)
	}
}

// actExpect is the oracle of the activations (one argument) and their backward (two), with
// firstArg.
func actExpect(ks []error, x argSpec, a []argSpec, _ ctorParams) ([]error, []int) {
	ok := true
	if len(x.shape) == 0 {
		ks, ok = append(ks, gatejet.ErrRank), false
	}
	if !positiveDims(x.shape) {
		ks, ok = append(ks, gatejet.ErrShape), false
	}
	if len(a) == 2 && !a[1].isNil && !tensor.Shape(a[1].shape).Eq(tensor.Shape(x.shape)) {
		ks, ok = append(ks, gatejet.ErrShape), false
	}
	if !ok || (len(a) == 2 && a[1].isNil) {
		return ks, nil
	}
	return ks, x.shape
}

// softArgminExpect is the oracle of graphs.SoftArgmin, with firstArg.
func softArgminExpect(ks []error, c argSpec, _ []argSpec, p ctorParams) ([]error, []int) {
	if !validInvTau(p.param) || (c.dt == tensor.Float32 && p.param > math.MaxFloat32) {
		// Float32 costs: the gradient's factor −invTau must be a finite float32.
		ks = append(ks, gatejet.ErrTemperature)
	}
	if len(c.shape) < 1 || len(c.shape) > 8 {
		ks = append(ks, gatejet.ErrRank)
	}
	if !positiveDims(c.shape) {
		ks = append(ks, gatejet.ErrShape)
	}
	return ks, c.shape
}

// logDetExpect is the oracle of graphs.LogDetPlusRidge, with firstArg.
func logDetExpect(ks []error, h argSpec, _ []argSpec, p ctorParams) ([]error, []int) {
	if !(p.param >= 0) || math.IsInf(p.param, 1) {
		ks = append(ks, gatejet.ErrParam)
	}
	if len(h.shape) != 3 {
		return append(ks, gatejet.ErrRank), nil
	}
	if h.shape[0] < 1 || h.shape[1] < 1 || h.shape[1] != h.shape[2] {
		ks = append(ks, gatejet.ErrShape)
	}
	return ks, []int{h.shape[0]}
}

var ctors = []ctor{
	{"ops.SoftmaxJetValue", 2, true, func(a []*G.Node, p ctorParams) (*G.Node, error) { return ops.SoftmaxJetValue(a[0], a[1], p.param) }, jetExpect(chValue, false, false)},
	{"ops.SoftmaxJetFirst", 2, true, func(a []*G.Node, p ctorParams) (*G.Node, error) { return ops.SoftmaxJetFirst(a[0], a[1], p.param) }, jetExpect(chFirst, false, false)},
	{"ops.SoftmaxJetSecond", 2, true, func(a []*G.Node, p ctorParams) (*G.Node, error) { return ops.SoftmaxJetSecond(a[0], a[1], p.param) }, jetExpect(chSecond, false, false)},
	{"ops.SoftmaxJetHVP", 3, true, func(a []*G.Node, p ctorParams) (*G.Node, error) { return ops.SoftmaxJetHVP(a[0], a[1], a[2], p.param) }, jetExpect(chFirst, true, false)},
	{"ops.SoftmaxJetGaussNewton", 2, true, func(a []*G.Node, p ctorParams) (*G.Node, error) {
		return ops.SoftmaxJetGaussNewton(a[0], a[1], p.param)
	}, jetExpect(chGN, false, false)},
	{"ops.LogisticJetValue", 2, true, func(a []*G.Node, p ctorParams) (*G.Node, error) {
		return ops.LogisticJetValue(a[0], a[1], p.alpha, p.beta)
	}, jetExpect(chValue, false, true)},
	{"ops.LogisticJetFirst", 2, true, func(a []*G.Node, p ctorParams) (*G.Node, error) {
		return ops.LogisticJetFirst(a[0], a[1], p.alpha, p.beta)
	}, jetExpect(chFirst, false, true)},
	{"ops.LogisticJetSecond", 2, true, func(a []*G.Node, p ctorParams) (*G.Node, error) {
		return ops.LogisticJetSecond(a[0], a[1], p.alpha, p.beta)
	}, jetExpect(chSecond, false, true)},
	{"ops.LogisticJetHVP", 3, true, func(a []*G.Node, p ctorParams) (*G.Node, error) {
		return ops.LogisticJetHVP(a[0], a[1], a[2], p.alpha, p.beta)
	}, jetExpect(chFirst, true, true)},
	{"ops.LogisticJetGaussNewton", 2, true, func(a []*G.Node, p ctorParams) (*G.Node, error) {
		return ops.LogisticJetGaussNewton(a[0], a[1], p.alpha, p.beta)
	}, jetExpect(chGN, false, true)},
	{"ops.SoftmaxBackward", 2, false, func(a []*G.Node, p ctorParams) (*G.Node, error) { return ops.SoftmaxBackward(a[0], a[1], p.axis) }, axisExpect},
	{"ops.LogSoftmaxBackward", 2, false, func(a []*G.Node, p ctorParams) (*G.Node, error) { return ops.LogSoftmaxBackward(a[0], a[1], p.axis) }, axisExpect},
	// Softmax-family forward: one argument, x, checked as y and dy are by axisExpect.
	{"ops.Softmax", 1, false, func(a []*G.Node, p ctorParams) (*G.Node, error) { return ops.Softmax(a[0], p.axis) }, softmaxExpect},
	{"ops.LogSoftmax", 1, false, func(a []*G.Node, p ctorParams) (*G.Node, error) { return ops.LogSoftmax(a[0], p.axis) }, softmaxExpect},
	{"ops.ReLU", 1, false, func(a []*G.Node, p ctorParams) (*G.Node, error) { return ops.ReLU(a[0]) }, firstArg(actExpect)},
	{"ops.GELU", 1, false, func(a []*G.Node, p ctorParams) (*G.Node, error) { return ops.GELU(a[0]) }, firstArg(actExpect)},
	{"ops.SiLU", 1, false, func(a []*G.Node, p ctorParams) (*G.Node, error) { return ops.SiLU(a[0]) }, firstArg(actExpect)},
	{"ops.ReLUBackward", 2, false, func(a []*G.Node, p ctorParams) (*G.Node, error) { return ops.ReLUBackward(a[0], a[1]) }, firstArg(actExpect)},
	{"ops.GELUBackward", 2, false, func(a []*G.Node, p ctorParams) (*G.Node, error) { return ops.GELUBackward(a[0], a[1]) }, firstArg(actExpect)},
	{"ops.SiLUBackward", 2, false, func(a []*G.Node, p ctorParams) (*G.Node, error) { return ops.SiLUBackward(a[0], a[1]) }, firstArg(actExpect)},
	{"graphs.SoftArgmin", 1, false, func(a []*G.Node, p ctorParams) (*G.Node, error) { return graphs.SoftArgmin(a[0], p.param) }, firstArg(softArgminExpect)},
	{"graphs.LogDetPlusRidge", 1, false, func(a []*G.Node, p ctorParams) (*G.Node, error) { return graphs.LogDetPlusRidge(a[0], p.param) }, firstArg(logDetExpect)},
	{"graphs.GaussNewtonSlabs", 2, true, func(a []*G.Node, p ctorParams) (*G.Node, error) { return graphs.GaussNewtonSlabs(a[0], a[1], p.param) }, jetExpect(chGN, false, false)},
	{"graphs.GaussNewtonLogDet", 2, true, func(a []*G.Node, p ctorParams) (*G.Node, error) {
		return graphs.GaussNewtonLogDet(a[0], a[1], 1, p.param)
	}, func(a []argSpec, p ctorParams) ([]error, []int) {
		ks, s := jetExpect(chGN, false, false)(a, ctorParams{param: 1})
		if !(p.param > 0) || math.IsInf(p.param, 1) {
			ks = append(ks, gatejet.ErrParam)
		}
		if s != nil {
			s = s[:1]
		}
		return ks, s
	}},
	{"graphs.CurvaturePenalty", 2, true, func(a []*G.Node, p ctorParams) (*G.Node, error) {
		return graphs.CurvaturePenalty(a[0], a[1], 1, p.param)
	}, func(a []argSpec, p ctorParams) ([]error, []int) {
		ks, s := jetExpect(chFirst, false, false)(a, ctorParams{param: 1})
		if math.IsNaN(p.param) || math.IsInf(p.param, 0) {
			ks = append(ks, gatejet.ErrParam)
		}
		if s != nil {
			s = []int{}
		}
		return ks, s
	}},
	// The coordinate jets of three arguments: logits [n,K], d0 and d1 [n,K,P].
	{"ops.SoftmaxCoordJetFirst", 3, true, func(a []*G.Node, p ctorParams) (*G.Node, error) {
		return ops.SoftmaxCoordJetFirst(a[0], a[1], a[2], p.param)
	}, coordExpect(chCoordFirst, false)},
	{"ops.SoftmaxCoordJetGaussNewton", 3, true, func(a []*G.Node, p ctorParams) (*G.Node, error) {
		return ops.SoftmaxCoordJetGaussNewton(a[0], a[1], a[2], p.param)
	}, coordExpect(chCoordGN, false)},
	{"ops.LogisticCoordJetFirst", 3, true, func(a []*G.Node, p ctorParams) (*G.Node, error) {
		return ops.LogisticCoordJetFirst(a[0], a[1], a[2], p.alpha, p.beta)
	}, coordExpect(chCoordFirst, true)},
	{"ops.LogisticCoordJetGaussNewton", 3, true, func(a []*G.Node, p ctorParams) (*G.Node, error) {
		return ops.LogisticCoordJetGaussNewton(a[0], a[1], a[2], p.alpha, p.beta)
	}, coordExpect(chCoordGN, true)},
}

// coordCtors are the coordinate jets of every arity, for FuzzCoordOpConstructors: logits
// [n,K], d0, d1 (and d2) [n,K,P], (and v [n,2K]).
var coordCtors = []ctor{
	{"ops.SoftmaxCoordJetFirst", 3, true, func(a []*G.Node, p ctorParams) (*G.Node, error) {
		return ops.SoftmaxCoordJetFirst(a[0], a[1], a[2], p.param)
	}, coordExpect(chCoordFirst, false)},
	{"ops.SoftmaxCoordJetSecond", 4, true, func(a []*G.Node, p ctorParams) (*G.Node, error) {
		return ops.SoftmaxCoordJetSecond(a[0], a[1], a[2], a[3], p.param)
	}, coordExpect(chCoordSecond, false)},
	{"ops.SoftmaxCoordJetHVP", 5, true, func(a []*G.Node, p ctorParams) (*G.Node, error) {
		return ops.SoftmaxCoordJetHVP(a[0], a[1], a[2], a[3], a[4], p.param)
	}, coordExpect(chCoordFirst, false)},
	{"ops.SoftmaxCoordJetGaussNewton", 3, true, func(a []*G.Node, p ctorParams) (*G.Node, error) {
		return ops.SoftmaxCoordJetGaussNewton(a[0], a[1], a[2], p.param)
	}, coordExpect(chCoordGN, false)},
	{"ops.LogisticCoordJetFirst", 3, true, func(a []*G.Node, p ctorParams) (*G.Node, error) {
		return ops.LogisticCoordJetFirst(a[0], a[1], a[2], p.alpha, p.beta)
	}, coordExpect(chCoordFirst, true)},
	{"ops.LogisticCoordJetSecond", 4, true, func(a []*G.Node, p ctorParams) (*G.Node, error) {
		return ops.LogisticCoordJetSecond(a[0], a[1], a[2], a[3], p.alpha, p.beta)
	}, coordExpect(chCoordSecond, true)},
	{"ops.LogisticCoordJetHVP", 5, true, func(a []*G.Node, p ctorParams) (*G.Node, error) {
		return ops.LogisticCoordJetHVP(a[0], a[1], a[2], a[3], a[4], p.alpha, p.beta)
	}, coordExpect(chCoordFirst, true)},
	{"ops.LogisticCoordJetGaussNewton", 3, true, func(a []*G.Node, p ctorParams) (*G.Node, error) {
		return ops.LogisticCoordJetGaussNewton(a[0], a[1], a[2], p.alpha, p.beta)
	}, coordExpect(chCoordGN, true)},
}

// dtypeOf decodes three bits of a fuzz input into a dtype (float64 is the most likely).
func dtypeOf(b uint16) tensor.Dtype {
	switch b & 7 {
	case 4, 5:
		return f32
	case 6:
		return tensor.Int
	case 7:
		return tensor.Bool
	}
	return f64
}

// decodeCtorInput turns the raw fuzz arguments of FuzzOpConstructors into argument specs and
// parameters (see decodeSpecs; flags bits 0-2: argument i is nil; bits 3-5: argument i is in
// a second graph; bit 6: coherent shapes).
func decodeCtorInput(sel uint8, dts, ranks uint16, dims []byte, flags uint8, axis int, param float64) (ctor, []argSpec, ctorParams) {
	c := ctors[int(sel)%len(ctors)]
	return decodeSpecs(c, dts, uint32(ranks), dims, uint16(flags&7), uint16(flags>>3&7), flags&(1<<6) != 0, axis, param)
}

// decodeSpecs turns raw fuzz arguments into argument specs and parameters for constructor c:
//
//	dts       3 bits of dtype per argument
//	ranks     4 bits of rank per argument (mod 10: 0 to 9)
//	dims      one byte per dim, mod 5 (0 to 4); 2 once exhausted
//	nils      bit i: argument i is nil
//	others    bit i: argument i is in a second graph
//	coherent  the other arguments' shapes follow the first one's (decoded, v, dy; d1 and d2
//	          follow d0, and v is [n,2K] for a coordinate jet)
//	axis      the axis (backward ops); its low bits also shift the lengths of alpha and beta
//	param     invTau, lambda or weight; also beta's elements (logistic)
func decodeSpecs(c ctor, dts uint16, ranks uint32, dims []byte, nils, others uint16, coherent bool, axis int, param float64) (ctor, []argSpec, ctorParams) {
	specs := make([]argSpec, c.nargs)
	next := func() int {
		if len(dims) == 0 {
			return 2
		}
		d := int(dims[0] % 5)
		dims = dims[1:]
		return d
	}
	for i := range specs {
		s := argSpec{
			isNil: nils&(1<<i) != 0,
			other: others&(1<<i) != 0,
			dt:    dtypeOf(dts >> (3 * i)),
		}
		r := int(ranks>>(4*i)&15) % 10
		s.shape = make([]int, r)
		for j := range s.shape {
			s.shape[j] = next()
		}
		specs[i] = s
	}
	if coherent {
		l := specs[0].shape
		coord := strings.Contains(c.name, "CoordJet")
		for i := 1; i < len(specs); i++ {
			switch {
			case c.jet && i == 1: // decoded [n,K,P] after logits [n,K]
				copy(specs[i].shape, l[:min(len(l), 2)])
			case coord && i < 4: // d1 and d2 like d0
				specs[i].shape = slices.Clone(specs[1].shape)
			case coord && len(l) == 2: // v [n,2K]
				specs[i].shape = []int{l[0], 2 * l[1]}
			default:
				specs[i].shape = slices.Clone(l)
			}
		}
	}
	k := 0
	if len(specs[0].shape) == 2 {
		k = specs[0].shape[1]
	}
	da, db := (axis&3)%3-1, (axis>>2&3)%3-1 // −1, 0, +1 (0 most likely)
	p := ctorParams{axis: axis, param: param,
		alpha: make([]float64, max(0, k+da)), beta: make([]float64, max(0, k+db))}
	for i := range p.alpha {
		p.alpha[i] = 1 + float64(i)
	}
	for i := range p.beta {
		p.beta[i] = param
	}
	if axis&(1<<4) != 0 { // exactly K, whatever the shifts said
		p.alpha, p.beta = p.alpha[:0:0], p.beta[:0:0]
		for i := range k {
			p.alpha = append(p.alpha, 1+float64(i))
			p.beta = append(p.beta, 0.5)
		}
	}
	return c, specs, p
}

// buildArgs makes the nodes of specs in g (or in other).
func buildArgs(g, other *G.ExprGraph, specs []argSpec) []*G.Node {
	nodes := make([]*G.Node, len(specs))
	for i, s := range specs {
		if s.isNil {
			continue
		}
		gr := g
		if s.other {
			gr = other
		}
		name := fmt.Sprintf("a%d", i)
		if len(s.shape) == 0 {
			nodes[i] = G.NewScalar(gr, s.dt, G.WithName(name))
		} else {
			nodes[i] = G.NewTensor(gr, s.dt, len(s.shape), G.WithShape(s.shape...), G.WithName(name))
		}
	}
	return nodes
}

func FuzzOpConstructors(f *testing.F) {
	// Valid calls of every constructor, then a few classic mistakes; the corpus under
	// testdata/fuzz/FuzzOpConstructors adds more.
	dims := []byte{4, 3, 4, 3, 2, 4, 3}
	for sel := range len(ctors) {
		c := ctors[sel]
		ranks := uint16(0x232) // logits rank 2, decoded rank 3, v rank 2
		switch {
		case c.name == "graphs.LogDetPlusRidge":
			ranks = 3
		case !c.jet:
			ranks = 0x22
		}
		f.Add(uint8(sel), uint16(0), ranks, dims, uint8(1<<6), -1, 1.5)
		f.Add(uint8(sel), uint16(0b100_100_100), ranks, dims, uint8(1<<6), 1|1<<4, 0.25)
	}
	f.Add(uint8(3), uint16(0), uint16(0x232), dims, uint8(1<<2|1<<6), 0, 1.0)       // HVP with nil v
	f.Add(uint8(1), uint16(0b110), uint16(0x232), dims, uint8(1<<6), 0, 1.0)        // int logits
	f.Add(uint8(2), uint16(0), uint16(0x239), dims, uint8(1<<6), 0, 1.0)            // logits rank 9
	f.Add(uint8(10), uint16(0), uint16(0x33), dims, uint8(1<<6), 3, 1.0)            // axis = rank
	f.Add(uint8(11), uint16(0), uint16(0x33), dims, uint8(1<<6), -4, 1.0)           // axis = −rank−1
	f.Add(uint8(0), uint16(0), uint16(0x232), dims, uint8(1<<4|1<<6), 0, 1.0)       // two graphs
	f.Add(uint8(4), uint16(0), uint16(0x232), dims, uint8(1<<6), 0, math.NaN())     // invTau NaN
	f.Add(uint8(5), uint16(0), uint16(0x232), dims, uint8(1<<6), 1, 0.0)            // alpha short
	f.Add(uint8(6), uint16(0), uint16(0x232), dims, uint8(1<<6), 1<<4, math.Inf(1)) // beta +Inf
	f.Add(uint8(19), uint16(0), uint16(3), []byte{2, 3, 3}, uint8(0), 0, 0.0)       // LogDetPlusRidge, λ = 0
	for sel := range len(ctors) {
		if strings.Contains(ctors[sel].name, "CoordJet") { // logits, d0, d1 of ranks 2, 3, 3
			f.Add(uint8(sel), uint16(0), uint16(0x332), dims, uint8(1<<6), 1<<4, 0.75)
		}
	}

	f.Fuzz(func(t *testing.T, sel uint8, dts, ranks uint16, dims []byte, flags uint8, axis int, param float64) {
		if len(dims) > 64 {
			dims = dims[:64]
		}
		c, specs, p := decodeCtorInput(sel, dts, ranks, dims, flags, axis, param)
		checkCtor(t, c, specs, p)
	})
}

// checkCtor calls constructor c on nodes built from specs and checks the result against the
// constructor's oracle: no panic; a valid call gives a node of the documented shape and
// dtype; an invalid one a *gatejet.Error of one of the expected kinds, naming its op, and no
// node.
func checkCtor(t *testing.T, c ctor, specs []argSpec, p ctorParams) {
	t.Helper()
	g, other := G.NewGraph(), G.NewGraph()
	nodes := buildArgs(g, other, specs)
	var n *G.Node
	err, panicked := catch(func() error {
		var err error
		n, err = c.build(nodes, p)
		return err
	})
	what := fmt.Sprintf("%s(%v, axis=%d, param=%v, alpha=%v, beta=%v)", c.name, specs, p.axis, p.param, p.alpha, p.beta)
	if panicked {
		t.Fatalf("%s panicked: %v", what, err)
	}
	kinds, shape := c.expect(specs, p)
	if len(kinds) == 0 {
		if err != nil {
			t.Fatalf("%s: valid call failed: %v", what, err)
		}
		if n == nil {
			t.Fatalf("%s: nil node without an error", what)
		}
		if !tensor.Shape(n.Shape()).Eq(tensor.Shape(shape)) || len(n.Shape()) != len(shape) {
			t.Fatalf("%s: node shape %v, documented %v", what, n.Shape(), shape)
		}
		want := specs[0].dt
		if got := n.Dtype(); got != want {
			t.Fatalf("%s: node dtype %v, want %v", what, got, want)
		}
		return
	}
	if err == nil {
		t.Fatalf("%s: accepted, but it breaks documented rules (%v); node %v shape %v", what, kinds, n, n.Shape())
	}
	if n != nil {
		t.Fatalf("%s: returned node %v with error %v", what, n, err)
	}
	var ge *gatejet.Error
	if !errors.As(err, &ge) {
		t.Fatalf("%s: error %T is not a *gatejet.Error: %v", what, err, err)
	}
	match := false
	for _, k := range kinds {
		match = match || errors.Is(err, k)
	}
	if !match {
		t.Fatalf("%s: error %v matches none of the expected kinds %v", what, err, kinds)
	}
	if ge.Op == "" {
		t.Fatalf("%s: error %v has no Op", what, err)
	}
}

// FuzzCoordOpConstructors is FuzzOpConstructors over the coordinate jets of every arity (up
// to five node arguments): sel picks one of coordCtors; flags bits 0-4 make argument i nil,
// bits 5-9 put it in a second graph, bit 10 makes the shapes coherent (decodeSpecs).
func FuzzCoordOpConstructors(f *testing.F) {
	dims := []byte{3, 3, 3, 4, 2, 4, 3, 2, 3, 3, 3, 3}
	const coherent = 1 << 10
	ranks := uint32(0x23332) // logits 2, d0, d1, d2 3, v 2
	for sel := range len(coordCtors) {
		f.Add(uint8(sel), uint16(0), ranks, dims, uint16(coherent), 1<<4, 1.5)
		f.Add(uint8(sel), uint16(0b100_100_100_100_100), ranks, dims, uint16(coherent), 1<<4, 0.25)
	}
	f.Add(uint8(2), uint16(0), ranks, dims, uint16(coherent|1<<4), 0, 1.0)                                        // HVP, nil v
	f.Add(uint8(1), uint16(0), ranks, dims, uint16(coherent|1<<3), 0, 1.0)                                        // second, nil d2
	f.Add(uint8(6), uint16(0), ranks, dims, uint16(coherent|1<<9), 1<<4, 1.0)                                     // HVP, v in another graph
	f.Add(uint8(5), uint16(0b100<<9), ranks, dims, uint16(coherent), 1<<4, 1.0)                                   // second, float32 d2
	f.Add(uint8(2), uint16(0b100<<12), ranks, dims, uint16(coherent), 0, 1.0)                                     // HVP, float32 v
	f.Add(uint8(2), uint16(0), uint32(0x23332), []byte{2, 3, 2, 3, 2, 2, 3, 2, 2, 3, 2, 2, 3}, uint16(0), 0, 1.0) // HVP, v [n,K]
	f.Add(uint8(2), uint16(0), uint32(0x33332), dims, uint16(coherent), 0, 1.0)                                   // HVP, rank-3 v
	f.Add(uint8(1), uint16(0), uint32(0x02332), dims, uint16(coherent), 0, 1.0)                                   // second, rank-2 d2
	f.Add(uint8(1), uint16(0), ranks, []byte{2, 3, 2, 3, 2, 2, 3, 2, 2, 3, 3}, uint16(0), 0, 1.0)                 // second, d2 of another P
	f.Add(uint8(5), uint16(0), ranks, dims, uint16(coherent), 1, 1.0)                                             // logistic second, alpha short

	f.Fuzz(func(t *testing.T, sel uint8, dts uint16, ranks uint32, dims []byte, flags uint16, axis int, param float64) {
		if len(dims) > 64 {
			dims = dims[:64]
		}
		c := coordCtors[int(sel)%len(coordCtors)]
		c, specs, p := decodeSpecs(c, dts, ranks, dims, flags&31, flags>>5&31, flags&(1<<10) != 0, axis, param)
		checkCtor(t, c, specs, p)
	})
}

// ---------------------------------------------------------------------------------------------
// FuzzOpsRun
// ---------------------------------------------------------------------------------------------

// special values a fuzz byte can stand for (bytes below 200 are moderate values).
var specials = []float64{math.NaN(), math.Inf(1), math.Inf(-1), 1e300, -1e300, 1e-300, -1e-300, 0,
	math.Copysign(0, -1), 5e-324, 1e4, -1e4, 1e6, -1e6, math.MaxFloat64, -math.MaxFloat64}

// valueOf maps a fuzz byte to a value: moderate (|x| ≤ 4) below 200, else a special.
func valueOf(b byte) float64 {
	if b < 200 {
		return float64(int(b)-100) / 25
	}
	return specials[int(b-200)%len(specials)]
}

// moderate reports whether |x| ≤ 1e6 (finite); such inputs must give finite outputs.
func moderate(xs []float64) bool {
	for _, x := range xs {
		if !(math.Abs(x) <= 1e6) {
			return false
		}
	}
	return true
}

// The largest is the largest accepted (beyond it, s³ overflows and the ops refuse).
var fuzzInvTaus = []float64{1, 0.5, 2, 1e-3, 1e3, 0.1, 10, 1e-300, gatejet.MaxInvTau}

// fillValues takes n values from the fuzz bytes (cycled; zero when there are none).
func fillValues(data []byte, off, n int) []float64 {
	v := make([]float64, n)
	if len(data) == 0 {
		return v
	}
	for i := range v {
		v[i] = valueOf(data[(off+i)%len(data)])
	}
	return v
}

func FuzzOpsRun(f *testing.F) {
	f.Add(uint8(2), uint8(3), uint8(2), uint8(0), uint8(0), []byte{100, 110, 90, 120, 80, 130, 140, 60, 101, 99, 150, 50})
	f.Add(uint8(1), uint8(4), uint8(1), uint8(1), uint8(1), []byte{100, 200, 90, 120, 80, 130})
	f.Add(uint8(3), uint8(2), uint8(3), uint8(0), uint8(4), []byte{201, 202, 203, 100, 120, 80, 204, 205})
	f.Add(uint8(2), uint8(6), uint8(2), uint8(1), uint8(3), []byte{0, 199, 100, 100, 212, 213, 214, 215, 1, 2})
	f.Add(uint8(4), uint8(1), uint8(1), uint8(0), uint8(2), []byte{100})
	f.Add(uint8(1), uint8(5), uint8(3), uint8(0x11), uint8(7), []byte{150, 20, 180, 40, 160, 60, 140, 80})

	f.Fuzz(func(t *testing.T, nb, kb, pb, opt, tb uint8, data []byte) {
		if len(data) > 256 {
			data = data[:256]
		}
		n, k, p := 1+int(nb)%4, 1+int(kb)%6, 1+int(pb)%3
		dt := f64
		if opt&1 != 0 {
			dt = f32
		}
		invTau := fuzzInvTaus[int(tb)%len(fuzzInvTaus)]
		lv := fillValues(data, 0, n*k)
		dv := fillValues(data, n*k, n*k*p)
		vv := fillValues(data, n*k+n*k*p, n*k)
		if dt == f32 { // what the float32 tensors will hold
			for _, xs := range [][]float64{lv, dv, vv} {
				for i, x := range xs {
					xs[i] = float64(float32(x))
				}
			}
		}
		what := fmt.Sprintf("n=%d K=%d P=%d %v invTau=%v logits=%v decoded=%v v=%v", n, k, p, dt, invTau, lv, dv, vv)

		g := G.NewGraph()
		l := input(g, dt, "logits", []int{n, k}, lv)
		d := input(g, dt, "decoded", []int{n, k, p}, dv)
		v := input(g, dt, "v", []int{n, k}, vv)
		second, err := ops.SoftmaxJetSecond(l, d, invTau)
		if err != nil {
			t.Fatalf("%s: SoftmaxJetSecond: %v", what, err)
		}
		hvp, err := ops.SoftmaxJetHVP(l, d, v, invTau)
		if err != nil {
			t.Fatalf("%s: SoftmaxJetHVP: %v", what, err)
		}
		out := doThenTape(t, what, g, []*G.Node{l, d, v}, second, hvp)
		sec, hv := out[0], out[1]

		// The machine's result is the kernel's, bit for bit.
		sh := softmaxjet.Shape{N: n, K: k, P: p}
		wantSec, wantHVP := kernelSecondHVP(t, dt, lv, dv, vv, sh, invTau)
		requireKernelBits(t, what, "second", wantSec, sec)
		requireKernelBits(t, what, "hvp", wantHVP, hv)

		eps := epsilon(dt)
		for r := range n {
			lr, dr, vr := lv[r*k:(r+1)*k], dv[r*k*p:(r+1)*k*p], vv[r*k:(r+1)*k]
			sr, hr := sec[r*k*k*p:(r+1)*k*k*p], hv[r*k*p:(r+1)*k*p]
			// Exact symmetry, whatever the values (bit for bit, except that two NaNs may differ
			// in sign or payload: x86 keeps the first operand's NaN in e[a]+e[b]).
			for a := range k {
				for b := range k {
					for c := range p {
						x, y := sr[(a*k+b)*p+c], sr[(b*k+a)*p+c]
						if math.Float64bits(x) != math.Float64bits(y) && !(math.IsNaN(x) && math.IsNaN(y)) {
							t.Fatalf("%s: row %d: second[%d][%d][%d] = %v ≠ second[%d][%d][%d] = %v", what, r, a, b, c, x, b, a, c, y)
						}
					}
				}
			}
			// Row isolation: the row alone gives the same bits.
			one := softmaxjet.Shape{N: 1, K: k, P: p}
			s1, h1 := kernelSecondHVP(t, dt, lr, dr, vr, one, invTau)
			if i := firstDiff(s1, sr); i >= 0 {
				t.Fatalf("%s: row %d: second[%d] is %v in the batch, %v alone", what, r, i, sr[i], s1[i])
			}
			if i := firstDiff(h1, hr); i >= 0 {
				t.Fatalf("%s: row %d: hvp[%d] is %v in the batch, %v alone", what, r, i, hr[i], h1[i])
			}
			if !moderate(lr) || !moderate(dr) || !moderate(vr) || invTau > 1e3 || invTau < 1e-3 {
				continue
			}
			// Moderate input: finite output and zero sums over a (shifting every logit of a row
			// changes nothing, so Σ_a ∂/∂l_a = 0).
			if !allFinite(sr) || !allFinite(hr) {
				t.Fatalf("%s: row %d: moderate input, non-finite output: second %v hvp %v", what, r, sr, hr)
			}
			maxD, maxV := 0.0, 0.0
			for _, x := range dr {
				maxD = math.Max(maxD, math.Abs(x))
			}
			for _, x := range vr {
				maxV = math.Max(maxV, math.Abs(x))
			}
			s2 := invTau * invTau
			tol := 64 * float64(k) * eps
			// Subnormal inputs lose relative precision: an absolute floor of a few units of the
			// smallest subnormal per atom (scaled by s²), and of float32's for float32 outputs.
			floor := 4 * float64(k) * s2 * (1 + maxV) * math.SmallestNonzeroFloat64
			if dt == f32 {
				floor += 4 * float64(k) * 0x1p-149
			}
			for c := range p {
				for b := range k {
					sum, abs := 0.0, 0.0
					for a := range k {
						x := sr[(a*k+b)*p+c]
						sum += x
						abs += math.Abs(x)
					}
					if !(math.Abs(sum) <= tol*(abs+4*s2*maxD)+floor) {
						t.Fatalf("%s: row %d: Σ_a second[a][%d][%d] = %v (Σ|·| = %v)", what, r, b, c, sum, abs)
					}
				}
				sum, abs := 0.0, 0.0
				for a := range k {
					x := hr[a*p+c]
					sum += x
					abs += math.Abs(x)
				}
				if !(math.Abs(sum) <= tol*(abs+8*s2*maxD*maxV)+floor) {
					t.Fatalf("%s: row %d: Σ_a hvp[a][%d] = %v (Σ|·| = %v)", what, r, c, sum, abs)
				}
			}
		}

		fuzzLogistic(t, dt, n, k, p, lv, dv, data)
		fuzzSoftmaxBackward(t, dt, opt, data)
	})
}

// fuzzLogistic runs ops.LogisticJetSecond on a TapeMachine with α and β taken from the fuzz
// bytes (finite, |·| ≤ 4): the kernel's bits, exact zeros off the a = b diagonal (documented:
// "the off-diagonal blocks are written as zeros"), row isolation, and finite output for
// moderate input.
func fuzzLogistic(t *testing.T, dt tensor.Dtype, n, k, p int, lv, dv []float64, data []byte) {
	alpha, beta := make([]float64, k), make([]float64, k)
	for i := range k {
		if len(data) > 0 {
			alpha[i] = float64(int(data[(5*i+1)%len(data)])-128) / 32
			beta[i] = float64(int(data[(5*i+2)%len(data)])-128) / 32
		}
	}
	what := fmt.Sprintf("LogisticJetSecond n=%d K=%d P=%d %v alpha=%v beta=%v logits=%v decoded=%v", n, k, p, dt, alpha, beta, lv, dv)
	g := G.NewGraph()
	l := input(g, dt, "logits", []int{n, k}, lv)
	d := input(g, dt, "decoded", []int{n, k, p}, dv)
	sec, err := ops.LogisticJetSecond(l, d, alpha, beta)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	got := doThenTape(t, what, g, []*G.Node{l, d}, sec)[0]
	kernel := func(l, d []float64, sh softmaxjet.Shape) []float64 {
		if dt == f64 {
			s := make([]float64, sh.N*sh.K*sh.K*sh.P)
			if err := (softmaxjet.Logistic[float64]{Alpha: alpha, Beta: beta}).Second(s, l, d, sh); err != nil {
				t.Fatalf("%s: kernel: %v", what, err)
			}
			return s
		}
		s := make([]float32, sh.N*sh.K*sh.K*sh.P)
		if err := (softmaxjet.Logistic[float32]{Alpha: alpha, Beta: beta}).Second(s, floats.To32(l), floats.To32(d), sh); err != nil {
			t.Fatalf("%s: kernel: %v", what, err)
		}
		return floats.To64(s)
	}
	if i := firstDiff(kernel(lv, dv, softmaxjet.Shape{N: n, K: k, P: p}), got); i >= 0 {
		t.Fatalf("%s: element %d differs between the machine and the kernel", what, i)
	}
	w := k * k * p
	for r := range n {
		row := got[r*w : (r+1)*w]
		lr, dr := lv[r*k:(r+1)*k], dv[r*k*p:(r+1)*k*p]
		if i := firstDiff(kernel(lr, dr, softmaxjet.Shape{N: 1, K: k, P: p}), row); i >= 0 {
			t.Fatalf("%s: row %d element %d differs from the row alone", what, r, i)
		}
		for a := range k {
			for b := range k {
				for c := range p {
					if x := row[(a*k+b)*p+c]; a != b && x != 0 {
						t.Fatalf("%s: row %d: second[%d][%d][%d] = %v off the diagonal, want 0", what, r, a, b, c, x)
					}
				}
			}
		}
		if moderate(lr) && moderate(dr) && !allFinite(row) {
			t.Fatalf("%s: row %d: moderate input, non-finite output %v", what, r, row)
		}
	}
}

// kernelSecondHVP computes the second channel and the HVP with the softmaxjet kernels.
func kernelSecondHVP(t *testing.T, dt tensor.Dtype, l, d, v []float64, sh softmaxjet.Shape, invTau float64) ([]float64, []float64) {
	t.Helper()
	if dt == f64 {
		s := make([]float64, sh.N*sh.K*sh.K*sh.P)
		h := make([]float64, sh.FirstLen())
		if err := (softmaxjet.Softmax[float64]{InvTau: invTau}).Second(s, l, d, sh); err != nil {
			t.Fatal(err)
		}
		if err := (softmaxjet.Softmax[float64]{InvTau: invTau}).HVP(h, l, d, v, sh); err != nil {
			t.Fatal(err)
		}
		return s, h
	}
	s := make([]float32, sh.N*sh.K*sh.K*sh.P)
	h := make([]float32, sh.FirstLen())
	if err := (softmaxjet.Softmax[float32]{InvTau: invTau}).Second(s, floats.To32(l), floats.To32(d), sh); err != nil {
		t.Fatal(err)
	}
	if err := (softmaxjet.Softmax[float32]{InvTau: invTau}).HVP(h, floats.To32(l), floats.To32(d), floats.To32(v), sh); err != nil {
		t.Fatal(err)
	}
	return floats.To64(s), floats.To64(h)
}

// fuzzSoftmaxBackward runs ops.SoftmaxBackward on a TapeMachine over a shape and axis taken
// from the fuzz input, with y a softmax along the axis of fuzz values and dy fuzz values: no
// panic, the kernel's bits, and for moderate input finite output with zero sums along the axis
// (y sums to one there).
func fuzzSoftmaxBackward(t *testing.T, dt tensor.Dtype, opt uint8, data []byte) {
	rank := 1 + int(opt>>1&3)%3
	shape := make([]int, rank)
	for i := range shape {
		shape[i] = 1 + int(opt>>(3+i))&1 + i%2 // 1 to 3
	}
	axis := int(opt>>6) % rank
	if opt&0x20 != 0 {
		axis -= rank
	}
	outer, m, inner, err := check.AxisLayout("fuzz", shape, axis)
	if err != nil {
		t.Fatalf("AxisLayout(%v, %d): %v", shape, axis, err)
	}
	size := outer * m * inner
	x := fillValues(data, 3, size)
	dyv := fillValues(data, 7, size)
	y := make([]float64, size)
	for o := range outer {
		for i := range inner {
			mx := math.Inf(-1)
			for j := range m {
				mx = math.Max(mx, x[(o*m+j)*inner+i])
			}
			s := 0.0
			for j := range m {
				s += math.Exp(x[(o*m+j)*inner+i] - mx)
			}
			for j := range m {
				y[(o*m+j)*inner+i] = math.Exp(x[(o*m+j)*inner+i]-mx) / s
			}
		}
	}
	if dt == f32 {
		for _, xs := range [][]float64{y, dyv} {
			for i, v := range xs {
				xs[i] = float64(float32(v))
			}
		}
	}
	what := fmt.Sprintf("SoftmaxBackward %v %v axis %d y=%v dy=%v", dt, shape, axis, y, dyv)
	g := G.NewGraph()
	yn := input(g, dt, "y", shape, y)
	dyn := input(g, dt, "dy", shape, dyv)
	dx, err := ops.SoftmaxBackward(yn, dyn, axis)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	got := doThenTape(t, what, g, []*G.Node{yn, dyn}, dx)[0]
	var want []float64
	if dt == f64 {
		want = make([]float64, size)
		err = backward.SoftmaxBackward(want, y, dyv, shape, axis)
	} else {
		w := make([]float32, size)
		err = backward.SoftmaxBackward(w, floats.To32(y), floats.To32(dyv), shape, axis)
		want = floats.To64(w)
	}
	if err != nil {
		t.Fatalf("%s: kernel: %v", what, err)
	}
	requireKernelBits(t, what, "dx", want, got)
	eps := epsilon(dt)
	for o := range outer {
		for i := range inner {
			finite := true
			sum, abs, scale := 0.0, 0.0, 0.0
			for j := range m {
				at := (o*m+j)*inner + i
				finite = finite && moderate([]float64{x[at], dyv[at]})
				sum += got[at]
				abs += math.Abs(got[at])
				scale += math.Abs(y[at] * dyv[at])
			}
			if !finite {
				continue
			}
			for j := range m {
				if at := (o*m+j)*inner + i; math.IsNaN(got[at]) || math.IsInf(got[at], 0) {
					t.Fatalf("%s: moderate input, dx[%d] = %v", what, at, got[at])
				}
			}
			if !(math.Abs(sum) <= 64*float64(m)*eps*(abs+2*scale)) {
				t.Fatalf("%s: Σ dx along the axis at (%d, %d) = %v (Σ|dx| = %v)", what, o, i, sum, abs)
			}
		}
	}
}

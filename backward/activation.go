package backward

import (
	"math"

	"github.com/gatejet/gatejet"
	"github.com/gatejet/gatejet/internal/check"
	"github.com/gatejet/gatejet/internal/par"
)

// ReLU computes y = max(0, x) elementwise; a NaN input gives NaN. y and x must have the same
// length (y may be x; any other overlap is gatejet.ErrParam). The error, when not nil, is a
// *gatejet.Error wrapping gatejet.ErrSize or gatejet.ErrParam.
func ReLU[T gatejet.Float](y, x []T) error {
	return activation("backward.ReLU", actReLU, y, x)
}

// GELU computes the tanh form of the Gaussian error linear unit elementwise,
//
//	y = ½x·(1 + tanh u),   u = √(2/π)·(x + 0.044715·x³),
//
// evaluated as x·σ(2u) (σ the logistic function), which is the same function without the
// cancellation of 1 + tanh u for negative x. y and x must have the same length (y may be x).
// The error, when not nil, is a *gatejet.Error wrapping gatejet.ErrSize, or gatejet.ErrParam
// for an output that partly overlaps an input.
func GELU[T gatejet.Float](y, x []T) error {
	return activation("backward.GELU", actGELU, y, x)
}

// SiLU computes the sigmoid linear unit y = x·σ(x) elementwise. y and x must have the same
// length (y may be x; any other overlap is gatejet.ErrParam). The error, when not nil, is a
// *gatejet.Error wrapping gatejet.ErrSize or gatejet.ErrParam.
func SiLU[T gatejet.Float](y, x []T) error {
	return activation("backward.SiLU", actSiLU, y, x)
}

// ReLUBackward computes dx = dy·[x > 0] elementwise, x being the saved forward input: dx is dy
// where x > 0 and exactly zero where x ≤ 0 (even where dy is not finite; the derivative at 0
// is taken as 0), and NaN where x is NaN. All slices must have the same length; dx may be x or
// dy, and must not otherwise overlap them (gatejet.ErrParam). The error, when not nil, is a
// *gatejet.Error wrapping gatejet.ErrSize or gatejet.ErrParam.
func ReLUBackward[T gatejet.Float](dx, x, dy []T) error {
	return activationBackward("backward.ReLUBackward", actReLUBackward, dx, x, dy)
}

// GELUBackward computes dx = dy·gelu'(x) elementwise, x being the saved forward input and
// gelu' the first derivative returned by GELUDeriv. All slices must have the same length; dx
// may be x or dy, and must not otherwise overlap them. The error, when not nil, is a
// *gatejet.Error wrapping gatejet.ErrSize, or gatejet.ErrParam for an overlap.
func GELUBackward[T gatejet.Float](dx, x, dy []T) error {
	return activationBackward("backward.GELUBackward", actGELUBackward, dx, x, dy)
}

// SiLUBackward computes dx = dy·silu'(x) elementwise, x being the saved forward input and
// silu' the first derivative returned by SiLUDeriv. All slices must have the same length; dx
// may be x or dy, and must not otherwise overlap them. The error, when not nil, is a
// *gatejet.Error wrapping gatejet.ErrSize, or gatejet.ErrParam for an overlap.
func SiLUBackward[T gatejet.Float](dx, x, dy []T) error {
	return activationBackward("backward.SiLUBackward", actSiLUBackward, dx, x, dy)
}

// ReLUBackwardGrad is the double backward of ReLUBackward: given the upstream gradient g on
// dx = dy·[x > 0], it computes gx = 0 (ReLU″ vanishes almost everywhere) and gdy = g·[x > 0],
// with the same conventions as ReLUBackward (zero where x ≤ 0, NaN where x is NaN, and gx NaN
// where x is NaN). Either output may be nil to skip it; every other slice, and a non-nil
// output, must have the length of x. The outputs may each be the same slice as one of the
// inputs, but must share no memory with each other, nor partly overlap an input. The error,
// when not nil, is a *gatejet.Error wrapping gatejet.ErrSize, or gatejet.ErrParam for an
// overlap (naming the output).
func ReLUBackwardGrad[T gatejet.Float](gx, gdy, x, dy, g []T) error {
	return activationGrad("backward.ReLUBackwardGrad", actReLUGrad, gx, gdy, x, dy, g)
}

// GELUBackwardGrad is the double backward of GELUBackward: given the upstream gradient g on
// dx = dy·gelu'(x), it computes gx = g·dy·gelu″(x) and gdy = g·gelu'(x) elementwise, with
// gelu' and gelu″ from GELUDeriv. Outputs, lengths, aliasing and errors are as for
// ReLUBackwardGrad.
func GELUBackwardGrad[T gatejet.Float](gx, gdy, x, dy, g []T) error {
	return activationGrad("backward.GELUBackwardGrad", actGELUGrad, gx, gdy, x, dy, g)
}

// SiLUBackwardGrad is the double backward of SiLUBackward: given the upstream gradient g on
// dx = dy·silu'(x), it computes gx = g·dy·silu″(x) and gdy = g·silu'(x) elementwise, with
// silu' and silu″ from SiLUDeriv. Outputs, lengths, aliasing and errors are as for
// ReLUBackwardGrad.
func SiLUBackwardGrad[T gatejet.Float](gx, gdy, x, dy, g []T) error {
	return activationGrad("backward.SiLUBackwardGrad", actSiLUGrad, gx, gdy, x, dy, g)
}

// GELU constants: u = geluC·(x + geluA·x³).
const (
	geluC = 0.7978845608028654 // √(2/π)
	geluA = 0.044715
	// geluCut bounds the inputs worth evaluating: beyond it σ(2u) is exactly 0 or 1 in float64
	// (|u| > 370 from |x| > 21.4 on), so gelu(x) is x or 0, gelu' is 1 or 0 and gelu″ is 0,
	// which is also what the formulas give until x³ overflows and they turn into NaN.
	geluCut = 30
	// siluCut plays the same part for SiLU: beyond it exp(−|x|) underflows to 0.
	siluCut = 750
)

// actChunk is the length of the stack buffers the smooth activations are evaluated in.
const actChunk = 256

// trim returns v[:n], or nil for nil (an output to skip); it lets the compiler drop the bounds
// checks of the loops.
func trim(v []float64, n int) []float64 {
	if v == nil {
		return nil
	}
	return v[:n]
}

// negMask is all ones when x has its sign bit set (negative, −0 or a negative NaN), else 0.
func negMask(x float64) uint64 { return uint64(int64(math.Float64bits(x)) >> 63) }

// pick returns neg where m is all ones and pos where m is 0, without a branch (the sign of
// the data is unpredictable).
func pick(m uint64, pos, neg float64) float64 {
	return math.Float64frombits(math.Float64bits(pos)&^m | math.Float64bits(neg)&m)
}

// smoothChunk evaluates GELU (gelu) or SiLU on x: f[i] = act(x[i]), d1[i] = act'(x[i]) and
// d2[i] = act″(x[i]); each of f, d1 and d2 may be nil to skip it. e is scratch as long as x.
//
// GELU, tanh form: with u = √(2/π)(x + 0.044715x³), e = exp(−2|u|) and r = 1/(1 + e),
//
//	s = σ(2u) = r (u ≥ 0) or e·r (u < 0),   s(1 − s) = e·r²,   tanh u = ±(1 − e)·r,
//
// so nothing overflows and nothing cancels; u has the sign of x.
//
// SiLU likewise: f = x·σ(x), d1 = σ(1 + x(1 − σ)), d2 = σ(1 − σ)(2 + x(1 − 2σ)), with σ(x)
// and 1 − σ(x) taken from e = exp(−|x|) as r and e·r (in the order the sign of x gives).
func smoothChunk(gelu bool, x, e, f, d1, d2 []float64) {
	e = e[:len(x)]
	f, d1, d2 = trim(f, len(x)), trim(d1, len(x)), trim(d2, len(x))
	cut := float64(siluCut)
	if gelu {
		cut = geluCut
		for i, v := range x {
			e[i] = -2 * math.Abs(geluC*v*(1+geluA*v*v))
		}
	} else {
		for i, v := range x {
			e[i] = -math.Abs(v)
		}
	}
	expOf(e, e)
	for i, v := range x {
		var fv, d1v, d2v float64
		switch {
		case v > cut:
			fv, d1v = v, 1
		case v < -cut:
		default:
			ev := e[i]
			r := 1 / (1 + ev)
			er := ev * r
			m := negMask(v)
			if gelu {
				sv := pick(m, r, er)
				q := er * r
				tp := (1 - ev) * r
				t := pick(m, tp, -tp)
				up := geluC * (1 + 3*geluA*v*v)
				fv = v * sv
				d1v = sv + 2*v*up*q
				d2v = 2 * q * (2*up + v*(6*geluA*geluC*v) - 2*v*up*up*t)
			} else {
				sv, cv := pick(m, r, er), pick(m, er, r)
				fv = v * sv
				d1v = sv * (1 + v*cv)
				d2v = sv * cv * (2 + v*(cv-sv))
			}
		}
		if f != nil {
			f[i] = fv
		}
		if d1 != nil {
			d1[i] = d1v
		}
		if d2 != nil {
			d2[i] = d2v
		}
	}
}

// GELUDeriv returns the first and second derivatives of the tanh form of GELU (see GELU) at x:
// with u = √(2/π)·(x + 0.044715·x³) and s = σ(2u) = ½(1 + tanh u),
//
//	d1 = s + 2x·u'·s(1−s)                      = ½(1 + tanh u) + ½x·(1 − tanh²u)·u',
//	d2 = 2s(1−s)·(2u' + x·u″ − 2x·u'²·tanh u),
//
// where u' = √(2/π)·(1 + 3·0.044715·x²) and u″ = 6·0.044715·√(2/π)·x. For |x| > 30, where
// these are exactly 1 or 0 and 0 in float64, the limits are returned, so ±Inf gives (1, 0) and
// (0, 0); NaN gives NaN. The kernels use the same arithmetic, so they agree bit for bit.
func GELUDeriv(x float64) (d1, d2 float64) { return smoothDeriv(true, x) }

// SiLUDeriv returns the first and second derivatives of SiLU, x·σ(x), at x:
//
//	d1 = σ(x)·(1 + x·(1 − σ(x))),
//	d2 = σ(x)·(1 − σ(x))·(2 + x·(1 − 2σ(x))).
//
// ±Inf gives the limits (1, 0) and (0, 0); NaN gives NaN. The kernels use the same
// arithmetic, so they agree bit for bit.
func SiLUDeriv(x float64) (d1, d2 float64) { return smoothDeriv(false, x) }

// smoothDeriv is smoothChunk's d1 and d2 at one x.
func smoothDeriv(gelu bool, x float64) (d1, d2 float64) {
	var xb, eb, d1b, d2b [1]float64
	xb[0] = x
	smoothChunk(gelu, xb[:], eb[:], nil, d1b[:], d2b[:])
	return d1b[0], d2b[0]
}

// ReLU pieces: NaN in x propagates, as everywhere else. The sign of the data is
// unpredictable, so these avoid branches on it (a mispredicted branch per element costs
// several times the rest of the loop).

// relu returns max(x, 0), and NaN for NaN (the builtin max propagates NaN).
func relu[T gatejet.Float](x T) T { return max(x, 0) }

// reluSel returns v where x > 0, x (NaN) where x is NaN, and 0 otherwise.
func reluSel(x, v float64) float64 {
	var m uint64
	if x > 0 {
		m = ^uint64(0)
	}
	r := math.Float64frombits(math.Float64bits(v) & m)
	if x != x {
		r = x
	}
	return r
}

// checkSame reports an ErrSize error naming the first of args whose length is not len(x).
func checkSame[T gatejet.Float](op string, x []T, args ...arg[T]) error {
	for _, a := range args {
		if a.optional && a.s == nil {
			continue
		}
		if len(a.s) != len(x) {
			return check.Errorf(gatejet.ErrSize, op, a.name, "len(%s) = %d, want len(x) = %d", a.name, len(a.s), len(x))
		}
	}
	return nil
}

// activation checks an activation's output y against its input x, then runs kernel kind.
func activation[T gatejet.Float](op string, kind actKind, y, x []T) error {
	if err := checkSame(op, x, need("y", y)); err != nil {
		return err
	}
	if err := checkAlias(op, "y", y, "x", x); err != nil {
		return err
	}
	runAct(kind, y, nil, x, nil, nil)
	return nil
}

// activationBackward checks a backward's output dx and upstream gradient dy against the
// saved input x, then runs kernel kind.
func activationBackward[T gatejet.Float](op string, kind actKind, dx, x, dy []T) error {
	if err := checkSame(op, x, need("dx", dx), need("dy", dy)); err != nil {
		return err
	}
	if err := checkAlias(op, "dx", dx, "x", x); err != nil {
		return err
	}
	if err := checkAlias(op, "dx", dx, "dy", dy); err != nil {
		return err
	}
	runAct(kind, dx, nil, x, dy, nil)
	return nil
}

// activationGrad checks a double backward's outputs gx and gdy (either may be nil) and
// inputs, then runs kernel kind unless both outputs are nil.
func activationGrad[T gatejet.Float](op string, kind actKind, gx, gdy, x, dy, g []T) error {
	if err := checkSame(op, x, opt("gx", gx), opt("gdy", gdy), need("dy", dy), need("g", g)); err != nil {
		return err
	}
	if err := checkOutputs(op, "gx", gx, "gdy", gdy, "x", x, dy, g); err != nil || (gx == nil && gdy == nil) {
		return err
	}
	runAct(kind, gx, gdy, x, dy, g)
	return nil
}

// actKind selects the elementwise kernel an actJob runs.
type actKind uint8

const (
	actReLU actKind = iota
	actGELU
	actSiLU
	actReLUBackward
	actGELUBackward
	actSiLUBackward
	actReLUGrad
	actGELUGrad
	actSiLUGrad
)

// actBlock is the number of elements of one par.For task of an elementwise kernel.
const actBlock = 4096

// actJob is one call of an elementwise kernel, split into blocks of actBlock elements.
type actJob[T gatejet.Float] struct {
	kind     actKind
	o0, o1   []T // y or dx; or gx and gdy (either may be nil)
	x, dy, g []T
	run      func(lo, hi int)
}

func runAct[T gatejet.Float](kind actKind, o0, o1, x, dy, g []T) {
	if len(x) == 0 {
		return
	}
	j := getJob[T, actJob[T]](&actJobs)
	j.kind, j.o0, j.o1, j.x, j.dy, j.g = kind, o0, o1, x, dy, g
	work := actBlock
	if kind != actReLU && kind != actReLUBackward && kind != actReLUGrad {
		work *= 8 // an exp and a division per element cost several stores' worth
	}
	par.For((len(x)+actBlock-1)/actBlock, work, j.run)
	putJob[T](&actJobs, j)
}

// do runs blocks [lo, hi).
func (j *actJob[T]) do(lo, hi int) {
	a, b := lo*actBlock, min(hi*actBlock, len(j.x))
	var isGELU bool
	switch j.kind {
	case actReLU, actReLUBackward, actReLUGrad:
		j.relu(a, b)
		return
	case actGELU, actGELUBackward, actGELUGrad:
		isGELU = true
	}
	var xb, eb, d1b, d2b [actChunk]float64
	for c := a; c < b; c += actChunk {
		d := min(c+actChunk, b)
		xs := j.x[c:d]
		xv, d1, d2 := xb[:len(xs)], d1b[:len(xs)], d2b[:len(xs)]
		for i, v := range xs {
			xv[i] = float64(v)
		}
		switch j.kind {
		case actGELU, actSiLU:
			smoothChunk(isGELU, xv, eb[:], d1, nil, nil)
			y := j.o0[c:d]
			y = y[:len(d1)]
			for i, v := range d1 {
				y[i] = T(v)
			}
		case actGELUBackward, actSiLUBackward:
			smoothChunk(isGELU, xv, eb[:], nil, d1, nil)
			dx, dy := j.o0[c:d], j.dy[c:d]
			dx, dy = dx[:len(d1)], dy[:len(d1)]
			for i, v := range d1 {
				dx[i] = T(float64(dy[i]) * v)
			}
		default:
			gx, gdy, dy, g := sub(j.o0, c, d), sub(j.o1, c, d), j.dy[c:d], j.g[c:d]
			if gx == nil {
				d2 = nil
			}
			if gdy == nil {
				d1 = nil
			}
			smoothChunk(isGELU, xv, eb[:], nil, d1, d2)
			// gx = g·(dy·f″): |f″| < 1, so dy·f″ cannot overflow and finite inputs never give
			// NaN. With both outputs, one pass reads each element's inputs before writing, so
			// an output may alias an input.
			switch {
			case gx == nil:
				gdy, g := gdy[:len(d1)], g[:len(d1)]
				for i, v := range d1 {
					gdy[i] = T(float64(g[i]) * v)
				}
			case gdy == nil:
				gx, dy, g := gx[:len(d2)], dy[:len(d2)], g[:len(d2)]
				for i, v := range d2 {
					gx[i] = T(float64(g[i]) * (float64(dy[i]) * v))
				}
			default:
				gx, gdy, dy, g, d1 := gx[:len(d2)], gdy[:len(d2)], dy[:len(d2)], g[:len(d2)], d1[:len(d2)]
				for i, v := range d2 {
					gv := float64(g[i])
					gx[i] = T(gv * (float64(dy[i]) * v))
					gdy[i] = T(gv * d1[i])
				}
			}
		}
	}
}

// relu runs the ReLU kernels over elements [a, b).
func (j *actJob[T]) relu(a, b int) {
	x := j.x[a:b]
	switch j.kind {
	case actReLU:
		y := j.o0[a:b]
		y = y[:len(x)]
		for i, v := range x {
			y[i] = relu(v)
		}
	case actReLUBackward:
		dx, dy := j.o0[a:b], j.dy[a:b]
		dx, dy = dx[:len(x)], dy[:len(x)]
		for i, v := range x {
			dx[i] = T(reluSel(float64(v), float64(dy[i])))
		}
	default:
		gx, gdy, g := sub(j.o0, a, b), sub(j.o1, a, b), j.g[a:b]
		g = g[:len(x)]
		switch {
		case gx == nil:
			gdy = gdy[:len(x)]
			for i, v := range x {
				gdy[i] = T(reluSel(float64(v), float64(g[i])))
			}
		case gdy == nil:
			gx = gx[:len(x)]
			for i, v := range x {
				gx[i] = T(reluSel(float64(v), 0))
			}
		default:
			// One pass, inputs read before outputs written: an output may alias an input.
			gx, gdy = gx[:len(x)], gdy[:len(x)]
			for i, v := range x {
				xv, gv := float64(v), float64(g[i])
				gdy[i] = T(reluSel(xv, gv))
				gx[i] = T(reluSel(xv, 0))
			}
		}
	}
}

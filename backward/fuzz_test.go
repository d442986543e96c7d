package backward_test

import (
	"errors"
	"math"
	"testing"

	"github.com/gatejet/gatejet"
	"github.com/gatejet/gatejet/backward"
	"github.com/gatejet/gatejet/internal/axisref"
)

// fuzzSpecials are the values a low byte selects: non-finite and extreme magnitudes.
var fuzzSpecials = [...]float64{
	math.NaN(), math.Inf(1), math.Inf(-1), 1e300, -1e300, 1e-300, -1e-300, 0, math.MaxFloat64, 5e-324,
}

// fuzzValue maps a byte to a float64: specials for small bytes, a grid over [-7.5, 8] otherwise.
func fuzzValue(b byte) float64 {
	if int(b) < len(fuzzSpecials) {
		return fuzzSpecials[b]
	}
	return (float64(b) - 128) / 16
}

// fuzzVec draws n values from data, starting at phase and stepping by 2, wrapping around.
func fuzzVec(data []byte, n, phase int) []float64 {
	v := make([]float64, n)
	if len(data) == 0 {
		return v
	}
	for i := range v {
		v[i] = fuzzValue(data[(2*i+phase)%len(data)] + byte(i/len(data)))
	}
	return v
}

func allFinite(vs ...[]float64) bool {
	for _, v := range vs {
		for _, x := range v {
			if math.IsNaN(x) || math.IsInf(x, 0) {
				return false
			}
		}
	}
	return true
}

// isSentinel reports whether err wraps one of the structural sentinels.
func isSentinel(err error) bool {
	for _, k := range []error{gatejet.ErrRank, gatejet.ErrShape, gatejet.ErrAxis, gatejet.ErrSize} {
		if errors.Is(err, k) {
			return true
		}
	}
	return false
}

// FuzzSoftmaxBackward drives the axis kernels with arbitrary shapes, axes, buffer lengths and
// values: they must never panic, must fail only with a structural sentinel, and on valid
// finite input the softmax backward must sum to zero along the axis (up to round-off).
func FuzzSoftmaxBackward(f *testing.F) {
	f.Add([]byte{3, 4}, 1, byte(0), []byte("softmax backward"))
	f.Add([]byte{2, 3, 4}, 0, byte(0), []byte{0, 1, 2, 3, 4, 5, 6, 200, 100})
	f.Add([]byte{}, 0, byte(0), []byte{})
	f.Add([]byte{2, 0, 3}, -2, byte(0), []byte{1})
	f.Add([]byte{255, 3}, 0, byte(0), []byte{9})
	f.Add([]byte{1, 1, 1, 1, 1, 1, 1, 2, 2}, 3, byte(0), []byte{7})
	f.Add([]byte{4, 4}, 5, byte(3), []byte{40, 41})
	f.Add([]byte{254, 2}, 0, byte(0), []byte{40, 41, 42, 200})
	f.Add([]byte{2, 253, 3}, 1, byte(0), []byte{1, 2, 3, 40, 41, 42, 200})
	f.Fuzz(func(t *testing.T, dims []byte, axis int, trim byte, data []byte) {
		if len(dims) > 9 {
			dims = dims[:9]
		}
		shape := make([]int, len(dims))
		total := 1
		long := false // at most one long dim, to reach the multi-chunk paths
		for i, b := range dims {
			switch {
			case b == 255:
				shape[i] = -1
			case b >= 253 && !long && len(dims) <= 3:
				shape[i], long = 300, true
				if b == 254 {
					shape[i] = 33000
				}
			case len(dims) > 6:
				shape[i] = int(b % 3)
			default:
				shape[i] = int(b % 5)
			}
			total *= max(shape[i], 0)
		}
		valid := len(shape) >= 1 && len(shape) <= 8 && axis >= -len(shape) && axis < len(shape)
		for _, d := range shape {
			valid = valid && d >= 0
		}
		// trim shortens one buffer (dx, x, dy, g or gdy) to exercise the size checks.
		lens := [5]int{total, total, total, total, total}
		if trim != 0 && total > 0 {
			lens[int(trim)%5] = total - 1
		}
		x, dy, g := fuzzVec(data, lens[1], 0), fuzzVec(data, lens[2], 1), fuzzVec(data, lens[3], 3)
		y, ly := x, x
		if valid && lens[1] == total {
			y, ly = axisref.Softmax(x, shape, axis), axisref.LogSoftmax(x, shape, axis)
		}
		dx, gdy := make([]float64, lens[0]), make([]float64, lens[4])

		// check wants success exactly when the shape is valid and the buffers used fit it.
		check := func(name string, err error, used ...int) {
			ok := valid
			for _, u := range used {
				ok = ok && lens[u] == total
			}
			if ok && err != nil {
				t.Fatalf("%s(shape %v, axis %d): unexpected error %v", name, shape, axis, err)
			}
			if !ok && (err == nil || !isSentinel(err)) {
				t.Fatalf("%s(shape %v, axis %d, lens %v): want a sentinel error, got %v", name, shape, axis, lens, err)
			}
		}
		check("LogSoftmaxBackward", backward.LogSoftmaxBackward(dx, ly, dy, shape, axis), 0, 1, 2)
		check("LogSoftmaxBackwardGrad", backward.LogSoftmaxBackwardGrad(dx, gdy, ly, dy, g, shape, axis), 0, 1, 2, 3, 4)
		check("SoftmaxBackwardGrad", backward.SoftmaxBackwardGrad(dx, gdy, y, dy, g, shape, axis), 0, 1, 2, 3, 4)
		check("SoftmaxBackward/f32", backward.SoftmaxBackward(to32(dx), to32(y), to32(dy), shape, axis), 0, 1, 2)
		check("SoftmaxBackwardGrad/f32", backward.SoftmaxBackwardGrad(nil, to32(gdy), to32(y), to32(dy), to32(g), shape, axis), 1, 2, 3, 4)
		err := backward.SoftmaxBackward(dx, y, dy, shape, axis)
		check("SoftmaxBackward", err, 0, 1, 2)
		if err == nil && total >= 2 {
			// In place on dy gives the same bits; a dx shifted over dy is refused.
			arena := make([]float64, total+1)
			copy(arena, dy)
			in := arena[:total]
			if err := backward.SoftmaxBackward(in, y, in, shape, axis); err != nil {
				t.Fatalf("shape %v axis %d: in place: %v", shape, axis, err)
			}
			for i := range in {
				if math.Float64bits(in[i]) != math.Float64bits(dx[i]) {
					t.Fatalf("shape %v axis %d: in place dx[%d] = %v, %v out of place", shape, axis, i, in[i], dx[i])
				}
			}
			copy(arena, dy)
			if err := backward.SoftmaxBackward(arena[1:], y, arena[:total], shape, axis); !errors.Is(err, gatejet.ErrParam) {
				t.Fatalf("shape %v axis %d: dx partly over dy: %v", shape, axis, err)
			}
		}
		if err != nil || !allFinite(x, dy, dx) {
			return
		}
		// Σ_k dx_k = ⟨y,dy⟩·(1 − Σ_k y_k) vanishes up to round-off on every line.
		const eps = 0x1p-52
		for _, ln := range axisref.Lines(shape, axis) {
			var s, yd, bound float64
			for _, i := range ln {
				yd += math.Abs(y[i] * dy[i])
			}
			for _, i := range ln {
				s += dx[i]
				bound += math.Abs(dx[i]) + math.Abs(y[i])*(math.Abs(dy[i])+yd)
			}
			if tol := 4 * float64(len(ln)+4) * eps * bound; math.Abs(s) > tol {
				t.Fatalf("shape %v axis %d: Σ dx = %v along a line, bound %v", shape, axis, s, tol)
			}
		}
	})
}

// FuzzActivations drives every activation kernel and derivative with arbitrary values: no
// panic, no error on equal lengths, finite derivatives for finite input.
func FuzzActivations(f *testing.F) {
	f.Add([]byte("activations"), byte(0))
	f.Add([]byte{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, byte(0))
	f.Add([]byte{}, byte(0))
	f.Add([]byte{128, 129, 127, 255, 10}, byte(2))
	f.Fuzz(func(t *testing.T, data []byte, trim byte) {
		n := len(data)
		x, dy, g := fuzzVec(data, n, 0), fuzzVec(data, n, 1), fuzzVec(data, n, 3)
		for _, v := range x {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				continue
			}
			for _, d := range []func(float64) (float64, float64){backward.GELUDeriv, backward.SiLUDeriv} {
				d1, d2 := d(v)
				if math.IsNaN(d1) || math.IsInf(d1, 0) || math.IsNaN(d2) || math.IsInf(d2, 0) {
					t.Fatalf("derivative at finite x=%v: %v %v", v, d1, d2)
				}
			}
		}
		out, out2 := make([]float64, n), make([]float64, n)
		if trim%3 == 1 && n > 0 {
			out = out[:n-1]
		}
		wantErr := len(out) != n
		check := func(name string, err error) {
			if wantErr != (err != nil) || (err != nil && !errors.Is(err, gatejet.ErrSize)) {
				t.Fatalf("%s: wantErr %v, got %v", name, wantErr, err)
			}
		}
		for _, a := range activations {
			check(a.name, a.fwd(out, x))
			check(a.name+"Backward", a.bw(out, x, dy))
			check(a.name+"BackwardGrad", a.grad(out, out2, x, dy, g))
			check(a.name+"BackwardGrad/nil", a.grad(nil, out, x, dy, g))
			check(a.name+"/f32", a.fwd32(to32(out), to32(x)))
			check(a.name+"Backward/f32", a.bw32(to32(out), to32(x), to32(dy)))
			check(a.name+"BackwardGrad/f32", a.grad32(to32(out), nil, to32(x), to32(dy), to32(g)))
		}
		if wantErr {
			return
		}
		// Where x, dy and g are finite the results are not NaN.
		for _, a := range activations {
			_ = a.grad(out, out2, x, dy, g)
			for i := range x {
				if allFinite(x[i:i+1], dy[i:i+1], g[i:i+1]) && (math.IsNaN(out[i]) || math.IsNaN(out2[i])) {
					t.Fatalf("%s double backward at x=%v dy=%v g=%v: %v %v", a.name, x[i], dy[i], g[i], out[i], out2[i])
				}
			}
		}
	})
}

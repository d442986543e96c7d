package graphs

import (
	"errors"
	"fmt"
	"math"
	"testing"

	"github.com/gatejet/gatejet"
	"github.com/gatejet/gatejet/internal/check"
)

// Fuzz targets for the plain-slice helpers: arbitrary (finite or not) values and
// parameters never panic, invalid parameters give typed errors, and finite inputs with
// accepted parameters give finite outputs (probabilities that sum to 1).

func finite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }

func allFinite(xs []float64) bool {
	for _, x := range xs {
		if !finite(x) {
			return false
		}
	}
	return true
}

// fuzzRow takes the first n%5 of four values.
func fuzzRow(n uint8, a, b, c, d float64) []float64 {
	return []float64{a, b, c, d}[:n%5]
}

// reversed returns a copy of xs in reverse order: a vector as arbitrary as xs.
func reversed(xs []float64) []float64 {
	out := make([]float64, len(xs))
	for i := range out {
		out[i] = xs[len(xs)-1-i]
	}
	return out
}

// requireAllFinite fails the test, printing the inputs (format and args) and out, unless
// every element of out is finite.
func requireAllFinite(t *testing.T, out []float64, format string, args ...any) {
	t.Helper()
	if !allFinite(out) {
		t.Fatalf("%s: got %v", fmt.Sprintf(format, args...), out)
	}
}

// requireKind fails unless err is a *gatejet.Error of the given kind for op.
func requireKind(t *testing.T, err error, kind error, op string) {
	t.Helper()
	var ge *gatejet.Error
	if !errors.As(err, &ge) || !errors.Is(err, kind) || ge.Op != op {
		t.Fatalf("want a *gatejet.Error of kind %v from %s, got %v", kind, op, err)
	}
}

func validInvTau(s float64) bool { return check.InvTau("", s) == nil }

func addFuzzSeeds(f *testing.F) {
	mx, tiny := math.MaxFloat64, math.SmallestNonzeroFloat64
	f.Add(uint8(2), 1e308, -1e308, 0.0, 0.0, 10.0, 1.0)
	f.Add(uint8(3), mx, -mx, 0.0, 0.0, mx, 1.0)
	f.Add(uint8(3), mx, -mx, 0.0, 0.0, gatejet.MaxInvTau, 1.0)
	f.Add(uint8(4), mx, -mx, 1.0, -1.0, tiny, 1e-3)
	f.Add(uint8(4), 3.0, 1.0, 4.0, 1.5, 1.0, 0.0)
	f.Add(uint8(2), math.Inf(1), 2.0, 0.0, 0.0, 3.0, 1.0)
	f.Add(uint8(2), math.NaN(), 2.0, 0.0, 0.0, 3.0, math.NaN())
	f.Add(uint8(1), math.Inf(-1), 0.0, 0.0, 0.0, 0.0, -1.0)
	f.Add(uint8(3), 1.0, 2.0, 3.0, 0.0, math.Inf(1), math.Inf(1))
	f.Add(uint8(0), 0.0, 0.0, 0.0, 0.0, math.NaN(), 0.0)
}

func FuzzSoftArgminProbs(f *testing.F) {
	addFuzzSeeds(f)
	f.Fuzz(func(t *testing.T, n uint8, a, b, c, d, invTau, _ float64) {
		costs := fuzzRow(n, a, b, c, d)
		p, err := SoftArgminProbs(costs, invTau)
		if !validInvTau(invTau) {
			requireKind(t, err, gatejet.ErrTemperature, "graphs.SoftArgminProbs")
			if p != nil {
				t.Fatalf("result %v with an error", p)
			}
			return
		}
		if err != nil || len(p) != len(costs) {
			t.Fatalf("costs %v invTau %v: %v, %v", costs, invTau, p, err)
		}
		if !allFinite(costs) || len(costs) == 0 {
			return
		}
		sum := 0.0
		for _, x := range p {
			if !finite(x) || x < 0 || x > 1 {
				t.Fatalf("costs %v invTau %v: p = %v", costs, invTau, p)
			}
			sum += x
		}
		if math.Abs(sum-1) > 1e-15*float64(len(p)+1) {
			t.Fatalf("costs %v invTau %v: p = %v sums to %v", costs, invTau, p, sum)
		}
		if best := Argmin(costs); p[best] < p[0] || p[best] < p[len(p)-1] {
			t.Fatalf("costs %v invTau %v: the argmin %d has less mass: p = %v", costs, invTau, best, p)
		}
	})
}

func FuzzSoftArgminVJP(f *testing.F) {
	addFuzzSeeds(f)
	f.Fuzz(func(t *testing.T, n uint8, a, b, c, d, invTau, v0 float64) {
		const op = "graphs.SoftArgminVJP"
		costs := fuzzRow(n, a, b, c, d)
		probs, err := SoftArgminProbs(costs, 1)
		if err != nil {
			t.Fatal(err)
		}
		// v: the costs reversed, with v0 first, so v is as arbitrary as the costs
		v := reversed(costs)
		if len(v) > 0 {
			v[0] = v0
		}
		out, err := SoftArgminVJP(probs, v, invTau)
		if !validInvTau(invTau) {
			requireKind(t, err, gatejet.ErrTemperature, op)
			return
		}
		if err != nil || len(out) != len(v) {
			t.Fatalf("%v, %v", out, err)
		}
		if len(v) > 0 {
			if _, err := SoftArgminVJP(probs, v[1:], invTau); true {
				requireKind(t, err, gatejet.ErrSize, op)
			}
		}
		if !allFinite(costs) || !allFinite(v) {
			return
		}
		// |out_i| ≤ invTau·p_i·(|v_i| + |⟨p, v⟩|) ≤ 2·invTau·max|v|: finite when that is.
		maxAbs := 0.0
		for _, x := range v {
			maxAbs = math.Max(maxAbs, math.Abs(x))
		}
		if maxAbs > 0 && invTau >= math.MaxFloat64/4/maxAbs {
			return
		}
		requireAllFinite(t, out, "probs %v v %v invTau %v", probs, v, invTau)
	})
}

func FuzzNaturalGradient(f *testing.F) {
	addFuzzSeeds(f)
	f.Fuzz(func(t *testing.T, n uint8, a, b, c, d, invTau, lambda float64) {
		const op = "graphs.NaturalGradient"
		costs := fuzzRow(n, a, b, c, d)
		if !validInvTau(invTau) {
			invTau = 1
		}
		probs, err := SoftArgminProbs(costs, invTau)
		if err != nil {
			t.Fatal(err)
		}
		grad := reversed(costs)
		x, err := NaturalGradient(probs, grad, lambda)
		if !(lambda >= 0) || math.IsInf(lambda, 1) {
			requireKind(t, err, gatejet.ErrParam, op)
			return
		}
		if err != nil || len(x) != len(grad) {
			t.Fatalf("%v, %v", x, err)
		}
		if len(grad) > 0 {
			_, err := NaturalGradient(probs, grad[1:], lambda)
			requireKind(t, err, gatejet.ErrSize, op)
		}
		if len(probs) > 0 && finite(probs[0]) {
			neg := append([]float64{-math.Abs(probs[0]) - 1}, probs[1:]...)
			_, err := NaturalGradient(neg, grad, lambda)
			requireKind(t, err, gatejet.ErrParam, op)
		}
		// Damped by λ ≥ 1e-3 (and moderate gradients) the solution is bounded: finite.
		if !allFinite(costs) || lambda < 1e-3 {
			return
		}
		for _, g := range grad {
			if math.Abs(g) > 1e200 {
				return
			}
		}
		requireAllFinite(t, x, "probs %v grad %v lambda %v", probs, grad, lambda)
	})
}

func FuzzArgmin(f *testing.F) {
	addFuzzSeeds(f)
	f.Fuzz(func(t *testing.T, n uint8, a, b, c, d, _, _ float64) {
		costs := fuzzRow(n, a, b, c, d)
		i := Argmin(costs)
		if i < 0 {
			for _, x := range costs {
				if !math.IsNaN(x) {
					t.Fatalf("Argmin(%v) = -1", costs)
				}
			}
			return
		}
		if i >= len(costs) || math.IsNaN(costs[i]) {
			t.Fatalf("Argmin(%v) = %d", costs, i)
		}
		for j, x := range costs {
			if x < costs[i] || (x == costs[i] && j < i) {
				t.Fatalf("Argmin(%v) = %d, but %d is smaller or first", costs, i, j)
			}
		}
	})
}

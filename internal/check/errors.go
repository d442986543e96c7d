package check

import (
	"fmt"
	"math"

	"github.com/gatejet/gatejet"
)

// Errorf builds a *gatejet.Error of the given kind; the detail is formatted with fmt.Sprintf.
func Errorf(kind error, op, arg, format string, args ...any) *gatejet.Error {
	return &gatejet.Error{Op: op, Arg: arg, Detail: fmt.Sprintf(format, args...), Kind: kind}
}

// InvTau reports an ErrTemperature error unless 0 < invTau ≤ gatejet.MaxInvTau.
func InvTau(op string, invTau float64) error {
	if !(invTau > 0) || math.IsInf(invTau, 1) {
		return Errorf(gatejet.ErrTemperature, op, "invTau", "want 0 < invTau < +Inf, got %v", invTau)
	}
	if invTau > gatejet.MaxInvTau {
		return Errorf(gatejet.ErrTemperature, op, "invTau", "want invTau ≤ gatejet.MaxInvTau = %g, got %v", gatejet.MaxInvTau, invTau)
	}
	return nil
}

// LogisticGate validates the per-atom parameters of a logistic gate over k atoms: alpha
// and beta of length k (ErrParam otherwise), finite (ErrNonFinite otherwise), and
// |alpha[i]| ≤ gatejet.MaxLogisticAlpha (ErrParam otherwise). The error names the argument.
func LogisticGate(op string, k int, alpha, beta []float64) error {
	for _, p := range []struct {
		name string
		v    []float64
	}{{"alpha", alpha}, {"beta", beta}} {
		if len(p.v) != k {
			return Errorf(gatejet.ErrParam, op, p.name, "want one value per atom (K=%d), got %d", k, len(p.v))
		}
		for i, x := range p.v {
			if math.IsNaN(x) || math.IsInf(x, 0) {
				return Errorf(gatejet.ErrNonFinite, op, p.name, "%s[%d] = %v", p.name, i, x)
			}
		}
	}
	for i, a := range alpha {
		if math.Abs(a) > gatejet.MaxLogisticAlpha {
			return Errorf(gatejet.ErrParam, op, "alpha", "want |alpha[%d]| ≤ gatejet.MaxLogisticAlpha = %g, got %v", i, gatejet.MaxLogisticAlpha, a)
		}
	}
	return nil
}

package gatejet

import (
	"errors"
	"fmt"
)

// Sentinel errors: the kinds of failure every gatejet function reports. Match them with
// errors.Is; each returned error is an *Error that wraps exactly one of them.
var (
	// ErrShape: an argument's shape does not match the others (K, P or n disagree).
	ErrShape = errors.New("shape mismatch")
	// ErrRank: an argument has the wrong number of dimensions.
	ErrRank = errors.New("wrong rank")
	// ErrDType: an argument's element type is unsupported or differs from the others.
	ErrDType = errors.New("unsupported or mismatched dtype")
	// ErrAxis: an axis is outside [-rank, rank).
	ErrAxis = errors.New("axis out of range")
	// ErrTemperature: an inverse temperature that is not positive and finite.
	ErrTemperature = errors.New("temperature must be positive and finite")
	// ErrSize: a buffer's length does not match the shape it is used with.
	ErrSize = errors.New("buffer length does not match shape")
	// ErrParam: any other invalid parameter (for example a gate parameter of the wrong length).
	ErrParam = errors.New("invalid parameter")
	// ErrNonFinite: a non-finite value where one is an error (gate parameters, for example).
	// Non-finite data values are not errors: they propagate within their row.
	ErrNonFinite = errors.New("non-finite value")
	// ErrDevice: the GPU path failed or is not available.
	ErrDevice = errors.New("device error")
)

// Error is the error every gatejet function returns: which operation, which argument, and what
// was expected against what was found. Kind is one of the sentinel errors of this package.
type Error struct {
	Op     string // operation, e.g. "softmaxjet.Second" or "ops.SoftmaxJetFirst"
	Arg    string // argument at fault, e.g. "logits"; empty when no single argument is
	Detail string // what was expected and what was found
	Kind   error  // one of the sentinel errors
}

// Error formats the error as "op: arg: kind: detail".
func (e *Error) Error() string {
	if e == nil {
		return "<nil>"
	}
	s := e.Op
	if e.Arg != "" {
		s += ": " + e.Arg
	}
	s += ": " + e.Kind.Error()
	if e.Detail != "" {
		s += ": " + e.Detail
	}
	return s
}

// Unwrap returns the sentinel kind, so errors.Is(err, ErrShape) works.
// A nil *Error unwraps to nil, so errors.Is on a typed nil is safe.
func (e *Error) Unwrap() error {
	if e == nil {
		return nil
	}
	return e.Kind
}

// Errorf builds an *Error of the given kind; the detail is formatted with fmt.Sprintf.
func Errorf(kind error, op, arg, format string, args ...any) *Error {
	return &Error{Op: op, Arg: arg, Detail: fmt.Sprintf(format, args...), Kind: kind}
}

// CheckInvTau reports an ErrTemperature *Error unless invTau is positive and finite.
func CheckInvTau(op string, invTau float64) error {
	if !(invTau > 0) || invTau > maxFloat64 {
		return Errorf(ErrTemperature, op, "invTau", "want 0 < invTau < +Inf, got %v", invTau)
	}
	return nil
}

const maxFloat64 = 1.79769313486231570814527423731704356798070e+308

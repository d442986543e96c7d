package gatejet

import "errors"

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
	// ErrTemperature: an inverse temperature outside (0, MaxInvTau]: not positive, not
	// finite, or larger than MaxInvTau.
	ErrTemperature = errors.New("inverse temperature out of range")
	// ErrSize: a buffer's length does not match the shape it is used with, or a size is too
	// large: its element count overflows int, or its bytes exceed MaxBytes.
	ErrSize = errors.New("wrong or too large a size")
	// ErrParam: any other invalid parameter (for example a gate parameter of the wrong length,
	// a logistic slope beyond MaxLogisticAlpha, or an output that overlaps another argument).
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
	Op     string // operation, e.g. "softmaxjet.Softmax.Second" or "ops.SoftmaxJetFirst"
	Arg    string // argument at fault, e.g. "logits"; empty when no single argument is
	Detail string // what was expected and what was found
	Kind   error  // one of the sentinel errors
}

// Error formats the error as "op: arg: kind: detail"; an empty Arg or Detail, or a nil Kind,
// leaves its part out.
func (e *Error) Error() string {
	if e == nil {
		return "<nil>"
	}
	s := e.Op
	if e.Arg != "" {
		s += ": " + e.Arg
	}
	if e.Kind != nil {
		s += ": " + e.Kind.Error()
	}
	if e.Detail != "" {
		s += ": " + e.Detail
	}
	return s
}

// Unwrap returns the sentinel kind, so errors.Is(err, ErrShape) works.
// A nil *Error, or one with a nil Kind, unwraps to nil, so errors.Is on either is safe.
func (e *Error) Unwrap() error {
	if e == nil {
		return nil
	}
	return e.Kind
}

// MaxInvTau is the largest inverse temperature s = 1/τ that gatejet accepts. The channels
// and their products scale as s, s² and s³ (s³: the reverse modes of the second channel, of
// the Hessian-vector product and of the Gauss-Newton slabs): with s ≤ 1e100, s³ ≤ 1e300
// stays finite, so an accepted temperature with finite inputs of moderate size gives finite
// outputs, also where a gate is one-hot and the exact derivatives are 0 (a larger s³
// overflows, and ∞·0 is NaN). At s = 1e100 any logit gap above 1e-97 makes a gate one-hot.
const MaxInvTau = 1e100

// MaxLogisticAlpha is the largest slope |α| a logistic gate ζ = σ(α·l + β) accepts: its
// derivatives in l scale as α, α² and α³ (the reverse mode of its second channel), and with
// |α| ≤ 1e100 those stay finite, so a saturated gate gives its exact zero curvature rather
// than ∞·0 = NaN.
const MaxLogisticAlpha = 1e100

package softmaxjet

import "github.com/gatejet/gatejet"

// Gate is a gating function of the row jet, as one type: the ten kernels (five channels and
// their VJPs) over element type T, each with the arguments and conventions of the Softmax
// method of the same name (Value, First, …, GaussNewtonVJP); the gate's own parameters are
// fields of the gate value. Code that runs a channel for any gate (the ops,
// the kernel table) is written once against this interface; Softmax (softmax.go) and
// Logistic (logistic.go) implement it, and a new gate implements it once, in its own file.
type Gate[T gatejet.Float] interface {
	Value(dst, logits, decoded []T, sh Shape) error
	First(dst, logits, decoded []T, sh Shape) error
	Second(dst, logits, decoded []T, sh Shape) error
	HVP(dst, logits, decoded, v []T, sh Shape) error
	GaussNewton(dst, logits, decoded []T, sh Shape) error
	ValueVJP(dLogits, dDecoded, logits, decoded, g []T, sh Shape) error
	FirstVJP(dLogits, dDecoded, logits, decoded, g []T, sh Shape) error
	SecondVJP(dLogits, dDecoded, logits, decoded, g []T, sh Shape) error
	HVPVJP(dLogits, dDecoded, dV, logits, decoded, v, g []T, sh Shape) error
	GaussNewtonVJP(dLogits, dDecoded, logits, decoded, g []T, sh Shape) error
}

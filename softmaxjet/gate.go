package softmaxjet

// Gate is a gating function of the row jet, as one type: the ten kernels (five channels and
// their VJPs) over element type T, each with the arguments and conventions of the softmax
// gate's function of the same name (Value, First, …, GaussNewtonVJP) less the gate's own
// parameters, which the gate value carries. Code that runs a channel for any gate (the ops,
// the kernel table) is written once against this interface; Softmax and Logistic implement
// it, and a new gate implements it once.
type Gate[T Float] interface {
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

// Softmax is the softmax gate ζ = softmax(InvTau·l) as a Gate: its methods are the functions
// Value … GaussNewtonVJP at inverse temperature InvTau.
type Softmax[T Float] struct{ InvTau float64 }

// Logistic is the per-atom logistic gate ζ_k = σ(Alpha_k·l_k + Beta_k) as a Gate: its methods
// are the functions LogisticValue … LogisticGaussNewtonVJP with these parameters.
type Logistic[T Float] struct{ Alpha, Beta []float64 }

var (
	_ Gate[float64] = Softmax[float64]{}
	_ Gate[float32] = Logistic[float32]{}
)

func (g Softmax[T]) Value(dst, l, d []T, sh Shape) error  { return Value(dst, l, d, sh, g.InvTau) }
func (g Softmax[T]) First(dst, l, d []T, sh Shape) error  { return First(dst, l, d, sh, g.InvTau) }
func (g Softmax[T]) Second(dst, l, d []T, sh Shape) error { return Second(dst, l, d, sh, g.InvTau) }
func (g Softmax[T]) HVP(dst, l, d, v []T, sh Shape) error { return HVP(dst, l, d, v, sh, g.InvTau) }
func (g Softmax[T]) GaussNewton(dst, l, d []T, sh Shape) error {
	return GaussNewton(dst, l, d, sh, g.InvTau)
}
func (g Softmax[T]) ValueVJP(dl, dd, l, d, up []T, sh Shape) error {
	return ValueVJP(dl, dd, l, d, up, sh, g.InvTau)
}
func (g Softmax[T]) FirstVJP(dl, dd, l, d, up []T, sh Shape) error {
	return FirstVJP(dl, dd, l, d, up, sh, g.InvTau)
}
func (g Softmax[T]) SecondVJP(dl, dd, l, d, up []T, sh Shape) error {
	return SecondVJP(dl, dd, l, d, up, sh, g.InvTau)
}
func (g Softmax[T]) HVPVJP(dl, dd, dv, l, d, v, up []T, sh Shape) error {
	return HVPVJP(dl, dd, dv, l, d, v, up, sh, g.InvTau)
}
func (g Softmax[T]) GaussNewtonVJP(dl, dd, l, d, up []T, sh Shape) error {
	return GaussNewtonVJP(dl, dd, l, d, up, sh, g.InvTau)
}

func (g Logistic[T]) Value(dst, l, d []T, sh Shape) error {
	return LogisticValue(dst, l, d, sh, g.Alpha, g.Beta)
}
func (g Logistic[T]) First(dst, l, d []T, sh Shape) error {
	return LogisticFirst(dst, l, d, sh, g.Alpha, g.Beta)
}
func (g Logistic[T]) Second(dst, l, d []T, sh Shape) error {
	return LogisticSecond(dst, l, d, sh, g.Alpha, g.Beta)
}
func (g Logistic[T]) HVP(dst, l, d, v []T, sh Shape) error {
	return LogisticHVP(dst, l, d, v, sh, g.Alpha, g.Beta)
}
func (g Logistic[T]) GaussNewton(dst, l, d []T, sh Shape) error {
	return LogisticGaussNewton(dst, l, d, sh, g.Alpha, g.Beta)
}
func (g Logistic[T]) ValueVJP(dl, dd, l, d, up []T, sh Shape) error {
	return LogisticValueVJP(dl, dd, l, d, up, sh, g.Alpha, g.Beta)
}
func (g Logistic[T]) FirstVJP(dl, dd, l, d, up []T, sh Shape) error {
	return LogisticFirstVJP(dl, dd, l, d, up, sh, g.Alpha, g.Beta)
}
func (g Logistic[T]) SecondVJP(dl, dd, l, d, up []T, sh Shape) error {
	return LogisticSecondVJP(dl, dd, l, d, up, sh, g.Alpha, g.Beta)
}
func (g Logistic[T]) HVPVJP(dl, dd, dv, l, d, v, up []T, sh Shape) error {
	return LogisticHVPVJP(dl, dd, dv, l, d, v, up, sh, g.Alpha, g.Beta)
}
func (g Logistic[T]) GaussNewtonVJP(dl, dd, l, d, up []T, sh Shape) error {
	return LogisticGaussNewtonVJP(dl, dd, l, d, up, sh, g.Alpha, g.Beta)
}

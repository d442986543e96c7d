package ops

import (
	"fmt"
	"hash"

	"github.com/gatejet/gatejet"
	"github.com/gatejet/gatejet/cudaops"
	"github.com/gatejet/gatejet/softmaxjet"
)

// channel is one output of the row jet: the value, the first or second channel, the
// Hessian-vector product or the Gauss-Newton slab.
type channel uint8

const (
	chValue channel = iota
	chFirst
	chSecond
	chHVP
	chGaussNewton
	numChannels
)

var channelNames = [numChannels]string{"Value", "First", "Second", "HVP", "GaussNewton"}

// hasV reports whether the channel takes a direction v as its third input.
func (c channel) hasV() bool { return c == chHVP }

// arity is the number of node inputs of the forward op: logits, decoded [, v].
func (c channel) arity() int {
	if c.hasV() {
		return 3
	}
	return 2
}

// outShape is the shape of the channel for a batch of n rows, K atoms and P columns.
func (c channel) outShape(n, k, p int) []int {
	switch c {
	case chValue:
		return []int{n, p}
	case chFirst, chHVP:
		return []int{n, k, p}
	case chSecond:
		return []int{n, k, k, p}
	default: // chGaussNewton
		return []int{n, k, k}
	}
}

// gate is the gating function of a row jet: softmax(invTau·l) or the per-atom logistic
// σ(α_k·l_k + β_k). It is immutable once built.
type gate struct {
	logistic    bool
	invTau      float64
	alpha, beta []float64
	floats      []float64 // the cudaops Floats: [invTau] or [α…, β…]
}

// softmaxGate validates invTau and returns the softmax gate.
func softmaxGate(op string, invTau float64) (*gate, error) {
	if err := gatejet.CheckInvTau(op, invTau); err != nil {
		return nil, err
	}
	return &gate{invTau: invTau, floats: []float64{invTau}}, nil
}

// logisticGate validates α and β (length K, finite) and returns the logistic gate, holding
// copies of them.
func logisticGate(op string, k int, alpha, beta []float64) (*gate, error) {
	if err := gatejet.CheckLogisticGate(op, k, alpha, beta); err != nil {
		return nil, err
	}
	g := &gate{logistic: true, floats: make([]float64, 2*k)}
	copy(g.floats, alpha)
	copy(g.floats[k:], beta)
	g.alpha, g.beta = g.floats[:k:k], g.floats[k:]
	return g, nil
}

func (g *gate) prefix() string {
	if g.logistic {
		return "LogisticJet"
	}
	return "SoftmaxJet"
}

func (g *gate) writeHash(h hash.Hash) {
	if g.logistic {
		writeFloats(h, "alpha", g.alpha)
		writeFloats(h, "beta", g.beta)
		return
	}
	writeFloats(h, "invTau", []float64{g.invTau})
}

// String formats the gate's parameters.
func (g *gate) String() string {
	if !g.logistic {
		return fmt.Sprintf("invTau=%v", g.invTau)
	}
	return fmt.Sprintf("alpha=%v beta=%v", g.alpha, g.beta)
}

// Kernel tables: [logistic][channel].
var (
	fwdKernels = [2][numChannels]cudaops.Kernel{
		{cudaops.KernelJetValue, cudaops.KernelJetFirst, cudaops.KernelJetSecond, cudaops.KernelJetHVP, cudaops.KernelJetGaussNewton},
		{cudaops.KernelLogisticValue, cudaops.KernelLogisticFirst, cudaops.KernelLogisticSecond, cudaops.KernelLogisticHVP, cudaops.KernelLogisticGaussNewton},
	}
	vjpKernels = [2][numChannels]cudaops.Kernel{
		{cudaops.KernelJetValueVJP, cudaops.KernelJetFirstVJP, cudaops.KernelJetSecondVJP, cudaops.KernelJetHVPVJP, cudaops.KernelJetGaussNewtonVJP},
		{cudaops.KernelLogisticValueVJP, cudaops.KernelLogisticFirstVJP, cudaops.KernelLogisticSecondVJP, cudaops.KernelLogisticHVPVJP, cudaops.KernelLogisticGaussNewtonVJP},
	}
)

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// forward runs the channel's kernel: dst from logits l, decoded d and (HVP only) v.
func forward[T float](g *gate, c channel, dst, l, d, v []T, sh softmaxjet.Shape) error {
	if g.logistic {
		a, b := g.alpha, g.beta
		switch c {
		case chValue:
			return softmaxjet.LogisticValue(dst, l, d, sh, a, b)
		case chFirst:
			return softmaxjet.LogisticFirst(dst, l, d, sh, a, b)
		case chSecond:
			return softmaxjet.LogisticSecond(dst, l, d, sh, a, b)
		case chHVP:
			return softmaxjet.LogisticHVP(dst, l, d, v, sh, a, b)
		default:
			return softmaxjet.LogisticGaussNewton(dst, l, d, sh, a, b)
		}
	}
	s := g.invTau
	switch c {
	case chValue:
		return softmaxjet.Value(dst, l, d, sh, s)
	case chFirst:
		return softmaxjet.First(dst, l, d, sh, s)
	case chSecond:
		return softmaxjet.Second(dst, l, d, sh, s)
	case chHVP:
		return softmaxjet.HVP(dst, l, d, v, sh, s)
	default:
		return softmaxjet.GaussNewton(dst, l, d, sh, s)
	}
}

// vjp runs the channel's VJP kernel with upstream gradient up: dl, dd and (HVP only) dv, any
// of which may be nil to skip it.
func vjp[T float](g *gate, c channel, dl, dd, dv, l, d, v, up []T, sh softmaxjet.Shape) error {
	if g.logistic {
		a, b := g.alpha, g.beta
		switch c {
		case chValue:
			return softmaxjet.LogisticValueVJP(dl, dd, l, d, up, sh, a, b)
		case chFirst:
			return softmaxjet.LogisticFirstVJP(dl, dd, l, d, up, sh, a, b)
		case chSecond:
			return softmaxjet.LogisticSecondVJP(dl, dd, l, d, up, sh, a, b)
		case chHVP:
			return softmaxjet.LogisticHVPVJP(dl, dd, dv, l, d, v, up, sh, a, b)
		default:
			return softmaxjet.LogisticGaussNewtonVJP(dl, dd, l, d, up, sh, a, b)
		}
	}
	s := g.invTau
	switch c {
	case chValue:
		return softmaxjet.ValueVJP(dl, dd, l, d, up, sh, s)
	case chFirst:
		return softmaxjet.FirstVJP(dl, dd, l, d, up, sh, s)
	case chSecond:
		return softmaxjet.SecondVJP(dl, dd, l, d, up, sh, s)
	case chHVP:
		return softmaxjet.HVPVJP(dl, dd, dv, l, d, v, up, sh, s)
	default:
		return softmaxjet.GaussNewtonVJP(dl, dd, l, d, up, sh, s)
	}
}

// runForward dispatches the channel's forward kernel through cudaops.Run.
func runForward[T float](rec *pathRecord, g *gate, c channel, dst, l, d, v []T, sh softmaxjet.Shape) error {
	ints := [3]int{sh.N, sh.K, sh.P}
	k := fwdKernels[b2i(g.logistic)][c]
	cpu := func() error { return forward(g, c, dst, l, d, v, sh) }
	if c.hasV() {
		return dispatch(rec, k, ints[:], g.floats, [][]T{l, d, v}, [][]T{dst}, cpu)
	}
	return dispatch(rec, k, ints[:], g.floats, [][]T{l, d}, [][]T{dst}, cpu)
}

// runVJP dispatches the channel's VJP kernel through cudaops.Run. Outputs left nil are
// skipped by the CPU kernel; a device kernel writes every output, so they are then given
// scratch buffers (see scratchOr).
func runVJP[T float](name string, rec *pathRecord, g *gate, c channel, dl, dd, dv, l, d, v, up []T, sh softmaxjet.Shape) error {
	ints := [3]int{sh.N, sh.K, sh.P}
	k := vjpKernels[b2i(g.logistic)][c]
	cpu := func() error { return vjp(g, c, dl, dd, dv, l, d, v, up, sh) }
	dl2, err := scratchOr(name, dl, sh.LogitsLen())
	if err != nil {
		return err
	}
	dd2, err := scratchOr(name, dd, sh.DecodedLen())
	if err != nil {
		return err
	}
	if c.hasV() {
		dv2, err := scratchOr(name, dv, sh.LogitsLen())
		if err != nil {
			return err
		}
		return dispatch(rec, k, ints[:], g.floats, [][]T{l, d, v, up}, [][]T{dl2, dd2, dv2}, cpu)
	}
	return dispatch(rec, k, ints[:], g.floats, [][]T{l, d, up}, [][]T{dl2, dd2}, cpu)
}

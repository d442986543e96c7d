package ops

import (
	"fmt"
	"hash"
	"strings"

	"github.com/gatejet/gatejet"
	"github.com/gatejet/gatejet/internal/check"
	"github.com/gatejet/gatejet/internal/kernel"
	"github.com/gatejet/gatejet/softmaxjet"
)

// channel is one output of the row jet: the value, the first or second channel, the
// Hessian-vector product or the Gauss-Newton slab.
type channel = kernel.Channel

// arity is the number of node inputs of a channel's forward op: logits, decoded [, v].
func arity(c channel) int {
	if c.HasV() {
		return 3
	}
	return 2
}

// outShape is the shape of the channel for a batch of n rows, K atoms and P columns.
func outShape(c channel, n, k, p int) []int { return c.Out().Shape(n, k, p) }

// gate is the gating function of a jet op: the gate's declaration in the kernel table and the
// parameters its kernels take (the table's floats), validated. The ops are written once for
// every gate; nothing here branches on which gate it holds. Immutable once built.
type gate struct {
	k      *kernel.Gate
	K      int // atoms: the length of a per-atom parameter
	floats []float64
}

// newGate validates floats for a gate over K atoms and returns the gate, holding a copy.
func newGate(op string, k *kernel.Gate, K int, floats []float64) (*gate, error) {
	if want := k.NumFloats(K); len(floats) != want {
		return nil, check.Errorf(gatejet.ErrParam, op, "", "%s wants %d parameters for K=%d, got %d", k.Title, want, K, len(floats))
	}
	if err := k.Check(op, K, floats); err != nil {
		return nil, err
	}
	return &gate{k: k, K: K, floats: append([]float64(nil), floats...)}, nil
}

// softmaxParams returns the softmax gate's parameters: [invTau].
func softmaxParams(invTau float64) gateParams {
	return func(string, int) ([]float64, error) { return []float64{invTau}, nil }
}

// logisticParams returns the logistic gate's parameters [α…, β…] after checking α and β
// apart (each of length K), so that an error names the one at fault.
func logisticParams(alpha, beta []float64) gateParams {
	return func(op string, K int) ([]float64, error) {
		if err := check.LogisticGate(op, K, alpha, beta); err != nil {
			return nil, err
		}
		return append(append(make([]float64, 0, 2*K), alpha...), beta...), nil
	}
}

// gateParams returns a gate's floats for K atoms.
type gateParams func(op string, K int) ([]float64, error)

// groups calls f with each named parameter of the gate and its values.
func (g *gate) groups(f func(p kernel.Param, v []float64)) {
	rest := g.floats
	for _, p := range g.k.Params {
		n := 1
		if p.PerAtom {
			n = g.K
		}
		f(p, rest[:n:n])
		rest = rest[n:]
	}
}

func (g *gate) writeHash(h hash.Hash) {
	g.groups(func(p kernel.Param, v []float64) { writeFloats(h, p.Name, v) })
}

// String formats the gate's parameters: "invTau=2", "alpha=[…] beta=[…]".
func (g *gate) String() string {
	var parts []string
	g.groups(func(p kernel.Param, v []float64) {
		if p.PerAtom {
			parts = append(parts, fmt.Sprintf("%s=%v", p.Name, v))
		} else {
			parts = append(parts, fmt.Sprintf("%s=%v", p.Name, v[0]))
		}
	})
	return strings.Join(parts, " ")
}

// runVJP runs the channel's VJP kernel with upstream gradient up: dl, dd and (HVP) dv, any of
// which may be nil to skip it.
func runVJP[T gatejet.Float](name string, rec *pathRecord, g *gate, c channel, dl, dd, dv, l, d, v, up []T, sh softmaxjet.Shape) error {
	ints := [3]int{sh.N, sh.K, sh.P}
	in := [][]T{l, d, up}
	if c.HasV() {
		in = [][]T{l, d, v, up}
	}
	return run(name, rec, g.k.Kernel(c, true), ints[:], g.floats, in, [][]T{dl, dd, dv})
}

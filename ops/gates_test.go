package ops_test

import (
	"testing"

	G "gorgonia.org/gorgonia"

	"github.com/gatejet/gatejet/internal/kernel"
	"github.com/gatejet/gatejet/internal/opstest"
	"github.com/gatejet/gatejet/ops"
)

// The ops suite (internal/opstest) on the built-in gates' constructors, from a call's floats
// as dispatch.Kernel documents them: [invTau]; [α…, β…].

func TestSoftmaxJetOps(t *testing.T) {
	opstest.Run(t, opstest.Gate{Table: kernel.SoftmaxGate, TablePath: ops.JetOp, Constructors: [kernel.NumChannels]opstest.Constructor{
		func(l, d, _ *G.Node, f []float64) (*G.Node, error) { return ops.SoftmaxJetValue(l, d, f[0]) },
		func(l, d, _ *G.Node, f []float64) (*G.Node, error) { return ops.SoftmaxJetFirst(l, d, f[0]) },
		func(l, d, _ *G.Node, f []float64) (*G.Node, error) { return ops.SoftmaxJetSecond(l, d, f[0]) },
		func(l, d, v *G.Node, f []float64) (*G.Node, error) { return ops.SoftmaxJetHVP(l, d, v, f[0]) },
		func(l, d, _ *G.Node, f []float64) (*G.Node, error) { return ops.SoftmaxJetGaussNewton(l, d, f[0]) },
	}})
}

func TestLogisticJetOps(t *testing.T) {
	ab := func(f []float64) ([]float64, []float64) { return f[:len(f)/2], f[len(f)/2:] }
	opstest.Run(t, opstest.Gate{Table: kernel.LogisticGate, TablePath: ops.JetOp, Constructors: [kernel.NumChannels]opstest.Constructor{
		func(l, d, _ *G.Node, f []float64) (*G.Node, error) {
			a, b := ab(f)
			return ops.LogisticJetValue(l, d, a, b)
		},
		func(l, d, _ *G.Node, f []float64) (*G.Node, error) {
			a, b := ab(f)
			return ops.LogisticJetFirst(l, d, a, b)
		},
		func(l, d, _ *G.Node, f []float64) (*G.Node, error) {
			a, b := ab(f)
			return ops.LogisticJetSecond(l, d, a, b)
		},
		func(l, d, v *G.Node, f []float64) (*G.Node, error) {
			a, b := ab(f)
			return ops.LogisticJetHVP(l, d, v, a, b)
		},
		func(l, d, _ *G.Node, f []float64) (*G.Node, error) {
			a, b := ab(f)
			return ops.LogisticJetGaussNewton(l, d, a, b)
		},
	}})
}

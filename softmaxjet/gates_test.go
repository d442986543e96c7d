package softmaxjet_test

import (
	"testing"

	"github.com/gatejet/gatejet/internal/gatetest"
	"github.com/gatejet/gatejet/internal/kernel"
	"github.com/gatejet/gatejet/internal/tower"
	"github.com/gatejet/gatejet/softmaxjet"
)

// The gate suite (internal/gatetest) on the built-in gates, from a call's floats as
// dispatch.Kernel documents them: [invTau]; [α…, β…].

// avx switches the AVX loops, which must give the Go loops' bits.
var avx = []gatetest.Switch{{Name: "AVX", Available: softmaxjet.AVX.Available, Set: softmaxjet.AVX.Set}}

func TestSoftmaxGate(t *testing.T) {
	gatetest.Run(t, gatetest.Gate{
		Table:    kernel.SoftmaxGate,
		F64:      func(f []float64, _ int) softmaxjet.Gate[float64] { return softmaxjet.Softmax[float64]{InvTau: f[0]} },
		F32:      func(f []float64, _ int) softmaxjet.Gate[float32] { return softmaxjet.Softmax[float32]{InvTau: f[0]} },
		Jets:     func(f []float64, _ int) tower.GateJets[float64] { return tower.SoftmaxJets[float64](f[0]) },
		Switches: avx,
	})
}

func TestLogisticGate(t *testing.T) {
	gatetest.Run(t, gatetest.Gate{
		Table: kernel.LogisticGate,
		F64: func(f []float64, K int) softmaxjet.Gate[float64] {
			return softmaxjet.Logistic[float64]{Alpha: f[:K], Beta: f[K:]}
		},
		F32: func(f []float64, K int) softmaxjet.Gate[float32] {
			return softmaxjet.Logistic[float32]{Alpha: f[:K], Beta: f[K:]}
		},
		Jets:     func(f []float64, K int) tower.GateJets[float64] { return tower.LogisticJets[float64](f[:K], f[K:]) },
		Switches: avx,
	})
}

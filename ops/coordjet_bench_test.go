package ops_test

import (
	"fmt"
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/gatejet/gatejet/graphs"
	"github.com/gatejet/gatejet/internal/kernel"
)

// BenchmarkCoordJetGradient times a loss on each softmax coordinate jet (coordGraph's:
// Σ W⊙f + Σ tanh f) on a TapeMachine, forward alone and forward with the gradient in every
// input, at n=512 K=8 P=16 f64: what a gradient through the composed VJPs costs next to the
// fused forward kernel.
func BenchmarkCoordJetGradient(b *testing.B) {
	for _, c := range []kernel.Channel{kernel.First, kernel.Second, kernel.HVP, kernel.GaussNewton} {
		for _, grad := range []bool{false, true} {
			name := fmt.Sprintf("%v/forward", c)
			if grad {
				name = fmt.Sprintf("%v/forward+gradient", c)
			}
			b.Run(name, func(b *testing.B) {
				cg := newCoordGraph(b, tensor.Float64, kernel.SoftmaxGate, c, [3]int{512, 8, 16}, 1)
				if grad {
					if _, err := graphs.Grad(cg.c, cg.in...); err != nil {
						b.Fatal(err)
					}
				}
				vm := G.NewTapeMachine(cg.c.Graph())
				defer vm.Close()
				for b.Loop() {
					if err := vm.RunAll(); err != nil {
						b.Fatal(err)
					}
					vm.Reset()
				}
			})
		}
	}
}

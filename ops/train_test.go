package ops

import (
	"fmt"
	"math/rand"
	"testing"

	"github.com/gatejet/gatejet/cudaops"
	"github.com/gatejet/gatejet/internal/dispatch"
	"github.com/stretchr/testify/require"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// TestTrainMixedGraph trains a small model that mixes this package's ops with Gorgonia's
// built-ins with Gorgonia's Adam solver, on both machines and dtypes, and requires the loss
// to go down:
//
//	logits = GELU(X·W1)                          [n,K]   (ops.GELU after a Gorgonia matmul)
//	D      = Reshape(D0, [n,K,P])                [n,K,P] (D0 [n,K·P], learnable)
//	first  = SoftmaxJetFirst(logits, D, s)       [n,K,P]
//	value  = SoftmaxJetValue(logits, D, s)       [n,P]
//	pred   = Σ_k (first ⊙ W2)[·,k,·] + value     [n,P]   (W2 [n,K,P]; Gorgonia's Sum over axis 1)
//	loss   = mean((pred − Y)²)
func TestTrainMixedGraph(t *testing.T) {
	const n, din, k, p = 6, 4, 3, 2
	rng := rand.New(rand.NewSource(9))
	x := randInput(rng, "X", tensor.Shape{n, din}, -1, 1)
	y := randInput(rng, "Y", tensor.Shape{n, p}, -1, 1)
	w1 := randInput(rng, "W1", tensor.Shape{din, k}, -0.5, 0.5)
	d := randInput(rng, "D0", tensor.Shape{n, k * p}, -0.5, 0.5)
	w2 := randInput(rng, "W2", tensor.Shape{n, k, p}, -0.3, 0.3)
	trajectories := map[tensor.Dtype][][]float64{}
	for _, dt := range dtypes {
		for _, m := range machines {
			t.Run(fmt.Sprintf("%v/%v", dt, m), func(t *testing.T) {
				g := G.NewGraph()
				node := func(in input) *G.Node {
					return G.NewTensor(g, dt, len(in.shape), G.WithShape(in.shape...), G.WithName(in.name),
						G.WithValue(toDense(dt, in.shape, in.vals)))
				}
				X, Y, W1, D0, W2 := node(x), node(y), node(w1), node(d), node(w2)
				D := G.Must(G.Reshape(D0, tensor.Shape{n, k, p}))
				logits, err := GELU(G.Must(G.Mul(X, W1)))
				require.NoError(t, err)
				first, err := SoftmaxJetFirst(logits, D, 1.5)
				require.NoError(t, err)
				value, err := SoftmaxJetValue(logits, D, 1.5)
				require.NoError(t, err)
				pred := G.Must(G.Add(G.Must(G.Sum(G.Must(G.HadamardProd(first, W2)), 1)), value))
				loss := G.Must(G.Mean(G.Must(G.Square(G.Must(G.Sub(pred, Y))))))

				learnables := G.Nodes{W1, D0, W2}
				// A TapeMachine is reset and re-run; a LispMachine runs once (its Reset does
				// not rewind the forward pass in Gorgonia v0.9.18), so each step gets a new one.
				newVM := func() G.VM { return G.NewLispMachine(g) }
				if m == tape {
					_, err := G.Grad(loss, learnables...)
					require.NoError(t, err)
					vm := G.NewTapeMachine(g, G.BindDualValues(learnables...))
					defer vm.Close()
					newVM = func() G.VM { vm.Reset(); return vm }
				}
				solver := G.NewAdamSolver(G.WithLearnRate(0.05))
				var losses []float64
				for step := 0; step < 40; step++ {
					vm := newVM()
					require.NoError(t, vm.RunAll())
					losses = append(losses, floats(t, loss.Value())[0])
					require.NoError(t, solver.Step(G.NodesToValueGrads(learnables)))
				}
				require.Less(t, losses[len(losses)-1], 0.5*losses[0], "loss %v", losses)
				trajectories[dt] = append(trajectories[dt], losses)
				p, ok := LastPath(first)
				require.True(t, ok)
				if dispatch.Active() == nil {
					require.Equal(t, cudaops.PathCPU, p)
				}
			})
		}
		// SymDiff (tape) and DoDiff (lisp) give the same gradients, so the same training run.
		if tr := trajectories[dt]; len(tr) == 2 {
			requireClose(t, tr[0], tr[1], 10*gradTol(dt), "%v: tape and lisp loss trajectories", dt)
		}
	}
}

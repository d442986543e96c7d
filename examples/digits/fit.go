package main

import (
	"fmt"
	"math"
	"time"

	G "gorgonia.org/gorgonia"

	"github.com/gatejet/gatejet/softmaxjet"
)

// point is one iteration of a training curve: the mean squared error per pixel of the
// training rows measured in that iteration, and the wall time since the fit began.
type point struct {
	Iter    int
	Seconds float64
	MSE     float64
}

// fitGN fits the codes c of the rows x by Levenberg–Marquardt steps (lmStep), iters of them.
// With learnB, each iteration then takes one Adam step on the decoder B along the gradient of
// the fit, which the graph computes, and the curve's error is the graph's (codes after the
// step, B before its own); without, B stays fixed and the error is the step's. tick is called
// after every iteration.
func fitGN(m *model, x []float64, c codes, B []float64, iters, bSteps int, lr float64, learnB bool, tick func()) ([]point, error) {
	w := newWork(m, c.n)
	var gr *graph
	var solver G.Solver
	if learnB {
		var err error
		if gr, err = newGraph(m, x, c, B, false, true); err != nil {
			return nil, err
		}
		defer gr.close()
		solver = G.NewAdamSolver(G.WithLearnRate(lr))
	}
	curve := make([]point, 0, iters)
	start := time.Now()
	for i := 1; i <= iters; i++ {
		sse, err := m.lmStep(w, x, c, B)
		if err != nil {
			return curve, fmt.Errorf("Gauss-Newton iteration %d: %w", i, err)
		}
		mse := sse / float64(c.n*m.P)
		if learnB {
			syncValue(gr.l, c.l)
			syncValue(gr.t, c.t)
			for j := 0; j < bSteps; j++ {
				e, err := gr.run(m.P)
				if err != nil {
					return curve, fmt.Errorf("Gauss-Newton iteration %d: decoder gradient: %w", i, err)
				}
				if j == 0 {
					mse = e
				}
				if err := solver.Step(G.NodesToValueGrads(G.Nodes{gr.B})); err != nil {
					return curve, fmt.Errorf("Gauss-Newton iteration %d: decoder step: %v", i, err)
				}
			}
			copy(B, data(gr.B))
		}
		if err := finite(mse, i); err != nil {
			return curve, err
		}
		curve = append(curve, point{Iter: i, Seconds: time.Since(start).Seconds(), MSE: mse})
		tick()
	}
	return curve, nil
}

// fitAdam fits the codes c of the rows x, and with learnB the decoder B, by Adam steps on the
// graph's loss (fit and the codes' prior), iters of them: codes at learning rate codeLR,
// B at lr, the coordinates clamped to the span after each step. The curve's error is measured
// before each step. When snapAt is in 1..iters, B after snapAt steps is copied into snap.
func fitAdam(m *model, x []float64, c codes, B []float64, iters int, codeLR, lr float64, learnB bool,
	snapAt int, snap []float64, tick func()) ([]point, error) {
	gr, err := newGraph(m, x, c, B, true, learnB)
	if err != nil {
		return nil, err
	}
	defer gr.close()
	codeSolver := G.NewAdamSolver(G.WithLearnRate(codeLR))
	bSolver := G.NewAdamSolver(G.WithLearnRate(lr))
	curve := make([]point, 0, iters)
	start := time.Now()
	for i := 1; i <= iters; i++ {
		mse, err := gr.run(m.P)
		if err != nil {
			return curve, fmt.Errorf("Adam iteration %d: %w", i, err)
		}
		if err := finite(mse, i); err != nil {
			return curve, err
		}
		if err := codeSolver.Step(G.NodesToValueGrads(G.Nodes{gr.l, gr.t})); err != nil {
			return curve, fmt.Errorf("Adam iteration %d: %v", i, err)
		}
		// The decoder is defined on the span only: a step past its end stops there.
		clampT(data(gr.t))
		copy(c.l, data(gr.l))
		copy(c.t, data(gr.t))
		if learnB {
			if err := bSolver.Step(G.NodesToValueGrads(G.Nodes{gr.B})); err != nil {
				return curve, fmt.Errorf("Adam iteration %d: %v", i, err)
			}
			copy(B, data(gr.B))
		}
		if i == snapAt {
			copy(snap, B)
		}
		curve = append(curve, point{Iter: i, Seconds: time.Since(start).Seconds(), MSE: mse})
		tick()
	}
	return curve, nil
}

// finite reports a training error that is NaN or ±Inf.
func finite(mse float64, iter int) error {
	if math.IsNaN(mse) || math.IsInf(mse, 0) {
		return fmt.Errorf("iteration %d: the reconstruction error is %v: the training diverged (try a smaller -lr or -code-lr)", iter, mse)
	}
	return nil
}

// reconstruct returns ẑ [n,P] of the codes c with decoder B, and the mean squared error
// per pixel against x.
func (m *model) reconstruct(x []float64, c codes, B []float64) ([]float64, float64, error) {
	w := newWork(m, c.n)
	m.decode(w, c.t, B, false)
	if err := m.gate.Value(w.z, c.l, w.d0, softmaxjet.Shape{N: c.n, K: m.K, P: m.P}); err != nil {
		return nil, 0, err
	}
	m.objectives(w.sse, w.obj, x, w.z, c)
	var sse float64
	for _, v := range w.sse {
		sse += v
	}
	return w.z, sse / float64(c.n*m.P), nil
}

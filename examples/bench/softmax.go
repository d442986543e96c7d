package main

import (
	"fmt"
	"math/rand/v2"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/gatejet/gatejet/ops"
)

// softmaxStepRun is one training step through a softmax along the last axis, compiled into a
// TapeMachine: the forward y = softmax(x) and the gradient dx of ⟨dy, y⟩ for a bound upstream
// gradient dy (gorgonia.Backpropagate: reverse mode from a given output gradient, what
// gorgonia.Grad does below the ops above the softmax). Nothing else is in the graph.
type softmaxStepRun struct {
	m  G.VM
	dx *G.Node
}

func newSoftmaxStep(gatejet bool, x, dy *tensor.Dense, opts ...ops.Option) (*softmaxStepRun, error) {
	g := G.NewGraph()
	shape := x.Shape()
	xn := G.NewTensor(g, x.Dtype(), len(shape), G.WithShape(shape...), G.WithName("x"), G.WithValue(x))
	dyn := G.NewTensor(g, dy.Dtype(), len(shape), G.WithShape(shape...), G.WithName("dy"), G.WithValue(dy))
	var y *G.Node
	var err error
	if gatejet {
		y, err = ops.Softmax(xn, -1, opts...)
	} else {
		y, err = G.SoftMax(xn, len(shape)-1)
	}
	if err != nil {
		return nil, err
	}
	dx, err := G.Backpropagate(G.Nodes{y}, G.Nodes{dyn}, G.Nodes{xn})
	if err != nil {
		return nil, err
	}
	return &softmaxStepRun{m: G.NewTapeMachine(g), dx: dx[0]}, nil
}

func (s *softmaxStepRun) run() error {
	err := s.m.RunAll()
	s.m.Reset()
	return err
}

// grad runs the step once more and returns dx.
func (s *softmaxStepRun) grad() ([]float64, error) {
	if err := s.m.RunAll(); err != nil {
		return nil, err
	}
	out := elements(s.dx.Value())
	s.m.Reset()
	return out, nil
}

// softmaxCase: "Softmax f64 [4096×1024] fwd+grad on a TapeMachine vs gorgonia.SoftMax": one
// step (forward and gradient) through ops.Softmax(x, -1) against the same step through
// gorgonia.SoftMax, timed in turns (the ratio under the same conditions), and the same with
// ops.ReuseOutput, which spares the step its two fresh outputs per run.
func (b *bench) softmaxCase(shape []int, target float64) error {
	n := shape[0] * shape[1]
	rng := rand.New(rand.NewPCG(5, 6))
	xv, dyv := make([]float64, n), make([]float64, n)
	for i := range xv {
		xv[i], dyv[i] = 3*rng.NormFloat64(), rng.NormFloat64()
	}
	x, dy := dense(tensor.Float64, shape, xv), dense(tensor.Float64, shape, dyv)
	ours, err := newSoftmaxStep(true, x, dy)
	if err != nil {
		return err
	}
	defer ours.m.Close()
	reused, err := newSoftmaxStep(true, x, dy, ops.ReuseOutput())
	if err != nil {
		return err
	}
	defer reused.m.Close()
	theirs, err := newSoftmaxStep(false, x, dy)
	if err != nil {
		return err
	}
	defer theirs.m.Close()
	settle()
	times, reps, err := b.tm.interleaved(ours.run, theirs.run, reused.run)
	if err != nil {
		return err
	}
	a, err := ours.grad()
	if err != nil {
		return err
	}
	want, err := theirs.grad()
	if err != nil {
		return err
	}
	base := row{Shape: fmt.Sprintf("%d×%d", shape[0], shape[1]), DType: "f64", Baseline: "gorgonia.SoftMax (Tape)",
		Other: times[1], Bytes: 5 * int64(n) * 8, Agree: maxRelDiff(a, want), Reps: reps}
	r := base
	r.Op, r.Gatejet, r.Target = "Softmax fwd+grad (op, Tape)", times[0], target
	b.add(r)
	r = base
	r.Op, r.Gatejet = "Softmax fwd+grad (ReuseOutput)", times[2]
	b.add(r)
	return nil
}

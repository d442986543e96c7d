package main

import (
	"fmt"
	"math"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/gatejet/gatejet/graphs"
	"github.com/gatejet/gatejet/internal/exampleutil"
	"github.com/gatejet/gatejet/ops"
)

// evidenceGraph is the Laplace log evidence per image of the rows x at their codes, as a
// Gorgonia graph whose hyperparameters are nodes:
//
//	s      = exp(log s)                                    the inverse temperature
//	ẑ      = ops.SoftmaxJetValue(s·ℓ, d0, 1)               d0, d1 from graphs.BSplineJets(t, B)
//	logdet = graphs.CoordGaussNewtonLogDet(ℓ, d0, d1, s, log σ, log λ)       [n]
//	log Z  = (−Σ‖ẑ − x‖²/2σ² − ½λ·Σ‖p − p₀‖² + nK·log λ − ½·Σ logdet − (nP/2)·log 2πσ²) / n
//
// log Z is differentiated in log s and log λ (gorgonia.Grad): at codes that maximise the log
// joint, its derivative in the codes is zero, so these partial derivatives are those of the
// evidence itself as the codes follow the hyperparameters (the Laplace approximation's
// curvature held to the Gauss-Newton slab). The values read out live outside the struct, as
// graph's do (see graph).
type evidenceGraph struct {
	g                *G.ExprGraph
	logS, logLambda  *G.Node
	negLogZ, occam   *G.Node
	negLogZV, occamV *G.Value
	logdetV          *G.Value
	vm               G.VM
}

func newEvidenceGraph(m *model, x []float64, c codes, B []float64) (*evidenceGraph, error) {
	n, K, L, P := c.n, m.K, m.L, m.P
	eg := &evidenceGraph{g: G.NewGraph()}
	g := eg.g
	dense := func(v []float64, shape ...int) *tensor.Dense {
		return tensor.New(tensor.WithShape(shape...), tensor.WithBacking(v))
	}
	l := G.NewMatrix(g, G.Float64, G.WithShape(n, K), G.WithName("l"), G.WithValue(dense(c.l, n, K)))
	t := G.NewMatrix(g, G.Float64, G.WithShape(n, K), G.WithName("t"), G.WithValue(dense(c.t, n, K)))
	Bn := G.NewTensor(g, G.Float64, 3, G.WithShape(K, L, P), G.WithName("B"), G.WithValue(dense(B, K, L, P)))
	xn := G.NewMatrix(g, G.Float64, G.WithShape(n, P), G.WithName("x"), G.WithValue(dense(x, n, P)))
	eg.logS = G.NewScalar(g, G.Float64, G.WithName("logS"), G.WithValue(math.Log(m.s)))
	eg.logLambda = G.NewScalar(g, G.Float64, G.WithName("logLambda"), G.WithValue(math.Log(m.lambda)))
	logSigma := G.NewScalar(g, G.Float64, G.WithName("logSigma"), G.WithValue(0.5*math.Log(m.sigma2)))

	var err error
	must := func(nd *G.Node, e error) *G.Node {
		if err == nil && e != nil {
			err = e
		}
		return nd
	}
	c0 := func(v float64) *G.Node { return G.NewConstant(v) }
	d0, d1, _, e := graphs.BSplineJets(t, Bn, m.knots)
	if e != nil {
		return nil, e
	}
	s := must(G.Exp(eg.logS))
	lambda := must(G.Exp(eg.logLambda))
	if err != nil {
		return nil, err
	}
	logdet, e := graphs.CoordGaussNewtonLogDet(l, d0, d1, s, logSigma, eg.logLambda)
	if e != nil {
		return nil, e
	}
	z := must(ops.SoftmaxJetValue(must(G.Mul(s, l)), d0, 1))
	fit := must(G.Sum(must(G.Square(must(G.Sub(z, xn))))))
	half := G.NewConstant(dense(exampleutil.Filled(n*K, m.tCentre), n, K), G.WithName("centre"))
	prior := must(G.Add(must(G.Sum(must(G.Square(l)))), must(G.Sum(must(G.Square(must(G.Sub(t, half))))))))
	sumLD := must(G.Sum(logdet))
	// −log Z·n, term by term.
	neg := must(G.Mul(fit, c0(1/(2*m.sigma2))))
	neg = must(G.Add(neg, must(G.Mul(must(G.Mul(lambda, prior)), c0(0.5)))))
	neg = must(G.Sub(neg, must(G.Mul(eg.logLambda, c0(float64(n*K))))))
	neg = must(G.Add(neg, must(G.Mul(sumLD, c0(0.5)))))
	neg = must(G.Add(neg, c0(0.5*float64(n*P)*math.Log(2*math.Pi*m.sigma2))))
	eg.negLogZ = must(G.Mul(neg, c0(1/float64(n))))
	eg.occam = must(G.Mul(sumLD, c0(0.5/float64(n))))
	if err != nil {
		return nil, err
	}
	if _, err := G.Grad(eg.negLogZ, eg.logS, eg.logLambda); err != nil {
		return nil, fmt.Errorf("differentiating the evidence: %v", err)
	}
	_, eg.negLogZV = exampleutil.Read(eg.negLogZ)
	_, eg.occamV = exampleutil.Read(eg.occam)
	_, eg.logdetV = exampleutil.Read(logdet)
	eg.vm = G.NewTapeMachine(g, G.BindDualValues(eg.logS, eg.logLambda))
	return eg, nil
}

// run evaluates the evidence and its gradient. It returns log Z and the Occam term per image
// and the gradient of log Z in log s and log λ.
func (eg *evidenceGraph) run() (logZ, occam, dLogS, dLogLambda float64, err error) {
	eg.vm.Reset()
	if err := eg.vm.RunAll(); err != nil {
		if oe := graphs.OpError(err); oe != nil {
			return 0, 0, 0, 0, oe
		}
		return 0, 0, 0, 0, err
	}
	gs, err := eg.logS.Grad()
	if err != nil {
		return 0, 0, 0, 0, err
	}
	gl, err := eg.logLambda.Grad()
	if err != nil {
		return 0, 0, 0, 0, err
	}
	return -exampleutil.Scalar(*eg.negLogZV), exampleutil.Scalar(*eg.occamV), -exampleutil.Scalar(gs), -exampleutil.Scalar(gl), nil
}

func (eg *evidenceGraph) close() { eg.vm.Close() }

// evidenceOf is the evidence per image of the rows x at codes c and its gradient in log s and
// log λ (evidenceGraph).
func evidenceOf(m *model, x []float64, c codes, B []float64) (logZ, occam, dLogS, dLogLambda float64, err error) {
	eg, err := newEvidenceGraph(m, x, c, B)
	if err != nil {
		return 0, 0, 0, 0, err
	}
	defer eg.close()
	return eg.run()
}

// tuneLM is the number of Levenberg–Marquardt steps that refit the codes after each move of
// the hyperparameters (warm-started from the previous codes).
const tuneLM = 3

// tune ascends the evidence in log s = log(1/τ) and log λ from the grid point start, with the
// decoder B fixed: each round moves the larger of the two by η along the gradient's direction
// (the other in proportion), refits the codes c of the rows x by tuneLM Gauss-Newton steps at
// the new values, and keeps the move if the evidence rose (η × 1.5) or reverts it (η ÷ 2).
func tune(K, L, P int, start GridPoint, cfg Config, x []float64, c codes, B []float64, tick func()) (GridPoint, error) {
	best := start
	c = c.clone()
	m, err := newModel(K, L, P, start.Tau, start.Lambda, cfg.Noise)
	if err != nil {
		return best, err
	}
	logZ, occam, gS, gL, err := evidenceOf(m, x, c, B)
	if err != nil {
		return best, err
	}
	best.LogEvidence, best.Occam = logZ, occam
	ls, ll := math.Log(1/start.Tau), math.Log(start.Lambda)
	eta := 0.25
	for r := 0; r < cfg.Tune; r++ {
		tick()
		size := math.Max(math.Abs(gS), math.Abs(gL))
		if !(size > 0) || math.IsInf(size, 0) {
			break
		}
		ts, tl := ls+eta*gS/size, ll+eta*gL/size
		tau, lambda := math.Exp(-ts), math.Exp(tl)
		probe := cfg
		probe.Taus, probe.Lambdas = []float64{tau}, []float64{lambda}
		if probe.validate() != nil {
			eta /= 2 // a move outside the valid range of τ or σ²λ: a shorter one
			continue
		}
		mt, err := newModel(K, L, P, tau, lambda, cfg.Noise)
		if err != nil {
			return best, err
		}
		tc := c.clone()
		curve, err := fitGN(mt, x, tc, B, tuneLM, 0, cfg.LR, false, func() {})
		if err != nil {
			return best, err
		}
		tz, to, tgS, tgL, err := evidenceOf(mt, x, tc, B)
		if err != nil {
			return best, err
		}
		if tz > logZ {
			ls, ll, c, logZ, gS, gL = ts, tl, tc, tz, tgS, tgL
			best = GridPoint{Tau: tau, Lambda: lambda, LogEvidence: tz, Occam: to, TrainMSE: curve[len(curve)-1].MSE}
			eta *= 1.5
		} else {
			eta /= 2
		}
	}
	return best, nil
}

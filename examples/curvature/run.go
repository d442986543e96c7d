package main

import (
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand"
	"path/filepath"
	"time"

	"github.com/gatejet/gatejet/cudaops"
	"github.com/gatejet/gatejet/graphs"
	"github.com/gatejet/gatejet/internal/exampleutil"
	"github.com/gatejet/gatejet/ops"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// Config is one training run. The zero value is not valid; start from defaultConfig.
type Config struct {
	N, D, K, P int     // rows, input dimension, atoms, output columns
	Batch      int     // rows per mini-batch (the graph's row count)
	Epochs     int     // most epochs
	Tau        float64 // gate temperature τ
	Lambda     float64 // prior precision λ of the gate logits
	Noise      float64 // σ, noise of the data and of the likelihood
	LearnRate  float64 // Adam's learning rate
	Settle     float64 // relative epoch-loss change below which the loss counts as settled
	Seed       int64
	Out        string // directory for loss.png and loss.csv
	GPU        string // "off", "auto" or "required" (default: the mode GATEJET_GPU set)

	Stdout io.Writer // epoch lines and the summary (nil: discarded)
	Stderr io.Writer // the progress bar, drawn when a terminal (nil: discarded)
}

func defaultConfig() Config {
	return Config{
		N: 16384, D: 6, K: 16, P: 32, Batch: 512, Epochs: 40,
		Tau: 1, Lambda: 1, Noise: 0.1, LearnRate: 0.03, Settle: 2e-3,
		Seed: 1, Out: filepath.Join("out", "curvature"),
		GPU: cudaops.CurrentMode().String(), // from GATEJET_GPU, auto when unset
	}
}

// Epoch holds one epoch's means over its mini-batches (the parameters change during the
// epoch, as in any training log).
type Epoch struct {
	Epoch      int
	Loss       float64 // fit + curvature, nats per row
	Fit        float64 // ‖y − ẑ‖²/(2σ²), nats per row
	Curvature  float64 // ½·log det(I + H/(σ²λ)), nats per row
	ReconMSE   float64 // mean squared reconstruction error per element
	RowsPerSec float64
	Seconds    float64 // wall time of the epoch
}

// Result is what run did.
type Result struct {
	Epochs   []Epoch
	Settled  bool         // training stopped because the loss settled (not at the epoch limit)
	JetPath  cudaops.Path // where the jet's value kernel last ran
	PlotPath string
	CSVPath  string
}

// op names the command in its *gatejet.Error values.
const op = "curvature"

// badFlag is an ErrParam *gatejet.Error whose argument is the flag (or flags) at fault.
func badFlag(flags, format string, args ...any) error {
	return exampleutil.BadFlag(op, flags, format, args...)
}

// minNormal is the smallest normal float64: below it a value keeps fewer than 53 bits.
const minNormal = 0x1p-1022

// validate checks every flag, and the constants the model derives from them, before
// anything is allocated or trained: each error names the flags the user set.
func (c Config) validate() error {
	for _, f := range []struct {
		name string
		v    int
		min  int
		why  string
	}{
		{"-n", c.N, 1, "rows"},
		{"-d", c.D, 1, "input dimension"},
		{"-K", c.K, 2, "atoms (a softmax gate needs at least two)"},
		{"-P", c.P, 1, "output columns"},
		{"-batch", c.Batch, 1, "rows per mini-batch"},
		{"-epochs", c.Epochs, 1, "epochs"},
	} {
		if f.v < f.min {
			return badFlag(f.name, "want %s ≥ %d (%s), got %d", f.name, f.min, f.why, f.v)
		}
	}
	// The largest buffers: the data set and, per mini-batch, the decoded atoms and the
	// Gauss-Newton slabs (the graph holds several of each).
	bsz := min(c.Batch, c.N)
	if err := exampleutil.CheckBuffers(op, 8,
		exampleutil.Buffer{Flags: "-n × -d", Dims: []int{c.N, c.D}},
		exampleutil.Buffer{Flags: "-n × -P", Dims: []int{c.N, c.P}},
		exampleutil.Buffer{Flags: "-d × -K", Dims: []int{c.D, c.K}},
		exampleutil.Buffer{Flags: "-batch × -K × -P", Dims: []int{bsz, c.K, c.P}},
		exampleutil.Buffer{Flags: "-batch × -K × -K", Dims: []int{bsz, c.K, c.K}},
	); err != nil {
		return err
	}

	finite := func(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }
	switch {
	case !(c.Tau > 0) || !finite(c.Tau):
		return badFlag("-tau", "want 0 < -tau < +Inf, got %v", c.Tau)
	case !finite(1 / c.Tau / c.Tau):
		// The gate's second derivatives, and so the Gauss-Newton slabs, scale with 1/τ².
		return badFlag("-tau", "-tau %v gives 1/τ² = %v, which overflows; want -tau ≥ %v",
			c.Tau, 1/c.Tau/c.Tau, 1/math.Sqrt(math.MaxFloat64))
	case !(c.Lambda > 0) || !finite(c.Lambda):
		return badFlag("-lambda", "want 0 < -lambda < +Inf, got %v", c.Lambda)
	case !(c.Noise > 0) || !finite(c.Noise):
		return badFlag("-noise", "want 0 < -noise < +Inf, got %v", c.Noise)
	case !(c.LearnRate > 0) || !finite(c.LearnRate):
		return badFlag("-lr", "want 0 < -lr < +Inf, got %v", c.LearnRate)
	case !(c.Settle >= 0) || !finite(c.Settle):
		return badFlag("-settle", "want 0 ≤ -settle < +Inf, got %v", c.Settle)
	case c.Out == "":
		return badFlag("-out", "want an -out directory")
	}
	// The derived constants: σ² (noise floor), σ²λ (the log-det's ridge, whose log is
	// subtracted K times) and P/(2σ²) (the fit's scale) must be normal and finite, or the
	// loss silently loses its terms.
	s2 := c.Noise * c.Noise
	ridge := s2 * c.Lambda
	scale := float64(c.P) / (2 * s2)
	switch {
	case !(s2 >= minNormal) || !finite(2*s2):
		return badFlag("-noise", "-noise %v gives σ² = %v, which %s; want %v ≤ -noise ≤ %v",
			c.Noise, s2, flow(s2), math.Sqrt(minNormal), math.Sqrt(math.MaxFloat64/2))
	case !(ridge >= minNormal) || !finite(ridge):
		return badFlag("-noise, -lambda", "-noise %v with -lambda %v gives σ²λ = %v, which %s; "+
			"want %v ≤ σ²λ ≤ %v (raise or lower -lambda or -noise)", c.Noise, c.Lambda, ridge, flow(ridge), minNormal, math.MaxFloat64)
	case !finite(scale):
		return badFlag("-noise, -P", "-noise %v with -P %d gives P/(2σ²) = %v, which overflows; raise -noise",
			c.Noise, c.P, scale)
	}
	return nil
}

// flow says which way a derived constant left the normal float64 range.
func flow(v float64) string {
	if math.IsInf(v, 0) || v > 1 {
		return "overflows"
	}
	return "underflows"
}

// setGPU applies the -gpu flag and returns a function that restores the previous mode.
func setGPU(s string) (restore func(), err error) {
	mode, err := cudaops.ParseMode(s)
	if err != nil {
		return nil, badFlag("-gpu", "want off, auto or required, got %q", s)
	}
	if mode == cudaops.ModeRequired {
		if err := cudaops.Unavailable(); err != nil {
			return nil, fmt.Errorf("GPU mode required (-gpu or GATEJET_GPU): %w "+
				"(build with -tags gatejetcuda and run on a machine with a GPU, see docs/gpu.md; or use -gpu auto)", err)
		}
	}
	prev := cudaops.SetMode(mode)
	return func() { cudaops.SetMode(prev) }, nil
}

// run generates the data, trains the model, prints the log and writes the plot and CSV.
func run(cfg Config) (Result, error) {
	var res Result
	if err := cfg.validate(); err != nil {
		return res, err
	}
	cfg.Stdout = exampleutil.OrDiscard(cfg.Stdout)
	cfg.Stderr = exampleutil.OrDiscard(cfg.Stderr)
	if err := cudaops.EnvError(); err != nil {
		fmt.Fprintf(cfg.Stderr, "warning: %v\n", err)
	}
	restore, err := setGPU(cfg.GPU)
	if err != nil {
		return res, err
	}
	defer restore()
	// The output directory is checked now, not after training: a run of minutes must not
	// end in "permission denied".
	res.PlotPath = filepath.Join(cfg.Out, "loss.png")
	res.CSVPath = filepath.Join(cfg.Out, "loss.csv")
	if err := exampleutil.CheckOut(op, "-out", cfg.Out, res.PlotPath, res.CSVPath); err != nil {
		return res, err
	}
	if cfg.Batch > cfg.N {
		cfg.Batch = cfg.N
	}

	rng := rand.New(rand.NewSource(cfg.Seed))
	data := generate(rng, cfg)
	m, err := newModel(rng, cfg)
	if err != nil {
		return res, err
	}
	defer m.vm.Close()

	batches := cfg.N / cfg.Batch // a last partial batch is left out of the epoch
	rows := batches * cfg.Batch
	fmt.Fprintf(cfg.Stdout, "curvature: n=%d (%d batches of %d) d=%d K=%d P=%d τ=%g λ=%g σ=%g, GPU mode %v\n",
		cfg.N, batches, cfg.Batch, cfg.D, cfg.K, cfg.P, cfg.Tau, cfg.Lambda, cfg.Noise, cudaops.CurrentMode())
	fmt.Fprintf(cfg.Stdout, "loss = fit + curvature in nats per row; the reconstruction MSE's noise floor is σ² = %.4g\n",
		cfg.Noise*cfg.Noise)
	solver := G.NewAdamSolver(G.WithLearnRate(cfg.LearnRate))
	bar := newProgress(cfg.Stderr)
	order := rng.Perm(cfg.N)
	calm := 0
	for e := 1; e <= cfg.Epochs; e++ {
		rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
		start := time.Now()
		var ep Epoch
		for b := 0; b < batches; b++ {
			bar.show(e, cfg.Epochs, b, batches)
			m.load(data, order[b*cfg.Batch:(b+1)*cfg.Batch])
			m.vm.Reset()
			if err := m.vm.RunAll(); err != nil {
				bar.Clear()
				if oe := graphs.OpError(err); oe != nil {
					if errors.Is(oe, graphs.ErrNotSPD) {
						// The ridge is below the rounding of the singular slabs.
						return res, fmt.Errorf("epoch %d: -noise %v with -lambda %v gives the ridge σ²λ = %g, "+
							"too small against the rounding of the Gauss-Newton slabs H; raise -lambda or -noise: %w",
							e, cfg.Noise, cfg.Lambda, cfg.Noise*cfg.Noise*cfg.Lambda, oe)
					}
					return res, fmt.Errorf("epoch %d: %w", e, oe)
				}
				return res, fmt.Errorf("epoch %d: %v", e, err)
			}
			if err := nonFinite(e, b, m, cfg); err != nil {
				bar.Clear()
				return res, err
			}
			ep.Loss += exampleutil.Scalar(*m.lossV)
			ep.Fit += exampleutil.Scalar(*m.fitV)
			ep.Curvature += exampleutil.Scalar(*m.curvV)
			ep.ReconMSE += exampleutil.Scalar(*m.mseV)
			if err := solver.Step(G.NodesToValueGrads(m.learnables)); err != nil {
				bar.Clear()
				return res, fmt.Errorf("epoch %d: solver: %v", e, err)
			}
		}
		bar.Clear()
		ep.Seconds = time.Since(start).Seconds()
		ep.Epoch = e
		ep.Loss /= float64(batches)
		ep.Fit /= float64(batches)
		ep.Curvature /= float64(batches)
		ep.ReconMSE /= float64(batches)
		ep.RowsPerSec = float64(rows) / ep.Seconds
		fmt.Fprintf(cfg.Stdout, "epoch %3d  loss %s  curvature %s  recon MSE %s  %8.0f rows/s\n",
			e, fixed(ep.Loss, 9, 4), fixed(ep.Curvature, 8, 4), fixed(ep.ReconMSE, 0, 5), ep.RowsPerSec)
		if n := len(res.Epochs); n > 0 {
			prev := res.Epochs[n-1].Loss
			if math.Abs(ep.Loss-prev) <= cfg.Settle*math.Max(math.Abs(prev), 1e-12) {
				calm++
			} else {
				calm = 0
			}
		}
		res.Epochs = append(res.Epochs, ep)
		if cfg.Settle > 0 && calm >= 3 {
			res.Settled = true
			break
		}
	}
	if p, ok := ops.LastPath(m.value); ok {
		res.JetPath = p
	}
	if res.Settled {
		fmt.Fprintf(cfg.Stdout, "the loss settled after %d epochs", len(res.Epochs))
	} else {
		fmt.Fprintf(cfg.Stdout, "stopped at the epoch limit (%d)", cfg.Epochs)
	}
	fmt.Fprintf(cfg.Stdout, "; the jet kernels last ran on: %v\n", res.JetPath)

	if err := writeCSV(res.CSVPath, res.Epochs); err != nil {
		return res, err
	}
	notes, err := writePlot(res.PlotPath, res.Epochs, cfg)
	for _, n := range notes {
		fmt.Fprintf(cfg.Stderr, "note: %s: %s\n", res.PlotPath, n)
	}
	if err != nil {
		return res, fmt.Errorf("writing %s: %w", res.PlotPath, err)
	}
	fmt.Fprintf(cfg.Stdout, "wrote %s and %s\n", res.PlotPath, res.CSVPath)
	return res, nil
}

// fixed formats v with %*.*f, or with %*.*e once it is too large for fixed notation to
// stay readable (σ = 1e150 makes the MSE a number of 300 digits).
func fixed(v float64, width, prec int) string {
	if math.Abs(v) < 1e9 {
		return fmt.Sprintf("%*.*f", width, prec, v)
	}
	return fmt.Sprintf("%*.*e", width, prec, v)
}

// nonFinite reports a mini-batch whose loss is NaN or ±Inf, naming the term that is and
// the flags behind it: in the first batch the parameters are the initial ones, so the
// flags' scales are at fault; later, the training diverged.
func nonFinite(epoch, batch int, m *model, cfg Config) error {
	bad := func(v float64) bool { return math.IsNaN(v) || math.IsInf(v, 0) }
	loss, fit, curv, mse := exampleutil.Scalar(*m.lossV), exampleutil.Scalar(*m.fitV), exampleutil.Scalar(*m.curvV), exampleutil.Scalar(*m.mseV)
	if !bad(loss) {
		return nil
	}
	var why string
	switch {
	case epoch > 1 || batch > 0:
		why = fmt.Sprintf("it was finite before, so the training diverged: try a smaller -lr than %v", cfg.LearnRate)
	case bad(curv):
		why = fmt.Sprintf("the curvature term is %v: -tau %v, -noise %v and -lambda %v set its scale (1/τ)²/(σ²λ) = %g",
			curv, cfg.Tau, cfg.Noise, cfg.Lambda, 1/(cfg.Tau*cfg.Tau*cfg.Noise*cfg.Noise*cfg.Lambda))
	default:
		why = fmt.Sprintf("the fit term is %v (recon MSE %v): -noise %v sets its scale P/(2σ²) = %g",
			fit, mse, cfg.Noise, float64(cfg.P)/(2*cfg.Noise*cfg.Noise))
	}
	return fmt.Errorf("epoch %d, batch %d: the loss is %v; %s", epoch, batch+1, loss, why)
}

// dataset is the generated training set, row-major.
type dataset struct {
	x []float64 // [N,D]
	y []float64 // [N,P]
}

// generate draws inputs and targets from a softmax-gated model of the same form as the
// one trained, with its own parameters, plus Gaussian noise of standard deviation σ.
func generate(rng *rand.Rand, cfg Config) dataset {
	n, d, k, p := cfg.N, cfg.D, cfg.K, cfg.P
	w := exampleutil.Normals(rng, d*k, 2/math.Sqrt(float64(d)))
	b := exampleutil.Normals(rng, k, 0.5)
	atoms := exampleutil.Normals(rng, k*p, 1)
	ds := dataset{x: exampleutil.Normals(rng, n*d, 1), y: make([]float64, n*p)}
	gate := make([]float64, k)
	for r := 0; r < n; r++ {
		x := ds.x[r*d : (r+1)*d]
		mx := math.Inf(-1)
		for a := range gate {
			l := b[a]
			for i, xi := range x {
				l += xi * w[i*k+a]
			}
			gate[a] = l / cfg.Tau
			mx = math.Max(mx, gate[a])
		}
		var sum float64
		for a := range gate {
			gate[a] = math.Exp(gate[a] - mx)
			sum += gate[a]
		}
		y := ds.y[r*p : (r+1)*p]
		for c := range y {
			v := cfg.Noise * rng.NormFloat64()
			for a, g := range gate {
				v += g / sum * atoms[a*p+c]
			}
			y[c] = v
		}
	}
	return ds
}

// model is the training graph and its machine.
type model struct {
	cfg                      Config
	g                        *G.ExprGraph
	x, y                     *G.Node // inputs [B,D], targets [B,P]
	xBuf, yBuf               []float64
	xT, yT                   *tensor.Dense
	w, b, atoms              *G.Node // learned: W [D,K], b [1,K], atoms [1,K·P]
	learnables               G.Nodes
	value                    *G.Node  // ẑ [B,P]
	loss, fit, curv, mse     *G.Node  // scalars
	lossV, fitV, curvV, mseV *G.Value // their values, copied out by exampleutil.Read
	vm                       G.VM
}

// newModel builds the graph
//
//	logits  = X·W + b                                  [B,K]  Gorgonia Mul, BroadcastAdd
//	decoded = reshape(1_B · atoms, [B,K,P])            [B,K,P] every row sees the same atoms
//	ẑ       = ops.SoftmaxJetValue(logits, decoded, 1/τ) [B,P]
//	mse     = mean((ẑ − Y)²),  fit = mse·P/(2σ²)
//	curv    = ½·mean(graphs.GaussNewtonLogDet(logits, decoded, 1/τ, σ²λ)) − ½K·log(σ²λ)
//	loss    = fit + curv
//
// differentiates it with gorgonia.Grad and compiles it into a TapeMachine.
func newModel(rng *rand.Rand, cfg Config) (*model, error) {
	bsz, d, k, p := cfg.Batch, cfg.D, cfg.K, cfg.P
	m := &model{cfg: cfg, g: G.NewGraph()}
	g := m.g
	dense := func(v []float64, shape ...int) *tensor.Dense {
		return tensor.New(tensor.WithShape(shape...), tensor.WithBacking(v))
	}
	m.xBuf, m.yBuf = make([]float64, bsz*d), make([]float64, bsz*p)
	m.xT, m.yT = dense(m.xBuf, bsz, d), dense(m.yBuf, bsz, p)
	m.x = G.NewMatrix(g, G.Float64, G.WithShape(bsz, d), G.WithName("X"), G.WithValue(m.xT))
	m.y = G.NewMatrix(g, G.Float64, G.WithShape(bsz, p), G.WithName("Y"), G.WithValue(m.yT))
	m.w = G.NewMatrix(g, G.Float64, G.WithShape(d, k), G.WithName("W"),
		G.WithValue(dense(exampleutil.Normals(rng, d*k, 0.1/math.Sqrt(float64(d))), d, k)))
	m.b = G.NewMatrix(g, G.Float64, G.WithShape(1, k), G.WithName("b"),
		G.WithValue(dense(make([]float64, k), 1, k)))
	m.atoms = G.NewMatrix(g, G.Float64, G.WithShape(1, k*p), G.WithName("atoms"),
		G.WithValue(dense(exampleutil.Normals(rng, k*p, 0.5), 1, k*p)))
	m.learnables = G.Nodes{m.w, m.b, m.atoms}
	ones := G.NewConstant(tensor.New(tensor.WithShape(bsz, 1), tensor.WithBacking(exampleutil.Filled(bsz, 1))), G.WithName("ones"))
	invTau, ridge := 1/cfg.Tau, cfg.Noise*cfg.Noise*cfg.Lambda

	var err error
	must := func(n *G.Node, e error) *G.Node {
		if err == nil && e != nil {
			err = e
		}
		return n
	}
	c := func(v float64) *G.Node { return G.NewConstant(v) }
	logits := must(G.BroadcastAdd(must(G.Mul(m.x, m.w)), m.b, nil, []byte{0}))
	if err != nil {
		return nil, err
	}
	decoded := must(G.Reshape(must(G.Mul(ones, m.atoms)), tensor.Shape{bsz, k, p}))
	if err != nil {
		return nil, err
	}
	m.value = must(ops.SoftmaxJetValue(logits, decoded, invTau))
	if err != nil {
		return nil, err
	}
	m.mse = must(G.Mean(must(G.Square(must(G.Sub(m.value, m.y))))))
	m.fit = must(G.Mul(m.mse, c(float64(p)/(2*cfg.Noise*cfg.Noise))))
	// ReuseOutput: the slabs and their gradient are intermediates, written into the same
	// buffers every step instead of a fresh [B,K,K] tensor each (see ops.ReuseOutput).
	logdet := must(graphs.GaussNewtonLogDet(logits, decoded, invTau, ridge, ops.ReuseOutput()))
	if err != nil {
		return nil, err
	}
	m.curv = must(G.Sub(must(G.Mul(must(G.Mean(logdet)), c(0.5))), c(0.5*float64(k)*math.Log(ridge))))
	m.loss = must(G.Add(m.fit, m.curv))
	if err != nil {
		return nil, err
	}
	if _, err := G.Grad(m.loss, m.learnables...); err != nil {
		return nil, fmt.Errorf("differentiating the loss: %v", err)
	}
	// A TapeMachine reuses the register of a node once nothing needs it any more, so the
	// intermediate scalars are copied out with Read nodes as the tape runs.
	_, m.lossV = exampleutil.Read(m.loss)
	_, m.fitV = exampleutil.Read(m.fit)
	_, m.curvV = exampleutil.Read(m.curv)
	_, m.mseV = exampleutil.Read(m.mse)
	m.vm = G.NewTapeMachine(g, G.BindDualValues(m.learnables...))
	return m, nil
}

// load copies the rows idx of the data set into the graph's input tensors.
func (m *model) load(ds dataset, idx []int) {
	d, p := m.cfg.D, m.cfg.P
	for i, r := range idx {
		copy(m.xBuf[i*d:(i+1)*d], ds.x[r*d:(r+1)*d])
		copy(m.yBuf[i*p:(i+1)*p], ds.y[r*p:(r+1)*p])
	}
	// The tensors are already bound; Let again in case a machine replaced the values.
	_ = G.Let(m.x, m.xT)
	_ = G.Let(m.y, m.yT)
}

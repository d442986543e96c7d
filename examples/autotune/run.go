package main

import (
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"time"

	"github.com/gatejet/gatejet"
	"github.com/gatejet/gatejet/graphs"
	"github.com/gatejet/gatejet/internal/exampleutil"
	"github.com/gatejet/gatejet/ops"
	"github.com/gatejet/gatejet/softmaxjet"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// Config is one autotuning run.
type Config struct {
	Tau        float64 // temperature of the soft pick, in units of the best cost
	Rows, K, P int     // the timed batch
	Reps       int     // timing rounds; each times every candidate once (see measure)
	TieFloor   float64 // the least relative gap from the fastest that is not a tie (see choose)
	Steps      int     // policy-descent steps
	Damping    float64 // λ of graphs.NaturalGradient (see defaultConfig)
	Candidates []int   // rows per call; nil: 8, 32, 128, 512 and all rows
	Out        io.Writer
	// Measure, when set, replaces the timer: it returns one measured cost of candidate i
	// (tests). It is called Reps times per candidate, in the interleaved order of measure.
	Measure func(i, rowsPerCall int) (float64, error)
}

func defaultConfig() Config {
	// Damping: with λ = 0 the natural gradient is the pseudo-inverse of the Fisher diag(p) − ppᵀ,
	// whose conditioning is 1/min p; at τ = 0.05 some p_i reach 1e-30, and the rounding of
	// Σp − 1 divided by them wrecks the step. A tiny λ turns that rounding into an almost
	// uniform shift of the logits, which the softmax ignores (TestRunWideCostSpread).
	//
	// Reps: one pass over 1024 rows takes about 0.2 ms, so 61 rounds of 5 candidates cost
	// about 0.1 s, and the median of 61 samples shrugs off the ones a busy machine spoils
	// (a helper goroutine waiting for a core can make a pass ten times slower).
	// TieFloor: gaps of a few per cent come and go from run to run on a shared machine and
	// are not worth a different chunking anyway.
	return Config{Tau: 0.05, Rows: 1024, K: 8, P: 8, Reps: 61, TieFloor: 0.05, Steps: 10, Damping: 1e-12}
}

// Result holds every number run printed.
type Result struct {
	Candidates []int     // rows per call
	NsPerRow   []float64 // median measured ns per row (nil when Config.Measure was used)
	Spreads    []Spread  // of each candidate's Reps measurements (ns per row, or Measure's unit)
	Costs      []float64 // c_i: the medians relative to the fastest median
	Probs      []float64 // p = softmax(−c/τ)
	Expected   float64   // E = Σ p_i c_i
	GradCosts  []float64 // ∂E/∂c from gorgonia.Grad through graphs.SoftArgmin
	GradSB     []float64 // the same from the explicit ops.SoftmaxBackward node
	Best       int       // graphs.Argmin(costs): the fastest median
	Choice               // the robust pick among the candidates tied with Best (see choose)
	GradLogits []float64 // g = ∂E/∂θ = (diag p − ppᵀ)c, θ = −c/τ
	Natural    []float64 // F⁺g (or (F + λI)⁻¹g)
	NaturalP   []float64 // policy after Steps natural-gradient steps from uniform
	PlainP     []float64 // policy after Steps plain-gradient steps from uniform
	Elapsed    time.Duration
}

// op names the command in its *gatejet.Error values.
const op = "autotune"

// validate checks every flag, and the buffers the timer allocates, before anything is
// allocated or timed: each error is a *gatejet.Error naming the flags at fault (ErrSize for
// a batch too large for gatejet.MaxBytes, ErrParam otherwise).
func (c Config) validate() error {
	finite := func(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }
	for _, f := range []struct {
		name    string
		v, most int
	}{
		{"-rows", c.Rows, math.MaxInt}, {"-K", c.K, math.MaxInt}, {"-P", c.P, math.MaxInt},
		{"-reps", c.Reps, maxReps}, {"-steps", c.Steps, maxSteps},
	} {
		if f.v < 1 || f.v > f.most {
			if f.most == math.MaxInt {
				return exampleutil.BadFlag(op, f.name, "want %s ≥ 1, got %d", f.name, f.v)
			}
			return exampleutil.BadFlag(op, f.name, "want 1 ≤ %s ≤ %d, got %d", f.name, f.most, f.v)
		}
	}
	switch {
	case !(c.Tau > 0) || !finite(c.Tau):
		return exampleutil.BadFlag(op, "-tau", "want 0 < -tau < +Inf, got %v", c.Tau)
	case !(1/c.Tau <= gatejet.MaxInvTau):
		return exampleutil.BadFlag(op, "-tau", "-tau %v gives 1/τ = %v, above gatejet.MaxInvTau; want -tau ≥ %v",
			c.Tau, 1/c.Tau, 1/gatejet.MaxInvTau)
	case !(c.TieFloor >= 0) || !finite(c.TieFloor):
		return exampleutil.BadFlag(op, "-tie", "want 0 ≤ -tie < +Inf, got %v", c.TieFloor)
	case !(c.Damping >= 0) || !finite(c.Damping):
		return exampleutil.BadFlag(op, "-damping", "want 0 ≤ -damping < +Inf, got %v", c.Damping)
	}
	for _, r := range c.Candidates {
		if r < 1 {
			return exampleutil.BadFlag(op, "candidates", "want candidates of ≥ 1 rows per call, got %v", c.Candidates)
		}
	}
	if c.Measure != nil {
		return nil // nothing is allocated for timing
	}
	// The timer's buffers (newTimer): logits, decoded and the second channel of the batch.
	return exampleutil.CheckBuffers(op, 8,
		exampleutil.Buffer{Flags: "-rows × -K", Dims: []int{c.Rows, c.K}},
		exampleutil.Buffer{Flags: "-rows × -K × -P", Dims: []int{c.Rows, c.K, c.P}},
		exampleutil.Buffer{Flags: "-rows × -K × -K × -P", Dims: []int{c.Rows, c.K, c.K, c.P}})
}

// maxReps bounds the rounds: the samples are kept, and a million rounds would take minutes.
// maxSteps bounds the policy descent, a few microseconds a step.
const (
	maxReps  = 100_000
	maxSteps = 1_000_000
)

func run(cfg Config) (Result, error) {
	var res Result
	if err := cfg.validate(); err != nil {
		return res, err
	}
	cfg.Out = exampleutil.OrDiscard(cfg.Out)
	start := time.Now()
	res.Candidates = cfg.Candidates
	if res.Candidates == nil {
		for _, r := range []int{8, 32, 128, 512} {
			if r < cfg.Rows {
				res.Candidates = append(res.Candidates, r)
			}
		}
		res.Candidates = append(res.Candidates, cfg.Rows)
	}

	// 1. Measured costs: every candidate Reps times, interleaved; the medians count.
	measureOne := cfg.Measure
	if measureOne == nil {
		t, err := newTimer(cfg, res.Candidates)
		if err != nil {
			return res, err
		}
		measureOne = func(_, rows int) (float64, error) { return t.nsPerRow(rows) }
	}
	samples, err := measure(len(res.Candidates), cfg.Reps, func(i int) (float64, error) {
		v, err := measureOne(i, res.Candidates[i])
		if err == nil && (!(v > 0) || math.IsInf(v, 1)) {
			// One bad sample would hide in a median: refuse it.
			err = fmt.Errorf("candidate %d (%d rows per call) measured %v: costs must be positive and finite", i, res.Candidates[i], v)
		}
		return v, err
	})
	if err != nil {
		return res, err
	}
	res.Spreads = make([]Spread, len(samples))
	raw := make([]float64, len(samples))
	for i, xs := range samples {
		res.Spreads[i] = spreadOf(xs)
		raw[i] = res.Spreads[i].Median
	}
	if cfg.Measure == nil {
		res.NsPerRow = raw
	}
	best := math.Inf(1)
	for _, v := range raw {
		if !(v > 0) || math.IsInf(v, 1) {
			return res, fmt.Errorf("costs must be positive and finite, got %v", raw)
		}
		best = math.Min(best, v)
	}
	res.Costs = make([]float64, len(raw))
	for i, v := range raw {
		res.Costs[i] = v / best
	}
	invTau := 1 / cfg.Tau

	// 2. The soft pick and its gradient, in a Gorgonia graph.
	if err := softPick(&res, invTau); err != nil {
		return res, err
	}

	// 3. The hard pick, and the robust one.
	res.Best = graphs.Argmin(res.Costs)
	res.Choice = choose(res.Candidates, res.Spreads, res.Best, cfg.Reps, cfg.TieFloor)

	// 4. Plain and natural gradients in the policy logits θ = −c/τ: ∂E/∂θ = −τ·∂E/∂c.
	res.GradLogits = make([]float64, len(res.Costs))
	for i, g := range res.GradCosts {
		res.GradLogits[i] = -cfg.Tau * g
	}
	if res.Natural, err = graphs.NaturalGradient(res.Probs, res.GradLogits, cfg.Damping); err != nil {
		return res, err
	}

	// 5. Policy descent from the uniform policy, T steps of size η = 1/(τT).
	res.NaturalP, res.PlainP, err = descend(res.Costs, cfg.Steps, invTau/float64(cfg.Steps), cfg.Damping)
	if err != nil {
		return res, err
	}
	res.Elapsed = time.Since(start)
	report(cfg, &res)
	return res, nil
}

// softPick builds p = SoftArgmin(c, 1/τ), E = Σ p⊙c̄ (c̄ a constant copy of the costs),
// the gradient ∂E/∂c with gorgonia.Grad, and the explicit −(1/τ)·SoftmaxBackward(p, c̄),
// and runs them on a TapeMachine.
func softPick(res *Result, invTau float64) error {
	m := len(res.Costs)
	g := G.NewGraph()
	vec := func() *tensor.Dense {
		return tensor.New(tensor.WithShape(m), tensor.WithBacking(append([]float64(nil), res.Costs...)))
	}
	c := G.NewVector(g, G.Float64, G.WithShape(m), G.WithName("costs"), G.WithValue(vec()))
	cbar := G.NewConstant(vec(), G.WithName("measured"))
	p, err := graphs.SoftArgmin(c, invTau)
	if err != nil {
		return err
	}
	weighted, err := G.HadamardProd(p, cbar)
	if err != nil {
		return err
	}
	expected, err := G.Sum(weighted)
	if err != nil {
		return err
	}
	sb, err := ops.SoftmaxBackward(p, cbar, 0)
	if err != nil {
		return err
	}
	explicit, err := G.Mul(sb, G.NewConstant(-invTau))
	if err != nil {
		return err
	}
	if _, err := G.Grad(expected, c); err != nil {
		return fmt.Errorf("differentiating E: %v", err)
	}
	// Read copies the values out as the tape runs (a TapeMachine reuses dead registers).
	var pV, expectedV, explicitV G.Value
	G.Read(p, &pV)
	G.Read(expected, &expectedV)
	G.Read(explicit, &explicitV)
	vm := G.NewTapeMachine(g, G.BindDualValues(c))
	defer vm.Close()
	if err := vm.RunAll(); err != nil {
		if oe := graphs.OpError(err); oe != nil {
			return oe
		}
		return err
	}
	grad, err := c.Grad()
	if err != nil {
		return err
	}
	res.Probs = floats(pV)
	res.Expected = floats(expectedV)[0]
	res.GradCosts = floats(grad)
	res.GradSB = floats(explicitV)
	return nil
}

// descend runs steps of θ ← θ − η·F⁺g (natural) and θ ← θ − η·g (plain) from θ = 0, with
// g = (diag p − ppᵀ)·c the gradient of E = Σ softmax(θ)_i c_i, and returns both policies.
func descend(costs []float64, steps int, eta, damping float64) (natural, plain []float64, err error) {
	m := len(costs)
	thN, thP := make([]float64, m), make([]float64, m)
	policy := func(th []float64) []float64 {
		neg := make([]float64, m)
		for i, t := range th {
			neg[i] = -t
		}
		p, e := graphs.SoftArgminProbs(neg, 1) // softmax(θ)
		if err == nil {
			err = e
		}
		return p
	}
	grad := func(p []float64) []float64 {
		var e float64
		for i := range p {
			e += p[i] * costs[i]
		}
		g := make([]float64, m)
		for i := range p {
			g[i] = p[i] * (costs[i] - e)
		}
		return g
	}
	for s := 0; s < steps; s++ {
		p := policy(thN)
		nat, e := graphs.NaturalGradient(p, grad(p), damping)
		if e != nil {
			return nil, nil, e
		}
		g := grad(policy(thP))
		if err != nil {
			return nil, nil, err
		}
		for i := range thN {
			thN[i] -= eta * nat[i]
			thP[i] -= eta * g[i]
		}
	}
	natural, plain = policy(thN), policy(thP)
	return natural, plain, err
}

func report(cfg Config, res *Result) {
	w := cfg.Out
	unit := "cost"
	if res.NsPerRow != nil {
		unit = "ns/row"
		fmt.Fprintf(w, "autotune: rows per softmaxjet.Softmax.Second call for a batch of %d rows (K=%d, P=%d)\n", cfg.Rows, cfg.K, cfg.P)
	} else {
		fmt.Fprintf(w, "autotune: %d candidates with given costs\n", len(res.Costs))
	}
	fmt.Fprintf(w, "%d rounds, each measuring every candidate once, in turn, starting one further on each round, so that a slow spell hits all alike\n\n", cfg.Reps)
	fmt.Fprintf(w, "%9s %12s %21s %21s %9s\n", "rows/call", "median "+unit, "IQR (q1–q3)", "min–max", "vs best")
	for i, r := range res.Candidates {
		s := res.Spreads[i]
		mark := " "
		if i == res.Pick {
			mark = "<"
		}
		tie := ""
		if res.Tied[i] {
			tie = "tie"
		}
		fmt.Fprintf(w, "%8d%s %12.1f %10.1f–%-10.1f %10.1f–%-10.1f %+8.1f%% %s\n", r, mark, s.Median, s.Q1, s.Q3, s.Min, s.Max,
			100*(res.Costs[i]-1), tie)
	}
	fmt.Fprintf(w, "\ntie band %.1f%%: a candidate ties with the fastest median (%d rows per call) when its median is above it by\n"+
		"at most the fastest median's noise (its notch, 1.58·IQR/√n, about a 95%% confidence interval) and at least %g%%;\n"+
		"a noisier candidate does not widen the band. Ties go to the larger rows per call, so that the pick does not flip\n"+
		"between candidates the measurements cannot tell apart.\n",
		100*res.Band, res.Candidates[res.Best], 100*cfg.TieFloor)
	fmt.Fprintf(w, "pick: %d rows per call (<)\n\n", res.Candidates[res.Pick])
	fmt.Fprintf(w, "soft pick p = softmax(−c/τ) at τ = %g over the median costs c; E = Σ p·c; θ = −c/τ are the policy's logits\n\n", cfg.Tau)
	fmt.Fprintf(w, "%9s %9s %8s %8s %12s %12s %12s\n", "rows/call", "ns/row", "cost c", "p", "∂E/∂c", "∂E/∂θ", "natural")
	for i, r := range res.Candidates {
		ns := "-"
		if res.NsPerRow != nil {
			ns = fmt.Sprintf("%.1f", res.NsPerRow[i])
		}
		mark := " "
		if i == res.Best {
			mark = "*"
		}
		fmt.Fprintf(w, "%8d%s %9s %8.4f %8.4f %12.5f %12.5f %12.5f\n", r, mark, ns, res.Costs[i], res.Probs[i],
			res.GradCosts[i], res.GradLogits[i], res.Natural[i])
	}
	var diff float64
	for i := range res.GradCosts {
		diff = math.Max(diff, math.Abs(res.GradCosts[i]-res.GradSB[i]))
	}
	fmt.Fprintf(w, "\nhard pick (graphs.Argmin): %d rows per call (*), the fastest median; the soft pick gives it p = %.4f; E = %.4f\n",
		res.Candidates[res.Best], res.Probs[res.Best], res.Expected)
	fmt.Fprintf(w, "∂E/∂c by gorgonia.Grad through SoftArgmin and by the explicit −(1/τ)·SoftmaxBackward node: max difference %.2g\n", diff)
	var gap float64
	soft := res.Probs
	for i := range soft {
		gap = math.Max(gap, math.Abs(res.NaturalP[i]-soft[i]))
	}
	fmt.Fprintf(w, "%d policy steps from uniform, η = 1/(τT): natural gradient p[best] = %.4f (max |p − soft pick| = %.2g), plain gradient p[best] = %.4f\n",
		cfg.Steps, res.NaturalP[res.Best], gap, res.PlainP[res.Best])
	if res.NsPerRow != nil {
		fmt.Fprintf(w, "measured and computed in %v\n", res.Elapsed.Round(time.Millisecond))
	}
	fmt.Fprintf(w, "pick: %d rows per call\n", res.Candidates[res.Pick])
}

// timer times softmaxjet.Softmax.Second over one batch in chunks.
type timer struct {
	sh              softmaxjet.Shape
	logits, decoded []float64
	dst             []float64
	invTau          float64
}

func newTimer(cfg Config, candidates []int) (*timer, error) {
	rng := rand.New(rand.NewPCG(4, 4))
	sh := softmaxjet.Shape{N: cfg.Rows, K: cfg.K, P: cfg.P}
	if err := sh.Check("autotune"); err != nil {
		return nil, err
	}
	logits := exampleutil.Normals(rng, sh.LogitsLen(), 1)
	decoded := exampleutil.Normals(rng, sh.DecodedLen(), 1)
	t := &timer{sh: sh, invTau: 1, dst: make([]float64, sh.SecondLen()), logits: logits, decoded: decoded}
	// Untimed passes, one per candidate, warm the caches and the kernels' workspace pools
	// for every chunk size.
	for _, r := range candidates {
		if _, err := t.pass(r); err != nil {
			return nil, err
		}
	}
	return t, nil
}

// pass computes the second channel of every row, rows at a time, and returns its time.
func (t *timer) pass(rows int) (time.Duration, error) {
	k, p := t.sh.K, t.sh.P
	start := time.Now()
	for lo := 0; lo < t.sh.N; lo += rows {
		hi := min(lo+rows, t.sh.N)
		sh := softmaxjet.Shape{N: hi - lo, K: k, P: p}
		err := softmaxjet.Softmax[float64]{InvTau: t.invTau}.Second(t.dst[lo*k*k*p:hi*k*k*p], t.logits[lo*k:hi*k], t.decoded[lo*k*p:hi*k*p], sh)
		if err != nil {
			return 0, err
		}
	}
	return time.Since(start), nil
}

// nsPerRow times one pass, in nanoseconds per row.
func (t *timer) nsPerRow(rows int) (float64, error) {
	d, err := t.pass(rows)
	if err != nil {
		return 0, err
	}
	return math.Max(float64(d.Nanoseconds()), 1) / float64(t.sh.N), nil
}

func floats(v G.Value) []float64 {
	switch x := v.(type) {
	case *G.F64:
		return []float64{float64(*x)}
	case *tensor.Dense:
		return append([]float64(nil), x.Data().([]float64)...)
	}
	return nil
}

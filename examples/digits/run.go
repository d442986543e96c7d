package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"math/rand"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/gatejet/gatejet"
	"github.com/gatejet/gatejet/internal/digits"
	"github.com/gatejet/gatejet/internal/exampleutil"
)

// Config is one run. The zero value is not valid; start from defaultConfig.
type Config struct {
	K, Basis         int       // atoms, B-spline basis functions per atom
	Iters, AdamIters int       // Gauss-Newton and Adam iterations of the comparison
	GridIters        int       // Gauss-Newton iterations of each grid fit
	DecoderSteps     int       // Adam steps on the decoder per Gauss-Newton iteration
	Tune             int       // rounds of evidence ascent in τ and λ after the grid
	Taus, Lambdas    []float64 // the grid of temperatures and prior precisions
	Noise            float64   // σ
	LR, CodeLR       float64   // Adam's learning rates: decoder, codes
	Rows, Test, Val  int       // images used (0: all), held out for the test, for the grid's validation
	Target           float64   // target training MSE (0: automatic)
	Seed             int64
	Out, Data        string
	Init             string // initial codes: "match" (initCodes) or "plain" (logits near 0, coordinates ½)

	Stdout   io.Writer // the tables (nil: discarded)
	Progress io.Writer // the progress bar (nil: none; main gives it the standard output when that is a terminal)
}

func defaultConfig() Config {
	return Config{
		K: 8, Basis: 6, Iters: 30, AdamIters: 300, GridIters: 12, DecoderSteps: 1, Tune: 8,
		Taus: []float64{0.25, 0.5, 1, 2}, Lambdas: []float64{0.3, 3},
		Noise: 0.1, LR: 0.05, CodeLR: 0.05,
		Test: 300, Val: 200, Seed: 1, Init: "match", Out: filepath.Join("out", "digits"),
	}
}

// quickConfig holds the values -quick sets.
func quickConfig() Config {
	return Config{Iters: 12, AdamIters: 120, GridIters: 6, Taus: []float64{0.5, 2}, Lambdas: []float64{1}, Tune: 4}
}

// op names the command in its *gatejet.Error values.
const op = "digits"

func badFlag(flags, format string, args ...any) error {
	return exampleutil.BadFlag(op, flags, format, args...)
}

// maxIters bounds the iteration flags: each iteration is a pass over every image.
const maxIters = 1_000_000

// validate checks every flag before anything is read, allocated or trained.
func (c Config) validate() error {
	for _, f := range []struct {
		name   string
		v      int
		lo, hi int
		why    string
	}{
		{"-k", c.K, 2, 1024, "atoms (a softmax gate needs at least two)"},
		{"-basis", c.Basis, 4, 1024, "cubic B-spline functions (four is one cubic piece)"},
		{"-iters", c.Iters, 1, maxIters, "iterations"},
		{"-adam-iters", c.AdamIters, 1, maxIters, "iterations"},
		{"-grid-iters", c.GridIters, 1, maxIters, "iterations"},
		{"-decoder-steps", c.DecoderSteps, 1, 1000, "decoder steps per Gauss-Newton iteration"},
		{"-tune", c.Tune, 0, maxIters, "rounds of evidence ascent (0: none)"},
		{"-rows", c.Rows, 0, 1 << 20, "images (0: all)"},
		{"-test", c.Test, 1, 1 << 20, "held-out images"},
		{"-val", c.Val, 1, 1 << 20, "validation images"},
	} {
		if f.v < f.lo || f.v > f.hi {
			return badFlag(f.name, "want %d ≤ %s ≤ %d (%s), got %d", f.lo, f.name, f.hi, f.why, f.v)
		}
	}
	if c.AdamIters < c.Iters {
		return badFlag("-adam-iters, -iters", "want -adam-iters ≥ -iters (Adam is compared at -iters too), got %d < %d", c.AdamIters, c.Iters)
	}
	finite := func(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }
	if len(c.Taus) == 0 || len(c.Taus) > 64 {
		return badFlag("-taus", "want 1 to 64 temperatures, got %d", len(c.Taus))
	}
	for _, tau := range c.Taus {
		// 1/τ is the gate's inverse temperature; the Gauss-Newton slab scales with 1/τ².
		if !(tau > 0) || !finite(tau) || !(1/tau <= gatejet.MaxInvTau) || !finite(1/(tau*tau)) {
			return badFlag("-taus", "want every τ finite with 1/τ in (0, %g] and 1/τ² finite, got %v", gatejet.MaxInvTau, tau)
		}
	}
	if len(c.Lambdas) == 0 || len(c.Lambdas) > 64 {
		return badFlag("-lambdas", "want 1 to 64 prior precisions, got %d", len(c.Lambdas))
	}
	s2 := c.Noise * c.Noise
	if !(c.Noise > 0) || !finite(c.Noise) || !(s2 >= 0x1p-1022) || !finite(s2) {
		return badFlag("-noise", "want σ > 0 with σ² a normal float64 (%g ≤ σ ≤ %g), got %v",
			math.Sqrt(0x1p-1022), math.Sqrt(math.MaxFloat64), c.Noise)
	}
	for _, l := range c.Lambdas {
		// σ²λ is the ridge of every solve, and K·log λ enters the evidence.
		if !(l > 0) || !finite(l) || !(s2*l >= 0x1p-1022) || !finite(s2*l) {
			return badFlag("-lambdas, -noise", "want every λ > 0 finite with σ²λ a normal float64, got λ = %v (σ = %v)", l, c.Noise)
		}
	}
	switch {
	case !(c.LR > 0) || !finite(c.LR):
		return badFlag("-lr", "want 0 < -lr < +Inf, got %v", c.LR)
	case !(c.CodeLR > 0) || !finite(c.CodeLR):
		return badFlag("-code-lr", "want 0 < -code-lr < +Inf, got %v", c.CodeLR)
	case !(c.Target >= 0) || !finite(c.Target):
		return badFlag("-target", "want 0 ≤ -target < +Inf, got %v", c.Target)
	case c.Out == "":
		return badFlag("-out", "want an -out directory")
	case c.Init != "match" && c.Init != "plain":
		return badFlag("-init", "want match or plain, got %q", c.Init)
	}
	// The largest buffers, for the most images the file may hold: the Gauss-Newton channel
	// [n,2K,P] and slabs [n,2K,2K], and the decoder.
	n := c.Rows
	if n == 0 {
		n = 1797
	}
	return exampleutil.CheckBuffers(op, 8,
		exampleutil.Buffer{Flags: "-rows × 2·-k × 64", Dims: []int{n, 2 * c.K, digits.Pixels}},
		exampleutil.Buffer{Flags: "-rows × 2·-k × 2·-k", Dims: []int{n, 2 * c.K, 2 * c.K}},
		exampleutil.Buffer{Flags: "-rows × -k × -basis", Dims: []int{n, c.K, c.Basis}},
		exampleutil.Buffer{Flags: "-k × -basis × 64", Dims: []int{c.K, c.Basis, digits.Pixels}},
	)
}

// floatList is a flag of comma-separated float64 values.
func floatList(p *[]float64) *floatListValue { return &floatListValue{p} }

type floatListValue struct{ p *[]float64 }

func (f *floatListValue) String() string {
	if f == nil || f.p == nil {
		return ""
	}
	s := make([]string, len(*f.p))
	for i, v := range *f.p {
		s[i] = strconv.FormatFloat(v, 'g', -1, 64)
	}
	return strings.Join(s, ",")
}

func (f *floatListValue) Set(s string) error {
	var vs []float64
	for _, field := range strings.Split(s, ",") {
		var v float64
		if err := exampleutil.FloatFlag(&v).Set(strings.TrimSpace(field)); err != nil {
			return fmt.Errorf("%q: %v", field, err)
		}
		vs = append(vs, v)
	}
	*f.p = vs
	return nil
}

// GridPoint is one fit of the grid.
type GridPoint struct {
	Tau, Lambda float64
	LogEvidence float64 // Laplace log evidence per training image
	Occam       float64 // its mean ½·log det(H/σ² + λI)
	TrainMSE    float64
	ValMSE      float64 // validation images, codes fitted, decoder fixed
}

// Method is one row of the comparison table.
type Method struct {
	Name        string
	Iters       int
	TrainMSE    float64 // at the last iteration
	TestMSE     float64 // held-out images
	ToTarget    float64 // seconds to the target training MSE; NaN if not reached
	Seconds     float64 // wall time of the training
	TestSeconds float64 // wall time of fitting the held-out codes
}

// Result is what run did.
type Result struct {
	Grid                     []GridPoint
	ByEvidence, ByValidation int // indexes into Grid
	GN, Adam                 []point
	Tuned                    *GridPoint // the evidence ascent's τ, λ (nil without -tune)
	Methods                  []Method   // Gauss-Newton, Adam at -iters, Adam at -adam-iters, Adam's decoder with GN held-out codes
	Target                   float64
	Train, Test              int // images
	ImagesPath, CurvesPath   string
	CurvesCSV, GridCSV       string
}

// findData returns the digits file: path if given, else testdata/digits/digits.csv.gz in the
// working directory or the nearest directory above it that has one.
func findData(path string) (string, error) {
	if path != "" {
		return path, nil
	}
	rel := filepath.Join("testdata", "digits", "digits.csv.gz")
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		p := filepath.Join(dir, rel)
		if _, err := os.Stat(p); err == nil {
			return p, nil
		} else if !errors.Is(err, fs.ErrNotExist) {
			return "", err
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", badFlag("-data", "no %s in the working directory or above it: run from the repository, or give -data", rel)
		}
		dir = parent
	}
}

// split is the images of one part, pixels scaled to [0, 1].
type split struct {
	x      []float64
	labels []int
	n      int
}

func take(images []float64, labels []int, idx []int) split {
	P := digits.Pixels
	s := split{x: make([]float64, len(idx)*P), labels: make([]int, len(idx)), n: len(idx)}
	for i, r := range idx {
		for j, v := range images[r*P : (r+1)*P] {
			s.x[i*P+j] = v / digits.MaxPixel
		}
		s.labels[i] = labels[r]
	}
	return s
}

// join is a followed by b.
func join(a, b split) split {
	return split{x: append(append([]float64(nil), a.x...), b.x...),
		labels: append(append([]int(nil), a.labels...), b.labels...), n: a.n + b.n}
}

// run reads the digits, chooses τ and λ on the grid, trains both methods, prints the tables
// and writes the files.
func run(cfg Config) (Result, error) {
	var res Result
	if err := cfg.validate(); err != nil {
		return res, err
	}
	out := exampleutil.OrDiscard(cfg.Stdout)
	res.ImagesPath = filepath.Join(cfg.Out, "reconstructions.png")
	res.CurvesPath = filepath.Join(cfg.Out, "curves.png")
	res.CurvesCSV = filepath.Join(cfg.Out, "curves.csv")
	res.GridCSV = filepath.Join(cfg.Out, "grid.csv")
	if err := exampleutil.CheckOut(op, "-out", cfg.Out, res.ImagesPath, res.CurvesPath, res.CurvesCSV, res.GridCSV); err != nil {
		return res, err
	}
	path, err := findData(cfg.Data)
	if err != nil {
		return res, err
	}
	images, labels, err := digits.Load(path)
	if err != nil {
		return res, err
	}
	total := len(labels)
	rows := cfg.Rows
	if rows == 0 {
		rows = total
	}
	if rows > total {
		return res, badFlag("-rows", "want -rows ≤ %d, the images in %s, got %d", total, path, rows)
	}
	if cfg.Test+cfg.Val >= rows {
		return res, badFlag("-test, -val, -rows", "want -test + -val < %d images (some left to train on), got %d + %d", rows, cfg.Test, cfg.Val)
	}

	rng := rand.New(rand.NewSource(cfg.Seed))
	perm := rng.Perm(total)[:rows]
	test := take(images, labels, perm[:cfg.Test])
	val := take(images, labels, perm[cfg.Test:cfg.Test+cfg.Val])
	fit := take(images, labels, perm[cfg.Test+cfg.Val:])
	train := join(fit, val) // the comparison trains on the grid's training and validation images
	res.Train, res.Test = train.n, test.n
	K, L, P := cfg.K, cfg.Basis, digits.Pixels

	// One initial decoder and one set of initial codes, shared by every fit: each atom's
	// spline starts through L random training images.
	B0 := make([]float64, K*L*P)
	for kb := 0; kb < K*L; kb++ {
		r := rng.Intn(fit.n)
		for j := 0; j < P; j++ {
			B0[kb*P+j] = fit.x[r*P+j] + 0.01*rng.NormFloat64()
		}
	}
	fitCodes, valCodes := newCodes(fit.n, K, rng), newCodes(val.n, K, rng)
	if cfg.Init == "match" {
		m0, err := newModel(K, L, P, 1, 1, cfg.Noise)
		if err != nil {
			return res, err
		}
		m0.initCodes(fit.x, fitCodes, B0)
		m0.initCodes(val.x, valCodes, B0)
	}
	trainCodes := codes{n: train.n, l: append(append([]float64(nil), fitCodes.l...), valCodes.l...),
		t: append(append([]float64(nil), fitCodes.t...), valCodes.t...)}
	testCodes := newCodes(test.n, K, rng)

	bar := newProgress(cfg.Progress)
	bar.total = len(cfg.Taus)*len(cfg.Lambdas)*2*cfg.GridIters + cfg.Tune + cfg.GridIters + 2*cfg.Iters + 2*cfg.AdamIters + 2*cfg.Iters
	tick := bar.tick
	defer bar.Clear()

	fmt.Fprintf(out, "digits: %d training images (%d for the grid's fits, %d to validate them), %d held out; K=%d atoms, %d B-spline functions each, σ=%g\n",
		train.n, fit.n, val.n, test.n, K, L, cfg.Noise)

	// The grid: a Gauss-Newton fit per (τ, λ), its evidence and its validation error.
	type gridFit struct {
		c codes
		B []float64
	}
	var gridFits []gridFit
	for _, tau := range cfg.Taus {
		for _, lambda := range cfg.Lambdas {
			bar.stage = fmt.Sprintf("grid τ=%g λ=%g", tau, lambda)
			m, err := newModel(K, L, P, tau, lambda, cfg.Noise)
			if err != nil {
				return res, err
			}
			c, B := fitCodes.clone(), append([]float64(nil), B0...)
			curve, err := fitGN(m, fit.x, c, B, cfg.GridIters, cfg.DecoderSteps, cfg.LR, true, tick)
			if err != nil {
				return res, fmt.Errorf("grid τ=%g λ=%g: %w", tau, lambda, err)
			}
			logZ, occam, _, _, err := evidenceOf(m, fit.x, c, B)
			if err != nil {
				return res, fmt.Errorf("grid τ=%g λ=%g: evidence: %w", tau, lambda, err)
			}
			cv := valCodes.clone()
			if cfg.Init == "match" {
				m.initCodes(val.x, cv, B)
			}
			vcurve, err := fitGN(m, val.x, cv, B, cfg.GridIters, 0, cfg.LR, false, tick)
			if err != nil {
				return res, fmt.Errorf("grid τ=%g λ=%g: validation: %w", tau, lambda, err)
			}
			res.Grid = append(res.Grid, GridPoint{Tau: tau, Lambda: lambda, LogEvidence: logZ, Occam: occam,
				TrainMSE: curve[len(curve)-1].MSE, ValMSE: vcurve[len(vcurve)-1].MSE})
			gridFits = append(gridFits, gridFit{c, B})
		}
	}
	for i, g := range res.Grid {
		if g.LogEvidence > res.Grid[res.ByEvidence].LogEvidence {
			res.ByEvidence = i
		}
		if g.ValMSE < res.Grid[res.ByValidation].ValMSE {
			res.ByValidation = i
		}
	}
	bar.Clear()
	printGrid(out, res, cfg)

	// The evidence's gradient in log(1/τ) and log λ, from the grid's choice.
	best := res.Grid[res.ByEvidence]
	if cfg.Tune > 0 {
		bar.stage = "evidence ascent"
		gf := gridFits[res.ByEvidence]
		tuned, err := tune(K, L, P, best, cfg, fit.x, gf.c, gf.B, tick)
		if err != nil {
			return res, fmt.Errorf("evidence ascent: %w", err)
		}
		m, err := newModel(K, L, P, tuned.Tau, tuned.Lambda, cfg.Noise)
		if err != nil {
			return res, err
		}
		cv := valCodes.clone()
		if cfg.Init == "match" {
			m.initCodes(val.x, cv, gf.B)
		}
		vcurve, err := fitGN(m, val.x, cv, gf.B, cfg.GridIters, 0, cfg.LR, false, tick)
		if err != nil {
			return res, fmt.Errorf("evidence ascent: validation: %w", err)
		}
		tuned.ValMSE = vcurve[len(vcurve)-1].MSE
		res.Tuned = &tuned
		bar.Clear()
		fmt.Fprintf(out, "evidence ascent in log(1/τ) and log λ (%d rounds, decoder of the grid's fit): τ=%.4g, λ=%.4g, log evidence %.3f (grid %.3f), validation MSE %.5f\n",
			cfg.Tune, tuned.Tau, tuned.Lambda, tuned.LogEvidence, best.LogEvidence, tuned.ValMSE)
		best = tuned
	}

	// The comparison at the evidence's choice.
	m, err := newModel(K, L, P, best.Tau, best.Lambda, cfg.Noise)
	if err != nil {
		return res, err
	}
	bar.stage = "Gauss-Newton"
	gnCodes, gnB := trainCodes.clone(), append([]float64(nil), B0...)
	if res.GN, err = fitGN(m, train.x, gnCodes, gnB, cfg.Iters, cfg.DecoderSteps, cfg.LR, true, tick); err != nil {
		return res, err
	}
	bar.stage = "Gauss-Newton, held-out codes"
	gnTest := testCodes.clone()
	if cfg.Init == "match" {
		m.initCodes(test.x, gnTest, gnB)
	}
	tcurve, err := fitGN(m, test.x, gnTest, gnB, cfg.Iters, 0, cfg.LR, false, tick)
	if err != nil {
		return res, err
	}
	gnRecon, gnTestMSE, err := m.reconstruct(test.x, gnTest, gnB)
	if err != nil {
		return res, err
	}

	bar.stage = "Adam"
	adamCodes, adamB := trainCodes.clone(), append([]float64(nil), B0...)
	snapB := make([]float64, len(adamB))
	if res.Adam, err = fitAdam(m, train.x, adamCodes, adamB, cfg.AdamIters, cfg.CodeLR, cfg.LR, true, cfg.Iters, snapB, tick); err != nil {
		return res, err
	}
	bar.stage = "Adam, held-out codes"
	adamEqual := testCodes.clone()
	if cfg.Init == "match" {
		m.initCodes(test.x, adamEqual, snapB)
	}
	ecurve, err := fitAdam(m, test.x, adamEqual, snapB, cfg.Iters, cfg.CodeLR, cfg.LR, false, 0, nil, tick)
	if err != nil {
		return res, err
	}
	_, adamEqualMSE, err := m.reconstruct(test.x, adamEqual, snapB)
	if err != nil {
		return res, err
	}
	adamTest := testCodes.clone()
	if cfg.Init == "match" {
		m.initCodes(test.x, adamTest, adamB)
	}
	acurve, err := fitAdam(m, test.x, adamTest, adamB, cfg.AdamIters, cfg.CodeLR, cfg.LR, false, 0, nil, tick)
	if err != nil {
		return res, err
	}
	adamRecon, adamTestMSE, err := m.reconstruct(test.x, adamTest, adamB)
	if err != nil {
		return res, err
	}
	// The same decoder with the held-out codes fitted by Gauss-Newton steps: the two ways of
	// fitting codes compared on one decoder.
	bar.stage = "Adam's decoder, Gauss-Newton held-out codes"
	crossTest := testCodes.clone()
	if cfg.Init == "match" {
		m.initCodes(test.x, crossTest, adamB)
	}
	xcurve, err := fitGN(m, test.x, crossTest, adamB, cfg.Iters, 0, cfg.LR, false, tick)
	if err != nil {
		return res, err
	}
	_, crossMSE, err := m.reconstruct(test.x, crossTest, adamB)
	if err != nil {
		return res, err
	}
	bar.Clear()

	last := func(c []point) point { return c[len(c)-1] }
	res.Target = cfg.Target
	if res.Target == 0 {
		res.Target = math.Max(last(res.GN).MSE, last(res.Adam).MSE)
	}
	res.Methods = []Method{
		{Name: "Gauss-Newton (LM)", Iters: cfg.Iters, TrainMSE: last(res.GN).MSE, TestMSE: gnTestMSE,
			ToTarget: toTarget(res.GN, res.Target), Seconds: last(res.GN).Seconds, TestSeconds: last(tcurve).Seconds},
		{Name: "Adam", Iters: cfg.Iters, TrainMSE: res.Adam[cfg.Iters-1].MSE, TestMSE: adamEqualMSE,
			ToTarget: toTarget(res.Adam[:cfg.Iters], res.Target), Seconds: res.Adam[cfg.Iters-1].Seconds, TestSeconds: last(ecurve).Seconds},
		{Name: "Adam", Iters: cfg.AdamIters, TrainMSE: last(res.Adam).MSE, TestMSE: adamTestMSE,
			ToTarget: toTarget(res.Adam, res.Target), Seconds: last(res.Adam).Seconds, TestSeconds: last(acurve).Seconds},
		{Name: "Adam, GN held-out", Iters: cfg.AdamIters, TrainMSE: last(res.Adam).MSE, TestMSE: crossMSE,
			ToTarget: toTarget(res.Adam, res.Target), Seconds: last(res.Adam).Seconds, TestSeconds: last(xcurve).Seconds},
	}
	printComparison(out, res, best)

	if err := writeCurvesCSV(res.CurvesCSV, res.GN, res.Adam); err != nil {
		return res, err
	}
	if err := writeGridCSV(res.GridCSV, res); err != nil {
		return res, err
	}
	if err := writeCurvesPNG(res.CurvesPath, res.GN, res.Adam, res.Target); err != nil {
		return res, err
	}
	if err := writeImagesPNG(res.ImagesPath, test, gnRecon, adamRecon); err != nil {
		return res, err
	}
	fmt.Fprintf(out, "wrote %s, %s, %s and %s\n", res.ImagesPath, res.CurvesPath, res.CurvesCSV, res.GridCSV)
	// The reconstructions carry no text: what they show is said here (the curves have
	// their titles, axis labels and legend).
	fmt.Fprintf(out, "%s: held-out originals (top row), Gauss-Newton's reconstructions, Adam's after %d iterations (bottom)\n",
		filepath.Base(res.ImagesPath), cfg.AdamIters)
	fmt.Fprintf(out, "%s: training MSE of both methods against iterations and against seconds, with the target (labelled plots)\n",
		filepath.Base(res.CurvesPath))
	return res, nil
}

// toTarget returns the wall time at which a curve first reaches the target, NaN if never.
func toTarget(c []point, target float64) float64 {
	for _, p := range c {
		if p.MSE <= target {
			return p.Seconds
		}
	}
	return math.NaN()
}

func printGrid(w io.Writer, res Result, cfg Config) {
	fmt.Fprintf(w, "\nτ and λ: Gauss-Newton fits of %d iterations; log evidence per image (Laplace) and validation MSE\n", cfg.GridIters)
	fmt.Fprintf(w, "%8s %8s %14s %10s %11s %11s\n", "τ", "λ", "log evidence", "Occam", "train MSE", "val MSE")
	for i, g := range res.Grid {
		var mark []string
		if i == res.ByEvidence {
			mark = append(mark, "evidence's choice")
		}
		if i == res.ByValidation {
			mark = append(mark, "validation's choice")
		}
		fmt.Fprintf(w, "%8g %8g %14.3f %10.3f %11.5f %11.5f  %s\n", g.Tau, g.Lambda, g.LogEvidence, g.Occam, g.TrainMSE, g.ValMSE, strings.Join(mark, ", "))
	}
	e, v := res.Grid[res.ByEvidence], res.Grid[res.ByValidation]
	if res.ByEvidence == res.ByValidation {
		fmt.Fprintf(w, "the evidence and the validation error choose the same τ=%g, λ=%g\n", e.Tau, e.Lambda)
	} else {
		fmt.Fprintf(w, "the evidence chooses τ=%g, λ=%g (validation MSE %.5f); the validation error τ=%g, λ=%g (%.5f)\n",
			e.Tau, e.Lambda, e.ValMSE, v.Tau, v.Lambda, v.ValMSE)
	}
}

func printComparison(w io.Writer, res Result, best GridPoint) {
	fmt.Fprintf(w, "\ncomparison at τ=%.4g, λ=%.4g: %d training images, %d held out (decoder fixed, codes fitted); target training MSE %.5f\n",
		best.Tau, best.Lambda, res.Train, res.Test, res.Target)
	fmt.Fprintf(w, "%-18s %6s %11s %13s %15s %11s %12s\n", "method", "iters", "train MSE", "held-out MSE", "time to target", "train time", "held-out fit")
	for _, m := range res.Methods {
		to := "not reached"
		if !math.IsNaN(m.ToTarget) {
			to = fmt.Sprintf("%.2f s", m.ToTarget)
		}
		fmt.Fprintf(w, "%-18s %6d %11.5f %13.5f %15s %9.2f s %10.2f s\n", m.Name, m.Iters, m.TrainMSE, m.TestMSE, to, m.Seconds, m.TestSeconds)
	}
}

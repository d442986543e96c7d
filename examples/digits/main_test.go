package main

import (
	"bytes"
	"encoding/csv"
	"errors"
	"flag"
	"image/png"
	"math"
	"math/rand"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"
	"weak"

	"github.com/stretchr/testify/require"
	G "gorgonia.org/gorgonia"

	"github.com/gatejet/gatejet"
)

// tinyConfig is a run of a few iterations on 300 images, written into a temporary directory.
func tinyConfig(t testing.TB) Config {
	cfg := defaultConfig()
	cfg.Rows, cfg.Test, cfg.Val = 300, 60, 40
	cfg.K, cfg.Basis = 4, 5
	cfg.Iters, cfg.AdamIters, cfg.GridIters = 6, 12, 2
	cfg.Taus, cfg.Lambdas = []float64{0.5, 2}, []float64{1}
	cfg.Tune = 2
	cfg.Out = t.TempDir()
	return cfg
}

func TestRunTiny(t *testing.T) {
	cfg := tinyConfig(t)
	var stdout, bar bytes.Buffer
	cfg.Stdout, cfg.Progress = &stdout, &bar
	res, err := run(cfg)
	require.NoError(t, err)

	require.Len(t, res.Grid, len(cfg.Taus)*len(cfg.Lambdas))
	require.Len(t, res.GN, cfg.Iters)
	require.Len(t, res.Adam, cfg.AdamIters)
	require.Len(t, res.Methods, 4)
	gn, adamEqual := res.Methods[0], res.Methods[1]
	require.Equal(t, gn.Iters, adamEqual.Iters)
	// At equal iterations the Gauss-Newton steps, which solve each row's codes to the
	// current decoder, are ahead of Adam's on the held-out images.
	require.LessOrEqual(t, gn.TestMSE, adamEqual.TestMSE, "%+v", res.Methods)
	for _, m := range res.Methods {
		require.False(t, math.IsNaN(m.TestMSE) || math.IsNaN(m.TrainMSE), "%+v", m)
	}
	require.Less(t, res.GN[len(res.GN)-1].MSE, res.GN[0].MSE, "training lowers the error")
	require.Less(t, res.Adam[len(res.Adam)-1].MSE, res.Adam[0].MSE, "training lowers the error")
	for _, g := range res.Grid {
		require.False(t, math.IsNaN(g.LogEvidence) || math.IsInf(g.LogEvidence, 0), "%+v", g)
		require.Greater(t, g.Occam, 0.0, "with λ = 1, ½·log det(H/σ² + I) > 0 for H ≠ 0")
	}
	out := stdout.String()
	require.Contains(t, out, "evidence's choice")
	require.Contains(t, out, "validation's choice")
	require.Contains(t, out, "Gauss-Newton (LM)")
	require.Contains(t, out, "reconstructions.png: held-out originals (top row)", "what the pictures show")
	require.Contains(t, out, "curves.png: training MSE of both methods")
	require.Contains(t, bar.String(), "\r", "the bar is drawn on the writer it is given")

	for _, path := range []string{res.ImagesPath, res.CurvesPath} {
		f, err := os.Open(path)
		require.NoError(t, err)
		img, err := png.Decode(f)
		f.Close()
		require.NoError(t, err, path)
		require.Greater(t, img.Bounds().Dx(), 100, path)
		require.Greater(t, img.Bounds().Dy(), 50, path)
	}
	records := readCSV(t, res.CurvesCSV)
	require.Equal(t, curvesHeader, records[0])
	require.Len(t, records, 1+cfg.Iters+cfg.AdamIters)
	require.NotNil(t, res.Tuned)
	require.GreaterOrEqual(t, res.Tuned.LogEvidence, res.Grid[res.ByEvidence].LogEvidence,
		"the ascent starts at the grid's choice and keeps only moves that raise the evidence")
	records = readCSV(t, res.GridCSV)
	require.Equal(t, gridHeader, records[0])
	require.Len(t, records, 1+len(res.Grid)+1, "the grid and the ascent's end")
}

func readCSV(t *testing.T, path string) [][]string {
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	records, err := csv.NewReader(f).ReadAll()
	require.NoError(t, err)
	return records
}

// TestRunRepeats: the split, the initial codes and decoder come from the seed, so two runs
// print the same errors.
func TestRunRepeats(t *testing.T) {
	cfg := tinyConfig(t)
	cfg.Taus = cfg.Taus[:1]
	a, err := run(cfg)
	require.NoError(t, err)
	b, err := run(cfg)
	require.NoError(t, err)
	for i := range a.Methods {
		require.Equal(t, a.Methods[i].TestMSE, b.Methods[i].TestMSE)
		require.Equal(t, a.Methods[i].TrainMSE, b.Methods[i].TrainMSE)
	}
	require.Equal(t, a.Grid, b.Grid)
}

// smallProblem is a model with random codes, decoder and images.
func smallProblem(t testing.TB, n, K, L int) (*model, codes, []float64, []float64) {
	m, err := newModel(K, L, 64, 0.7, 2, 0.1)
	require.NoError(t, err)
	rng := rand.New(rand.NewSource(3))
	c := newCodes(n, K, rng)
	for i := range c.l {
		c.l[i] = rng.NormFloat64()
		c.t[i] = 0.05 + 0.9*rng.Float64()
	}
	B := make([]float64, K*L*64)
	for i := range B {
		B[i] = rng.Float64()
	}
	x := make([]float64, n*64)
	for i := range x {
		x[i] = rng.Float64()
	}
	return m, c, B, x
}

// TestJetsAgainstDifferences: the first channel the Gauss-Newton step reads is ∂ẑ/∂p, by
// central differences of the reconstruction in each code, and the slab is F·Fᵀ.
func TestJetsAgainstDifferences(t *testing.T) {
	const n, K, L, P = 3, 4, 6, 64
	m, c, B, x := smallProblem(t, n, K, L)
	w := newWork(m, n)
	m.decode(w, c.t, B, true)
	require.NoError(t, m.jets(w, c))
	const h = 1e-6
	for r := 0; r < n; r++ {
		for a := 0; a < 2*K; a++ {
			shifted := func(d float64) []float64 {
				cc := c.clone()
				if a < K {
					cc.l[r*K+a] += d
				} else {
					cc.t[r*K+a-K] += d
				}
				z, _, err := m.reconstruct(x, cc, B)
				require.NoError(t, err)
				return z[r*P : (r+1)*P]
			}
			up, down := shifted(h), shifted(-h)
			for j := 0; j < P; j++ {
				want := (up[j] - down[j]) / (2 * h)
				got := w.first[((r*2*K)+a)*P+j]
				require.InDelta(t, want, got, 1e-7*(1+math.Abs(want)), "row %d primary %d pixel %d", r, a, j)
			}
		}
		D := 2 * K
		for a := 0; a < D; a++ {
			for b := 0; b < D; b++ {
				var s float64
				for j := 0; j < P; j++ {
					s += w.first[(r*D+a)*P+j] * w.first[(r*D+b)*P+j]
				}
				require.InDelta(t, s, w.gn[(r*D+a)*D+b], 1e-12*(1+math.Abs(s)))
			}
		}
	}
}

// TestLMStepDescends: every row's objective is non-increasing over the steps (a step that
// would raise it is refused), and the steps lower the total.
func TestLMStepDescends(t *testing.T) {
	m, c, B, x := smallProblem(t, 20, 4, 6)
	w := newWork(m, c.n)
	var first, prev []float64
	for i := 0; i < 10; i++ {
		_, err := m.lmStep(w, x, c, B)
		require.NoError(t, err)
		// w.obj holds the objectives after the step.
		if prev != nil {
			for r := range w.obj {
				require.LessOrEqual(t, w.obj[r], prev[r]+1e-15, "row %d at step %d", r, i)
			}
		} else {
			first = append([]float64(nil), w.obj...)
		}
		prev = append(prev[:0], w.obj...)
		for _, v := range c.t {
			require.True(t, v >= 0 && v <= 1, "coordinates stay in the span")
		}
	}
	var a, b float64
	for r := range first {
		a, b = a+first[r], b+prev[r]
	}
	require.Less(t, b, a)
}

// TestEvidenceByHand: the evidence of one row written out with the slab from the
// differences-checked channel and the determinant of H/σ² + λI by gonum's LU (mat.Det).
func TestEvidenceByHand(t *testing.T) {
	const K, L, P = 3, 5, 64
	m, c, B, x := smallProblem(t, 1, K, L)
	logZ, occam, err := m.evidence(newWork(m, 1), x, c, B)
	require.NoError(t, err)

	w := newWork(m, 1)
	m.decode(w, c.t, B, true)
	require.NoError(t, m.jets(w, c))
	D := 2 * K
	a := make([]float64, D*D)
	for i := range a {
		a[i] = w.gn[i] / m.sigma2
	}
	for i := 0; i < D; i++ {
		a[i*D+i] += m.lambda
	}
	det := detByElimination(a, D)
	z, _, err := m.reconstruct(x, c, B)
	require.NoError(t, err)
	var sse float64
	for j := range z {
		sse += (z[j] - x[j]) * (z[j] - x[j])
	}
	var prior float64
	for k := 0; k < K; k++ {
		prior += c.l[k]*c.l[k] + (c.t[k]-0.5)*(c.t[k]-0.5)
	}
	want := -sse/(2*m.sigma2) - float64(P)/2*math.Log(2*math.Pi*m.sigma2) - 0.5*m.lambda*prior +
		float64(K)*math.Log(m.lambda) - 0.5*math.Log(det)
	require.InDelta(t, want, logZ, 1e-9*math.Abs(want))
	require.InDelta(t, 0.5*math.Log(det), occam, 1e-9)
}

// detByElimination is the determinant by Gaussian elimination with partial pivoting.
func detByElimination(a []float64, n int) float64 {
	a = append([]float64(nil), a...)
	det := 1.0
	for col := 0; col < n; col++ {
		p := col
		for r := col + 1; r < n; r++ {
			if math.Abs(a[r*n+col]) > math.Abs(a[p*n+col]) {
				p = r
			}
		}
		if p != col {
			for j := 0; j < n; j++ {
				a[p*n+j], a[col*n+j] = a[col*n+j], a[p*n+j]
			}
			det = -det
		}
		det *= a[col*n+col]
		for r := col + 1; r < n; r++ {
			f := a[r*n+col] / a[col*n+col]
			for j := col; j < n; j++ {
				a[r*n+j] -= f * a[col*n+j]
			}
		}
	}
	return det
}

// TestCurvesPNGOdd: curves with values a log axis cannot show (0, NaN, ±Inf), a single point,
// none at all, or a target ≤ 0 still give a picture of two labelled plots, not an error or a
// panic.
func TestCurvesPNGOdd(t *testing.T) {
	dir := t.TempDir()
	pts := func(mses ...float64) []point {
		c := make([]point, len(mses))
		for i, m := range mses {
			c[i] = point{Iter: i + 1, Seconds: 0.1 * float64(i+1), MSE: m}
		}
		return c
	}
	for name, c := range map[string]struct {
		gn, adam []point
		target   float64
	}{
		"gaps":        {pts(0.5, math.NaN(), 0.2, 0, 0.1), pts(math.Inf(1), 0.4, math.Inf(-1), 0.3), 0.15},
		"one point":   {pts(0.3), pts(0.3), 0.3},
		"none":        {nil, nil, math.NaN()},
		"nothing > 0": {pts(0, -1), pts(math.NaN()), 0},
	} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(dir, name, "curves.png")
			require.NoError(t, writeCurvesPNG(path, c.gn, c.adam, c.target))
			f, err := os.Open(path)
			require.NoError(t, err)
			defer f.Close()
			img, err := png.Decode(f)
			require.NoError(t, err)
			require.Greater(t, img.Bounds().Dx(), 500)
			require.Greater(t, img.Bounds().Dy(), 200)
		})
	}
}

func TestBadConfig(t *testing.T) {
	for name, edit := range map[string]func(*Config){
		"k=1":             func(c *Config) { c.K = 1 },
		"basis=3":         func(c *Config) { c.Basis = 3 },
		"iters=0":         func(c *Config) { c.Iters = 0 },
		"adam<iters":      func(c *Config) { c.AdamIters = c.Iters - 1 },
		"tau=0":           func(c *Config) { c.Taus = []float64{0} },
		"tau tiny":        func(c *Config) { c.Taus = []float64{1e-300} },
		"no taus":         func(c *Config) { c.Taus = nil },
		"lambda<0":        func(c *Config) { c.Lambdas = []float64{-1} },
		"noise=0":         func(c *Config) { c.Noise = 0 },
		"noise tiny":      func(c *Config) { c.Noise = 1e-200 },
		"lr=NaN":          func(c *Config) { c.LR = math.NaN() },
		"target<0":        func(c *Config) { c.Target = -1 },
		"no out":          func(c *Config) { c.Out = "" },
		"init=x":          func(c *Config) { c.Init = "x" },
		"decoder-steps=0": func(c *Config) { c.DecoderSteps = 0 },
		"tune<0":          func(c *Config) { c.Tune = -1 },
		"rows>file":       func(c *Config) { c.Rows = 1798 },
		"test+val≥rows":   func(c *Config) { c.Test, c.Val = 250, 50 },
		"huge k":          func(c *Config) { c.K, c.Rows = 1024, 1<<20 },
		"missing data":    func(c *Config) { c.Data = "no/such/file.csv.gz" },
		"iters too large": func(c *Config) { c.Iters, c.AdamIters = maxIters+1, maxIters+1 },
	} {
		t.Run(name, func(t *testing.T) {
			cfg := tinyConfig(t)
			edit(&cfg)
			_, err := run(cfg)
			require.Error(t, err)
			if name != "missing data" {
				var ge *gatejet.Error
				require.True(t, errors.As(err, &ge), "%v", err)
			}
			if cfg.Out != "" {
				entries, err := os.ReadDir(cfg.Out)
				require.NoError(t, err)
				require.Empty(t, entries, "nothing written for a refused run")
			}
		})
	}
}

// TestUsage: -h prints the command line and what the command does, and is no failure.
func TestUsage(t *testing.T) {
	var errOut bytes.Buffer
	_, err := parseFlags([]string{"-h"}, &errOut)
	require.ErrorIs(t, err, flag.ErrHelp)
	require.Contains(t, errOut.String(), "usage: go run ./examples/digits [flags]\n"+about+"\n")
}

func TestParseFlags(t *testing.T) {
	var errOut bytes.Buffer
	cfg, err := parseFlags([]string{"-k", "5", "-taus", "0.5, 1,4", "-lambdas", "2", "-seed", "7", "-out", "x"}, &errOut)
	require.NoError(t, err)
	require.Equal(t, 5, cfg.K)
	require.Equal(t, []float64{0.5, 1, 4}, cfg.Taus)
	require.Equal(t, []float64{2}, cfg.Lambdas)
	require.Equal(t, int64(7), cfg.Seed)
	require.Equal(t, "x", cfg.Out)

	cfg, err = parseFlags([]string{"-quick", "-iters", "3"}, &errOut)
	require.NoError(t, err)
	q := quickConfig()
	require.Equal(t, 3, cfg.Iters, "a flag given explicitly wins over -quick")
	require.Equal(t, q.AdamIters, cfg.AdamIters)
	require.Equal(t, q.Taus, cfg.Taus)

	for _, args := range [][]string{{"extra"}, {"-k", "many"}, {"-taus", "1,x"}, {"-taus", "1e-400"}, {"-noise", "1e-400"}} {
		_, err = parseFlags(args, &errOut)
		require.Error(t, err, "%q", args)
	}
}

// TestProgress: the bar redraws in place on the writer it is given and draws nothing without one.
func TestProgress(t *testing.T) {
	var buf bytes.Buffer
	p := newProgress(&buf)
	p.total, p.stage = 5, "stage"
	for range 5 {
		p.tick()
	}
	p.Clear()
	require.Contains(t, buf.String(), "\r[")
	require.Contains(t, buf.String(), "100% stage")
	none := newProgress(nil)
	none.total = 3
	none.tick()
	none.Clear()
}

// BenchmarkGNStep times one Levenberg–Marquardt step over every row's codes (decode, value,
// coordinate jet, slab, the 2K×2K Cholesky solves, the trial and its acceptance), the step
// examples/digits/torch_gn_step.py times in PyTorch. -gnstep sets N,K,P,L.
func BenchmarkGNStep(b *testing.B) {
	n, K, P, L := 1497, 8, 64, 6
	if *gnStep != "" {
		var err error
		if n, K, P, L, err = parseShape(*gnStep); err != nil {
			b.Fatal(err)
		}
	}
	m, err := newModel(K, L, P, 0.5, 1, 0.1)
	require.NoError(b, err)
	rng := rand.New(rand.NewSource(1))
	c := newCodes(n, K, rng)
	B := make([]float64, K*L*P)
	x := make([]float64, n*P)
	for i := range B {
		B[i] = rng.Float64()
	}
	for i := range x {
		x[i] = rng.Float64()
	}
	w := newWork(m, n)
	b.ResetTimer()
	for range b.N {
		if _, err := m.lmStep(w, x, c, B); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N)/1000, "ms/step")
}

var gnStep = flag.String("gnstep", "", "N,K,P,L of BenchmarkGNStep")

func parseShape(s string) (n, K, P, L int, err error) {
	var v []float64
	if err = floatList(&v).Set(s); err != nil {
		return
	}
	if len(v) != 4 {
		return 0, 0, 0, 0, errors.New("want N,K,P,L")
	}
	for _, x := range v {
		if x != math.Trunc(x) || x < 1 || x > 1<<20 {
			return 0, 0, 0, 0, errors.New("want positive integers N,K,P,L")
		}
	}
	return int(v[0]), int(v[1]), int(v[2]), int(v[3]), nil
}

// TestEvidenceGraph: the evidence of the graph (graphs.CoordGaussNewtonLogDet, the gradient
// through Gorgonia) agrees with the per-row Cholesky route (model.evidence), and its gradient
// in log s and log λ with central differences of that route.
func TestEvidenceGraph(t *testing.T) {
	const n, K, L = 5, 3, 5
	m, c, B, x := smallProblem(t, n, K, L)
	eg, err := newEvidenceGraph(m, x, c, B)
	require.NoError(t, err)
	defer eg.close()
	logZ, occam, dS, dL, err := eg.run()
	require.NoError(t, err)
	want, wantOccam, err := m.evidence(newWork(m, n), x, c, B)
	require.NoError(t, err)
	require.InDelta(t, want, logZ, 1e-10*math.Abs(want))
	require.InDelta(t, wantOccam, occam, 1e-10*math.Abs(wantOccam))

	at := func(logS, logLambda float64) float64 {
		mm, err := newModel(K, L, 64, math.Exp(-logS), math.Exp(logLambda), math.Sqrt(m.sigma2))
		require.NoError(t, err)
		v, _, err := mm.evidence(newWork(mm, n), x, c, B)
		require.NoError(t, err)
		return v
	}
	ls, ll := math.Log(m.s), math.Log(m.lambda)
	const h = 1e-5
	fdS := (at(ls+h, ll) - at(ls-h, ll)) / (2 * h)
	fdL := (at(ls, ll+h) - at(ls, ll-h)) / (2 * h)
	require.InDelta(t, fdS, dS, 1e-6*(1+math.Abs(fdS)))
	require.InDelta(t, fdL, dL, 1e-6*(1+math.Abs(fdL)))
}

// TestGraphsFreed: a closed graph and its machine, with their last run's values, are freed
// (nothing the machine holds leads back to it: a TapeMachine has a finalizer, and a cycle
// through it would never be collected).
func TestGraphsFreed(t *testing.T) {
	m, c, B, x := smallProblem(t, 20, 3, 5)
	gr, err := newGraph(m, x, c, B, true, true)
	require.NoError(t, err)
	_, err = gr.run(m.P)
	require.NoError(t, err)
	gr.close()
	eg, err := newEvidenceGraph(m, x, c, B)
	require.NoError(t, err)
	_, _, _, _, err = eg.run()
	require.NoError(t, err)
	eg.close()
	graphs := []weak.Pointer[G.ExprGraph]{weak.Make(gr.g), weak.Make(eg.g)}
	gr, eg = nil, nil
	// The machine's finalizer keeps what it reaches for one more collection after it runs.
	for i := 0; i < 20 && (graphs[0].Value() != nil || graphs[1].Value() != nil); i++ {
		runtime.GC()
		time.Sleep(time.Millisecond)
	}
	require.Nil(t, graphs[0].Value(), "the decoder's graph is still in memory after close")
	require.Nil(t, graphs[1].Value(), "the evidence graph is still in memory after close")
}

package main

import (
	"bytes"
	"errors"
	"image"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gatejet/gatejet"
	"github.com/gatejet/gatejet/graphs"
	"github.com/stretchr/testify/require"
)

// runCapture runs cfg with its stdout and stderr captured.
func runCapture(cfg Config) (Result, string, string, error) {
	var stdout, stderr bytes.Buffer
	cfg.Stdout, cfg.Stderr = &stdout, &stderr
	res, err := run(cfg)
	return res, stdout.String(), stderr.String(), err
}

// TestTinyTauPlots: at τ = 1e-6 the gate saturates and the curvature term rounds to 0
// or just below it, which the log axis of the plot cannot show; the run must write the
// plot without those points and say so, not panic after training.
func TestTinyTauPlots(t *testing.T) {
	cfg := shortConfig(t)
	// The command line of the report: -tau 1e-6 -n 1024 -epochs 3, other flags default.
	cfg.Tau, cfg.N, cfg.Epochs, cfg.K, cfg.P, cfg.Batch = 1e-6, 1024, 3, 16, 32, 512
	res, _, stderr, err := runCapture(cfg)
	require.NoError(t, err)
	nonPos := 0
	for _, e := range res.Epochs {
		if !(e.Curvature > 0) {
			nonPos++
		}
	}
	require.Positive(t, nonPos, "the case needs a curvature ≤ 0: %+v", res.Epochs)
	require.Contains(t, stderr, "values ≤ 0, not drawn on the log scale")
	png, err := os.ReadFile(res.PlotPath)
	require.NoError(t, err)
	require.True(t, bytes.HasPrefix(png, []byte("\x89PNG\r\n\x1a\n")))
}

// TestOutCheckedFirst: an -out that cannot be written is an error before any training.
func TestOutCheckedFirst(t *testing.T) {
	file := filepath.Join(t.TempDir(), "file")
	require.NoError(t, os.WriteFile(file, []byte("x"), 0o644))
	pngDir := t.TempDir()
	require.NoError(t, os.Mkdir(filepath.Join(pngDir, "loss.png"), 0o755))
	for name, out := range map[string]string{
		"under a file":         filepath.Join(file, "sub"),
		"a file":               file,
		"loss.png a directory": pngDir,
	} {
		t.Run(name, func(t *testing.T) {
			cfg := shortConfig(t)
			cfg.Out = out
			_, stdout, _, err := runCapture(cfg)
			require.Error(t, err)
			require.True(t, errors.Is(err, gatejet.ErrParam), "%v", err)
			require.Contains(t, err.Error(), "-out")
			require.NotContains(t, stdout, "epoch", "nothing is trained")
		})
	}
}

// TestFlagExtremes: every flag at 0, negative, NaN, ±Inf, tiny and huge values, alone or in
// a combination whose derived constants (1/τ², σ², σ²λ, P/(2σ²)) leave the float64 range, is
// refused before training with an *gatejet.Error that names the flags set.
func TestFlagExtremes(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	for _, c := range []struct {
		name  string
		edit  func(*Config)
		flags string // the *gatejet.Error's Arg
		kind  error
		want  []string // in the message
	}{
		{"n=0", func(c *Config) { c.N = 0 }, "-n", gatejet.ErrParam, nil},
		{"n<0", func(c *Config) { c.N = -5 }, "-n", gatejet.ErrParam, []string{"-5"}},
		{"d=0", func(c *Config) { c.D = 0 }, "-d", gatejet.ErrParam, nil},
		{"K=1", func(c *Config) { c.K = 1 }, "-K", gatejet.ErrParam, nil},
		{"P=0", func(c *Config) { c.P = 0 }, "-P", gatejet.ErrParam, nil},
		{"batch=0", func(c *Config) { c.Batch = 0 }, "-batch", gatejet.ErrParam, nil},
		{"epochs<0", func(c *Config) { c.Epochs = -1 }, "-epochs", gatejet.ErrParam, nil},
		{"n huge", func(c *Config) { c.N = 1 << 40 }, "-n × -d", gatejet.ErrSize, nil},
		{"n overflows", func(c *Config) { c.N = math.MaxInt }, "-n × -d", gatejet.ErrSize, nil},
		{"K huge", func(c *Config) { c.K = 1 << 20 }, "-batch × -K × -K", gatejet.ErrSize, nil},
		{"P huge", func(c *Config) { c.P = 1 << 40 }, "-n × -P", gatejet.ErrSize, nil},
		{"tau=0", func(c *Config) { c.Tau = 0 }, "-tau", gatejet.ErrParam, nil},
		{"tau<0", func(c *Config) { c.Tau = -1 }, "-tau", gatejet.ErrParam, nil},
		{"tau NaN", func(c *Config) { c.Tau = nan }, "-tau", gatejet.ErrParam, []string{"NaN"}},
		{"tau Inf", func(c *Config) { c.Tau = inf }, "-tau", gatejet.ErrParam, []string{"+Inf"}},
		{"tau 1/τ² overflows", func(c *Config) { c.Tau = 1e-160 }, "-tau", gatejet.ErrParam, []string{"-tau 1e-160", "1/τ²", "overflows"}},
		{"lambda=0", func(c *Config) { c.Lambda = 0 }, "-lambda", gatejet.ErrParam, nil},
		{"lambda NaN", func(c *Config) { c.Lambda = nan }, "-lambda", gatejet.ErrParam, nil},
		{"lambda Inf", func(c *Config) { c.Lambda = inf }, "-lambda", gatejet.ErrParam, nil},
		{"noise=0", func(c *Config) { c.Noise = 0 }, "-noise", gatejet.ErrParam, nil},
		{"noise<0", func(c *Config) { c.Noise = -0.1 }, "-noise", gatejet.ErrParam, nil},
		{"noise NaN", func(c *Config) { c.Noise = nan }, "-noise", gatejet.ErrParam, nil},
		{"noise Inf", func(c *Config) { c.Noise = inf }, "-noise", gatejet.ErrParam, nil},
		{"noise σ² underflows", func(c *Config) { c.Noise = 1e-200 }, "-noise", gatejet.ErrParam, []string{"-noise 1e-200", "σ² = 0", "underflows"}},
		{"noise σ² subnormal", func(c *Config) { c.Noise = 1e-160 }, "-noise", gatejet.ErrParam, []string{"-noise 1e-160", "underflows"}},
		{"noise σ² overflows", func(c *Config) { c.Noise = 1e200 }, "-noise", gatejet.ErrParam, []string{"-noise 1e+200", "overflows"}},
		{"σ²λ underflows", func(c *Config) { c.Noise, c.Lambda = 1e-150, 1e-100 }, "-noise, -lambda", gatejet.ErrParam, []string{"-noise 1e-150 with -lambda 1e-100", "σ²λ = 0", "underflows"}},
		{"σ²λ overflows", func(c *Config) { c.Noise, c.Lambda = 1e150, 1e100 }, "-noise, -lambda", gatejet.ErrParam, []string{"-noise 1e+150 with -lambda 1e+100", "overflows"}},
		{"lr=0", func(c *Config) { c.LearnRate = 0 }, "-lr", gatejet.ErrParam, nil},
		{"lr NaN", func(c *Config) { c.LearnRate = nan }, "-lr", gatejet.ErrParam, nil},
		{"lr Inf", func(c *Config) { c.LearnRate = inf }, "-lr", gatejet.ErrParam, []string{"+Inf"}},
		{"settle<0", func(c *Config) { c.Settle = -1 }, "-settle", gatejet.ErrParam, nil},
		{"settle NaN", func(c *Config) { c.Settle = nan }, "-settle", gatejet.ErrParam, nil},
		{"settle Inf", func(c *Config) { c.Settle = inf }, "-settle", gatejet.ErrParam, nil},
		{"out empty", func(c *Config) { c.Out = "" }, "-out", gatejet.ErrParam, nil},
		{"gpu fast", func(c *Config) { c.GPU = "fast" }, "-gpu", gatejet.ErrParam, []string{`"fast"`}},
		{"gpu empty", func(c *Config) { c.GPU = "" }, "-gpu", gatejet.ErrParam, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg := shortConfig(t)
			c.edit(&cfg)
			_, stdout, _, err := runCapture(cfg)
			require.Error(t, err)
			var ge *gatejet.Error
			require.True(t, errors.As(err, &ge), "%T %v", err, err)
			require.True(t, errors.Is(err, c.kind), "%v", err)
			require.Equal(t, c.flags, ge.Arg, "%v", err)
			for _, w := range c.want {
				require.Contains(t, err.Error(), w)
			}
			require.NotContains(t, stdout, "epoch", "refused before training")
		})
	}
}

// TestRuntimeFailuresNameFlags: failures that only the data reveal name the flags behind
// them rather than a generic hint.
func TestRuntimeFailuresNameFlags(t *testing.T) {
	cfg := shortConfig(t)
	cfg.Noise, cfg.Epochs = 1e-20, 1 // σ²λ = 1e-40: below the rounding of the singular slabs
	_, _, _, err := runCapture(cfg)
	require.Error(t, err)
	require.True(t, errors.Is(err, graphs.ErrNotSPD), "%v", err)
	require.Contains(t, err.Error(), "-noise 1e-20 with -lambda 1")
	require.Contains(t, err.Error(), "raise -lambda or -noise")

	cfg = shortConfig(t)
	cfg.LearnRate, cfg.Epochs = 1e300, 3 // the first step sends the parameters to ±Inf
	_, _, _, err = runCapture(cfg)
	require.Error(t, err)
	require.Contains(t, err.Error(), "diverged")
	require.Contains(t, err.Error(), "-lr")
}

// TestOneEpochVisible: a run of one epoch draws its values as markers (a line through a
// single point draws nothing). The curvature term is far below the loss, so its green
// marker lies in the lower half of the left panel, where the legend (at the top) is not.
func TestOneEpochVisible(t *testing.T) {
	cfg := shortConfig(t)
	cfg.Epochs = 1
	res, _, _, err := runCapture(cfg)
	require.NoError(t, err)
	require.Len(t, res.Epochs, 1)
	require.Less(t, 10*res.Epochs[0].Curvature, res.Epochs[0].Loss, "the case needs the curvature low in the panel")
	f, err := os.Open(res.PlotPath)
	require.NoError(t, err)
	defer f.Close()
	img, err := png.Decode(f)
	require.NoError(t, err)
	b := img.Bounds()
	lowerLeft := image.Rect(b.Min.X, (b.Min.Y+b.Max.Y)/2, (b.Min.X+b.Max.X)/2, b.Max.Y)
	green := 0
	for y := lowerLeft.Min.Y; y < lowerLeft.Max.Y; y++ {
		for x := lowerLeft.Min.X; x < lowerLeft.Max.X; x++ {
			r, g, b, _ := img.At(x, y).RGBA()
			if r>>8 == 44 && g>>8 == 160 && b>>8 == 44 {
				green++
			}
		}
	}
	require.GreaterOrEqual(t, green, 5, "the curvature's marker is drawn")
}

// TestPlotUndrawable: values that a log axis cannot show (0, negative, NaN, ±Inf), in
// some epochs or all, are left out of the plot and named in the notes; nothing panics.
func TestPlotUndrawable(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	eps := []Epoch{
		{Epoch: 1, Loss: 10, Fit: 9, Curvature: 1, ReconMSE: 0},
		{Epoch: 2, Loss: inf, Fit: 8, Curvature: 0, ReconMSE: -1},
		{Epoch: 3, Loss: 8, Fit: nan, Curvature: -1e-13, ReconMSE: nan},
		{Epoch: 4, Loss: 7, Fit: 6, Curvature: math.Inf(-1), ReconMSE: inf},
	}
	cfg := defaultConfig()
	for name, eps := range map[string][]Epoch{"some": eps, "one": eps[1:2], "none": nil} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "loss.png")
			notes, err := writePlot(path, eps, cfg)
			require.NoError(t, err)
			_, err = os.Stat(path)
			require.NoError(t, err)
			if name == "some" {
				all := strings.Join(notes, "\n")
				require.Contains(t, all, "loss = fit + curvature: 1 of 4 values NaN or ±Inf")
				require.Contains(t, all, "fit ‖y−ẑ‖²/2σ²: 1 of 4 values NaN or ±Inf")
				require.Contains(t, all, "curvature ½·log det(I+H/σ²λ): 2 of 4 values ≤ 0, 1 of 4 values NaN or ±Inf")
				require.Contains(t, all, "recon MSE: 2 of 4 values ≤ 0, 2 of 4 values NaN or ±Inf")
			}
		})
	}
}

// TestParseFloatUnderflow: a float flag whose text is not zero but rounds to 0 (1e-400) is
// refused by the flag parser, naming the flag and the text, rather than reported later as 0.
func TestParseFloatUnderflow(t *testing.T) {
	for _, args := range [][]string{{"-lambda", "1e-400"}, {"-tau", "-0x1p-2000"}, {"-noise", "5e-325"}} {
		var errOut bytes.Buffer
		_, err := parseFlags(args, &errOut)
		require.Error(t, err, "%v", args)
		require.Contains(t, errOut.String(), args[0], "%v", args)
		require.Contains(t, errOut.String(), "underflows to 0", "%v", args)
	}
	var errOut bytes.Buffer
	cfg, err := parseFlags([]string{"-settle", "0", "-noise", "0.25", "-lr", "1e-3", "-lambda", "-0.0e7"}, &errOut)
	require.NoError(t, err, errOut.String())
	require.Equal(t, 0.0, cfg.Settle)
	require.Equal(t, 0.25, cfg.Noise)
	require.Equal(t, 1e-3, cfg.LearnRate)
	require.Equal(t, 0.0, cfg.Lambda, "a written zero is a zero (refused later by validate)")
	def, err := parseFlags(nil, &errOut)
	require.NoError(t, err)
	require.Equal(t, defaultConfig(), def)
}

// TestEpochLineHugeValues: an epoch line stays short when a value is huge (σ = 1e150
// makes the MSE about 1e300), and keeps the fixed format otherwise.
func TestEpochLineHugeValues(t *testing.T) {
	cfg := shortConfig(t)
	cfg.Noise, cfg.Epochs = 1e150, 1
	_, stdout, _, err := runCapture(cfg)
	require.NoError(t, err)
	for _, line := range strings.Split(stdout, "\n") {
		require.Less(t, len(line), 200, line)
	}
	require.Contains(t, stdout, "recon MSE 1.")
	require.Contains(t, stdout, "e+300")
	require.Equal(t, "   3.1416", fixed(math.Pi, 9, 4))
	require.Equal(t, "-1.2346e+09", fixed(-1234567890, 9, 4))
}

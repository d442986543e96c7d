package main

import (
	"bytes"
	"encoding/csv"
	"errors"
	"flag"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/gatejet/gatejet"
	"github.com/gatejet/gatejet/cudaops"
	"github.com/gatejet/gatejet/internal/dispatch"
	"github.com/stretchr/testify/require"
)

// shortConfig is a run of a few epochs on a small data set, written into a temporary
// directory.
func shortConfig(t *testing.T) Config {
	cfg := defaultConfig()
	cfg.N, cfg.Batch, cfg.K, cfg.P, cfg.Epochs = 1024, 64, 6, 8, 6
	cfg.Settle = 0 // run every epoch
	cfg.GPU = "off"
	cfg.Out = t.TempDir()
	return cfg
}

func TestRunShort(t *testing.T) {
	cfg := shortConfig(t)
	var stdout, stderr bytes.Buffer
	cfg.Stdout, cfg.Stderr = &stdout, &stderr
	res, err := run(cfg)
	require.NoError(t, err)

	require.Len(t, res.Epochs, cfg.Epochs)
	first, last := res.Epochs[0], res.Epochs[len(res.Epochs)-1]
	require.Less(t, last.Loss, 0.5*first.Loss, "the loss must go down: %+v", res.Epochs)
	require.Less(t, last.ReconMSE, first.ReconMSE)
	for _, e := range res.Epochs {
		require.Greater(t, e.Curvature, 0.0, "log det(I + H/σ²λ) > 0 for a non-degenerate gate")
		require.InDelta(t, e.Loss, e.Fit+e.Curvature, 1e-9*e.Loss)
		require.Greater(t, e.RowsPerSec, 0.0)
	}
	require.Equal(t, cudaops.PathCPU, res.JetPath)
	require.Equal(t, cfg.Epochs, strings.Count(stdout.String(), "\nepoch "), stdout.String())
	require.Contains(t, stderr.String(), "batches", "the progress bar goes to stderr")

	png, err := os.ReadFile(res.PlotPath)
	require.NoError(t, err)
	require.True(t, bytes.HasPrefix(png, []byte("\x89PNG\r\n\x1a\n")), "PNG magic bytes")
	require.Greater(t, len(png), 10_000, "a plot, not an empty image")

	f, err := os.Open(res.CSVPath)
	require.NoError(t, err)
	defer f.Close()
	records, err := csv.NewReader(f).ReadAll()
	require.NoError(t, err)
	require.Equal(t, csvHeader, records[0])
	require.Len(t, records, 1+cfg.Epochs, "a header and one row per epoch")
	for i, rec := range records[1:] {
		n, err := strconv.Atoi(rec[0])
		require.NoError(t, err)
		require.Equal(t, res.Epochs[i].Epoch, n)
	}
}

// TestRunRepeats: the data, the initial parameters and the batch order all come from the
// seed, so two runs print the same losses.
func TestRunRepeats(t *testing.T) {
	cfg := shortConfig(t)
	cfg.Epochs = 2
	a, err := run(cfg)
	require.NoError(t, err)
	b, err := run(cfg)
	require.NoError(t, err)
	for i := range a.Epochs {
		require.Equal(t, a.Epochs[i].Loss, b.Epochs[i].Loss)
		require.Equal(t, a.Epochs[i].ReconMSE, b.Epochs[i].ReconMSE)
	}
}

func TestRunSettles(t *testing.T) {
	cfg := shortConfig(t)
	cfg.Epochs, cfg.Settle = 200, 0.05
	res, err := run(cfg)
	require.NoError(t, err)
	require.True(t, res.Settled)
	require.Less(t, len(res.Epochs), cfg.Epochs)
}

func TestGPURequiredWithoutBackend(t *testing.T) {
	if dispatch.Active() != nil {
		t.Skip("a GPU backend is registered")
	}
	cfg := shortConfig(t)
	cfg.GPU = "required"
	before := cudaops.CurrentMode()
	_, err := run(cfg)
	require.Error(t, err)
	require.True(t, errors.Is(err, gatejet.ErrDevice), "%v", err)
	require.Contains(t, err.Error(), "GPU mode required")
	require.Equal(t, before, cudaops.CurrentMode(), "the mode is left as it was")
	entries, err := os.ReadDir(cfg.Out)
	require.NoError(t, err)
	require.Empty(t, entries, "nothing is written when the run cannot start")
}

func TestBadConfig(t *testing.T) {
	for name, edit := range map[string]func(*Config){
		"K=1":      func(c *Config) { c.K = 1 },
		"tau=0":    func(c *Config) { c.Tau = 0 },
		"lambda<0": func(c *Config) { c.Lambda = -1 },
		"gpu=fast": func(c *Config) { c.GPU = "fast" },
		"no out":   func(c *Config) { c.Out = "" },
	} {
		t.Run(name, func(t *testing.T) {
			cfg := shortConfig(t)
			edit(&cfg)
			_, err := run(cfg)
			require.Error(t, err)
		})
	}
}

// TestUsage: -h prints the command line and what the command does, and is no failure.
func TestUsage(t *testing.T) {
	var errOut bytes.Buffer
	_, err := parseFlags([]string{"-h"}, &errOut)
	require.ErrorIs(t, err, flag.ErrHelp)
	require.Contains(t, errOut.String(), "usage: go run ./examples/curvature [flags]\n"+about+"\n")
}

func TestParseFlags(t *testing.T) {
	var errOut bytes.Buffer
	cfg, err := parseFlags([]string{"-n", "100", "-K", "4", "-tau", "0.5", "-gpu", "off", "-out", "x"}, &errOut)
	require.NoError(t, err)
	require.Equal(t, 100, cfg.N)
	require.Equal(t, 4, cfg.K)
	require.Equal(t, 0.5, cfg.Tau)
	require.Equal(t, "off", cfg.GPU)
	require.Equal(t, "x", cfg.Out)

	_, err = parseFlags([]string{"extra"}, &errOut)
	require.Error(t, err)
	_, err = parseFlags([]string{"-n", "many"}, &errOut)
	require.Error(t, err)
}

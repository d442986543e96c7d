package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gatejet/gatejet/internal/exampleutil"
)

// TestProgressNotTerminal: given a writer that is not a terminal (a buffer, a regular file),
// the progress writer writes no carriage-return frames, only one plain line.
func TestProgressNotTerminal(t *testing.T) {
	draw := func(p *progress) {
		for e := 1; e <= 3; e++ {
			for b := 0; b < 50; b++ {
				p.show(e, 3, b, 50)
			}
			p.Clear()
		}
	}
	var buf bytes.Buffer
	draw(newProgress(&buf))
	require.NotContains(t, buf.String(), "\r")
	require.Equal(t, 1, strings.Count(buf.String(), "\n"), buf.String())
	require.Contains(t, buf.String(), "50 batches per epoch")

	f, err := os.Create(filepath.Join(t.TempDir(), "stderr.log"))
	require.NoError(t, err)
	defer f.Close()
	draw(newProgress(f))
	log, err := os.ReadFile(f.Name())
	require.NoError(t, err)
	require.NotContains(t, string(log), "\r")
	require.NotEmpty(t, log)

	// A terminal still gets the bar, redrawn in place.
	buf.Reset()
	draw(&progress{Progress: exampleutil.Progress{W: &buf}, tty: true})
	require.Contains(t, buf.String(), "\r")
	require.Contains(t, buf.String(), "epoch 1/3 [")
}

// TestRunProgressRedirected: run with a stderr that is not a terminal leaves no carriage
// returns in it.
func TestRunProgressRedirected(t *testing.T) {
	cfg := shortConfig(t)
	cfg.N, cfg.Epochs = 256, 1
	var stdout, stderr bytes.Buffer
	cfg.Stdout, cfg.Stderr = &stdout, &stderr
	_, err := run(cfg)
	require.NoError(t, err)
	require.NotContains(t, stderr.String(), "\r", stderr.String())
}

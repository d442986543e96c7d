//go:build cgo

package emu

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/gatejet/gatejet/cudaops"
	"github.com/gatejet/gatejet/cudaops/internal/launch"
	"github.com/gatejet/gatejet/cudaops/internal/testcase"
	"github.com/gatejet/gatejet/internal/cpuref"
	"github.com/stretchr/testify/require"
)

// golden is one file written by testdata/golden/make_golden.py (PyTorch float64, torch.func).
type golden struct {
	Torch   string    `json:"torch"`
	NN      int       `json:"N"`
	KK      int       `json:"K"`
	PP      int       `json:"P"`
	InvTau  float64   `json:"inv_tau"`
	Logits  []float64 `json:"logits"`
	Decoded []float64 `json:"decoded"`
	Value   []float64 `json:"value"`
	First   []float64 `json:"first"`
	Second  []float64 `json:"second"`
}

// TestGoldenPyTorch compares the emulated kernels and softmaxjet with PyTorch's autograd of
// the same reconstruction, when the golden files exist (make_golden.py needs torch; the test
// is skipped, loudly, without them).
func TestGoldenPyTorch(t *testing.T) {
	files, err := filepath.Glob("../../../testdata/golden/softmax_jet_*.json")
	require.NoError(t, err)
	if len(files) == 0 {
		t.Skip("no golden files: run python3 testdata/golden/make_golden.py (needs torch)")
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		require.NoError(t, err)
		var g golden
		require.NoError(t, json.Unmarshal(data, &g), f)
		ints := []int{g.NN, g.KK, g.PP}
		for _, ch := range []struct {
			k    cudaops.Kernel
			want []float64
		}{{cudaops.KernelJetValue, g.Value}, {cudaops.KernelJetFirst, g.First}, {cudaops.KernelJetSecond, g.Second}} {
			c := testcase.New(ch.k, cudaops.Float64, ints, newRNG(0, 0))
			c.In = []any{g.Logits, g.Decoded}
			c.Floats = []float64{g.InvTau}
			emulate(t, c, launch.Options{})
			require.LessOrEqual(t, testcase.RelErr(c.Out[0].([]float64), ch.want), 1e-12, "%s emulated vs torch %s", filepath.Base(f), g.Torch)
			cpu := testcase.Clone(c)
			require.NoError(t, cpuref.Run(cpu))
			require.LessOrEqual(t, testcase.RelErr(cpu.Out[0].([]float64), ch.want), 1e-12, "%s softmaxjet vs torch", filepath.Base(f))
		}
	}
}

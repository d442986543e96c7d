package golden

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gatejet/gatejet/internal/kernel"
)

// TestLoadCoordCommitted: the committed coordinate-jet files load, carry the torch version,
// and cover both gates, K = 1 and K > 1.
func TestLoadCoordCommitted(t *testing.T) {
	jets, err := CoordJets(dir)
	require.NoError(t, err)
	gates, ks := map[string]bool{}, map[bool]bool{}
	for _, j := range jets {
		require.NotEmpty(t, j.Torch, j.File)
		gates[j.Gate], ks[j.K == 1] = true, true
	}
	require.Equal(t, map[string]bool{"softmax": true, "logistic": true}, gates)
	require.Equal(t, map[bool]bool{true: true, false: true}, ks)
}

// TestCoordCases: a file's Cases are its gate's four coordinate jets, each a Call that passes
// Check, with the gate's floats, and the CPU kernels reproduce torch's outputs at Tol.
func TestCoordCases(t *testing.T) {
	jets, err := CoordJets(dir)
	require.NoError(t, err)
	for _, j := range jets {
		g := kernel.SoftmaxGate
		if j.Gate == "logistic" {
			g = kernel.LogisticGate
		}
		cs := j.Cases()
		require.Len(t, cs, kernel.NumCoord, j.File)
		for _, c := range cs {
			id := kernel.ID(c.Call.Kernel)
			require.Equal(t, kernel.CoordJet, id.Family(), c.Name)
			require.Same(t, g, id.Spec().Gate, c.Name)
			require.NoError(t, c.Call.Check(), c.Name)
			require.NoError(t, kernel.Run("golden", id, &c.Call.F64, c.Call.Ints, c.Call.Floats), c.Name)
			require.LessOrEqual(t, RelErr(c.Call.F64.Out[0], c.Want[0]), Tol, c.Name)
		}
	}
}

// TestLoadCoordRefuses: no files, a corrupt stream, an unknown field, a missing or short array
// and gate parameters that do not fit the gate are errors.
func TestLoadCoordRefuses(t *testing.T) {
	_, err := CoordJets(t.TempDir())
	require.ErrorContains(t, err, "no coord_jet_")

	d := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(d, "coord_jet_bad.json.gz"), []byte("not gzip"), 0o644))
	_, err = CoordJets(d)
	require.ErrorContains(t, err, "coord_jet_bad.json.gz")

	src, err := filepath.Glob(filepath.Join(dir, "coord_jet_logistic_unit_*.json.gz"))
	require.NoError(t, err)
	require.Len(t, src, 1)
	data, err := readFile(src[0])
	require.NoError(t, err)
	for name, edit := range map[string]func(m map[string]any){
		"unknown field":     func(m map[string]any) { m["third"] = []float64{1} },
		"missing array":     func(m map[string]any) { delete(m, "d2") },
		"short array":       func(m map[string]any) { m["second"] = m["second"].([]any)[1:] },
		"short vjp array":   func(m map[string]any) { v := m["hvp_vjp"].(map[string]any); v["d_d2"] = v["d_d2"].([]any)[1:] },
		"extra vjp array":   func(m map[string]any) { v := m["first_vjp"].(map[string]any); v["d_d2"] = m["d2"] },
		"no torch version":  func(m map[string]any) { delete(m, "torch") },
		"unknown gate":      func(m map[string]any) { m["gate"] = "sparsemax" },
		"inv_tau, logistic": func(m map[string]any) { m["inv_tau"] = 1.0 },
		"short alpha":       func(m map[string]any) { m["alpha"] = []float64{} },
		"softmax with beta": func(m map[string]any) { m["gate"], m["inv_tau"] = "softmax", 1.0 },
		"softmax, no evidence": func(m map[string]any) {
			m["gate"], m["inv_tau"] = "softmax", 1.0
			delete(m, "alpha")
			delete(m, "beta")
		},
		"logistic evidence": func(m map[string]any) { m["evidence"] = map[string]any{"log_sigma": 0} },
	} {
		var m map[string]any
		require.NoError(t, json.Unmarshal(data, &m))
		edit(m)
		out, err := json.Marshal(m)
		require.NoError(t, err)
		var z bytes.Buffer
		w := gzip.NewWriter(&z)
		_, err = w.Write(out)
		require.NoError(t, err)
		require.NoError(t, w.Close())
		d := t.TempDir()
		require.NoError(t, os.WriteFile(filepath.Join(d, "coord_jet_x.json.gz"), z.Bytes(), 0o644))
		_, err = CoordJets(d)
		require.Error(t, err, name)
		require.True(t, strings.Contains(err.Error(), "coord_jet_x.json.gz"), "%s: %v", name, err)
	}
}

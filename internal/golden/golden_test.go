package golden

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

const dir = "../../testdata/golden"

// TestLoadCommitted: the committed files load, carry the torch version, and give a case per
// kernel with float64 inputs.
func TestLoadCommitted(t *testing.T) {
	jets, err := Jets(dir)
	require.NoError(t, err)
	require.NotEmpty(t, jets)
	axes, err := Axes(dir)
	require.NoError(t, err)
	require.NotEmpty(t, axes)
	for _, j := range jets {
		require.NotEmpty(t, j.Torch, j.File)
		require.Len(t, j.Cases(), 10, j.File)
	}
	for _, a := range axes {
		require.NotEmpty(t, a.Torch, a.File)
		for _, c := range a.Cases() {
			require.NoError(t, c.Call.Check(), c.Name)
		}
	}
}

// TestLoadRefuses: no files, an unknown field, a missing or short array and a missing torch
// version are errors, not an empty or partial result.
func TestLoadRefuses(t *testing.T) {
	_, err := Jets(t.TempDir())
	require.ErrorContains(t, err, "no softmax_jet_")
	_, err = Axes(t.TempDir())
	require.ErrorContains(t, err, "no softmax_axis_")

	src, err := filepath.Glob(filepath.Join(dir, "softmax_jet_N3_*.json"))
	require.NoError(t, err)
	require.Len(t, src, 1)
	data, err := os.ReadFile(src[0])
	require.NoError(t, err)
	for name, edit := range map[string]func(m map[string]any){
		"unknown field":    func(m map[string]any) { m["hessian"] = []float64{1} },
		"missing array":    func(m map[string]any) { delete(m, "second") },
		"short array":      func(m map[string]any) { m["first"] = m["first"].([]any)[1:] },
		"short vjp array":  func(m map[string]any) { v := m["hvp_vjp"].(map[string]any); v["d_v"] = v["d_v"].([]any)[1:] },
		"no torch version": func(m map[string]any) { delete(m, "torch") },
		"bad shape":        func(m map[string]any) { m["K"] = 0 },
	} {
		var m map[string]any
		require.NoError(t, json.Unmarshal(data, &m))
		edit(m)
		out, err := json.Marshal(m)
		require.NoError(t, err)
		d := t.TempDir()
		require.NoError(t, os.WriteFile(filepath.Join(d, "softmax_jet_x.json"), out, 0o644))
		_, err = Jets(d)
		require.Error(t, err, name)
		require.True(t, strings.Contains(err.Error(), "softmax_jet_x.json"), "%s: %v", name, err)
	}
}

func TestRelErr(t *testing.T) {
	require.Equal(t, 0.5, RelErr([]float64{1, 3}, []float64{1, 2}))
	require.Equal(t, 0.25, RelErr([]float64{0.25}, []float64{0}))
	require.Equal(t, 0.0, RelErr([]float64{math.NaN()}, []float64{math.NaN()}))
	require.True(t, math.IsInf(RelErr([]float64{math.NaN()}, []float64{1}), 1))
	require.True(t, math.IsInf(RelErr([]float64{1}, []float64{1, 2}), 1))
}

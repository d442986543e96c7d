//go:build cgo

package emu

import (
	"fmt"
	"maps"
	"slices"
	"testing"

	"github.com/gatejet/gatejet/cudaops/internal/launch"
	"github.com/gatejet/gatejet/internal/golden"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestGoldenPyTorch compares every emulated softmax-gate jet kernel (channels and VJPs),
// softmax-family axis kernel (backward and double backward) and coordinate jet of both gates
// with PyTorch's autograd of the same functions, recorded in testdata/golden by make_golden.py
// and make_coord_golden.py (float64, 1e-12 normwise). The files are committed; a missing or
// malformed file fails the test.
func TestGoldenPyTorch(t *testing.T) {
	const dir = "../../../testdata/golden"
	jets, err := golden.Jets(dir)
	require.NoError(t, err)
	axes, err := golden.Axes(dir)
	require.NoError(t, err)
	coords, err := golden.CoordJets(dir)
	require.NoError(t, err)
	var cases []golden.Case
	for _, j := range jets {
		cases = append(cases, j.Cases()...)
	}
	for _, a := range axes {
		cases = append(cases, a.Cases()...)
	}
	for _, j := range coords {
		cases = append(cases, j.Cases()...)
	}
	worst := map[string]float64{} // per kernel output, for go test -v
	for _, c := range cases {
		emulate(t, c.Call, launch.Options{})
		for i, want := range c.Want {
			e := golden.RelErr(c.Call.F64.Out[i], want)
			key := fmt.Sprintf("%s[%d]", c.Call.Kernel, i)
			worst[key] = max(worst[key], e)
			assert.LessOrEqual(t, e, golden.Tol, "%s output %d: emulated vs torch, normwise relative error %.3g", c.Name, i, e)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(worst)) {
		t.Logf("emulator: max normwise relative error %-30s %.3g", k, worst[k])
	}
}

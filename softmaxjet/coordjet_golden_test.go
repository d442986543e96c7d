package softmaxjet_test

import (
	"fmt"
	"maps"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gatejet/gatejet"
	"github.com/gatejet/gatejet/internal/golden"
	"github.com/gatejet/gatejet/softmaxjet"
)

// The coordinate jets against PyTorch: testdata/golden/coord_jet_*.json.gz, written by
// make_coord_golden.py with torch's autograd in float64 from the row function ẑ(ℓ, t) itself.
// Every channel of both gates, at normwise relative error ≤ 1e-12 in float64 and 1e-5 in float32
// (inputs rounded to float32, compared with the float64 answer), measured block by block of
// the primaries (logit rows, coordinate rows) so that a block much smaller than the others
// (the logit rows at inverse temperature 1e-3) is held to the same relative accuracy.

const coordGoldenDir = "../testdata/golden"

// coordBlocks splits a channel laid out [N, 2K, …, inner] (rank primary axes of length 2K) into
// its blocks of logit (ℓ) and coordinate (t) primaries: for rank 1 "ℓ" and "t", for rank 2 "ℓℓ",
// "ℓt", "tℓ", "tt". It returns, per block, the flat indices of its elements.
func coordBlocks(N, K, rank, inner int) map[string][]int {
	out := map[string][]int{}
	K2 := 2 * K
	per := inner
	for range rank {
		per *= K2
	}
	name := func(a int) string {
		if a < K {
			return "ℓ"
		}
		return "t"
	}
	for n := range N {
		for i := range per {
			rest, key := i/inner, ""
			for range rank {
				key = name(rest%K2) + key
				rest /= K2
			}
			out[key] = append(out[key], n*per+i)
		}
	}
	return out
}

func gather(x []float64, idx []int) []float64 {
	out := make([]float64, len(idx))
	for i, j := range idx {
		out[i] = x[j]
	}
	return out
}

func toF32(x []float64) []float32 {
	out := make([]float32, len(x))
	for i, v := range x {
		out[i] = float32(v)
	}
	return out
}

func toF64[T gatejet.Float](x []T) []float64 {
	out := make([]float64, len(x))
	for i, v := range x {
		out[i] = float64(v)
	}
	return out
}

// coordChannels runs the four coordinate-jet kernels on the file's inputs in precision T.
func coordChannels[T gatejet.Float](t *testing.T, j *golden.CoordJet, conv func([]float64) []T) map[string][]float64 {
	t.Helper()
	var g softmaxjet.Gate[T]
	if j.Gate == "softmax" {
		g = softmaxjet.Softmax[T]{InvTau: j.InvTau}
	} else {
		g = softmaxjet.Logistic[T]{Alpha: j.Alpha, Beta: j.Beta}
	}
	sh := softmaxjet.Shape{N: j.N, K: j.K, P: j.P}
	l, d0, d1, d2, v := conv(j.Logits), conv(j.D0), conv(j.D1), conv(j.D2), conv(j.V)
	first, hvp := make([]T, len(j.First)), make([]T, len(j.HVP))
	second, gn := make([]T, len(j.Second)), make([]T, len(j.GaussNewton))
	require.NoError(t, softmaxjet.CoordFirst(g, first, l, d0, d1, sh), j.File)
	require.NoError(t, softmaxjet.CoordSecond(g, second, l, d0, d1, d2, sh), j.File)
	require.NoError(t, softmaxjet.CoordGaussNewton(g, gn, l, d0, d1, sh), j.File)
	require.NoError(t, softmaxjet.CoordHVP(g, hvp, l, d0, d1, d2, v, sh), j.File)
	return map[string][]float64{"first": toF64(first), "second": toF64(second), "gauss_newton": toF64(gn), "hvp": toF64(hvp)}
}

func TestCoordGoldenPyTorch(t *testing.T) {
	jets, err := golden.CoordJets(coordGoldenDir)
	require.NoError(t, err)
	worst := map[string]float64{}
	for _, j := range jets {
		want := map[string][]float64{"first": j.First, "second": j.Second, "gauss_newton": j.GaussNewton, "hvp": j.HVP}
		layout := map[string][2]int{"first": {1, j.P}, "second": {2, j.P}, "gauss_newton": {2, 1}, "hvp": {1, j.P}}
		for _, prec := range []struct {
			name string
			tol  float64
			got  map[string][]float64
		}{
			{"float64", golden.Tol, coordChannels(t, j, func(x []float64) []float64 { return x })},
			{"float32", 1e-5, coordChannels(t, j, toF32)},
		} {
			for ch, w := range want {
				got := prec.got[ch]
				e := golden.RelErr(got, w)
				assert.LessOrEqual(t, e, prec.tol, "%s %s %s: normwise relative error %.3g against torch", j.File, prec.name, ch, e)
				key := fmt.Sprintf("%s %s %s", j.Gate, prec.name, ch)
				worst[key] = max(worst[key], e)
				for block, idx := range coordBlocks(j.N, j.K, layout[ch][0], layout[ch][1]) {
					e := golden.RelErr(gather(got, idx), gather(w, idx))
					assert.LessOrEqual(t, e, prec.tol, "%s %s %s block %s: normwise relative error %.3g against torch", j.File, prec.name, ch, block, e)
					worst[key+" "+block] = max(worst[key+" "+block], e)
				}
			}
		}
	}
	for _, k := range slices.Sorted(maps.Keys(worst)) {
		t.Logf("max normwise relative error %-40s %.3g", k, worst[k])
	}
}

//go:build cgo

package emu

import (
	"os"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gatejet/gatejet/internal/kernel"
)

// TestSharedLayoutsAreCurrent: the shared-memory layouts of the kernel table
// (internal/kernel/shared_layouts.go) are what the kernels carve, as measured now.
func TestSharedLayoutsAreCurrent(t *testing.T) {
	want, err := SharedLayoutsSource()
	require.NoError(t, err)
	got, err := os.ReadFile("../../../internal/kernel/shared_layouts.go")
	require.NoError(t, err)
	if string(got) != want {
		t.Fatalf("internal/kernel/shared_layouts.go is not the layouts the kernels carve: run go generate ./cudaops/...")
	}
}

// TestFitLayout: the fit recovers every term of kernel.Shared from the measured points, and
// refuses counts of another form (a K·CT term, a K² term, a half double) instead of rounding
// them to a wrong layout.
func TestFitLayout(t *testing.T) {
	points := func(f func(K, CT int) int) []layoutPoint {
		var pts []layoutPoint
		for _, K := range layoutKs {
			for _, CT := range layoutTiles {
				pts = append(pts, layoutPoint{K, CT, f(K, CT)})
			}
		}
		return pts
	}
	for _, want := range []kernel.Shared{{}, {K: 4, Kp: 1, Tile: 2, Cols: 5, One: 2}, {Kp: 3}, {Tile: 1}, {Cols: 7}, {One: 1}, {K: 5, Tile: 2}} {
		got, err := fitLayout(points(func(K, CT int) int { return want.Doubles(K, CT) }))
		require.NoError(t, err, "%+v", want)
		require.Equal(t, want, got)
	}
	for name, f := range map[string]func(K, CT int) int{
		"K·CT":      func(K, CT int) int { return K*CT + K },
		"K²":        func(K, _ int) int { return K * K },
		"pow2(CT)":  func(_, CT int) int { return CT * CT },
		"negative":  func(K, _ int) int { return 10 - K },
		"one point": func(K, CT int) int { return map[bool]int{true: 1}[K == 3 && CT == 2] + K },
	} {
		_, err := fitLayout(points(f))
		require.Error(t, err, name)
	}
}

// TestMeasureSharedLayoutRefuses: only device row and coordinate jets have a measured layout.
func TestMeasureSharedLayoutRefuses(t *testing.T) {
	for _, k := range []kernel.ID{0, kernel.SoftmaxBackward, kernel.ReLUForward, kernel.SoftArgmin} {
		_, err := MeasureSharedLayout(k)
		require.ErrorContains(t, err, "not a device row or coordinate jet", "%v", k)
	}
}

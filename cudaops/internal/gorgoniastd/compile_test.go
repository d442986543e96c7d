//go:build gatejetcuda || cuda

package gorgoniastd

import (
	"errors"
	"regexp"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gatejet/gatejet/cudaops/internal/cudatest"
	"github.com/gatejet/gatejet/cudaops/internal/cudrv"
	"github.com/gatejet/gatejet/cudaops/internal/modcache"
)

var entry = regexp.MustCompile(`(?m)^\s*\.(?:visible\s+)?\.entry\s+([A-Za-z0-9_]+)`)

// TestCUDACompileGorgoniaSources compiles Gorgonia's own sources with NVRTC, as cudadoer does
// for its CUDA machines: needs NVRTC and the sources (the module cache's, or
// GATEJET_GORGONIA_CUDA_SRC), not a GPU.
func TestCUDACompileGorgoniaSources(t *testing.T) {
	cudatest.NeedNVRTC(t, cudrv.LoadNVRTC())
	dir, err := SourceDir()
	if errors.Is(err, ErrNoSources) {
		t.Skipf("%v", err)
	}
	require.NoError(t, err)
	arch, err := VirtualArch("sm_90")
	require.NoError(t, err)
	require.Equal(t, "compute_90", arch)
	libs, err := Compile(dir, arch)
	require.NoError(t, err)
	funcs := map[string][]string{}
	for _, l := range libs {
		require.Equal(t, modcache.Arch("sm_90"), modcache.PTXTarget(l.PTX), l.Name)
		// cudagen's .globl list is every entry point of the module.
		var entries []string
		for _, m := range entry.FindAllStringSubmatch(l.PTX, -1) {
			entries = append(entries, m[1])
		}
		require.Equal(t, entries, l.Funcs, l.Name)
		funcs[l.Name] = l.Funcs
	}
	require.Len(t, funcs, 5)
	// What Gorgonia's device ops look up ("<module>.<op>_<vv|vs|sv|ss>_f<bits>",
	// "<module>.<op>_f<bits>"), for the ops of the CUDADoer graph tests.
	for _, op := range []string{"add", "sub", "mul", "div"} {
		for _, v := range []string{"vv", "vs", "sv", "ss"} {
			for _, b := range []string{"f32", "f64"} {
				require.Contains(t, funcs["elembinop"], op+"_"+v+"_"+b)
			}
		}
	}
	for _, op := range []string{"exp", "square", "neg"} {
		require.Contains(t, funcs["elemunaryop"], op+"_f64")
		require.Contains(t, funcs["elemunaryop"], op+"_f32")
	}
}

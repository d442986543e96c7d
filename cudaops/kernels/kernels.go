// Package kernels holds the CUDA C source of every gatejet kernel (gatejet.cu) and the NVRTC
// options a module of it is compiled with. It is pure Go and imports nothing from CUDA, so
// the source can be compiled and inspected (cudaops/internal/nvrtccomp) or emulated
// (cudaops/internal/emu) without a GPU.
package kernels

import (
	_ "embed"
	"strings"

	"github.com/gatejet/gatejet/internal/kernel"
)

// Source is gatejet.cu.
//
//go:embed gatejet.cu
var Source string

// Options returns the NVRTC options of a module holding the kernels named entries (the
// kernel table's kernels of module) for one element type, compiled for the real architecture
// arch (e.g. "sm_90"): code for the device's own architecture, no contraction of a*b+c into
// fused multiply-adds (float64 results then round as on the CPU; the math library's own
// exp/tanh still use FMA internally), only the module's code and only the element type's
// entry points of those kernels.
func Options(arch, module string, entries []string, float32 bool) []string {
	want := "-DGJ_WANT_F64"
	if float32 {
		want = "-DGJ_WANT_F32"
	}
	return []string{"--gpu-architecture=" + arch, "--fmad=false", "-DGJ_FAMILY_" + module,
		"-DGJ_ENTRIES=" + Entries(entries), want}
}

// Entries is the definition of GJ_ENTRIES for the entry-point stems named
// (kernel.ModuleKernels): GJ_ENTRY(name) for each kernel, GJ_WARP_ENTRY(name) for the stem
// name_warp of its warp-per-row variant.
func Entries(names []string) string {
	var b strings.Builder
	for i, n := range names {
		if i > 0 {
			b.WriteByte(' ')
		}
		if k, ok := strings.CutSuffix(n, kernel.WarpSuffix); ok {
			b.WriteString("GJ_WARP_ENTRY(" + k + ")")
		} else {
			b.WriteString("GJ_ENTRY(" + n + ")")
		}
	}
	return b.String()
}

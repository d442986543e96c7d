// Package kernels holds the CUDA C source of every gatejet kernel (gatejet.cu) and the NVRTC
// options a module of it is compiled with. It is pure Go and imports nothing from CUDA, so
// the source can be compiled and inspected (cudaops/internal/nvrtccomp) or emulated
// (cudaops/internal/emu) without a GPU.
package kernels

import _ "embed"

// Source is gatejet.cu.
//
//go:embed gatejet.cu
var Source string

// Options returns the NVRTC options of a module holding one family's kernels for one element
// type, compiled for the real architecture arch (e.g. "sm_90"): code for the device's own
// architecture, no contraction of a*b+c into fused multiply-adds (float64 results then round
// as on the CPU; the math library's own exp/tanh still use FMA internally), only the module's
// kernels and only the element type's entry points.
func Options(arch, module string, float32 bool) []string {
	want := "-DGJ_WANT_F64"
	if float32 {
		want = "-DGJ_WANT_F32"
	}
	return []string{"--gpu-architecture=" + arch, "--fmad=false", "-DGJ_FAMILY_" + module, want}
}

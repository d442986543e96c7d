package cudaops

import (
	"strings"

	"github.com/gatejet/gatejet/cudaops/kernels"
)

// KernelSource is the CUDA C source of every kernel (kernels/gatejet.cu). The device backend
// (build tag cuda) compiles it with NVRTC; cudaops/internal/emu compiles the same file for the
// host. Entry points are named gj_<kernel>_f32 and gj_<kernel>_f64.
var KernelSource = kernels.Source

// EntryPoint returns the name of the device function that runs kernel k on element type dt.
func EntryPoint(k Kernel, dt DType) string {
	suffix := "f64"
	if dt == Float32 {
		suffix = "f32"
	}
	return "gj_" + string(k) + "_" + suffix
}

// familyMacro is the preprocessor symbol that selects a family's kernels in KernelSource.
func familyMacro(f Family) string {
	switch f {
	case FamilySoftmaxJet:
		return "GJ_FAMILY_SOFTMAX_JET"
	case FamilyLogisticJet:
		return "GJ_FAMILY_LOGISTIC_JET"
	case FamilyAxis:
		return "GJ_FAMILY_AXIS"
	case FamilyElementwise:
		return "GJ_FAMILY_ELEMENTWISE"
	}
	return ""
}

// String returns the family's name ("softmax_jet", "logistic_jet", "axis", "elementwise").
func (f Family) String() string {
	m := familyMacro(f)
	if m == "" {
		return "unknown"
	}
	return strings.ToLower(strings.TrimPrefix(m, "GJ_FAMILY_"))
}

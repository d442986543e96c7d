package cudaops

import "github.com/gatejet/gatejet/cudaops/kernels"

// KernelSource is the CUDA C source of every kernel (kernels/gatejet.cu). The device backend
// (build tag gatejetcuda) compiles it with NVRTC; cudaops/internal/emu compiles the same file for the
// host. Entry points are named gj_<kernel>_f32 and gj_<kernel>_f64.
var KernelSource = kernels.Source

// EntryPoint returns the name of the device function that runs kernel k on element type dt.
func EntryPoint(k Kernel, dt DType) string { return k.id().Entry(dt) }

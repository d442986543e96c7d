//go:build gatejetcuda || cuda

package nvrtccomp

import (
	"fmt"

	"github.com/gatejet/gatejet/cudaops/internal/cudrv"
)

// SupportedArchs returns the real architectures this NVRTC can compile for, e.g. "sm_52" …
// "sm_90" (nvrtcGetSupportedArchs, NVRTC 11.2 and later).
func SupportedArchs() ([]string, error) {
	archs, err := cudrv.NVRTCSupportedArchs()
	if err != nil {
		return nil, fmt.Errorf("nvrtc: supported architectures: %w", err)
	}
	out := make([]string, len(archs))
	for i, a := range archs {
		out[i] = fmt.Sprintf("sm_%d", a)
	}
	return out, nil
}

// SupportedArchs is the package's SupportedArchs, as the method a module cache asks its
// compiler for (modcache.ArchLister).
func (Compiler) SupportedArchs() ([]string, error) { return SupportedArchs() }

// CudaErrorUnsupportedPTXVersion is the driver's CUDA_ERROR_UNSUPPORTED_PTX_VERSION (cuda.h):
// PTX of a newer ISA than the driver knows, made by a newer toolkit.
const CudaErrorUnsupportedPTXVersion = int64(cudrv.ErrorUnsupportedPTXVersion)

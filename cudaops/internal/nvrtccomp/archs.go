//go:build cuda

package nvrtccomp

/*
#cgo LDFLAGS: -lnvrtc
#include <nvrtc.h>
#include <cuda.h>
*/
import "C"

import "fmt"

// SupportedArchs returns the real architectures this NVRTC can compile for, e.g. "sm_52" …
// "sm_90" (nvrtcGetSupportedArchs, NVRTC 11.2 and later; gorgonia.org/cu v0.9.6 has no
// binding for it).
func SupportedArchs() ([]string, error) {
	var n C.int
	if r := C.nvrtcGetNumSupportedArchs(&n); r != C.NVRTC_SUCCESS {
		return nil, fmt.Errorf("nvrtcGetNumSupportedArchs: %s", C.GoString(C.nvrtcGetErrorString(r)))
	}
	if n <= 0 {
		return nil, fmt.Errorf("nvrtcGetNumSupportedArchs: %d architectures", int(n))
	}
	archs := make([]C.int, int(n))
	if r := C.nvrtcGetSupportedArchs(&archs[0]); r != C.NVRTC_SUCCESS {
		return nil, fmt.Errorf("nvrtcGetSupportedArchs: %s", C.GoString(C.nvrtcGetErrorString(r)))
	}
	out := make([]string, len(archs))
	for i, a := range archs {
		out[i] = fmt.Sprintf("sm_%d", int(a))
	}
	return out, nil
}

// SupportedArchs is the package's SupportedArchs, as the method a module cache asks its
// compiler for (cudaops.ArchLister).
func (Compiler) SupportedArchs() ([]string, error) { return SupportedArchs() }

// CudaErrorUnsupportedPTXVersion is the driver's CUDA_ERROR_UNSUPPORTED_PTX_VERSION (cuda.h,
// read at build time; no driver is loaded): PTX of a newer ISA than the driver knows, made
// by a newer toolkit.
const CudaErrorUnsupportedPTXVersion = C.CUDA_ERROR_UNSUPPORTED_PTX_VERSION

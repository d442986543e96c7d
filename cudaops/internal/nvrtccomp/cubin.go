//go:build gatejetcuda || cuda

package nvrtccomp

import (
	"fmt"

	"github.com/gatejet/gatejet/cudaops/internal/cudrv"
)

// CompileCUBIN compiles src like Compile and returns, with the PTX, the CUBIN: the device code
// of the real architecture the options name (--gpu-architecture=sm_XX), which the driver
// loads without compiling PTX (nvrtcGetCUBIN, NVRTC 11.1 and later). For a virtual
// architecture (compute_XX) NVRTC makes no CUBIN, and that is an error.
func (Compiler) CompileCUBIN(src, name string, options []string) (ptx, cubin string, err error) {
	out, err := cudrv.Compile(src, name, options, true)
	if err != nil {
		return "", "", compileError(name, options, out, err)
	}
	if out.CUBIN == "" {
		return "", "", fmt.Errorf("nvrtc: no CUBIN for %s with %v (a virtual architecture gives none)", name, options)
	}
	return out.PTX, out.CUBIN, nil
}

//go:build cuda

package cudaops

/*
#cgo LDFLAGS: -lcuda
#include <cuda.h>
*/
import "C"

import (
	"fmt"
	"unsafe"

	"gorgonia.org/cu"
)

// allocPinned allocates n bytes of page-locked host memory (cuMemAllocHost, which
// gorgonia.org/cu v0.9.6 does not bind): the staging memory of the asynchronous copies, at the
// full bus bandwidth. The context must be current.
func allocPinned(n int64) (unsafe.Pointer, error) {
	var p unsafe.Pointer
	if r := C.cuMemAllocHost(&p, C.size_t(n)); r != C.CUDA_SUCCESS {
		return nil, fmt.Errorf("cuMemAllocHost(%d): CUresult %d", n, int(r))
	}
	return p, nil
}

func freePinned(p unsafe.Pointer) error { return cu.MemFreeHost(p) }

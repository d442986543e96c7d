//go:build gatejetcuda

package cudaops

import (
	"unsafe"

	"github.com/gatejet/gatejet/cudaops/internal/cudrv"
)

// allocPinned allocates n bytes of page-locked host memory (cuMemAllocHost): the staging
// memory of the asynchronous copies, at the full bus bandwidth. The context must be current.
func allocPinned(n int64) (unsafe.Pointer, error) { return cudrv.MemAllocHost(n) }

func freePinned(p unsafe.Pointer) error { return cudrv.MemFreeHost(p) }

//go:build !purego

package uninit

import "unsafe"

// Zeroed reports whether Float64s and Float32s return zeroed memory (a plain make).
const Zeroed = false

//go:linkname mallocgc runtime.mallocgc
func mallocgc(size uintptr, typ unsafe.Pointer, needzero bool) unsafe.Pointer

// Float64s returns n float64s whose values are unspecified. n must be positive and n·8 must
// fit in an int (the caller checks sizes before allocating).
func Float64s(n int) []float64 {
	return unsafe.Slice((*float64)(mallocgc(uintptr(n)*8, nil, false)), n)
}

// Float32s returns n float32s whose values are unspecified, like Float64s.
func Float32s(n int) []float32 {
	return unsafe.Slice((*float32)(mallocgc(uintptr(n)*4, nil, false)), n)
}

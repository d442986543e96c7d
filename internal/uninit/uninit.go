// Package uninit allocates float slices whose elements are not zeroed, for outputs that a
// kernel overwrites entirely before anyone reads them.
//
// Go zeroes every allocation. For the large outputs of the jet channels that costs more than
// computing them: a 128 MiB second channel takes about 4 ms to allocate and 3.5 ms to compute
// on two cores, so an op that allocates its output each run (Gorgonia's TapeMachine drops its
// registers on Reset) would spend more than half its time clearing memory it then
// overwrites. The runtime's allocator can skip the clearing: runtime.mallocgc, whose
// signature the Go project keeps for the packages that link to it (go.dev/issue/67401). The
// memory is an ordinary garbage-collected, pointer-free object.
//
// The elements hold whatever the memory held before, so a caller must write every one of them
// before the slice can be read; ops' TestOutputsFullyWritten checks that every op's compute does.
package uninit

import "unsafe"

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

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
// The purego build tag (the tag that also selects softmaxjet's and backward's Go loops) builds
// a plain make instead, for a toolchain that refuses the link; Zeroed says which was built.
//
// The elements hold whatever the memory held before, so a caller must write every one of them
// before the slice can be read; ops' TestOutputsFullyWritten checks that every op's compute does.
package uninit

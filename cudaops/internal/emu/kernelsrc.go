package emu

// emu.cpp includes ../../kernels/gatejet.cu itself. Go's build cache keys a cgo package's C++
// compilation on the files of the package's own directory only, so an edit of gatejet.cu alone
// would let `go test ./cudaops/...` reuse an emulator built from the older source (a false
// green). kernelsrc_hash.go, written by `go generate`, holds the SHA-256 of gatejet.cu as a
// constant: regenerating it changes a file of this package, hence the package's build action,
// and the C++ is compiled again from the current source. TestKernelSourceHashIsCurrent fails
// while the constant is stale, so a kernel edit without `go generate` fails the tests instead
// of running the old kernel.
//
// The second generator, layouts_gen.go, runs after it, on an emulator built from the current
// source and entry points: it measures the shared memory of every device row and coordinate
// jet and writes internal/kernel/shared_layouts.go (sharedlayout.go);
// TestSharedLayoutsAreCurrent fails while that file is stale.

//go:generate go run kernelsrc_gen.go
//go:generate go run layouts_gen.go

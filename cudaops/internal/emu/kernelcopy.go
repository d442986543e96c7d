package emu

// emu.cpp includes gatejet_cu.h, a byte-for-byte copy of ../../kernels/gatejet.cu kept in this
// directory: Go's build cache keys a cgo package's C++ compilation on the files of the
// package's own directory, so an #include of the file in its own place would let
// `go test ./cudaops/...` reuse an emulator built from an older kernel source (a false green).
// TestKernelCopyIsCurrent fails while the copy is stale.

//go:generate go run kernelcopy_gen.go

package dispatch

// PathCounts counts how often an op's computation took each Path.
type PathCounts struct {
	CPU         uint64 // PathCPU: the CPU kernel ran by policy
	GPU         uint64 // PathGPU: the registered backend, or CUDADo on the device, ran the kernel
	CPUFallback uint64 // PathCPUFallback: the backend failed, the CPU kernel ran
	// Staged counts the CUDADo calls (build tag cuda) that copied the device inputs to host,
	// computed on the host (counted above, by its path) and copied the output back to the
	// device: the ops whose kernel runs on the CPU only. Always 0 in the default build.
	Staged uint64
}

// PathReporter is implemented by every Op of package ops (and of graphs, built on its seam). LastPath is the path of the op's
// most recent Do, UsePreallocDo or (build tag cuda) CUDADo (ok is false before the first
// one); LastDiffPath is the path of its most recent DoDiff (the LispMachine's reverse pass; ok
// is false for ops without DoDiff or before the first call). Both are safe to call while the
// op runs elsewhere.
type PathReporter interface {
	LastPath() (p Path, ok bool)
	PathCounts() PathCounts
	LastDiffPath() (p Path, ok bool)
	DiffPathCounts() PathCounts
}

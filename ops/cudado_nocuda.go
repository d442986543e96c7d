//go:build !cuda

package ops

// deviceOps is false in the default build: no op implements gorgonia.CUDADoer, and every op
// computes on host memory (see cudado_cuda.go for Gorgonia's build tag cuda).
const deviceOps = false

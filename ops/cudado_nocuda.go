//go:build !cuda

package ops

import "gorgonia.org/gorgonia"

// deviceOps is false in the default build: no op implements gorgonia.CUDADoer, and every op
// computes on host memory (see cudado_cuda.go for Gorgonia's build tag cuda).
const deviceOps = false

// newDiffIO: in the default build every value a DoDiff is given is host memory, read and
// accumulated in place.
func newDiffIO(gorgonia.ExecutionContext, string) (diffIO, error) { return hostIO{}, nil }

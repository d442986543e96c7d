package ops

import (
	"sync/atomic"

	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/gatejet/gatejet"
	"github.com/gatejet/gatejet/cudaops"
	"github.com/gatejet/gatejet/internal/dispatch"
	"github.com/gatejet/gatejet/internal/kernel"
)

// LastPath returns the path (CPU or GPU) of the most recent computation of the node's op, if
// the node was built by this package and has been computed at least once. Nodes that share
// an op (Gorgonia deduplicates identical nodes) share its record.
func LastPath(n *gorgonia.Node) (cudaops.Path, bool) {
	if n == nil {
		return 0, false
	}
	if r, ok := n.Op().(dispatch.PathReporter); ok {
		p, ok := r.LastPath()
		return cudaops.Path(p), ok
	}
	return 0, false
}

// pathRecord is a race-free record of the paths one op took.
type pathRecord struct {
	last              atomic.Int32 // cudaops.Path + 1; 0 before the first run
	cpu, gpu, fallbck atomic.Uint64
	staged            atomic.Uint64 // CUDADo staged through host (build tag cuda)
}

func (r *pathRecord) record(p dispatch.Path) {
	switch p {
	case dispatch.PathGPU:
		r.gpu.Add(1)
	case dispatch.PathCPUFallback:
		r.fallbck.Add(1)
	default:
		r.cpu.Add(1)
	}
	r.last.Store(int32(p) + 1)
}

// ran records path p of a computation that returned err, and returns err: a failed
// computation (a Required run with no device, say) ran on no path.
func (r *pathRecord) ran(p dispatch.Path, err error) error {
	if err == nil {
		r.record(p)
	}
	return err
}

func (r *pathRecord) get() (dispatch.Path, bool) {
	v := r.last.Load()
	if v == 0 {
		return 0, false
	}
	return dispatch.Path(v - 1), true
}

func (r *pathRecord) counts() dispatch.PathCounts {
	return dispatch.PathCounts{CPU: r.cpu.Load(), GPU: r.gpu.Load(), CPUFallback: r.fallbck.Load(), Staged: r.staged.Load()}
}

// seam is embedded in every Op of this package. It knows the op's name, the dtype and shape
// of its output and the kernel call that computes it (plan), gives the op its Do,
// UsePreallocDo and Hashcode, records the cudaops.Path of the op's computations (forward and
// DoDiff) and holds the output buffer of an op built with ReuseOutput. Do and UsePreallocDo
// run on host memory through dispatch.RunBound (the plan is bound, its sizes and scalars
// checked, when the op is built), which picks the CPU or a registered device backend;
// under Gorgonia's build tag cuda, cudado_cuda.go gives every op CUDADo, which runs the same
// plan on the device values of Gorgonia's CUDA machine.
type seam struct {
	self     computer // the op that embeds the seam
	nm       string
	outDT    tensor.Dtype
	outShape tensor.Shape
	plan     launch     // the kernel call of Do, UsePreallocDo and CUDADo
	run      pathRecord // Do, UsePreallocDo and CUDADo
	diffRun  pathRecord // DoDiff
	out      *outputBuf // the output buffer of an op built with ReuseOutput, else nil
}

// init sets up the seam of a newly built op: the op itself, its name, its output's dtype and
// shape, the kernel call that computes the output, and its options.
func (s *seam) init(self computer, name string, dt tensor.Dtype, shape tensor.Shape, plan launch, o options) {
	s.self, s.nm, s.outDT, s.outShape, s.plan = self, name, dt, shape, plan
	s.plan.bind(name, shape)
	if o.reuse {
		s.out = new(outputBuf)
	}
}

func (s *seam) name() string { return s.nm }

// dtype is the dtype of the op's output.
func (s *seam) dtype() tensor.Dtype { return s.outDT }

// resultShape is the shape of the op's output, known before the op is applied.
func (s *seam) resultShape() tensor.Shape { return s.outShape }

// Do computes the output into a new tensor (for an op built with ReuseOutput, a new header
// over the op's buffer).
func (s *seam) Do(vals ...gorgonia.Value) (gorgonia.Value, error) {
	if b := s.out; b != nil {
		out, ok, err := b.take(s.nm, s.outDT, s.outShape)
		if err != nil {
			return nil, err
		}
		if ok {
			err := s.self.compute(out, vals)
			b.give()
			if err != nil {
				return nil, err
			}
			return out, nil
		}
	}
	out, err := newOutput(s.nm, s.outDT, s.outShape)
	if err != nil {
		return nil, err
	}
	if err := s.self.compute(out, vals); err != nil {
		return nil, err
	}
	return out, nil
}

// UsePreallocDo computes the output into prealloc, which must be a contiguous *tensor.Dense of
// the output's dtype and shape that shares no memory with the inputs; it allocates nothing on
// the CPU path.
func (s *seam) UsePreallocDo(prealloc gorgonia.Value, vals ...gorgonia.Value) (gorgonia.Value, error) {
	out, err := output(s.nm, prealloc, s.outDT, s.outShape)
	if err != nil {
		return nil, err
	}
	if err := s.self.compute(out, vals); err != nil {
		return nil, err
	}
	return prealloc, nil
}

// Hashcode is the FNV-32a hash of the op's WriteHash.
func (s *seam) Hashcode() uint32 { return hashOf(s.self) }

// LastPath returns the cudaops.Path of the op's most recent Do or UsePreallocDo, and false
// before the first one.
func (s *seam) LastPath() (dispatch.Path, bool) { return s.run.get() }

// PathCounts counts the paths the op's Do and UsePreallocDo calls took.
func (s *seam) PathCounts() dispatch.PathCounts { return s.run.counts() }

// LastDiffPath returns the cudaops.Path of the op's most recent DoDiff (the reverse pass of a
// LispMachine), and false before the first one or for ops without DoDiff.
func (s *seam) LastDiffPath() (dispatch.Path, bool) { return s.diffRun.get() }

// DiffPathCounts counts the paths the op's DoDiff calls took.
func (s *seam) DiffPathCounts() dispatch.PathCounts { return s.diffRun.counts() }

// CallsExtern is false in the default build: the op computes on host memory (a device
// backend copies in and out inside dispatch.RunBound). Under the build tag cuda it is true, so that
// Gorgonia's CUDA machine preallocates the op's output on the device for CUDADo.
func (s *seam) CallsExtern() bool { return deviceOps }

// ReturnsPtr is false in the default build: every op writes a fresh output. Under the build
// tag cuda it is true, because Gorgonia's compiler preallocates the output only of a node whose
// op both calls an extern and returns a pointer (Node.isMutable); CUDADo writes into that
// preallocated device value.
func (s *seam) ReturnsPtr() bool { return deviceOps }

// OverwritesInput is -1: no op overwrites an input.
func (s *seam) OverwritesInput() int { return -1 }

// run runs kernel k through dispatch.RunBound on the operands in and out (in the kernel's
// order; a nil output is one the CPU may skip) with sizes ints and scalars floats, checked
// against the kernel's declaration on this call (a launch is checked once, when bound), and
// records the path taken in rec: the gradients of DoDiff, whose kernel differs from the
// op's launch.
func run[T gatejet.Float](name string, rec *pathRecord, k kernel.ID, ints []int, floats []float64, in, out [][]T) error {
	b, err := dispatch.Bind(name, dispatch.Kernel(k), ints, floats)
	if err != nil {
		return err
	}
	var o dispatch.Operands[T]
	copy(o.In[:], in)
	copy(o.Out[:], out)
	return rec.ran(dispatch.RunBound(&b, o))
}

package ops

import (
	"sync"
	"sync/atomic"
	"unsafe"

	"gorgonia.org/gorgonia"

	"github.com/gatejet/gatejet/cudaops"
	"github.com/gatejet/gatejet/internal/check"
)

// PathCounts counts how often an op's computation took each cudaops.Path.
type PathCounts struct {
	CPU         uint64 // cudaops.PathCPU: the CPU kernel ran by policy
	GPU         uint64 // cudaops.PathGPU: the registered backend ran the kernel
	CPUFallback uint64 // cudaops.PathCPUFallback: the backend failed, the CPU kernel ran
}

// PathReporter is implemented by every Op of this package. LastPath is the path of the op's
// most recent Do or UsePreallocDo (ok is false before the first one); LastDiffPath is the path
// of its most recent DoDiff (the LispMachine's reverse pass; ok is false for ops without
// DoDiff or before the first call). Both are safe to call while the op runs elsewhere.
type PathReporter interface {
	LastPath() (p cudaops.Path, ok bool)
	PathCounts() PathCounts
	LastDiffPath() (p cudaops.Path, ok bool)
	DiffPathCounts() PathCounts
}

// LastPath returns the path (CPU or GPU) of the most recent computation of the node's op, if
// the node was built by this package and has been computed at least once. Nodes that share
// an op (Gorgonia deduplicates identical nodes) share its record.
func LastPath(n *gorgonia.Node) (cudaops.Path, bool) {
	if n == nil {
		return 0, false
	}
	if r, ok := n.Op().(PathReporter); ok {
		return r.LastPath()
	}
	return 0, false
}

// pathRecord is a race-free record of the paths one op took.
type pathRecord struct {
	last              atomic.Int32 // cudaops.Path + 1; 0 before the first run
	cpu, gpu, fallbck atomic.Uint64
}

func (r *pathRecord) record(p cudaops.Path) {
	switch p {
	case cudaops.PathGPU:
		r.gpu.Add(1)
	case cudaops.PathCPUFallback:
		r.fallbck.Add(1)
	default:
		r.cpu.Add(1)
	}
	r.last.Store(int32(p) + 1)
}

func (r *pathRecord) get() (cudaops.Path, bool) {
	v := r.last.Load()
	if v == 0 {
		return 0, false
	}
	return cudaops.Path(v - 1), true
}

func (r *pathRecord) counts() PathCounts {
	return PathCounts{CPU: r.cpu.Load(), GPU: r.gpu.Load(), CPUFallback: r.fallbck.Load()}
}

// hostOp is what every op of this package can do on host memory: compute its output into a
// preallocated value. The cuda build reaches the op through seam.self.
type hostOp interface {
	gorgonia.Op
	gorgonia.UsePreallocDoer
	name() string
}

// seam is embedded in every Op of this package. It records the cudaops.Path of the op's
// computations (forward and DoDiff) and is the extension point of the `cuda` build: a file
// of this package tagged `cuda` may define further methods on *seam — CUDADo in particular —
// which Go promotes to every op type, and may set callsExtern in an init function. The
// default build defines no CUDADo anywhere, so Gorgonia schedules every op on the CPU, and the
// GPU is reached, when a backend is registered, through cudaops.Run inside Do.
type seam struct {
	run     pathRecord // Do and UsePreallocDo
	diffRun pathRecord // DoDiff
	self    hostOp     // the op that embeds this seam
	out     *outputBuf // the output buffer of an op built with ReuseOutput, else nil
}

// callsExtern is what every op's CallsExtern returns. The cuda build may set it to true in an
// init function (Gorgonia then preallocates outputs and batches extern calls).
var callsExtern = false

// LastPath returns the cudaops.Path of the op's most recent Do or UsePreallocDo, and false
// before the first one.
func (s *seam) LastPath() (cudaops.Path, bool) { return s.run.get() }

// PathCounts counts the paths the op's Do and UsePreallocDo calls took.
func (s *seam) PathCounts() PathCounts { return s.run.counts() }

// LastDiffPath returns the cudaops.Path of the op's most recent DoDiff (the reverse pass of a
// LispMachine), and false before the first one or for ops without DoDiff.
func (s *seam) LastDiffPath() (cudaops.Path, bool) { return s.diffRun.get() }

// DiffPathCounts counts the paths the op's DoDiff calls took.
func (s *seam) DiffPathCounts() PathCounts { return s.diffRun.counts() }

// CallsExtern reports whether Gorgonia should treat the op as calling external code: false in
// the default build (see seam).
func (s *seam) CallsExtern() bool { return callsExtern }

// ReturnsPtr is false: every op writes a fresh (or preallocated) output.
func (s *seam) ReturnsPtr() bool { return false }

// OverwritesInput is -1: no op overwrites an input.
func (s *seam) OverwritesInput() int { return -1 }

// callBuf holds one cudaops.Call and the backing arrays of its slices, so that steady-state
// calls on the same tensors allocate nothing: the boxed slices of the previous call are kept
// and reused when the next call passes the same slices. Pooled; a pooled buffer keeps the
// last tensors' memory reachable until the pool drops it (within two GC cycles).
type callBuf struct {
	call cudaops.Call
	in   [4]any
	out  [3]any
	ints [3]int
}

var callPool = sync.Pool{New: func() any { return new(callBuf) }}

// setBox stores s in *slot unless *slot already holds the very same slice, avoiding the
// allocation of boxing a slice header.
func setBox[T float](slot *any, s []T) {
	if old, ok := (*slot).([]T); ok && len(old) == len(s) && cap(old) == cap(s) &&
		unsafe.SliceData(old) == unsafe.SliceData(s) {
		return
	}
	*slot = s
}

// dispatch runs one kernel through cudaops.Run, with cpu as the CPU fallback, and records the
// path taken in rec. in and out are the kernel's slices in its documented order; ints and
// floats its sizes and scalars.
func dispatch[T float](rec *pathRecord, k cudaops.Kernel, ints []int, floats []float64,
	in [][]T, out [][]T, cpu func() error) error {
	b := callPool.Get().(*callBuf)
	c := &b.call
	c.Kernel = k
	for i, s := range in {
		setBox(&b.in[i], s)
	}
	for i := len(in); i < len(b.in); i++ {
		b.in[i] = nil
	}
	for i, s := range out {
		setBox(&b.out[i], s)
	}
	for i := len(out); i < len(b.out); i++ {
		b.out[i] = nil
	}
	c.In = b.in[:len(in)]
	c.Out = b.out[:len(out)]
	c.Ints = b.ints[:copy(b.ints[:], ints)]
	c.Floats = floats
	c.Work = 0
	c.Work = c.OutputElements()
	p, err := cudaops.Run(c, cpu)
	c.Floats = nil
	callPool.Put(b)
	if err == nil {
		// A failed computation (a Required run with no device, say) ran on no path.
		rec.record(p)
	}
	return err
}

// scratchNeeded reports whether an output that the CPU kernel can skip must nevertheless be
// given a full buffer, because a device backend may run the call and device kernels write
// every output.
func scratchNeeded() bool {
	return cudaops.CurrentMode() != cudaops.ModeOff && cudaops.Active() != nil
}

// scratchOr returns s, or when s is nil and a backend may run the call, a fresh buffer of n
// elements for the kernel to write and the caller to ignore; a buffer over gatejet.MaxBytes
// is an ErrSize error of operation op.
func scratchOr[T float](op string, s []T, n int) ([]T, error) {
	if s == nil && scratchNeeded() {
		var z T
		if _, err := check.Alloc(op, "scratch", int(unsafe.Sizeof(z)), n); err != nil {
			return nil, err
		}
		return make([]T, n), nil
	}
	return s, nil
}

package softmaxjet

import (
	"math"
	"math/bits"
	"sync"
	"unsafe"

	"github.com/gatejet/gatejet"
	"github.com/gatejet/gatejet/internal/check"
	"github.com/gatejet/gatejet/internal/par"
)

// scratch holds the float64 per-row workspace of one goroutine, and the row state S of a
// gate's kernels carved from it. Both come from the gate's scratchPool so that steady-state
// calls allocate nothing, and the row state, on the heap with its scratch, goes by pointer to a
// kernel's row method (called through a generic dictionary, which escape analysis cannot see
// into) without escaping.
type scratch[S any] struct {
	buf  []float64
	row  S
	pool *scratchPool[S] // where release returns it
}

// scratchPool is a pool of scratch with row state S: each gate declares one for its row state.
// The zero value is ready to use.
type scratchPool[S any] struct{ p sync.Pool }

// get returns scratch whose buf has length n.
func (p *scratchPool[S]) get(n int) *scratch[S] {
	s, _ := p.p.Get().(*scratch[S])
	if s == nil {
		s = &scratch[S]{pool: p}
	}
	if cap(s.buf) < n {
		s.buf = make([]float64, n)
	}
	s.buf = s.buf[:n]
	return s
}

func (s *scratch[S]) release() { s.pool.p.Put(s) }

// workspace is the float64 scratch that one goroutine running a kernel's rows takes from its
// gate's pool, as counts of buffers: its gate's row state (gateKind.base) plus what the kernel
// carves beyond it. Each kernel states its own where it makes its job; its rows function
// carves exactly that. The counts are small: bytes keep the value small to pass on every call.
type workspace struct {
	kPad, k, p, kp uint8 // float64 buffers of padK(K), K, P and K·P
	kKpT, kpT      uint8 // buffers of K·padK(K) and K·P elements of the element type, each rounded up to whole float64s
	slack          uint8 // float64s to align a buffer with
}

// plus is the workspace of ws and o together.
func (ws workspace) plus(o workspace) workspace {
	return workspace{
		kPad: ws.kPad + o.kPad, k: ws.k + o.k, p: ws.p + o.p, kp: ws.kp + o.kp,
		kKpT: ws.kKpT + o.kKpT, kpT: ws.kpT + o.kpT, slack: ws.slack + o.slack,
	}
}

// scratchLen is the length of the float64 scratch of workspace ws over rows of K atoms and P
// columns of size-byte elements: the one declaration of that size, checked by newJob against
// gatejet.MaxBytes before anything is allocated. ok is false if it overflows int.
func scratchLen(ws workspace, K, P, size int) (n int, ok bool) {
	var t sizeSum
	Kp := padK(K)
	t.times(ws.kPad, Kp, 1)
	t.times(ws.k, K, 1)
	t.times(ws.p, P, 1)
	t.times(ws.kp, K, P)
	for range ws.kKpT {
		t.addBytes(K, Kp, size)
	}
	for range ws.kpT {
		t.addBytes(K, P, size)
	}
	t.times(ws.slack, 1, 1)
	return t.n, t.ok()
}

// sizeSum adds products of non-negative sizes, noting an overflow of int.
type sizeSum struct {
	n        int
	overflow bool
}

// add adds the product of dims (at most three, all ≥ 0).
func (t *sizeSum) add(dims ...int) {
	p := uint64(1)
	for _, d := range dims {
		hi, lo := bits.Mul64(p, uint64(d))
		if hi != 0 || d < 0 {
			t.overflow = true
			return
		}
		p = lo
	}
	if p > uint64(math.MaxInt-t.n) {
		t.overflow = true
		return
	}
	t.n += int(p)
}

// times adds c·a·b; most counts c are 0.
func (t *sizeSum) times(c uint8, a, b int) {
	if c != 0 {
		t.add(int(c), a, b)
	}
}

// addBytes adds the float64s that hold a product of dims in bytes, rounded up.
func (t *sizeSum) addBytes(dims ...int) {
	var b sizeSum
	b.add(dims...)
	if b.overflow {
		t.overflow = true
		return
	}
	t.add(b.n/8 + min(b.n%8, 1))
}

func (t *sizeSum) ok() bool { return !t.overflow }

// carve splits the front of *b into a slice of length n.
func carve(b *[]float64, n int) []float64 {
	s := (*b)[:n:n]
	*b = (*b)[n:]
	return s
}

// asT views the front of a float64 buffer as n elements of T (float32 or float64, or a type
// defined on them); b must hold at least n·sizeof(T) bytes.
func asT[T gatejet.Float](b []float64, n int) []T {
	if n == 0 {
		return nil
	}
	var zero T
	if len(b)*8 < n*int(unsafe.Sizeof(zero)) {
		panic("softmaxjet: scratch buffer too small")
	}
	return unsafe.Slice((*T)(unsafe.Pointer(unsafe.SliceData(b))), n)
}

// args are one kernel call's slices.
type args[T gatejet.Float] struct {
	o0, o1, o2 []T // outputs: dst, or dLogits, dDecoded, dV (nil: skipped)
	l, d, v, g []T // logits, decoded, direction, upstream gradient
}

// gateKind is a gate as the machinery sees it, declared once in the gate's own file: the names
// of its vector parameters, its row state's scratch, and the check of its parameters. The
// gate's file gives the neutral fields of gateParams their meaning.
type gateKind struct {
	vecNames [2]string // the names errors give gateParams.vecs ("" where unused)
	base     workspace // the float64s of the gate's row state, carved before the kernel's own
	// check checks the parameters (s and vecs, nil where unused) for rows of K atoms.
	check func(op string, K int, s float64, v0, v1 []float64) error
}

// gate is one kernel call's gate: its kind and its parameters. The job carries the parameters
// to the gate's rows function.
type gate struct {
	*gateKind
	gateParams
}

// gateParams are a gate's parameters, in neutral fields.
type gateParams struct {
	s    float64      // a scalar parameter
	vecs [2][]float64 // per-atom vector parameters, read while the outputs are written
}

// job carries one kernel call's arguments to par.For through a method value bound once, when
// the job is made: a closure built per call would escape to the heap and cost an allocation
// per call. Jobs of float32 and float64 are pooled; those of types defined on them are made
// afresh (one allocation per call).
type job[T gatejet.Float] struct {
	k kernel[T] // the kernel whose rows the job runs
	args[T]
	gateParams
	K, P    int
	scratch int // float64s of scratch a goroutine takes (scratchLen)
	run     func(lo, hi int)
}

// kernel is one kernel's rows function. Each kernel is a type of no size, so that making a
// job of it allocates nothing (a func value of a generic function would be a closure).
type kernel[T gatejet.Float] interface {
	rows(j *job[T], lo, hi int)
}

// do runs rows [lo, hi) of the job's kernel.
func (j *job[T]) do(lo, hi int) { j.k.rows(j, lo, hi) }

var jobPool32, jobPool64 sync.Pool

// jobPool returns the pool of float32 or float64 jobs, nil for other element types.
func jobPool[T gatejet.Float]() *sync.Pool {
	switch any((*T)(nil)).(type) {
	case *float32:
		return &jobPool32
	case *float64:
		return &jobPool64
	}
	return nil
}

// newJob returns a job running kernel k, with workspace ws (its gate's and its own), over rows of K atoms and P columns,
// or, before anything is allocated, an ErrSize error if a goroutine's scratch (scratchLen)
// would exceed gatejet.MaxBytes. An empty batch runs no row and needs none.
func newJob[T gatejet.Float](op string, k kernel[T], ws workspace, sh Shape) (*job[T], error) {
	var n int
	if sh.N > 0 {
		var zero T
		var ok bool
		n, ok = scratchLen(ws, sh.K, sh.P, int(unsafe.Sizeof(zero)))
		if !ok {
			return nil, check.Errorf(gatejet.ErrSize, op, "shape", "the per-row workspace for K=%d P=%d overflows int", sh.K, sh.P)
		}
		if _, err := check.Alloc(op, "shape", 8, n, 1); err != nil {
			return nil, err
		}
	}
	var j *job[T]
	if p := jobPool[T](); p != nil {
		j, _ = p.Get().(*job[T])
	}
	if j == nil {
		j = new(job[T])
		j.run = j.do
	}
	j.k, j.K, j.P, j.scratch = k, sh.K, sh.P, n
	return j, nil
}

// forRows runs the job over n rows of rowWork each, spread over the cores, and releases it.
func (j *job[T]) forRows(n, rowWork int) {
	par.For(n, rowWork, j.run)
	run := j.run
	*j = job[T]{run: run} // drop references to the caller's buffers
	if p := jobPool[T](); p != nil {
		p.Put(j)
	}
}

// runKernel is the body of every kernel function: it checks the call (validate: the shape,
// the lengths of args, the gate, overlaps), then runs kernel k, with workspace ws beyond its
// gate's row state, over the batch's rows, at rowWork a row, on the slices a and the gate g.
func runKernel[T gatejet.Float](op string, sh Shape, g *gate, k kernel[T], ws workspace, rowWork int, a args[T], args ...check.Arg) error {
	if err := validate(op, sh, g, args...); err != nil {
		return err
	}
	j, err := newJob(op, k, g.base.plus(ws), sh)
	if err != nil {
		return err
	}
	j.args = a
	j.s, j.vecs[0], j.vecs[1] = g.s, g.vecs[0], g.vecs[1] // field by field: cheaper than j.gateParams = g.gateParams
	j.forRows(sh.N, rowWork)
	return nil
}

// forward runs a kernel that writes one channel, dst of dstLen elements, from logits and
// decoded values.
func forward[T gatejet.Float](op string, sh Shape, g *gate, k kernel[T], ws workspace, rowWork int, dst []T, dstLen int, logits, decoded []T) error {
	return runKernel(op, sh, g, k, ws, rowWork, args[T]{o0: dst, l: logits, d: decoded},
		check.Out("dst", dst, dstLen), check.In("logits", logits, sh.LogitsLen()), check.In("decoded", decoded, sh.DecodedLen()))
}

// vjp runs a vector-Jacobian product of a channel, for an upstream gradient g of gLen
// elements: the gradients dLogits and dDecoded (either may be nil) of ⟨g, channel⟩.
func vjp[T gatejet.Float](op string, sh Shape, gt *gate, k kernel[T], ws workspace, rowWork int, dLogits, dDecoded, logits, decoded, g []T, gLen int) error {
	return runKernel(op, sh, gt, k, ws, rowWork, args[T]{o0: dLogits, o1: dDecoded, l: logits, d: decoded, g: g},
		check.OptOut("dLogits", dLogits, sh.LogitsLen()), check.OptOut("dDecoded", dDecoded, sh.DecodedLen()),
		check.In("logits", logits, sh.LogitsLen()), check.In("decoded", decoded, sh.DecodedLen()), check.In("g", g, gLen))
}

// hvp runs a Hessian-vector product kernel: dst [N,K,P] from logits, decoded values and a
// direction v [N,K].
func hvp[T gatejet.Float](op string, sh Shape, g *gate, k kernel[T], ws workspace, dst, logits, decoded, v []T) error {
	return runKernel(op, sh, g, k, ws, sh.K*sh.P, args[T]{o0: dst, l: logits, d: decoded, v: v},
		check.Out("dst", dst, sh.FirstLen()), check.In("logits", logits, sh.LogitsLen()), check.In("decoded", decoded, sh.DecodedLen()), check.In("v", v, sh.LogitsLen()))
}

// hvpVJP runs the vector-Jacobian product of a Hessian-vector product, for an upstream
// gradient g [N,K,P]: the gradients dLogits, dDecoded and dV (each may be nil).
func hvpVJP[T gatejet.Float](op string, sh Shape, gt *gate, k kernel[T], ws workspace, rowWork int, dLogits, dDecoded, dV, logits, decoded, v, g []T) error {
	return runKernel(op, sh, gt, k, ws, rowWork, args[T]{o0: dLogits, o1: dDecoded, o2: dV, l: logits, d: decoded, v: v, g: g},
		check.OptOut("dLogits", dLogits, sh.LogitsLen()), check.OptOut("dDecoded", dDecoded, sh.DecodedLen()), check.OptOut("dV", dV, sh.LogitsLen()),
		check.In("logits", logits, sh.LogitsLen()), check.In("decoded", decoded, sh.DecodedLen()), check.In("v", v, sh.LogitsLen()), check.In("g", g, sh.FirstLen()))
}

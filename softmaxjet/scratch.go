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

// carver cuts a kernel's workspace, the float64 scratch one goroutine running its rows takes
// from its gate's pool, into pieces; or, counting, adds up their lengths. A kernel declares its
// workspace once, as the code that carves it (its gate's row state, then the kernel's own
// pieces, in order): newJob runs that code on a counting carver to size the scratch (checked
// against gatejet.MaxBytes before anything is allocated), and the rows run it on the scratch.
// So the size is what is carved; a piece beyond it is a panic on every call, not a shape's.
type carver struct {
	b        []float64 // the scratch not yet carved
	n        int       // float64s counted
	counting bool
	overflow bool // the count overflowed int
}

// counter returns a carver that counts.
func counter() carver { return carver{counting: true} }

// f64 carves a·b float64s (counting: adds them, nil).
func (c *carver) f64(a, b int) []float64 {
	if c.counting {
		c.add(a, b)
		return nil
	}
	return c.take(a * b)
}

// add counts a·b float64s (a, b ≥ 0), noting an overflow of int.
func (c *carver) add(a, b int) {
	if uint64(a)|uint64(b) < 1<<31 { // the common case: the product and the sum fit
		c.n += a * b
		if c.n < 0 {
			c.overflow = true
		}
		return
	}
	t := sizeSum{n: c.n}
	t.add(a, b)
	c.n, c.overflow = t.n, c.overflow || t.overflow
}

// take carves the next n float64s.
func (c *carver) take(n int) []float64 {
	if n > len(c.b) {
		panic("softmaxjet: a kernel carves more scratch than it counted")
	}
	s := c.b[:n:n]
	c.b = c.b[n:]
	return s
}

// align64 moves the next piece to a 64-byte boundary: it carves up to 7 float64s (counting: 7).
func (c *carver) align64() {
	if c.counting {
		c.add(7, 1)
		return
	}
	c.take((64 - int(uintptr(unsafe.Pointer(unsafe.SliceData(c.b))))%64) % 64 / 8)
}

// carveT carves a·b elements of T (float32 or float64, or a type defined on them) in whole
// float64s.
func carveT[T gatejet.Float](c *carver, a, b int) []T {
	var zero T
	size := int(unsafe.Sizeof(zero))
	if c.counting {
		var t sizeSum
		t.addBytes(a, b, size)
		c.add(t.n, 1)
		c.overflow = c.overflow || t.overflow
		return nil
	}
	n := a * b
	return asT[T](c.take((n*size+7)/8), n)
}

// len is the count: float64s, and false if it overflowed int.
func (c *carver) len() (int, bool) { return c.n, !c.overflow }

// scratchLen is kernel k's workspace over rows of K atoms and P columns, in float64s (its
// count); ok is false if it overflows int.
func scratchLen[T gatejet.Float](k kernel[T], K, P int) (n int, ok bool) {
	c := k.count(counter(), K, P)
	return c.len()
}

// noPieces is the count of a kernel that carves nothing beyond its gate's row state.
type noPieces struct{}

func (noPieces) count(c carver, _, _ int) carver { return c }

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
	d1, d2     []T // the coordinate jets' derivatives of decoded in t (coord.go)
}

// gateKind is a gate as the machinery sees it, declared once in the gate's own file: the names
// of its vector parameters and the check of its parameters. The
// gate's file gives the neutral fields of gateParams their meaning.
type gateKind struct {
	vecNames [2]string // the names errors give gateParams.vecs ("" where unused)
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
	// The last count the pooled job made, kept across calls: a steady state of calls of one
	// kernel on one shape counts its workspace once.
	countK     kernel[T]
	countKP    [2]int
	countScrat int
}

// kernel is one kernel's rows function and the count of its workspace (its carve run on c).
// Each kernel is a type of no size, so that making a job of it allocates nothing (a func value
// of a generic function would be a closure); count takes and returns the carver by value, as
// a pointer passed through a generic dictionary would escape to the heap.
type kernel[T gatejet.Float] interface {
	count(c carver, K, P int) carver
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

// newJob returns a job running kernel k over rows of K atoms and P columns, or, before
// anything is allocated, an ErrSize error if a goroutine's scratch (scratchLen) would exceed
// gatejet.MaxBytes. An empty batch runs no row and needs none.
func newJob[T gatejet.Float](op string, k kernel[T], sh Shape) (*job[T], error) {
	var j *job[T]
	if p := jobPool[T](); p != nil {
		j, _ = p.Get().(*job[T])
	}
	if j == nil {
		j = new(job[T])
		j.run = j.do
	}
	var n int
	if sh.N > 0 {
		if j.countK == k && j.countKP == [2]int{sh.K, sh.P} {
			n = j.countScrat
		} else {
			var ok bool
			if n, ok = scratchLen(k, sh.K, sh.P); !ok {
				j.release()
				return nil, check.Errorf(gatejet.ErrSize, op, "shape", "the per-row workspace for K=%d P=%d overflows int", sh.K, sh.P)
			}
			j.countK, j.countKP, j.countScrat = k, [2]int{sh.K, sh.P}, n
		}
		if _, err := check.Alloc(op, "shape", 8, n, 1); err != nil {
			j.release()
			return nil, err
		}
	}
	j.k, j.K, j.P, j.scratch = k, sh.K, sh.P, n
	return j, nil
}

// release drops the job's references to the caller's buffers (the count kept) and returns
// it to its pool.
func (j *job[T]) release() {
	*j = job[T]{run: j.run, countK: j.countK, countKP: j.countKP, countScrat: j.countScrat}
	if p := jobPool[T](); p != nil {
		p.Put(j)
	}
}

// runKernel is the body of every kernel function: it checks the call (validate: the shape,
// the lengths of args, the gate, overlaps), then runs kernel k over the batch's rows, at
// rowWork a row, spread over the cores, on the slices a and the gate g.
func runKernel[T gatejet.Float](op string, sh Shape, g *gate, k kernel[T], rowWork int, a args[T], args ...check.Arg) error {
	if err := validate(op, sh, g, args...); err != nil {
		return err
	}
	j, err := newJob(op, k, sh)
	if err != nil {
		return err
	}
	j.args = a
	j.s, j.vecs[0], j.vecs[1] = g.s, g.vecs[0], g.vecs[1] // field by field: cheaper than j.gateParams = g.gateParams
	par.For(sh.N, rowWork, j.run)
	j.release()
	return nil
}

// forward runs a kernel that writes one channel, dst of dstLen elements, from logits and
// decoded values.
func forward[T gatejet.Float](op string, sh Shape, g *gate, k kernel[T], rowWork int, dst []T, dstLen int, logits, decoded []T) error {
	return runKernel(op, sh, g, k, rowWork, args[T]{o0: dst, l: logits, d: decoded},
		check.Out("dst", dst, dstLen), check.In("logits", logits, sh.LogitsLen()), check.In("decoded", decoded, sh.DecodedLen()))
}

// vjp runs a vector-Jacobian product of a channel, for an upstream gradient g of gLen
// elements: the gradients dLogits and dDecoded (either may be nil) of ⟨g, channel⟩.
func vjp[T gatejet.Float](op string, sh Shape, gt *gate, k kernel[T], rowWork int, dLogits, dDecoded, logits, decoded, g []T, gLen int) error {
	return runKernel(op, sh, gt, k, rowWork, args[T]{o0: dLogits, o1: dDecoded, l: logits, d: decoded, g: g},
		check.OptOut("dLogits", dLogits, sh.LogitsLen()), check.OptOut("dDecoded", dDecoded, sh.DecodedLen()),
		check.In("logits", logits, sh.LogitsLen()), check.In("decoded", decoded, sh.DecodedLen()), check.In("g", g, gLen))
}

// hvp runs a Hessian-vector product kernel: dst [N,K,P] from logits, decoded values and a
// direction v [N,K].
func hvp[T gatejet.Float](op string, sh Shape, g *gate, k kernel[T], dst, logits, decoded, v []T) error {
	return runKernel(op, sh, g, k, sh.K*sh.P, args[T]{o0: dst, l: logits, d: decoded, v: v},
		check.Out("dst", dst, sh.FirstLen()), check.In("logits", logits, sh.LogitsLen()), check.In("decoded", decoded, sh.DecodedLen()), check.In("v", v, sh.LogitsLen()))
}

// hvpVJP runs the vector-Jacobian product of a Hessian-vector product, for an upstream
// gradient g [N,K,P]: the gradients dLogits, dDecoded and dV (each may be nil).
func hvpVJP[T gatejet.Float](op string, sh Shape, gt *gate, k kernel[T], rowWork int, dLogits, dDecoded, dV, logits, decoded, v, g []T) error {
	return runKernel(op, sh, gt, k, rowWork, args[T]{o0: dLogits, o1: dDecoded, o2: dV, l: logits, d: decoded, v: v, g: g},
		check.OptOut("dLogits", dLogits, sh.LogitsLen()), check.OptOut("dDecoded", dDecoded, sh.DecodedLen()), check.OptOut("dV", dV, sh.LogitsLen()),
		check.In("logits", logits, sh.LogitsLen()), check.In("decoded", decoded, sh.DecodedLen()), check.In("v", v, sh.LogitsLen()), check.In("g", g, sh.FirstLen()))
}

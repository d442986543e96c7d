package backward

import (
	"github.com/gatejet/gatejet"
	"github.com/gatejet/gatejet/internal/par"
)

// axisKind selects the kernel an axisJob runs.
type axisKind uint8

const (
	kindSoftmax        axisKind = iota // o0 = dx
	kindLogSoftmax                     // o0 = dx
	kindSoftmaxGrad                    // o0 = gy, o1 = gdy (either may be nil)
	kindLogSoftmaxGrad                 // o0 = gy, o1 = gdy (either may be nil)
)

// Work decomposition. Each outer index owns an [n × inner] slab (a single row of n when the
// axis is the last one, inner = 1). A slab is cut into column blocks of at most maxCols columns
// (so that the accumulators stay small and the rows of a block stay long and contiguous) and
// each block into chunks of k rows holding about chunkElems elements:
//
//   - a block of a single chunk is one task: a reduction pass along the axis into a vector of
//     sums, then a write pass, over data small enough to be still in cache;
//   - a block of several chunks (a long axis) runs in three phases: every chunk reduces its rows
//     into its own partial sums, the partial sums of each block are added up in chunk order,
//     and every chunk writes its rows. All phases are spread over the cores.
//
// The decomposition depends on the shape only, never on the core count, and every sum is taken
// in a fixed order (rows in axis order within a chunk, then chunks in order), so results are
// bit-for-bit the same whatever the number of cores.
const (
	maxCols    = 1024
	chunkElems = 1 << 15
)

// axisPlan is the decomposition of a layout.
type axisPlan struct {
	outer, n, inner int
	w, nb           int // columns per block (1 when inner == 1) and blocks per slab
	k, nc           int // rows per chunk and chunks per block
	aw              int // accumulator floats per block: w, or 2w for the double backward
}

func newAxisPlan(l layout, kind axisKind) axisPlan {
	p := axisPlan{outer: l.outer, n: l.n, inner: l.inner}
	p.w = min(l.inner, maxCols)
	p.nb = (l.inner + p.w - 1) / p.w
	p.k = max(1, chunkElems/p.w)
	p.nc = (l.n + p.k - 1) / p.k
	p.aw = p.w
	if kind == kindSoftmaxGrad || kind == kindLogSoftmaxGrad {
		p.aw = 2 * p.w
	}
	return p
}

// block returns the slab of rows [k0, k1) of column block b of outer index o, and its width.
func (p *axisPlan) block(o, b, k0, k1 int) slab {
	c0 := b * p.w
	return slab{base: (o*p.n+k0)*p.inner + c0, n: k1 - k0, stride: p.inner, w: min(p.w, p.inner-c0)}
}

// chunk returns the slab of task t = (o·nb + b)·nc + c.
func (p *axisPlan) chunk(t int) slab {
	ob, c := t/p.nc, t%p.nc
	k0 := c * p.k
	return p.block(ob/p.nb, ob%p.nb, k0, min(k0+p.k, p.n))
}

// slab addresses rows of a column block: row r (0 ≤ r < n) is buf[base+r·stride :][:w]. With
// stride 1 (inner = 1, w = 1) the rows are consecutive elements of one row of the tensor, and
// the kernels treat the n of them as one contiguous range.
type slab struct{ base, n, stride, w int }

// row returns row r of the slab in buf.
func row[T gatejet.Float](buf []T, s slab, r int) []T {
	lo := s.base + r*s.stride
	return buf[lo : lo+s.w]
}

// span returns the contiguous range of a stride-1 slab in buf.
func span[T gatejet.Float](buf []T, s slab) []T { return buf[s.base : s.base+s.n] }

// Phases of a job.
const (
	phaseWhole   = iota // single-chunk blocks: reduce and write
	phaseReduce         // partial sums of every chunk
	phaseCombine        // add each block's partial sums, in chunk order, into its first slot
	phaseWrite          // write every chunk from its block's sums
)

// axisJob is one call of an axis kernel, split into tasks for par.For.
type axisJob[T gatejet.Float] struct {
	kind     axisKind
	o0, o1   []T
	y, dy, g []T
	p        axisPlan
	phase    int
	parts    []float64 // partial sums, aw floats per chunk (multi-chunk blocks)
	run      func(lo, hi int)
}

// runAxis runs kernel kind over a validated, possibly empty, layout.
func runAxis[T gatejet.Float](kind axisKind, l layout, o0, o1, y, dy, g []T) {
	if l.total == 0 {
		return
	}
	j := getJob[T, axisJob[T]](&axisJobs)
	j.kind, j.o0, j.o1, j.y, j.dy, j.g = kind, o0, o1, y, dy, g
	p := newAxisPlan(l, kind)
	j.p = p
	cost := 1
	if kind == kindLogSoftmax || kind == kindLogSoftmaxGrad {
		cost = 4 // an exp per element costs a few stores' worth
	}
	runPlan(&j.p, cost, &j.phase, &j.parts, j.run)
	putJob[T](&axisJobs, j)
}

// runPlan runs a job's phases over plan p with par.For: whole blocks when one chunk covers
// the axis; otherwise each chunk's partial sums, their combination per block, and the
// writes. run does the tasks of the phase it finds in *phase; the partial sums live in
// *parts, from the scratch pool, for the call.
func runPlan(p *axisPlan, cost int, phase *int, parts *[]float64, run func(lo, hi int)) {
	blocks := p.outer * p.nb
	if p.nc == 1 {
		*phase = phaseWhole
		par.For(blocks, p.n*p.w*cost, run)
		return
	}
	sp := getScratch(blocks * p.nc * p.aw)
	*parts = *sp
	*phase = phaseReduce
	par.For(blocks*p.nc, p.k*p.w*cost, run)
	*phase = phaseCombine
	par.For(blocks, p.nc*p.aw, run)
	*phase = phaseWrite
	par.For(blocks*p.nc, p.k*p.w*cost, run)
	*parts = nil
	putScratch(sp)
}

// do runs tasks [lo, hi) of the current phase.
func (j *axisJob[T]) do(lo, hi int) {
	p := &j.p
	switch j.phase {
	case phaseWhole:
		sp := getScratch(p.aw)
		acc := *sp
		for t := lo; t < hi; t++ {
			s := p.block(t/p.nb, t%p.nb, 0, p.n)
			clear(acc)
			j.reduce(s, acc)
			j.write(s, acc)
		}
		putScratch(sp)
	case phaseReduce:
		for t := lo; t < hi; t++ {
			acc := j.parts[t*p.aw : (t+1)*p.aw]
			clear(acc)
			j.reduce(p.chunk(t), acc)
		}
	case phaseCombine:
		for b := lo; b < hi; b++ {
			first := j.parts[b*p.nc*p.aw : (b*p.nc+1)*p.aw]
			for c := 1; c < p.nc; c++ {
				part := j.parts[(b*p.nc+c)*p.aw : (b*p.nc+c+1)*p.aw]
				part = part[:len(first)]
				for i, v := range part {
					first[i] += v
				}
			}
		}
	case phaseWrite:
		for t := lo; t < hi; t++ {
			b := t / p.nc
			j.write(p.chunk(t), j.parts[b*p.nc*p.aw:(b*p.nc+1)*p.aw])
		}
	}
}

// sums splits a block's accumulators (aw floats: the first w hold the first sum, the next w
// the second sum of the double-backward kernels) into the two sums of a slab of width s.w.
func (j *axisJob[T]) sums(s slab, acc []float64) (a, b []float64) {
	a = acc[:s.w]
	if len(acc) > j.p.w {
		b = acc[j.p.w : j.p.w+s.w]
	}
	return a, b
}

// reduce adds the slab's sums along the axis into acc.
func (j *axisJob[T]) reduce(s slab, acc []float64) {
	a, b := j.sums(s, acc)
	switch j.kind {
	case kindSoftmax:
		reduceDot(s, a, j.y, j.dy) // ⟨y,dy⟩
	case kindLogSoftmax:
		reduceSum(s, a, j.dy) // Σ dy
	case kindSoftmaxGrad:
		if j.o0 != nil {
			reduceDot(s, a, j.y, j.dy) // ⟨y,dy⟩, for gy
		}
		reduceDot(s, b, j.y, j.g) // ⟨y,g⟩, for gy and gdy
	case kindLogSoftmaxGrad:
		if j.o0 != nil {
			reduceSum(s, a, j.dy) // Σ dy, for gy
		}
		if j.o1 != nil {
			reduceDotExp(s, b, j.g, j.y) // Σ g·exp(y), for gdy
		}
	}
}

// write writes the slab's outputs from the block's sums in acc.
func (j *axisJob[T]) write(s slab, acc []float64) {
	a, b := j.sums(s, acc)
	switch j.kind {
	case kindSoftmax:
		writeSoftmax(s, a, j.o0, j.y, j.dy)
	case kindLogSoftmax:
		writeLogSoftmax(s, a, j.o0, j.y, j.dy)
	case kindSoftmaxGrad:
		writeSoftmaxGrad(s, a, b, j.o0, j.o1, j.y, j.dy, j.g)
	case kindLogSoftmaxGrad:
		writeLogSoftmaxGrad(s, a, b, j.o0, j.o1, j.y, j.g)
	}
}

package backward

import (
	"math"
	"unsafe"

	"github.com/gatejet/gatejet"
	"github.com/gatejet/gatejet/internal/check"
)

// Softmax computes the softmax of x along axis of a tensor of the given shape,
//
//	y_k = exp(x_k − M)/Σ_j exp(x_j − M),   M = max_j x_j,
//
// the max and the sum running along the axis. Subtracting the max keeps every exponential in
// [0, 1], so the result is finite (and the sum at least 1) for any finite x. x and y are
// row-major with length prod(shape); y is overwritten and may be the same slice as x (in
// place); any other overlap of y and x is an ErrParam error.
//
// Non-finite values stay in their slice along the axis: a −Inf beside a finite value gets
// probability 0 (a mask); a NaN, a +Inf, or a slice whose values are all −Inf makes every
// value of that slice NaN (softmax has no value there: exp(−Inf − (−Inf)) is 0/0), as the
// softmax gate of package softmaxjet does. Other slices are unaffected.
//
// Shape and axis are validated (rank 1 to 8, no negative dim, −rank ≤ axis < rank), errors name the argument (ErrRank, ErrShape,
// ErrAxis, ErrSize for a buffer of the wrong length), and a tensor with a zero dim leaves y
// alone. The sums are accumulated in float64 (for float32 data too, rounded once when stored)
// in an order fixed by the shape, so the result is bit-for-bit the same whatever the number of
// cores used.
func Softmax[T gatejet.Float](y, x []T, shape []int, axis int) error {
	return forward("backward.Softmax", false, y, x, shape, axis)
}

// LogSoftmax computes the log-softmax of x along axis of a tensor of the given shape,
//
//	y_k = x_k − M − log Σ_j exp(x_j − M),   M = max_j x_j,
//
// finite for any finite x. A −Inf beside a finite value gives −Inf; a NaN, a +Inf or a slice
// of all −Inf makes its slice NaN. Buffers, aliasing, validation, errors and determinism are
// as for Softmax.
func LogSoftmax[T gatejet.Float](y, x []T, shape []int, axis int) error {
	return forward("backward.LogSoftmax", true, y, x, shape, axis)
}

// forward checks the arguments of Softmax (LogSoftmax if log) and runs it.
func forward[T gatejet.Float](op string, log bool, y, x []T, shape []int, axis int) error {
	l, err := layoutFor(op, shape, axis, need("y", y), need("x", x))
	if err != nil {
		return err
	}
	// Every element is read before its own output is written and no other, so y == x works
	// in place; a shifted overlap would read outputs as inputs.
	if check.Overlap(y, x) && unsafe.SliceData(y) != unsafe.SliceData(x) {
		return check.Errorf(gatejet.ErrParam, op, "y", "y overlaps x other than as the same slice")
	}
	runForward(log, l, y, x)
	return nil
}

// A forward job uses the decomposition of the backward kernels (axisPlan) with two
// accumulators per column: the max M and the sum S of exp(x − M).
//
//   - A block of one chunk reduces the max, then computes the exponentials once into a
//     float64 scratch of at most chunkElems values, sums them and (softmax) writes y from them.
//   - A block of several chunks: each chunk reduces its own max m_c and sum s_c of
//     exp(x − m_c); the block's partials are combined in chunk order into
//     M = max m_c and S = Σ s_c·exp(m_c − M); each chunk then writes its rows.
//
// A chunk whose max is −Inf (all its values −Inf, or NaN) shifts by 0 instead: its sum is then
// 0, or NaN when it holds a NaN, whatever the other chunks hold, and is added unscaled.
type fwdJob[T gatejet.Float] struct {
	log   bool
	y, x  []T
	p     axisPlan
	phase int
	parts []float64 // 2w floats per chunk: w maxima, then w sums
	run   func(lo, hi int)
}

// forwardCost is the work per element given to par.For: an exponential costs a few stores.
const forwardCost = 4

func runForward[T gatejet.Float](log bool, l layout, y, x []T) {
	if l.total == 0 {
		return
	}
	j := getJob[T, fwdJob[T]](&fwdJobs)
	j.log, j.y, j.x = log, y, x
	p := newAxisPlan(l, kindSoftmax)
	p.aw = 2 * p.w
	j.p = p
	runPlan(&j.p, forwardCost, &j.phase, &j.parts, j.run)
	putJob[T](&fwdJobs, j)
}

// do runs tasks [lo, hi) of the current phase.
func (j *fwdJob[T]) do(lo, hi int) {
	p := &j.p
	switch j.phase {
	case phaseWhole:
		ap := getScratch(p.aw)
		ep := getScratch(p.n * p.w)
		for t := lo; t < hi; t++ {
			s := p.block(t/p.nb, t%p.nb, 0, p.n)
			m, sum := (*ap)[:s.w], (*ap)[p.w:p.w+s.w]
			slabMax(s, m, j.x)
			e := (*ep)[:s.n*s.w]
			if s.stride == 1 {
				sum[0] = expSum(e, span(j.x, s), shift(m[0]))
			} else {
				slabExp(s, e, m, j.x)
				clear(sum)
				sumRows(e, sum)
			}
			if j.log {
				logSum(sum)
				writeLog(s, m, sum, j.y, j.x)
			} else {
				writeScaled(s, e, sum, j.y)
			}
		}
		putScratch(ep)
		putScratch(ap)
	case phaseReduce:
		for t := lo; t < hi; t++ {
			s := p.chunk(t)
			acc := j.parts[t*p.aw : (t+1)*p.aw]
			m, sum := acc[:s.w], acc[p.w:p.w+s.w]
			slabMax(s, m, j.x)
			clear(sum)
			slabSumExp(s, sum, m, j.x)
		}
	case phaseCombine:
		for b := lo; b < hi; b++ {
			w := p.w
			if c0 := (b % p.nb) * p.w; p.inner-c0 < w {
				w = p.inner - c0
			}
			first := j.parts[b*p.nc*p.aw : (b*p.nc+1)*p.aw]
			M, S := first[:w], first[p.w:p.w+w]
			combineMaxSum(M, S, j.parts[b*p.nc*p.aw:(b+1)*p.nc*p.aw], p.aw, p.w)
			if j.log {
				logSum(S)
			}
		}
	case phaseWrite:
		for t := lo; t < hi; t++ {
			s := p.chunk(t)
			b := t / p.nc
			acc := j.parts[b*p.nc*p.aw : (b*p.nc+1)*p.aw]
			m, sum := acc[:s.w], acc[p.w:p.w+s.w]
			if j.log {
				writeLog(s, m, sum, j.y, j.x) // sum holds log S (see logSum)
			} else {
				writeExpScaled(s, m, sum, j.y, j.x)
			}
		}
	}
}

// shift is the value subtracted from a column before its exponentials: its max, or 0 when the
// max is −Inf (see fwdJob).
func shift(m float64) float64 {
	if m == math.Inf(-1) {
		return 0
	}
	return m
}

// combineMaxSum folds the partials of a block's chunks (each aw floats, maxima at 0, sums at w)
// in chunk order into M (the first chunk's maxima) and S (its sums).
func combineMaxSum(M, S, parts []float64, aw, w int) {
	nc := len(parts) / aw
	for i := range M {
		mx := M[i]
		for c := 1; c < nc; c++ {
			if v := parts[c*aw+i]; v > mx {
				mx = v
			}
		}
		var s float64
		for c := 0; c < nc; c++ {
			mc, sc := parts[c*aw+i], parts[c*aw+w+i]
			if mc == math.Inf(-1) { // shifted by 0: sc is 0 or NaN
				s += sc
				continue
			}
			s += sc * math.Exp(mc-mx)
		}
		M[i], S[i] = mx, s
	}
}

// slabMax sets m to the max of each column of the slab (a scalar m[0] for a stride-1 slab).
// NaN is skipped here; it reaches the sum through its exponential.
func slabMax[T gatejet.Float](s slab, m []float64, x []T) {
	if s.stride == 1 {
		m[0] = maxOf(span(x, s))
		return
	}
	for i := range m {
		m[i] = math.Inf(-1)
	}
	for r := 0; r < s.n; r++ {
		xr := row(x, s, r)
		xr = xr[:len(m)]
		for i, v := range xr {
			if f := float64(v); f > m[i] {
				m[i] = f
			}
		}
	}
}

// maxOf returns the max of x, skipping NaN (−Inf for none), over four interleaved lanes
// (maxLanes), the last len(x) mod 4 values compared with the first.
func maxOf[T gatejet.Float](x []T) float64 {
	m0, m1, m2, m3 := maxLanes(x)
	for i := len(x) &^ 3; i < len(x); i++ {
		if v := float64(x[i]); v > m0 {
			m0 = v
		}
	}
	return max(max(m0, m1), max(m2, m3))
}

// maxLanesGo is the Go loop of maxLanes.
func maxLanesGo[T gatejet.Float](x []T) (m0, m1, m2, m3 float64) {
	m0, m1, m2, m3 = math.Inf(-1), math.Inf(-1), math.Inf(-1), math.Inf(-1)
	for i := 0; i+4 <= len(x); i += 4 {
		xi := x[i : i+4 : i+4]
		if v := float64(xi[0]); v > m0 {
			m0 = v
		}
		if v := float64(xi[1]); v > m1 {
			m1 = v
		}
		if v := float64(xi[2]); v > m2 {
			m2 = v
		}
		if v := float64(xi[3]); v > m3 {
			m3 = v
		}
	}
	return m0, m1, m2, m3
}

// slabExp sets e (n·w floats, row-major) to exp(x − shift(m)) for a slab of stride > 1 (a
// stride-1 slab takes expSum).
func slabExp[T gatejet.Float](s slab, e, m []float64, x []T) {
	for r := 0; r < s.n; r++ {
		xr, er := row(x, s, r), e[r*s.w:(r+1)*s.w]
		xr, mr := xr[:len(er)], m[:len(er)]
		for i, v := range xr {
			er[i] = float64(v) - shift(mr[i])
		}
	}
	expOf(e, e)
}

// sumRows adds the rows of e (len(sum) columns) into sum.
func sumRows(e, sum []float64) {
	w := len(sum)
	for r := 0; r+w <= len(e); r += w {
		er := e[r : r+w]
		for i, v := range er {
			sum[i] += v
		}
	}
}

// sumF is sum for float64 slices, with sum's fixed order.
func sumF(e []float64) float64 { return sum(e) }

// slabSumExp adds Σ_rows exp(x − shift(m)) into sum, through a stack buffer.
func slabSumExp[T gatejet.Float](s slab, sum, m []float64, x []T) {
	var buf [expChunk]float64
	if s.stride == 1 {
		xs := span(x, s)
		sh := shift(m[0])
		for lo := 0; lo < len(xs); lo += expChunk {
			e := buf[:min(expChunk, len(xs)-lo)]
			xc := xs[lo : lo+len(e)]
			for i, v := range xc {
				e[i] = float64(v) - sh
			}
			sum[0] += sumF(expOf(e, e))
		}
		return
	}
	for r := 0; r < s.n; r++ {
		xr := row(x, s, r)
		for lo := 0; lo < len(sum); lo += expChunk {
			e := buf[:min(expChunk, len(sum)-lo)]
			xc, mc, sc := xr[lo:lo+len(e)], m[lo:lo+len(e)], sum[lo:lo+len(e)]
			for i, v := range xc {
				e[i] = float64(v) - shift(mc[i])
			}
			for i, v := range expOf(e, e) {
				sc[i] += v
			}
		}
	}
}

// writeScaled writes y = e·(1/S) from the exponentials of a whole block (m was its own max).
// A product by the reciprocal instead of a quotient: one more rounding (within 2 ulp of e/S
// in all) for a multiply instead of a divide per element.
func writeScaled[T gatejet.Float](s slab, e, S []float64, y []T) {
	if s.stride == 1 {
		ys := span(y, s)
		e = e[:len(ys)]
		r := 1 / S[0]
		for i := scaleLanes(ys, e, r); i < len(ys); i++ {
			ys[i] = T(e[i] * r)
		}
		return
	}
	for i, v := range S {
		S[i] = 1 / v
	}
	for r := 0; r < s.n; r++ {
		yr, er := row(y, s, r), e[r*s.w:(r+1)*s.w]
		yr, sr := yr[:len(er)], S[:len(er)]
		for i, v := range er {
			yr[i] = T(v * sr[i])
		}
	}
}

// writeExpScaled writes y = exp(x − M)/S.
func writeExpScaled[T gatejet.Float](s slab, M, S []float64, y, x []T) {
	var buf [expChunk]float64
	rows, width := s.n, s.w
	if s.stride == 1 {
		rows, width = 1, s.n
	}
	for r := 0; r < rows; r++ {
		base := s.base + r*s.stride
		for lo := 0; lo < width; lo += expChunk {
			e := buf[:min(expChunk, width-lo)]
			xc, yc := x[base+lo:base+lo+len(e)], y[base+lo:base+lo+len(e)]
			yc = yc[:len(xc)]
			if s.stride == 1 {
				mv, sv := M[0], S[0]
				for i, v := range xc {
					e[i] = float64(v) - mv
				}
				for i, v := range expOf(e, e) {
					yc[i] = T(v / sv)
				}
				continue
			}
			mc, sc := M[lo:lo+len(e)], S[lo:lo+len(e)]
			for i, v := range xc {
				e[i] = float64(v) - mc[i]
			}
			for i, v := range expOf(e, e) {
				yc[i] = T(v / sc[i])
			}
		}
	}
}

// logSum sets S to log S. Log-softmax writes (x − M) − log S: x − M is exact near the max, so
// the largest values keep their precision, which x − (M + log S) would round away (and
// 1e308 + log 2 is 1e308). A column of all −Inf (M = −Inf, S = 0) gives x − M = NaN.
func logSum(S []float64) {
	for i, v := range S {
		S[i] = math.Log(v)
	}
}

// writeLog writes y = (x − M) − L, L = log S per column (scalars M[0], L[0] for a stride-1
// slab).
func writeLog[T gatejet.Float](s slab, M, L []float64, y, x []T) {
	if s.stride == 1 {
		xs, ys := span(x, s), span(y, s)
		ys = ys[:len(xs)]
		mv, lv := M[0], L[0]
		for i, v := range xs {
			ys[i] = T((float64(v) - mv) - lv)
		}
		return
	}
	for r := 0; r < s.n; r++ {
		xr, yr := row(x, s, r), row(y, s, r)
		xr, yr, lr := xr[:len(M)], yr[:len(M)], L[:len(M)]
		for i, v := range xr {
			yr[i] = T((float64(v) - M[i]) - lr[i])
		}
	}
}

package backward

import "github.com/gatejet/gatejet"

// Reductions and write passes of the axis kernels over one slab (see axisPlan). A slab of
// stride 1 is a contiguous range of one row (the axis is the last one) and its sums are
// scalars, a[0] and b[0]; any other slab has rows of w contiguous columns and a vector of w
// sums, accumulated row after row and used row after row: nothing walks with a stride per
// element.

// Products added to sums are written float64(x*y): the Go spec lets a compiler fuse x*y + z
// into one FMA (one rounding) unless the product is converted explicitly, and with
// GOAMD64=v3 the amd64 compiler does, which would make these loops differ in the last bit
// from their AVX twins (vec_amd64.s), which use no FMA.

// dot returns Σ a_i·b_i in float64, over four interleaved partial sums combined in a fixed
// order (deterministic, and faster than one serial chain of additions).
func dot[T gatejet.Float](a, b []T) float64 {
	var s0, s1, s2, s3 float64
	b = b[:len(a)]
	i := 0
	for ; i+4 <= len(a); i += 4 {
		ai, bi := a[i:i+4:i+4], b[i:i+4:i+4]
		s0 += float64(float64(ai[0]) * float64(bi[0]))
		s1 += float64(float64(ai[1]) * float64(bi[1]))
		s2 += float64(float64(ai[2]) * float64(bi[2]))
		s3 += float64(float64(ai[3]) * float64(bi[3]))
	}
	for ; i < len(a); i++ {
		s0 += float64(float64(a[i]) * float64(b[i]))
	}
	return (s0 + s1) + (s2 + s3)
}

// sum returns Σ a_i in float64, with the same fixed order as dot.
func sum[T gatejet.Float](a []T) float64 {
	var s0, s1, s2, s3 float64
	i := 0
	for ; i+4 <= len(a); i += 4 {
		ai := a[i : i+4 : i+4]
		s0 += float64(ai[0])
		s1 += float64(ai[1])
		s2 += float64(ai[2])
		s3 += float64(ai[3])
	}
	for ; i < len(a); i++ {
		s0 += float64(a[i])
	}
	return (s0 + s1) + (s2 + s3)
}

// expChunk is the length of the stack buffers exponentials are computed into.
const expChunk = 256

// expChunkAt returns exp(y[lo:hi]) in buf, hi = min(lo+expChunk, n): the chunk from lo of a
// loop over n values, and its end.
func expChunkAt[T gatejet.Float](buf *[expChunk]float64, y []T, lo, n int) ([]float64, int) {
	hi := min(lo+expChunk, n)
	return expOf(buf[:hi-lo], y[lo:hi]), hi
}

// dotExp returns Σ g_i·exp(y_i) in float64, in index order.
func dotExp[T gatejet.Float](g, y []T) float64 {
	var buf [expChunk]float64
	var s float64
	for lo := 0; lo < len(g); lo += expChunk {
		e, hi := expChunkAt(&buf, y, lo, len(g))
		gs := g[lo:hi]
		gs = gs[:len(e)]
		for i, v := range e {
			s += float64(float64(gs[i]) * v)
		}
	}
	return s
}

// reduceDot adds Σ_rows a·b into acc.
func reduceDot[T gatejet.Float](s slab, acc []float64, a, b []T) {
	if s.stride == 1 {
		acc[0] += dotVec(span(a, s), span(b, s))
		return
	}
	r := 0
	for ; r+4 <= s.n; r += 4 {
		a0, a1, a2, a3 := row(a, s, r), row(a, s, r+1), row(a, s, r+2), row(a, s, r+3)
		b0, b1, b2, b3 := row(b, s, r), row(b, s, r+1), row(b, s, r+2), row(b, s, r+3)
		a0, a1, a2, a3 = a0[:len(acc)], a1[:len(acc)], a2[:len(acc)], a3[:len(acc)]
		b0, b1, b2, b3 = b0[:len(acc)], b1[:len(acc)], b2[:len(acc)], b3[:len(acc)]
		lo := s.base + r*s.stride
		i0 := dotRows4(acc, a[lo:], b[lo:], s.stride)
		for i := i0; i < len(acc); i++ {
			// Four rows per sweep of the accumulators, added in row order.
			v := acc[i]
			v += float64(float64(a0[i]) * float64(b0[i]))
			v += float64(float64(a1[i]) * float64(b1[i]))
			v += float64(float64(a2[i]) * float64(b2[i]))
			v += float64(float64(a3[i]) * float64(b3[i]))
			acc[i] = v
		}
	}
	for ; r < s.n; r++ {
		ar, br := row(a, s, r), row(b, s, r)
		ar, br = ar[:len(acc)], br[:len(acc)]
		for i := range acc {
			acc[i] += float64(float64(ar[i]) * float64(br[i]))
		}
	}
}

// reduceSum adds Σ_rows a into acc.
func reduceSum[T gatejet.Float](s slab, acc []float64, a []T) {
	if s.stride == 1 {
		acc[0] += sum(span(a, s))
		return
	}
	r := 0
	for ; r+4 <= s.n; r += 4 {
		a0, a1, a2, a3 := row(a, s, r), row(a, s, r+1), row(a, s, r+2), row(a, s, r+3)
		a0, a1, a2, a3 = a0[:len(acc)], a1[:len(acc)], a2[:len(acc)], a3[:len(acc)]
		for i, v := range acc {
			acc[i] = v + float64(a0[i]) + float64(a1[i]) + float64(a2[i]) + float64(a3[i])
		}
	}
	for ; r < s.n; r++ {
		ar := row(a, s, r)
		ar = ar[:len(acc)]
		for i := range acc {
			acc[i] += float64(ar[i])
		}
	}
}

// reduceDotExp adds Σ_rows g·exp(y) into acc.
func reduceDotExp[T gatejet.Float](s slab, acc []float64, g, y []T) {
	if s.stride == 1 {
		acc[0] += dotExp(span(g, s), span(y, s))
		return
	}
	var buf [expChunk]float64
	for r := 0; r < s.n; r++ {
		gr, yr := row(g, s, r), row(y, s, r)
		for lo := 0; lo < len(acc); lo += expChunk {
			e, hi := expChunkAt(&buf, yr, lo, len(acc))
			gs, as := gr[lo:hi], acc[lo:hi]
			gs, as = gs[:len(e)], as[:len(e)]
			for i, v := range e {
				as[i] += float64(float64(gs[i]) * v)
			}
		}
	}
}

// writeSoftmax writes dx = y·(dy − a).
func writeSoftmax[T gatejet.Float](s slab, a []float64, dx, y, dy []T) {
	if s.stride == 1 {
		writeSoftmaxVec(span(dx, s), span(y, s), span(dy, s), a[0])
		return
	}
	for r := 0; r < s.n; r++ {
		xr, yr, dr := row(dx, s, r), row(y, s, r), row(dy, s, r)
		xr, yr, dr = xr[:len(a)], yr[:len(a)], dr[:len(a)]
		for i := writeRow(xr, yr, dr, a); i < len(a); i++ {
			xr[i] = T(float64(yr[i]) * (float64(dr[i]) - a[i]))
		}
	}
}

// writeLogSoftmax writes dx = dy − exp(y)·a.
func writeLogSoftmax[T gatejet.Float](s slab, a []float64, dx, y, dy []T) {
	var buf [expChunk]float64
	if s.stride == 1 {
		xs, ys, ds := span(dx, s), span(y, s), span(dy, s)
		av := a[0]
		for lo := 0; lo < len(xs); lo += expChunk {
			e, hi := expChunkAt(&buf, ys, lo, len(xs))
			xc, dc := xs[lo:hi], ds[lo:hi]
			xc, dc = xc[:len(e)], dc[:len(e)]
			for i, v := range e {
				xc[i] = T(float64(dc[i]) - v*av)
			}
		}
		return
	}
	for r := 0; r < s.n; r++ {
		xr, yr, dr := row(dx, s, r), row(y, s, r), row(dy, s, r)
		for lo := 0; lo < len(a); lo += expChunk {
			e, hi := expChunkAt(&buf, yr, lo, len(a))
			xc, dc, ac := xr[lo:hi], dr[lo:hi], a[lo:hi]
			xc, dc, ac = xc[:len(e)], dc[:len(e)], ac[:len(e)]
			for i, v := range e {
				xc[i] = T(float64(dc[i]) - v*ac[i])
			}
		}
	}
}

// writeSoftmaxGrad writes gy = g·(dy − a) − dy·b and gdy = y·(g − b), a = ⟨y,dy⟩ and
// b = ⟨y,g⟩, skipping a nil output. Each element's inputs are read before its outputs are
// written, so an output may be the same slice as an input.
func writeSoftmaxGrad[T gatejet.Float](s slab, a, b []float64, gy, gdy, y, dy, g []T) {
	rows, width, step := s.n, s.w, s.stride
	if step == 1 { // one contiguous range, scalar sums: treat it as one row
		rows, width = 1, s.n
	}
	for r := 0; r < rows; r++ {
		lo := s.base + r*step
		hi := lo + width
		ys, ds, gs := y[lo:hi], dy[lo:hi], g[lo:hi]
		ds, gs = ds[:len(ys)], gs[:len(ys)]
		switch {
		case gy == nil:
			os := gdy[lo:hi]
			os = os[:len(ys)]
			if step == 1 {
				bv := b[0]
				for i, v := range ys {
					os[i] = T(float64(v) * (float64(gs[i]) - bv))
				}
				continue
			}
			b := b[:len(ys)]
			for i, v := range ys {
				os[i] = T(float64(v) * (float64(gs[i]) - b[i]))
			}
		case gdy == nil:
			os := gy[lo:hi]
			os = os[:len(ys)]
			if step == 1 {
				av, bv := a[0], b[0]
				for i := range ys {
					dv := float64(ds[i])
					os[i] = T(float64(gs[i])*(dv-av) - dv*bv)
				}
				continue
			}
			a, b := a[:len(ys)], b[:len(ys)]
			for i := range ys {
				dv := float64(ds[i])
				os[i] = T(float64(gs[i])*(dv-a[i]) - dv*b[i])
			}
		default:
			o0, o1 := gy[lo:hi], gdy[lo:hi]
			o0, o1 = o0[:len(ys)], o1[:len(ys)]
			if step == 1 {
				av, bv := a[0], b[0]
				for i := range ys {
					yv, dv, gv := float64(ys[i]), float64(ds[i]), float64(gs[i])
					o0[i] = T(gv*(dv-av) - dv*bv)
					o1[i] = T(yv * (gv - bv))
				}
				continue
			}
			a, b := a[:len(ys)], b[:len(ys)]
			for i := range ys {
				yv, dv, gv := float64(ys[i]), float64(ds[i]), float64(gs[i])
				o0[i] = T(gv*(dv-a[i]) - dv*b[i])
				o1[i] = T(yv * (gv - b[i]))
			}
		}
	}
}

// writeLogSoftmaxGrad writes gy = −g·exp(y)·sd and gdy = g − r, sd = Σ dy and r = Σ g·exp(y),
// skipping a nil output. Each element's inputs are read before its outputs are written.
func writeLogSoftmaxGrad[T gatejet.Float](s slab, sd, r []float64, gy, gdy, y, g []T) {
	rows, width, step := s.n, s.w, s.stride
	contiguous := step == 1 // one range with scalar sums sd[0], r[0]: treat it as one row
	if contiguous {
		rows, width = 1, s.n
	}
	var buf [expChunk]float64
	for k := 0; k < rows; k++ {
		base := s.base + k*step
		for lo := 0; lo < width; lo += expChunk {
			hi := min(lo+expChunk, width)
			gs := g[base+lo : base+hi]
			if gy == nil { // gdy only: no exponentials needed
				os := gdy[base+lo : base+hi]
				os = os[:len(gs)]
				if contiguous {
					rv := r[0]
					for i, v := range gs {
						os[i] = T(float64(v) - rv)
					}
					continue
				}
				rc := r[lo:hi]
				rc = rc[:len(gs)]
				for i, v := range gs {
					os[i] = T(float64(v) - rc[i])
				}
				continue
			}
			e := expOf(buf[:hi-lo], y[base+lo:base+hi])
			gs = gs[:len(e)]
			o0 := gy[base+lo : base+hi]
			o0 = o0[:len(e)]
			switch {
			case gdy == nil && contiguous:
				sv := sd[0]
				for i, v := range e {
					o0[i] = T(-float64(gs[i]) * v * sv)
				}
			case gdy == nil:
				sc := sd[lo:hi]
				sc = sc[:len(e)]
				for i, v := range e {
					o0[i] = T(-float64(gs[i]) * v * sc[i])
				}
			case contiguous:
				o1 := gdy[base+lo : base+hi]
				o1 = o1[:len(e)]
				sv, rv := sd[0], r[0]
				for i, v := range e {
					gv := float64(gs[i])
					o0[i] = T(-gv * v * sv)
					o1[i] = T(gv - rv)
				}
			default:
				o1, sc, rc := gdy[base+lo:base+hi], sd[lo:hi], r[lo:hi]
				o1, sc, rc = o1[:len(e)], sc[:len(e)], rc[:len(e)]
				for i, v := range e {
					gv := float64(gs[i])
					o0[i] = T(-gv * v * sc[i])
					o1[i] = T(gv - rc[i])
				}
			}
		}
	}
}

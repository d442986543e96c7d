package softmaxjet

import (
	"math"

	"github.com/gatejet/gatejet/internal/par"
)

// softmaxRow fills the float64 gate ζ = softmax(s·l) (max subtracted), the value channel
// m_c = Σ_k ζ_k D[k][c] and the centred decoded values e[a][c] = D[a][c] − m_c of one row.
//
// A NaN logit, a +Inf logit or a row of all −Inf logits makes the whole row NaN, as a softmax
// does; −Inf logits alongside finite ones give ζ = 0 for those atoms.
func softmaxRow[T Float](z, m, e []float64, l, d []T, s float64, K, P int) {
	// A NaN logit never becomes the maximum, but exp(s·(NaN − max)) is NaN and so is the sum.
	mx := math.Inf(-1)
	for _, v := range l[:K] {
		if f := float64(v); f > mx {
			mx = f
		}
	}
	sum := 0.0
	for k, v := range l[:K] {
		x := math.Exp(s * (float64(v) - mx))
		z[k] = x
		sum += x
	}
	r := 1 / sum
	for k := range z[:K] {
		z[k] *= r
	}
	m = m[:P]
	for c := range m {
		m[c] = 0
	}
	for k := 0; k < K; k++ {
		zk := z[k]
		dk := d[k*P : k*P+P]
		dk = dk[:len(m)]
		for c := range m {
			m[c] += zk * float64(dk[c])
		}
	}
	for a := 0; a < K; a++ {
		ea := e[a*P : a*P+P]
		da := d[a*P : a*P+P]
		da = da[:len(ea)]
		mm := m[:len(ea)]
		for c := range ea {
			ea[c] = float64(da[c]) - mm[c]
		}
	}
}

// rowSoftmax is the per-row state every softmax kernel starts from.
type rowSoftmax struct {
	z, m, e []float64
	rest    []float64 // the remaining scratch
	sc      *scratch
}

func newRowSoftmax(K, P, extra int) rowSoftmax {
	sc := getScratch(K + P + K*P + extra)
	b := sc.buf
	r := rowSoftmax{sc: sc}
	r.z = carve(&b, K)
	r.m = carve(&b, P)
	r.e = carve(&b, K*P)
	r.rest = b
	return r
}

// Value writes the value channel ẑ[n][c] = Σ_k softmax(s·l[n])_k · decoded[n][k][c] into dst
// [N,P]. s = invTau is the inverse temperature.
func Value[T Float](dst, logits, decoded []T, sh Shape, invTau float64) error {
	const op = "softmaxjet.Value"
	if err := validateSoftmax(op, sh, invTau, need("dst", dst, sh.ValueLen()), need("logits", logits, sh.LogitsLen()), need("decoded", decoded, sh.DecodedLen())); err != nil {
		return err
	}
	K, P := sh.K, sh.P
	par.For(sh.N, K*P, func(lo, hi int) {
		r := newRowSoftmax(K, P, 0)
		defer r.sc.release()
		for n := lo; n < hi; n++ {
			softmaxRow(r.z, r.m, r.e, logits[n*K:n*K+K], decoded[n*K*P:(n+1)*K*P], invTau, K, P)
			out := dst[n*P : n*P+P]
			for c, v := range r.m[:len(out)] {
				out[c] = T(v)
			}
		}
	})
	return nil
}

// First writes the first channel first[n][a][c] = ∂ẑ_c/∂l_a = s·ζ_a·(D[a][c] − ẑ_c) into dst
// [N,K,P]. Cost O(K·P) per row.
func First[T Float](dst, logits, decoded []T, sh Shape, invTau float64) error {
	const op = "softmaxjet.First"
	if err := validateSoftmax(op, sh, invTau, need("dst", dst, sh.FirstLen()), need("logits", logits, sh.LogitsLen()), need("decoded", decoded, sh.DecodedLen())); err != nil {
		return err
	}
	K, P := sh.K, sh.P
	s := invTau
	par.For(sh.N, K*P, func(lo, hi int) {
		r := newRowSoftmax(K, P, 0)
		defer r.sc.release()
		for n := lo; n < hi; n++ {
			softmaxRow(r.z, r.m, r.e, logits[n*K:n*K+K], decoded[n*K*P:(n+1)*K*P], s, K, P)
			out := dst[n*K*P : (n+1)*K*P]
			for a := 0; a < K; a++ {
				f := s * r.z[a]
				oa := out[a*P : a*P+P]
				ea := r.e[a*P : a*P+P]
				ea = ea[:len(oa)]
				for c := range oa {
					oa[c] = T(f * ea[c])
				}
			}
		}
	})
	return nil
}

// Second writes the second channel second[n][a][b][c] = ∂²ẑ_c/∂l_a∂l_b into dst [N,K,K,P]:
//
//	second[a][b][c] = s²·( δ_ab·ζ_a·e[a][c] − ζ_a·ζ_b·(e[a][c] + e[b][c]) ),  e[a][c] = D[a][c] − ẑ_c.
//
// Cost O(K²·P) per row: one multiply-add per element written.
func Second[T Float](dst, logits, decoded []T, sh Shape, invTau float64) error {
	const op = "softmaxjet.Second"
	if err := validateSoftmax(op, sh, invTau, need("dst", dst, sh.SecondLen()), need("logits", logits, sh.LogitsLen()), need("decoded", decoded, sh.DecodedLen())); err != nil {
		return err
	}
	K, P := sh.K, sh.P
	s2 := invTau * invTau
	par.For(sh.N, K*K*P, func(lo, hi int) {
		r := newRowSoftmax(K, P, 0)
		defer r.sc.release()
		for n := lo; n < hi; n++ {
			softmaxRow(r.z, r.m, r.e, logits[n*K:n*K+K], decoded[n*K*P:(n+1)*K*P], invTau, K, P)
			secondRow(dst[n*K*K*P:(n+1)*K*K*P], r.z, r.e, s2, K, P)
		}
	})
	return nil
}

// secondRow writes one row of the second channel. The channel is symmetric in (a, b), so the
// blocks with b < a are copies of blocks already written: half the arithmetic, a memmove for
// the rest, and symmetry that holds bit for bit.
func secondRow[T Float](out []T, z, e []float64, s2 float64, K, P int) {
	for a := 0; a < K; a++ {
		za := s2 * z[a]
		ea := e[a*P : a*P+P]
		for b := 0; b < a; b++ {
			copy(out[(a*K+b)*P:(a*K+b)*P+P], out[(b*K+a)*P:(b*K+a)*P+P])
		}
		o := out[(a*K+a)*P : (a*K+a)*P+P]
		f := za * (1 - 2*z[a])
		ea = ea[:len(o)]
		for c := range o {
			o[c] = T(f * ea[c])
		}
		for b := a + 1; b < K; b++ {
			o := out[(a*K+b)*P : (a*K+b)*P+P]
			f := -za * z[b]
			ea := ea[:len(o)]
			eb := e[b*P : b*P+P]
			eb = eb[:len(o)]
			for c := range o {
				o[c] = T(f * (ea[c] + eb[c]))
			}
		}
	}
}

// HVP writes the Hessian-vector product hvp[n][a][c] = Σ_b second[n][a][b][c]·v[n][b] into dst
// [N,K,P] without building second:
//
//	hvp[a][c] = s²·ζ_a·( e[a][c]·u_a − w_c ),  u_a = v_a − Σ_b ζ_b v_b,  w_c = Σ_b ζ_b u_b e[b][c].
//
// Cost O(K·P) per row. v is [N,K].
func HVP[T Float](dst, logits, decoded, v []T, sh Shape, invTau float64) error {
	const op = "softmaxjet.HVP"
	if err := validateSoftmax(op, sh, invTau, need("dst", dst, sh.FirstLen()), need("logits", logits, sh.LogitsLen()), need("decoded", decoded, sh.DecodedLen()), need("v", v, sh.LogitsLen())); err != nil {
		return err
	}
	K, P := sh.K, sh.P
	s2 := invTau * invTau
	par.For(sh.N, K*P, func(lo, hi int) {
		r := newRowSoftmax(K, P, K+P)
		defer r.sc.release()
		b := r.rest
		u, w := carve(&b, K), carve(&b, P)
		for n := lo; n < hi; n++ {
			softmaxRow(r.z, r.m, r.e, logits[n*K:n*K+K], decoded[n*K*P:(n+1)*K*P], invTau, K, P)
			centredDirection(u, w, r.z, r.e, v[n*K:n*K+K], K, P)
			out := dst[n*K*P : (n+1)*K*P]
			for a := 0; a < K; a++ {
				f := s2 * r.z[a]
				ua := u[a]
				oa := out[a*P : a*P+P]
				ea := r.e[a*P : a*P+P]
				ea = ea[:len(oa)]
				wa := w[:len(oa)]
				for c := range oa {
					oa[c] = T(f * (ea[c]*ua - wa[c]))
				}
			}
		}
	})
	return nil
}

// centredDirection fills u_a = v_a − Σ_b ζ_b v_b and w_c = Σ_b ζ_b u_b e[b][c].
func centredDirection[T Float](u, w, z, e []float64, v []T, K, P int) {
	vbar := 0.0
	for b := 0; b < K; b++ {
		vbar += z[b] * float64(v[b])
	}
	for b := 0; b < K; b++ {
		u[b] = float64(v[b]) - vbar
	}
	w = w[:P]
	for c := range w {
		w[c] = 0
	}
	for b := 0; b < K; b++ {
		f := z[b] * u[b]
		eb := e[b*P : b*P+P]
		eb = eb[:len(w)]
		for c := range w {
			w[c] += f * eb[c]
		}
	}
}

// GaussNewton writes the Gauss-Newton slabs H[n][a][b] = Σ_c first[n][a][c]·first[n][b][c] =
// s²·ζ_a·ζ_b·Σ_c e[a][c]·e[b][c] into dst [N,K,K] without building first. Each slab is
// symmetric positive semi-definite; it is computed on a ≤ b and mirrored, so it is exactly
// symmetric. Cost O(K²·P) per row.
func GaussNewton[T Float](dst, logits, decoded []T, sh Shape, invTau float64) error {
	const op = "softmaxjet.GaussNewton"
	if err := validateSoftmax(op, sh, invTau, need("dst", dst, sh.GNLen()), need("logits", logits, sh.LogitsLen()), need("decoded", decoded, sh.DecodedLen())); err != nil {
		return err
	}
	K, P := sh.K, sh.P
	s := invTau
	par.For(sh.N, K*K*P, func(lo, hi int) {
		r := newRowSoftmax(K, P, 0)
		defer r.sc.release()
		for n := lo; n < hi; n++ {
			softmaxRow(r.z, r.m, r.e, logits[n*K:n*K+K], decoded[n*K*P:(n+1)*K*P], s, K, P)
			out := dst[n*K*K : (n+1)*K*K]
			for a := 0; a < K; a++ {
				r.z[a] *= s // ζ scaled by s: first[a][c] = z[a]·e[a][c]
			}
			gramRow(out, r.z, r.e, K, P)
		}
	})
	return nil
}

// gramRow writes H[a][b] = f_a f_b Σ_c e[a][c] e[b][c] for a ≤ b and mirrors it.
func gramRow[T Float](out []T, f, e []float64, K, P int) {
	for a := 0; a < K; a++ {
		ea := e[a*P : a*P+P]
		for b := a; b < K; b++ {
			eb := e[b*P : b*P+P]
			eb = eb[:len(ea)]
			dot := 0.0
			for c := range ea {
				dot += ea[c] * eb[c]
			}
			h := T(f[a] * f[b] * dot)
			out[a*K+b] = h
			out[b*K+a] = h
		}
	}
}

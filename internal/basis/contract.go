package basis

import "github.com/gatejet/gatejet"

// The contractions that turn basis values into decoded rows, and their adjoints, on row-major
// slices with dims N (rows), K (atoms), L (basis functions) and P (columns). Each of Decode,
// DecodeT and Outer is the others' adjoint in one argument, and Dot and Scale are each
// other's, so the derivatives of each are built from the family itself. Sums accumulate in
// float64.

// Decode writes out[n,k,c] = Σ_b x[n,k,b]·B[k,b,c]: x [N,K,L], B [K,L,P], out [N,K,P].
func Decode[T gatejet.Float](out, x, B []T, N, K, L, P int) {
	acc := make([]float64, P)
	for n := 0; n < N; n++ {
		for k := 0; k < K; k++ {
			clear(acc)
			for b, xv := range x[(n*K+k)*L : (n*K+k+1)*L] {
				xf := float64(xv)
				for c, bv := range B[(k*L+b)*P : (k*L+b+1)*P] {
					acc[c] += xf * float64(bv)
				}
			}
			o := out[(n*K+k)*P : (n*K+k+1)*P]
			for c := range o {
				o[c] = T(acc[c])
			}
		}
	}
}

// DecodeT writes out[n,k,b] = Σ_c g[n,k,c]·B[k,b,c]: g [N,K,P], B [K,L,P], out [N,K,L].
func DecodeT[T gatejet.Float](out, g, B []T, N, K, L, P int) {
	for n := 0; n < N; n++ {
		for k := 0; k < K; k++ {
			gr := g[(n*K+k)*P : (n*K+k+1)*P]
			for b := 0; b < L; b++ {
				br := B[(k*L+b)*P : (k*L+b+1)*P]
				s := 0.0
				for c, gv := range gr {
					s += float64(gv) * float64(br[c])
				}
				out[(n*K+k)*L+b] = T(s)
			}
		}
	}
}

// Outer writes out[k,b,c] = Σ_n x[n,k,b]·g[n,k,c]: x [N,K,L], g [N,K,P], out [K,L,P].
func Outer[T gatejet.Float](out, x, g []T, N, K, L, P int) {
	acc := make([]float64, P)
	for k := 0; k < K; k++ {
		for b := 0; b < L; b++ {
			clear(acc)
			for n := 0; n < N; n++ {
				xv := float64(x[(n*K+k)*L+b])
				gr := g[(n*K+k)*P : (n*K+k+1)*P]
				for c, gv := range gr {
					acc[c] += xv * float64(gv)
				}
			}
			o := out[(k*L+b)*P : (k*L+b+1)*P]
			for c := range o {
				o[c] = T(acc[c])
			}
		}
	}
}

// Dot writes out[r] = Σ_b a[r,b]·c[r,b] for the R = len(out) rows of length L of a and c.
func Dot[T gatejet.Float](out, a, c []T, L int) {
	for r := range out {
		s := 0.0
		for b := 0; b < L; b++ {
			s += float64(a[r*L+b]) * float64(c[r*L+b])
		}
		out[r] = T(s)
	}
}

// Scale writes out[r,b] = u[r]·c[r,b] for the R = len(u) rows of length L of c.
func Scale[T gatejet.Float](out, u, c []T, L int) {
	for r, uv := range u {
		for b := 0; b < L; b++ {
			out[r*L+b] = uv * c[r*L+b]
		}
	}
}

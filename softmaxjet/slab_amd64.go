//go:build amd64 && !purego

package softmaxjet

import (
	"unsafe"

	"golang.org/x/sys/cpu"
)

// slab_amd64.s is generated from _asm (avo), the float32 and float64 twins of each loop from
// one Go function.
//go:generate sh -c "cd _asm && go run . -out ../slab_amd64.s"

// The second channel's row in AVX (slab_amd64.s): coefAVX64/coefAVX32 compute secondCoefs
// four lanes at a time and the row's K×K coefficients once into a matrix c in the element
// type; rowAVX64/rowAVX32 then write the blocks with the same operations in the same order
// as rowT, four float64 or eight float32 lanes at a time, so the results are the same bits;
// with nt, the stores bypass the caches (non-temporal), for outputs much larger than them.

//go:noescape
func coefAVX64(c, nsz, diag, z []float64, s2 float64, K, Kp int) (zmin float64, ok bool)

//go:noescape
func coefAVX32(c []float32, nsz, diag, z []float64, s2 float64, K, Kp int) (zmin float64, ok bool)

//go:noescape
func rowAVX64(o, c, e []float64, K, P, Kp int, nt bool)

//go:noescape
func rowAVX32(o, c, e []float32, K, P, Kp int, nt bool)

//go:noescape
func centreAVX32(e, d []float32, m []float64, K, P int) (big bool)

//go:noescape
func centreAVX64(e, d, m []float64, K, P int)

//go:noescape
func meanAVX32(m, z []float64, d []float32, K, P int)

//go:noescape
func meanAVX64(m, z, d []float64, K, P int)

//go:noescape
func hvpOutAVX64(o, e, w, f, u []float64, K, P int)

//go:noescape
func hvpOutAVX32(o []float32, e, w, f, u []float64, K, P int)

// The softmax gate in AVX (slab_amd64.s): gateGo four lanes at a time, expNeg included, so
// the same bits.

//go:noescape
func gateAVX64(z, l []float64, s float64, K int)

//go:noescape
func gateAVX32(z []float64, l []float32, s float64, K int)

func sfence()

// hasAVX reports whether the processor and the operating system support AVX and AVX2
// (256-bit YMM registers, saved across context switches).
var hasAVX = cpu.X86.HasAVX && cpu.X86.HasAVX2

// useAVX selects the AVX row loop; tests turn it off to compare with the Go loop.
var useAVX = hasAVX

// secondCoefsVec fills nsz and diag and reports the verdict of secondCoefs (the same bits,
// the same verdict). With the AVX loops it also fills c, K rows of Kp = padK(K), with the
// coefficients of the row's blocks rounded to T: c[a·Kp+b] = T(pairCoef(a, b)) for b ≥ a
// (the entries left of the diagonal are scratch); block (a,b) with b < a reads c[b·Kp+a],
// the same pair. Computed once a row, they leave the row writer a broadcast a block where
// it computed and rounded the coefficient block by block. nsz and diag hold Kp elements and
// z has capacity Kp (newRowSoftmax pads it): the loop runs whole vectors of four atoms.
func secondCoefsVec[T Float](c []T, nsz, diag, z []float64, s2 float64, K int) bool {
	if !useAVX {
		return secondCoefs(nsz[:K], diag[:K], z[:K], s2)
	}
	Kp := padK(K)
	if len(z) < K || cap(z) < Kp || len(nsz) < Kp || len(diag) < Kp || len(c) < K*Kp {
		panic("softmaxjet: coefficient buffers too short")
	}
	var zero T
	var zmin float64
	var ok bool
	if unsafe.Sizeof(zero) == 8 {
		zmin, ok = coefAVX64(f64s(c), nsz, diag, z[:Kp], s2, K, Kp)
	} else {
		zmin, ok = coefAVX32(f32s(c), nsz, diag, z[:Kp], s2, K, Kp)
	}
	return ok && offDiagonalOK(s2, zmin, K)
}

// rowVec writes a row like rowT, with the AVX loop when it can, from the coefficients that
// secondCoefsVec put in c; nt asks for non-temporal stores, which it uses only where the
// alignment allows. It reports whether it used them.
func rowVec[T Float](o, c []T, nsz, z, diag []float64, e []T, K, P int, nt bool) bool {
	if !useAVX {
		rowT(o, nsz, z, diag, e, K, P)
		return false
	}
	var zero T
	size := int(unsafe.Sizeof(zero))
	Kp := padK(K)
	if K < 1 || P < 1 || len(o) < K*K*P || len(c) < K*Kp || len(e) < K*P {
		panic("softmaxjet: row buffers too short")
	}
	nt = nt && uintptr(unsafe.Pointer(unsafe.SliceData(o)))%32 == 0 && P*size%32 == 0
	if size == 8 {
		rowAVX64(f64s(o), f64s(c), f64s(e), K, P, Kp, nt)
	} else {
		rowAVX32(f32s(o), f32s(c), f32s(e), K, P, Kp, nt)
	}
	return nt
}

// meanVec computes m_c = Σ_k z_k·D[k][c] as meanGo does (same operations, same order, same
// bits), with the AVX loop when it can.
func meanVec[T Float](m, z []float64, d []T, K, P int) {
	if !useAVX || len(m) < P || len(z) < K || len(d) < K*P {
		meanGo(m, z, d, K, P)
		return
	}
	var zero T
	if unsafe.Sizeof(zero) == 8 {
		meanAVX64(m, z, f64s(d), K, P)
	} else {
		meanAVX32(m, z, f32s(d), K, P)
	}
}

// gateVec writes the gate z = softmax(s·l) as gateGo does (same bits), with the AVX loop
// when it can.
func gateVec[T Float](z []float64, l []T, s float64, K int) {
	if !useAVX || len(z) < K || len(l) < K {
		gateGo(z, l, s, K)
		return
	}
	var zero T
	if unsafe.Sizeof(zero) == 8 {
		gateAVX64(z, f64s(l), s, K)
	} else {
		gateAVX32(z, f32s(l), s, K)
	}
}

// centreVec is centre with the AVX loop when it can (same bits); the range check, when the
// AVX loop flags a value (it flags every value the check fails and may flag a few more, at
// or near 2¹⁰⁰, or NaN), is redone exactly by centre, so the verdict is centre's.
func centreVec[E, T Float](e []E, d []T, m []float64, K, P int, check bool) bool {
	var ze E
	var zt T
	if !useAVX || unsafe.Sizeof(ze) != unsafe.Sizeof(zt) || len(e) < K*P || len(d) < K*P || len(m) < P {
		return centre(e, d, m, K, P, check)
	}
	if unsafe.Sizeof(ze) == 8 {
		centreAVX64(f64s(e), f64s(d), m, K, P)
		return true
	}
	if centreAVX32(f32s(e), f32s(d), m, K, P) && check {
		return centre(e, d, m, K, P, check)
	}
	return true
}

// hvpOutVec writes o[a][c] = T(f_a·(e[a][c]·u_a − w_c)) as hvpOutGo does (same bits), with
// the AVX loop when it can.
func hvpOutVec[T Float](o []T, e, w, f, u []float64, K, P int) {
	if !useAVX || len(o) < K*P || len(e) < K*P || len(w) < P || len(f) < K || len(u) < K {
		hvpOutGo(o, e, w, f, u, K, P)
		return
	}
	var zero T
	if unsafe.Sizeof(zero) == 8 {
		hvpOutAVX64(f64s(o), e, w, f, u, K, P)
	} else {
		hvpOutAVX32(f32s(o), e, w, f, u, K, P)
	}
}

func f64s[T Float](x []T) []float64 {
	return unsafe.Slice((*float64)(unsafe.Pointer(unsafe.SliceData(x))), len(x))
}

func f32s[T Float](x []T) []float32 {
	return unsafe.Slice((*float32)(unsafe.Pointer(unsafe.SliceData(x))), len(x))
}

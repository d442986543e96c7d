//go:build amd64 && !purego

package backward

import (
	"unsafe"

	"golang.org/x/sys/cpu"
)

// vec_amd64.s is generated from _asm/main.go (avo), the float32 and float64 twins of each
// loop from one Go function.
//go:generate sh -c "cd _asm && go run . -out ../vec_amd64.s"

// The stride-1 (last-axis) softmax backward in AVX (vec_amd64.s): the same operations in the
// same order as the Go loops, four float64 lanes at a time, so the same bits.

//go:noescape
func dotAVX64(a, b []float64) (s0, s1, s2, s3 float64)

//go:noescape
func dotAVX32(a, b []float32) (s0, s1, s2, s3 float64)

//go:noescape
func writeSoftmaxAVX64(dx, y, dy []float64, av float64)

//go:noescape
func writeSoftmaxAVX32(dx, y, dy []float32, av float64)

//go:noescape
func dotRows4AVX64(acc, a, b []float64, stride int)

//go:noescape
func dotRows4AVX32(acc []float64, a, b []float32, stride int)

//go:noescape
func writeRowAVX64(dx, y, dy, a []float64)

//go:noescape
func writeRowAVX32(dx, y, dy []float32, a []float64)

// hasAVX reports whether the processor and the operating system support AVX (256-bit YMM
// registers saved across context switches); these loops need nothing of AVX2.
var hasAVX = cpu.X86.HasAVX

// useAVX selects the AVX loops; tests turn it off to compare with the Go loops.
var useAVX = hasAVX

// dotVec is dot, with the AVX loop for element types of 4 and 8 bytes.
func dotVec[T Float](a, b []T) float64 {
	if !useAVX {
		return dot(a, b)
	}
	b = b[:len(a)]
	var s0, s1, s2, s3 float64
	var zero T
	if unsafe.Sizeof(zero) == 8 {
		s0, s1, s2, s3 = dotAVX64(f64s(a), f64s(b))
	} else {
		s0, s1, s2, s3 = dotAVX32(f32s(a), f32s(b))
	}
	for i := len(a) &^ 3; i < len(a); i++ {
		s0 += float64(float64(a[i]) * float64(b[i]))
	}
	return (s0 + s1) + (s2 + s3)
}

// writeSoftmaxVec writes xs_i = y_i·(dy_i − av) like the Go loop of writeSoftmax.
func writeSoftmaxVec[T Float](xs, ys, ds []T, av float64) {
	ys, ds = ys[:len(xs)], ds[:len(xs)]
	i := 0
	if useAVX {
		var zero T
		if unsafe.Sizeof(zero) == 8 {
			writeSoftmaxAVX64(f64s(xs), f64s(ys), f64s(ds), av)
		} else {
			writeSoftmaxAVX32(f32s(xs), f32s(ys), f32s(ds), av)
		}
		i = len(xs) &^ 3
	}
	for ; i < len(xs); i++ {
		xs[i] = T(float64(ys[i]) * (float64(ds[i]) - av))
	}
}

// dotRows4 adds four rows of a·b into acc, in row order, like the Go loop of reduceDot: row
// q of a is a[q·stride:][:len(acc)] (and of b). It returns the first column not done (the
// AVX loop does multiples of four; the caller finishes).
func dotRows4[T Float](acc []float64, a, b []T, stride int) int {
	if !useAVX {
		return 0
	}
	if n := 3*stride + len(acc); len(a) < n || len(b) < n {
		panic("backward: dotRows4: rows out of range")
	}
	var zero T
	if unsafe.Sizeof(zero) == 8 {
		dotRows4AVX64(acc, f64s(a), f64s(b), stride)
	} else {
		dotRows4AVX32(acc, f32s(a), f32s(b), stride)
	}
	return len(acc) &^ 3
}

// writeRow writes dx_i = y_i·(dy_i − a_i) like the Go loop of writeSoftmax; it returns the
// first column not done.
func writeRow[T Float](dx, y, dy []T, a []float64) int {
	if !useAVX {
		return 0
	}
	y, dy, a = y[:len(dx)], dy[:len(dx)], a[:len(dx)]
	var zero T
	if unsafe.Sizeof(zero) == 8 {
		writeRowAVX64(f64s(dx), f64s(y), f64s(dy), a)
	} else {
		writeRowAVX32(f32s(dx), f32s(y), f32s(dy), a)
	}
	return len(dx) &^ 3
}

func f64s[T Float](x []T) []float64 {
	return unsafe.Slice((*float64)(unsafe.Pointer(unsafe.SliceData(x))), len(x))
}

func f32s[T Float](x []T) []float32 {
	return unsafe.Slice((*float32)(unsafe.Pointer(unsafe.SliceData(x))), len(x))
}

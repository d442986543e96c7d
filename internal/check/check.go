// Package check holds the argument checks that several gatejet packages share: a batch's
// shape, the size of a buffer against gatejet.MaxBytes, and overlap between slices.
package check

import (
	"math"
	"slices"
	"strconv"
	"unsafe"

	"github.com/gatejet/gatejet"
)

// Elems returns the product of dims, and false if a dim is negative or the product
// overflows int. A zero dim gives 0 whatever the others.
func Elems(dims ...int) (int, bool) {
	for _, d := range dims {
		if d < 0 {
			return 0, false
		}
		if d == 0 {
			return 0, true
		}
	}
	p := 1
	for _, d := range dims {
		if p > math.MaxInt/d {
			return 0, false
		}
		p *= d
	}
	return p, true
}

// BatchShape reports an error of operation op unless a batch of N rows, each gating K atoms
// with P output columns, has N ≥ 0, K ≥ 1, P ≥ 1 (ErrShape) and every buffer size it implies
// (N·K·K·P at most) fits in an int (ErrSize, as for every size that overflows).
func BatchShape(op string, N, K, P int) error {
	if N < 0 || K < 1 || P < 1 {
		return Errorf(gatejet.ErrShape, op, "shape", "want N ≥ 0, K ≥ 1, P ≥ 1, got N=%d K=%d P=%d", N, K, P)
	}
	if _, ok := Elems(N, K, K, P); !ok {
		return Errorf(gatejet.ErrSize, op, "shape", "N·K·K·P overflows int (N=%d K=%d P=%d)", N, K, P)
	}
	return nil
}

// Alloc checks that a buffer of elemSize-byte elements with the given dims can be allocated:
// the element count fits an int and its bytes do not exceed gatejet.MaxBytes. It returns
// the element count, or an ErrSize *gatejet.Error of operation op and argument arg that
// names the size.
//
// Alloc allocates nothing when the size fits: dims is copied only into an error.
func Alloc(op, arg string, elemSize int, dims ...int) (int, error) {
	n, ok := Elems(dims...)
	limit := gatejet.MaxBytes()
	if ok && (elemSize <= 0 || int64(n) <= limit/int64(elemSize)) {
		return n, nil
	}
	return 0, allocError(op, arg, elemSize, slices.Clone(dims), n, ok, limit)
}

func allocError(op, arg string, elemSize int, dims []int, n int, ok bool, limit int64) error {
	if !ok {
		return Errorf(gatejet.ErrSize, op, arg, "%v elements overflow int", dims)
	}
	return Errorf(gatejet.ErrSize, op, arg,
		"%v = %d elements of %d bytes (%s) exceed the limit of %s (gatejet.SetMaxBytes)",
		dims, n, elemSize, Bytes(float64(n)*float64(elemSize)), Bytes(float64(limit)))
}

// Bytes formats a byte count with a binary unit ("128 MiB").
func Bytes(b float64) string {
	units := []string{"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"}
	i := 0
	for b >= 1024 && i < len(units)-1 {
		b /= 1024
		i++
	}
	prec := 1
	if i == 0 {
		prec = 0
	}
	return strconv.FormatFloat(b, 'f', prec, 64) + " " + units[i]
}

// Overlap reports whether two slices share memory (empty slices share none).
func Overlap[T any](a, b []T) bool {
	if len(a) == 0 || len(b) == 0 {
		return false
	}
	var z T
	sz := unsafe.Sizeof(z)
	a0 := uintptr(unsafe.Pointer(unsafe.SliceData(a)))
	b0 := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	return a0 < b0+uintptr(len(b))*sz && b0 < a0+uintptr(len(a))*sz
}

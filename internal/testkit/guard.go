package testkit

import (
	"testing"
	"unsafe"
)

// Guarded is memory for the bounds tests of vector loops: data pages, each between two pages
// that can be neither read nor written, so that a loop that reads or writes past either end
// of a slice placed against a guard page faults instead of passing.
type Guarded struct {
	t    testing.TB
	mem  []byte // guard, data 0, guard, data 1, …, guard
	page int
}

// GuardedSlice returns n elements of type T in data page i of g: the last n of the page,
// ending against the guard page after it, for end; else the first n, starting just after the
// guard page before it.
func GuardedSlice[T any](g *Guarded, i int, end bool, n int) []T {
	g.t.Helper()
	elem := int(unsafe.Sizeof(*new(T)))
	size := n * elem
	if pages := len(g.mem) / g.page / 2; i < 0 || i >= pages || n < 0 || size > g.page {
		g.t.Fatalf("GuardedSlice: %d elements of %d bytes in data page %d of %d", n, elem, i, pages)
	}
	off := (2*i + 1) * g.page
	if end {
		off += g.page - size
	}
	return unsafe.Slice((*T)(unsafe.Add(unsafe.Pointer(unsafe.SliceData(g.mem)), off)), n)
}

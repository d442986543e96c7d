package uninit

import (
	"runtime"
	"testing"
)

// TestSlicesAreUsable: the slices have the asked length and capacity, can be written and read
// back, stay valid across collections, and do not overlap one another.
func TestSlicesAreUsable(t *testing.T) {
	for _, n := range []int{1, 3, 4096, 1 << 20} {
		a, b := Float64s(n), Float32s(n)
		if len(a) != n || cap(a) != n || len(b) != n || cap(b) != n {
			t.Fatalf("n=%d: len/cap %d/%d and %d/%d", n, len(a), cap(a), len(b), cap(b))
		}
		for i := range a {
			a[i], b[i] = float64(i), float32(-i)
		}
		c := Float64s(n)
		for i := range c {
			c[i] = -1
		}
		runtime.GC()
		for i := range a {
			if a[i] != float64(i) || b[i] != float32(-i) {
				t.Fatalf("n=%d: element %d changed to %g, %g", n, i, a[i], b[i])
			}
		}
	}
}

// TestAllocatesOnlyTheSlice: one allocation each, no zeroing needed to pass the race detector
// or checkptr (go test -race runs this package too).
func TestAllocatesOnlyTheSlice(t *testing.T) {
	if n := testing.AllocsPerRun(10, func() { _ = Float64s(1 << 16) }); n != 1 {
		t.Fatalf("%v allocations, want 1", n)
	}
}

func BenchmarkAlloc(b *testing.B) {
	const n = 4096 * 16 * 16 * 16 // the N4096 K16 P16 second channel
	b.SetBytes(8 * n)
	b.Run("make", func(b *testing.B) {
		for b.Loop() {
			s := make([]float64, n)
			s[n-1] = 1
		}
	})
	b.Run("uninit", func(b *testing.B) {
		for b.Loop() {
			s := Float64s(n)
			s[n-1] = 1
		}
	})
}

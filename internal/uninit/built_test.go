package uninit

import (
	"math"
	"runtime"
	"testing"
)

// dirtyReuse fills many freed slices with a pattern, collects them, and allocates as many
// again through Float64s; it reports whether any new slice still held the pattern.
func dirtyReuse() bool {
	const m, n = 256, 512 // 4 KiB each: a small size class, so freed slots are reused
	pattern := math.Float64frombits(0x7ff8_dead_beef_0001)
	sink := make([][]float64, m)
	for i := range sink {
		s := make([]float64, n)
		for j := range s {
			s[j] = pattern
		}
		sink[i] = s
	}
	sink = nil
	runtime.GC()
	runtime.GC()
	for range m {
		s := Float64s(n)
		for _, v := range s {
			if math.Float64bits(v) == math.Float64bits(pattern) {
				return true
			}
		}
	}
	return false
}

// TestBuiltImplementation: the build tag chose the implementation Zeroed names. Under purego a
// slice from freed, dirtied memory is always zero; otherwise the allocator hands the old bits
// back (a few tries, each a fresh set of freed slots).
func TestBuiltImplementation(t *testing.T) {
	if Zeroed != wantZeroed {
		t.Fatalf("Zeroed = %v, want %v for this build", Zeroed, wantZeroed)
	}
	if Zeroed {
		for try := range 5 {
			if dirtyReuse() {
				t.Fatalf("try %d: a slice from the purego build held freed memory's bits", try)
			}
		}
		return
	}
	for range 20 {
		if dirtyReuse() {
			return
		}
	}
	t.Fatal("20 tries never returned freed memory's bits: the allocation is zeroed, not mallocgc's")
}

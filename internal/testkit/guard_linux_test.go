package testkit

import (
	"runtime/debug"
	"testing"
	"unsafe"
)

// TestGuardedPagesFault: the slices of GuardedSlice can be read and written, and the byte just
// past the end of one placed at the end of its page, or just before one placed at its start,
// faults.
func TestGuardedPagesFault(t *testing.T) {
	g := GuardedPages(t, 2)
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	for i := range 2 {
		for _, end := range []bool{true, false} {
			s := GuardedSlice[float32](g, i, end, 5)
			for k := range s {
				s[k] = float32(k)
			}
			outside := unsafe.Add(unsafe.Pointer(&s[0]), -1)
			if end {
				outside = unsafe.Add(unsafe.Pointer(&s[4]), 4)
			}
			func() {
				defer func() {
					if recover() == nil {
						t.Errorf("page %d end=%v: reading outside the slice did not fault", i, end)
					}
				}()
				_ = *(*byte)(outside)
			}()
		}
	}
}

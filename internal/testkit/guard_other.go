//go:build !linux

package testkit

import "testing"

// GuardedPages skips the test: guard pages are made with Linux's mmap and mprotect.
func GuardedPages(t testing.TB, n int) *Guarded {
	t.Skip("guard pages (mmap, mprotect) are set up on Linux only")
	return nil
}

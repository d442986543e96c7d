package testkit

import (
	"syscall"
	"testing"
)

// GuardedPages maps n data pages with a guard page before and after each (see Guarded); they
// are unmapped when the test ends.
func GuardedPages(t testing.TB, n int) *Guarded {
	t.Helper()
	page := syscall.Getpagesize()
	mem, err := syscall.Mmap(-1, 0, (2*n+1)*page, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Munmap(mem) })
	for g := 0; g <= 2*n; g += 2 {
		if err := syscall.Mprotect(mem[g*page:(g+1)*page], syscall.PROT_NONE); err != nil {
			t.Fatal(err)
		}
	}
	return &Guarded{t: t, mem: mem, page: page}
}

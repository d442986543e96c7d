package emu

import (
	"bytes"
	"os"
	"testing"
)

// TestKernelCopyIsCurrent: the emulator compiles gatejet_cu.h, which must be byte for byte the
// kernel source the device backend compiles; otherwise the emulator tests would test an old
// kernel and pass.
func TestKernelCopyIsCurrent(t *testing.T) {
	src, err := os.ReadFile("../../kernels/gatejet.cu")
	if err != nil {
		t.Fatal(err)
	}
	cp, err := os.ReadFile("gatejet_cu.h")
	if err != nil {
		t.Fatalf("%v: run `go generate ./cudaops/...`", err)
	}
	if !bytes.Equal(src, cp) {
		i := 0
		for i < len(src) && i < len(cp) && src[i] == cp[i] {
			i++
		}
		line := 1 + bytes.Count(src[:i], []byte("\n"))
		t.Fatalf("cudaops/internal/emu/gatejet_cu.h differs from cudaops/kernels/gatejet.cu (first at line %d): "+
			"the emulator tests ran an old kernel source; run `go generate ./cudaops/...`", line)
	}
}

package emu

import (
	"crypto/sha256"
	"fmt"
	"os"
	"testing"

	"github.com/gatejet/gatejet/cudaops/internal/emu/entries"
	"github.com/gatejet/gatejet/cudaops/kernels"
)

// TestKernelSourceHashIsCurrent: the emulator is rebuilt when kernelsrc_hash.go changes, not
// when gatejet.cu does (kernelsrc.go); a stale hash means the emulator tests may have run an
// older kernel source.
func TestKernelSourceHashIsCurrent(t *testing.T) {
	got := fmt.Sprintf("%x", sha256.Sum256([]byte(kernels.Source)))
	if got != kernelSourceSHA256 {
		t.Fatalf("cudaops/kernels/gatejet.cu has SHA-256 %s, cudaops/internal/emu/kernelsrc_hash.go says %s: "+
			"the emulator tests may have run an older kernel source; run go generate ./cudaops/...", got, kernelSourceSHA256)
	}
}

// TestKernelEntriesAreCurrent: the entry points the emulator instantiates are the kernel
// table's (kernel_entries.h is generated from it).
func TestKernelEntriesAreCurrent(t *testing.T) {
	got, err := os.ReadFile("kernel_entries.h")
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != entries.Header() {
		t.Fatalf("kernel_entries.h is not the kernel table's list of device kernels: run go generate ./cudaops/...")
	}
}

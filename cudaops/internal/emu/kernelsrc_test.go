package emu

import (
	"crypto/sha256"
	"fmt"
	"testing"

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

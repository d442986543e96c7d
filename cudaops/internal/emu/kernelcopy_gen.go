//go:build ignore

// kernelcopy_gen copies ../../kernels/gatejet.cu to gatejet_cu.h, byte for byte (run by
// `go generate ./cudaops/...` in cudaops/internal/emu). It leaves an identical copy untouched.
package main

import (
	"bytes"
	"fmt"
	"os"
)

func main() {
	src, err := os.ReadFile("../../kernels/gatejet.cu")
	if err != nil {
		fmt.Fprintln(os.Stderr, "kernelcopy_gen:", err)
		os.Exit(1)
	}
	if old, err := os.ReadFile("gatejet_cu.h"); err == nil && bytes.Equal(old, src) {
		return
	}
	if err := os.WriteFile("gatejet_cu.h", src, 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "kernelcopy_gen:", err)
		os.Exit(1)
	}
}

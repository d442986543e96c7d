//go:build ignore

// layouts_gen writes internal/kernel/shared_layouts.go, the shared-memory layout of every
// device row and coordinate jet as the emulator measures it (emu.SharedLayoutsSource; run by `go generate
// ./cudaops/...` after kernelsrc_gen.go, so that the emulator it builds holds the current
// kernel source and entry points), leaving a current file untouched.
package main

import (
	"bytes"
	"fmt"
	"os"

	"github.com/gatejet/gatejet/cudaops/internal/emu"
)

const out = "../../../internal/kernel/shared_layouts.go"

func main() {
	text, err := emu.SharedLayoutsSource()
	if err != nil {
		fmt.Fprintln(os.Stderr, "layouts_gen:", err)
		os.Exit(1)
	}
	if old, err := os.ReadFile(out); err == nil && bytes.Equal(old, []byte(text)) {
		return
	}
	if err := os.WriteFile(out, []byte(text), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "layouts_gen:", err)
		os.Exit(1)
	}
}

//go:build cuda

// Package nvrtccomp compiles CUDA C with NVRTC (gorgonia.org/cu/nvrtc). It needs libnvrtc but
// no GPU and no CUDA driver, so the kernel source can be compiled, and its PTX inspected,
// on any machine with the CUDA toolkit's NVRTC.
package nvrtccomp

import (
	"fmt"
	"strings"

	"gorgonia.org/cu/nvrtc"
)

// Compiler is a cudaops.Compiler backed by NVRTC.
type Compiler struct{}

// Compile compiles src with the given NVRTC options and returns the PTX. A failed
// compilation's error carries NVRTC's log.
func (Compiler) Compile(src, name string, options []string) (string, error) {
	prog, err := nvrtc.CreateProgram(src, name)
	if err != nil {
		return "", fmt.Errorf("nvrtc: creating program %s: %w", name, err)
	}
	defer prog.Destroy()
	if err := prog.Compile(options...); err != nil {
		log, _ := prog.GetLog()
		return "", fmt.Errorf("nvrtc: compiling %s with %v: %w\n%s", name, options, err, trim(log))
	}
	ptx, err := prog.GetPTX()
	if err != nil {
		return "", fmt.Errorf("nvrtc: PTX of %s: %w", name, err)
	}
	return ptx, nil
}

// Version returns NVRTC's version, e.g. "11.8".
func Version() string {
	major, minor, err := nvrtc.Version()
	if err != nil {
		return "unknown"
	}
	return fmt.Sprintf("%d.%d", major, minor)
}

func trim(s string) string {
	s = strings.TrimSpace(s)
	if len(s) > 4000 {
		s = s[:4000] + "…"
	}
	return s
}

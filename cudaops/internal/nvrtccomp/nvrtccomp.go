//go:build gatejetcuda || cuda

// Package nvrtccomp compiles CUDA C with NVRTC, opened at first use through
// cudaops/internal/cudrv (dlopen: no CUDA header or library is needed to build). It needs
// libnvrtc but no GPU and no CUDA driver, so the kernel source can be compiled, and its PTX
// inspected, on any machine with the CUDA toolkit's NVRTC. Built with the tag gatejetcuda
// (the standalone device backend) or cuda (cudaops/cudadoer).
package nvrtccomp

import (
	"fmt"
	"strings"

	"github.com/gatejet/gatejet/cudaops/internal/cudrv"
)

// Compiler is a modcache.Compiler backed by NVRTC.
type Compiler struct{}

// Compile compiles src with the given NVRTC options and returns the PTX. A failed
// compilation's error carries NVRTC's log; a missing NVRTC's names the libraries tried.
func (Compiler) Compile(src, name string, options []string) (string, error) {
	out, err := cudrv.Compile(src, name, options, false)
	if err != nil {
		return "", compileError(name, options, out, err)
	}
	return out.PTX, nil
}

// compileError describes a failed compilation of name.
func compileError(name string, options []string, out cudrv.Output, err error) error {
	if out.Log == "" {
		return fmt.Errorf("nvrtc: compiling %s with %v: %w", name, options, err)
	}
	return fmt.Errorf("nvrtc: compiling %s with %v: %w\n%s", name, options, err, trim(out.Log))
}

// Version returns NVRTC's version, e.g. "11.8" ("unknown" when NVRTC cannot be loaded).
func Version() string {
	major, minor, err := cudrv.NVRTCVersion()
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

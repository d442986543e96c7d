//go:build gatejetcuda || cuda

package gorgoniastd

import (
	"fmt"
	"os"
	"strings"

	"github.com/gatejet/gatejet/cudaops/internal/modcache"
	"github.com/gatejet/gatejet/cudaops/internal/nvrtccomp"
)

// VirtualArch returns what the sources are compiled for on a device of architecture device
// (e.g. "sm_90"): its compute_XY when NVRTC supports it, else that of the newest older
// architecture NVRTC supports (modcache.TargetArch), as cmd/cudagen compiles for compute_XY.
func VirtualArch(device modcache.Arch) (string, error) {
	supported, err := nvrtccomp.SupportedArchs()
	if err != nil {
		return "", err
	}
	target, err := modcache.TargetArch(device, supported)
	if err != nil {
		return "", err
	}
	return "compute_" + strings.TrimPrefix(string(modcache.RealArch(target)), "sm_"), nil
}

// Compile compiles every .cu file of dir with NVRTC for the virtual architecture arch (see
// VirtualArch) and returns the modules, in file order, as cmd/cudagen registers them. A
// module whose PTX declares no function is an error.
func Compile(dir, arch string) ([]Lib, error) {
	files, err := Sources(dir)
	if err != nil {
		return nil, err
	}
	var libs []Lib
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			return nil, fmt.Errorf("gorgoniastd: %w", err)
		}
		name := ModuleName(f)
		ptx, err := nvrtccomp.Compiler{}.Compile(Prepare(string(src)), name+".cu", Options(arch))
		if err != nil {
			return nil, fmt.Errorf("gorgoniastd: %w", err)
		}
		fns := Funcs(ptx)
		if len(fns) == 0 {
			return nil, fmt.Errorf("gorgoniastd: %s: the PTX declares no function", f)
		}
		libs = append(libs, Lib{Name: name, PTX: ptx, Funcs: fns})
	}
	return libs, nil
}

package modcache

import (
	"errors"
	"fmt"
	"github.com/gatejet/gatejet/internal/kernel"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gatejet/gatejet"
)

var nvrtc118 = []string{"sm_35", "sm_37", "sm_50", "sm_52", "sm_53", "sm_60", "sm_61", "sm_62", "sm_70", "sm_72",
	"sm_75", "sm_80", "sm_86", "sm_87", "sm_89", "sm_90"}

func TestTargetArch(t *testing.T) {
	for _, tc := range []struct {
		device Arch
		want   Arch
	}{
		{"sm_90", "sm_90"},        // supported: real code
		{"sm_80", "sm_80"},        // supported
		{"sm_100", "compute_90"},  // newer than the compiler: the newest PTX, JIT-compiled
		{"sm_120", "compute_90"},  // likewise
		{"sm_88", "compute_87"},   // unknown in between: the newest older one
		{"sm_90a", "sm_90"},       // arch-specific suffix: the same number
		{"compute_75", "sm_75"},   // a virtual name names the same number
		{"sm_35", "sm_35"},        // the oldest supported
		{"sm_61", "sm_61"},        // middle
		{"sm_63", "compute_62"},   // between two supported
		{"sm_70", "sm_70"},        // supported
		{"sm_71", "compute_70"},   // between
		{"sm_91", "compute_90"},   // just past the newest
		{"sm_89", "sm_89"},        // supported
		{"sm_86", "sm_86"},        // supported
		{"sm_54", "compute_53"},   // between
		{"sm_100a", "compute_90"}, // suffix, newer
	} {
		got, err := TargetArch(tc.device, nvrtc118)
		require.NoError(t, err, tc.device)
		require.Equal(t, tc.want, got, tc.device)
	}
	got, err := TargetArch("sm_100", nil)
	require.NoError(t, err)
	require.Equal(t, Arch("sm_100"), got, "a compiler that lists nothing compiles for the device")
	for _, bad := range []Arch{"sm_30", "sm_20"} {
		_, err := TargetArch(bad, nvrtc118)
		require.ErrorIs(t, err, gatejet.ErrDevice, bad)
		require.ErrorContains(t, err, "older than every architecture")
	}
	_, err = TargetArch("gfx90a", nvrtc118)
	require.ErrorIs(t, err, gatejet.ErrDevice)
	require.Equal(t, Arch("sm_90"), RealArch("compute_90"))
	require.Equal(t, Arch("sm_80"), RealArch("sm_80"))
}

// targetCompiler is an NVRTC-like fake: it lists supported architectures, writes PTX whose
// .target is the real architecture of --gpu-architecture (as NVRTC does for compute_XX), and
// makes a CUBIN for real architectures only.
type targetCompiler struct {
	supported []string
	opts      [][]string
	cubins    int
}

func (f *targetCompiler) SupportedArchs() ([]string, error) { return f.supported, nil }

func (f *targetCompiler) ptx(options []string) (string, string) {
	f.opts = append(f.opts, options)
	arch := ""
	for _, o := range options {
		if a, ok := strings.CutPrefix(o, "--gpu-architecture="); ok {
			arch = a
		}
	}
	return arch, fmt.Sprintf(".version 7.8\n.target %s\n", RealArch(Arch(arch)))
}

func (f *targetCompiler) Compile(src, name string, options []string) (string, error) {
	_, ptx := f.ptx(options)
	return ptx, nil
}

func (f *targetCompiler) CompileCUBIN(src, name string, options []string) (string, string, error) {
	arch, ptx := f.ptx(options)
	if strings.HasPrefix(arch, "compute_") {
		return "", "", errors.New("no CUBIN for a virtual architecture")
	}
	f.cubins++
	return ptx, "\x7fELF cubin for " + arch, nil
}

// TestModuleCacheTargets: a device the compiler supports gets its own architecture's CUBIN; a
// newer one gets PTX of the newest supported virtual architecture; an older one is refused
// with ErrDevice before anything is compiled.
func TestModuleCacheTargets(t *testing.T) {
	load := func(k ModuleKey, image string) (string, error) { return image, nil }
	comp := &targetCompiler{supported: nvrtc118}
	c := New(Arch("sm_90"), Compiler(comp), load, nil)
	require.Equal(t, Arch("sm_90"), c.Target())
	img, err := c.Get(kernel.JetSecond, kernel.Float64)
	require.NoError(t, err)
	require.Equal(t, "\x7fELF cubin for sm_90", img, "the device's own architecture loads a CUBIN")
	require.Equal(t, 1, comp.cubins)

	comp = &targetCompiler{supported: nvrtc118}
	c = New(Arch("sm_100"), Compiler(comp), load, nil)
	require.Equal(t, Arch("compute_90"), c.Target())
	img, err = c.Get(kernel.JetSecond, kernel.Float32)
	require.NoError(t, err)
	require.Contains(t, img, ".target sm_90", "a newer device loads PTX of the newest architecture")
	require.Zero(t, comp.cubins)
	require.Contains(t, comp.opts[0], "--gpu-architecture=compute_90")
	require.Equal(t, "gatejet_softmax_jet_float32_compute_90", c.Loaded()[0].String())

	comp = &targetCompiler{supported: nvrtc118}
	c = New(Arch("sm_30"), Compiler(comp), load, nil)
	_, err = c.Get(kernel.JetSecond, kernel.Float64)
	require.ErrorIs(t, err, gatejet.ErrDevice)
	require.ErrorContains(t, err, "sm_30")
	require.Empty(t, comp.opts, "nothing compiled for a device no target serves")
	require.ErrorIs(t, c.Prewarm(), gatejet.ErrDevice)
}

func TestDriverTooOld(t *testing.T) {
	err := DriverTooOld(ModuleKey{Module: "AXIS", DType: kernel.Float64, Arch: "sm_90"}, 11040, "11.8")
	require.ErrorIs(t, err, gatejet.ErrDevice)
	require.Equal(t, "cudaops.DeviceBackend: device error: loading gatejet_axis_float64_sm_90: the NVIDIA driver (CUDA 11.4) "+
		"refuses PTX from NVRTC 11.8, which is newer: upgrade the driver to one for CUDA 11.8 or later, "+
		"or use an NVRTC no newer than CUDA 11.4", err.Error())
}

//go:build cgo

package emu

import (
	"errors"
	"testing"

	"github.com/gatejet/gatejet"
	"github.com/gatejet/gatejet/cudaops"
	"github.com/gatejet/gatejet/cudaops/internal/launch"
	"github.com/gatejet/gatejet/cudaops/internal/testcase"
	"github.com/stretchr/testify/require"
)

// withMode sets the cudaops mode for one test.
func withMode(t *testing.T, m cudaops.Mode) {
	old := cudaops.SetMode(m)
	t.Cleanup(func() { cudaops.SetMode(old) })
}

// TestRunRequiredOnEmulator: with the emulator registered and ModeRequired, every kernel goes
// through cudaops.Run to the backend (PathGPU, never the CPU function) and matches the CPU.
func TestRunRequiredOnEmulator(t *testing.T) {
	withMode(t, cudaops.ModeRequired)
	b := New(launch.Options{}, Shuffled)
	defer cudaops.Register(b)()
	rng := newRNG(61, 62)
	before := cudaops.Stats()
	for _, k := range cudaops.DeviceKernels() {
		ints := map[cudaops.Family][]int{
			cudaops.FamilyRowJet: {4, 16, 16}, cudaops.FamilyAxis: {8, 64, 1}, cudaops.FamilyElementwise: {500},
		}[k.Family()]
		for _, dt := range dtypes {
			c := testcase.New(k, dt, ints, rng)
			p, err := cudaops.Run(c)
			require.NoError(t, err)
			require.Equal(t, cudaops.PathGPU, p)
			requireClose(t, c, reference(t, c), "Run on emu")
		}
	}
	require.EqualValues(t, 2*len(cudaops.DeviceKernels()), b.Launches())
	after := cudaops.Stats()
	require.EqualValues(t, 2*len(cudaops.DeviceKernels()), after.GPU-before.GPU)
}

// TestRunAutoFallsBackFromEmulator: a backend that fails (here: closed) under ModeAuto gives
// the CPU result, PathCPUFallback and the recorded device error.
func TestRunAutoFallsBackFromEmulator(t *testing.T) {
	withMode(t, cudaops.ModeAuto)
	b := New(launch.Options{}, Forward)
	defer cudaops.Register(b)()
	cudaops.SetBreakEven(cudaops.KernelJetSecond, 0)
	defer cudaops.SetBreakEven(cudaops.KernelJetSecond, -1)
	c := testcase.New(cudaops.KernelJetSecond, cudaops.Float64, []int{2, 4, 3}, newRNG(63, 64))

	p, err := cudaops.Run(c)
	require.NoError(t, err)
	require.Equal(t, cudaops.PathGPU, p)

	require.NoError(t, b.Close())
	d := testcase.Clone(c)
	p, err = cudaops.Run(d)
	require.NoError(t, err)
	require.Equal(t, cudaops.PathCPUFallback, p)
	require.True(t, errors.Is(cudaops.LastFallbackError(), gatejet.ErrDevice))
	requireClose(t, d, reference(t, d), "fallback")

	// ModeRequired with the failing backend: an ErrDevice error, no CPU.
	withMode(t, cudaops.ModeRequired)
	_, err = cudaops.Run(testcase.Clone(c))
	require.True(t, errors.Is(err, gatejet.ErrDevice))
}

// TestLaunchTooLarge: a K beyond what one row's shared memory holds is a device error (so
// ModeAuto falls back), not a crash.
func TestLaunchTooLarge(t *testing.T) {
	c := testcase.New(cudaops.KernelJetSecondVJP, cudaops.Float32, []int{1, 2048, 1}, newRNG(65, 66))
	_, err := Launch(c, launch.Options{})
	require.True(t, errors.Is(err, gatejet.ErrDevice), "%v", err)
	bad := testcase.New(cudaops.KernelJetFirst, cudaops.Float32, []int{1, 2, 2}, newRNG(65, 66))
	bad.F32.Out[0] = make([]float32, 3)
	_, err = Launch(bad, launch.Options{})
	require.True(t, errors.Is(err, gatejet.ErrSize), "%v", err)
}

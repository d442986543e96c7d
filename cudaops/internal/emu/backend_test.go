//go:build cgo

package emu

import (
	"errors"
	"testing"

	"github.com/gatejet/gatejet"
	"github.com/gatejet/gatejet/cudaops/internal/launch"
	"github.com/gatejet/gatejet/cudaops/internal/testcase"
	"github.com/gatejet/gatejet/internal/dispatch"
	"github.com/stretchr/testify/require"
)

// withMode sets the cudaops mode for one test.
func withMode(t *testing.T, m dispatch.Mode) {
	old := dispatch.SetMode(m)
	t.Cleanup(func() { dispatch.SetMode(old) })
}

// TestRunRequiredOnEmulator: with the emulator registered and ModeRequired, every kernel goes
// through dispatch.Run to the backend (PathGPU, never the CPU function) and matches the CPU.
func TestRunRequiredOnEmulator(t *testing.T) {
	withMode(t, dispatch.ModeRequired)
	b := New(launch.Options{}, Shuffled)
	defer dispatch.Register(b)()
	rng := newRNG(61, 62)
	before := dispatch.Stats()
	for _, k := range dispatch.DeviceKernels() {
		ints := map[dispatch.Family][]int{
			dispatch.FamilyRowJet: {4, 16, 16}, dispatch.FamilyCoordJet: {4, 16, 16}, dispatch.FamilyAxis: {8, 64, 1},
			dispatch.FamilyElementwise: {500},
		}[k.Family()]
		for _, dt := range dtypes {
			c := testcase.New(k, dt, ints, rng)
			p, err := dispatch.Run(c)
			require.NoError(t, err)
			require.Equal(t, dispatch.PathGPU, p)
			requireClose(t, c, reference(t, c), "Run on emu")
		}
	}
	require.EqualValues(t, 2*len(dispatch.DeviceKernels()), b.Launches())
	after := dispatch.Stats()
	require.EqualValues(t, 2*len(dispatch.DeviceKernels()), after.GPU-before.GPU)
}

// TestRunAutoFallsBackFromEmulator: a backend that fails (here: closed) under ModeAuto gives
// the CPU result, PathCPUFallback and the recorded device error.
func TestRunAutoFallsBackFromEmulator(t *testing.T) {
	withMode(t, dispatch.ModeAuto)
	b := New(launch.Options{}, Forward)
	defer dispatch.Register(b)()
	dispatch.SetBreakEven(dispatch.KernelJetSecond, 0)
	defer dispatch.SetBreakEven(dispatch.KernelJetSecond, -1)
	c := testcase.New(dispatch.KernelJetSecond, dispatch.Float64, []int{2, 4, 3}, newRNG(63, 64))

	p, err := dispatch.Run(c)
	require.NoError(t, err)
	require.Equal(t, dispatch.PathGPU, p)

	require.NoError(t, b.Close())
	d := testcase.Clone(c)
	p, err = dispatch.Run(d)
	require.NoError(t, err)
	require.Equal(t, dispatch.PathCPUFallback, p)
	require.True(t, errors.Is(dispatch.LastFallbackError(), gatejet.ErrDevice))
	requireClose(t, d, reference(t, d), "fallback")

	// ModeRequired with the failing backend: an ErrDevice error, no CPU.
	withMode(t, dispatch.ModeRequired)
	_, err = dispatch.Run(testcase.Clone(c))
	require.True(t, errors.Is(err, gatejet.ErrDevice))
}

// TestLaunchTooLarge: a K beyond what one row's shared memory holds is a device error (so
// ModeAuto falls back), not a crash.
func TestLaunchTooLarge(t *testing.T) {
	c := testcase.New(dispatch.KernelJetSecondVJP, dispatch.Float32, []int{1, 2048, 1}, newRNG(65, 66))
	_, err := Launch(c, launch.Options{})
	require.True(t, errors.Is(err, gatejet.ErrDevice), "%v", err)
	bad := testcase.New(dispatch.KernelJetFirst, dispatch.Float32, []int{1, 2, 2}, newRNG(65, 66))
	bad.F32.Out[0] = make([]float32, 3)
	_, err = Launch(bad, launch.Options{})
	require.True(t, errors.Is(err, gatejet.ErrSize), "%v", err)
}

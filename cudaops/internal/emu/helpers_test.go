//go:build cgo

package emu

import (
	"github.com/stretchr/testify/require"
	"math/rand/v2"
	"testing"

	"github.com/gatejet/gatejet/cudaops/internal/launch"
	"github.com/gatejet/gatejet/cudaops/internal/testcase"
	"github.com/gatejet/gatejet/internal/cpuref"
	"github.com/gatejet/gatejet/internal/dispatch"
	"github.com/gatejet/gatejet/internal/kernel"
)

var dtypes = []dispatch.DType{dispatch.Float64, dispatch.Float32}

// emulate runs c on the emulator with options o and fails the test on error.
func emulate(t testing.TB, c *dispatch.Call, o launch.Options) Result {
	t.Helper()
	res, err := Launch(c, o)
	require.NoError(t, err, "%s %v", c.Kernel, c.Ints)
	return res
}

// reference runs c's float64 twin on the CPU packages.
func reference(t testing.TB, c *dispatch.Call) *dispatch.Call {
	t.Helper()
	ref := testcase.As64(c)
	require.NoError(t, cpuref.Run(ref), "%s %v", c.Kernel, c.Ints)
	return ref
}

// requireClose compares every output of got with want (float64) within testcase.Tol(dt), and checks
// that no poisoned (NaN) element survived where the reference is finite.
func requireClose(t testing.TB, got, want *dispatch.Call, what string) {
	t.Helper()
	for i := range kernel.ID(got.Kernel).Spec().Out {
		g, w := testcase.Outputs(got)[i], testcase.Outputs(want)[i]
		e := testcase.RelErr(g, w)
		require.LessOrEqual(t, e, testcase.Tol(got.DType), "%s: %s %s Ints=%v output %d: normwise relative error %.3g",
			what, got.Kernel, got.DType, got.Ints, i, e)
	}
}

// matchReference emulates every kernel of ks on random inputs of every shape, in both element
// types, and compares the outputs with the CPU reference.
func matchReference(t *testing.T, rng *rand.Rand, ks []dispatch.Kernel, shapes [][3]int, what string) {
	t.Helper()
	for _, k := range ks {
		for _, sh := range shapes {
			for _, dt := range dtypes {
				c := testcase.New(k, dt, sh[:], rng)
				emulate(t, c, launch.Options{})
				requireClose(t, c, reference(t, c), what)
			}
		}
	}
}

// jetKernels returns the row-jet and coordinate-jet kernels of every gate.
func jetKernels() []dispatch.Kernel {
	return append(kernelsOf(dispatch.FamilyRowJet), kernelsOf(dispatch.FamilyCoordJet)...)
}

// kernelsOfGate returns the fourteen kernels of gate g.
func kernelsOfGate(g *kernel.Gate) []dispatch.Kernel {
	var out []dispatch.Kernel
	for _, k := range jetKernels() {
		if kernel.ID(k).Spec().Gate == g {
			out = append(out, k)
		}
	}
	return out
}

// kernelsOf returns the device kernels of family f.
func kernelsOf(f dispatch.Family) []dispatch.Kernel {
	var out []dispatch.Kernel
	for _, k := range dispatch.DeviceKernels() {
		if k.Family() == f {
			out = append(out, k)
		}
	}
	return out
}

func newRNG(a, b uint64) *rand.Rand { return rand.New(rand.NewPCG(a, b)) }

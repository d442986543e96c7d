package dispatch

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gatejet/gatejet/internal/kernel"
)

// TestBreakEvenModelWorkedExample: ReLU forward moves one input and one output element per
// output element (r = 2); at 2 ns per element on the CPU and 8 B / 12 GB/s = 2/3 ns per element
// on the bus, the device saves 2·(4/3) ns per output element, and pays back the 20 µs call at
// 20 µs / (8/3 ns) = 7500 elements. Softmax backward (axis: y, dy in, dx out, r = 3, 1 ns per
// element) saves 3·(1/3) ns: 20 000 elements.
func TestBreakEvenModelWorkedExample(t *testing.T) {
	require.InDelta(t, 7500, DefaultBreakEven(KernelReLUForward), 1)
	require.InDelta(t, 20000, DefaultBreakEven(KernelSoftmaxBackward), 1)
	require.Equal(t, 2.0, operandsPerOutput(kernel.ReLUForward.Spec()))
	require.Equal(t, 3.0, operandsPerOutput(kernel.SoftmaxBackward.Spec()))
	// jet_second at N = K = P = 16: logits 16·16 and decoded 16·16·16 in, 16·16·16·16 out.
	require.Equal(t, (256.0+4096+65536)/65536, operandsPerOutput(kernel.JetSecond.Spec()))
}

// TestBreakEvenModelBounds: every kernel's default is where the model's device time (fixed
// cost + copies) first drops to its CPU time, evaluated from the kernel's operand lengths at
// the representative sizes, and lies in [1, 2^31); or it is math.MaxInt exactly when the
// copies cost at least the CPU. Device kernels of every family get a finite one.
func TestBreakEvenModelBounds(t *testing.T) {
	finite := map[Family]bool{}
	for _, id := range kernel.All() {
		k := Kernel(id)
		sp := id.Spec()
		be := DefaultBreakEven(k)
		cpu := ModelCPUSecondsPerElement(sp.Family)
		bus := ModelElementBytes / ModelHostDeviceBytesPerSecond
		if cpu <= bus {
			require.Equal(t, math.MaxInt, be, "%v: the copies cost more than the CPU", k)
			continue
		}
		require.GreaterOrEqual(t, be, 1, "%v", k)
		require.Less(t, be, 1<<31, "%v", k)
		r := operandsPerOutput(sp) // checked against hand counts in the worked example
		device := func(w int) float64 { return ModelCallSeconds + r*float64(w)*bus }
		host := func(w int) float64 { return r * float64(w) * cpu }
		require.LessOrEqual(t, device(be), host(be)*(1+1e-12), "%v: the device pays at the break-even %d", k, be)
		if be > 1 {
			require.Greater(t, device(be-1), host(be-1)*(1-1e-12), "%v: the device does not pay below the break-even %d", k, be)
		}
		if id.OnDevice() {
			finite[sp.Family] = true
		}
	}
	for _, f := range []Family{FamilyRowJet, FamilyAxis, FamilyElementwise} {
		require.True(t, finite[f], "family %v has a device kernel with a finite break-even", f)
	}
	require.Equal(t, math.MaxInt, DefaultBreakEven(Kernel(0)), "an unknown kernel stays on the CPU")
}

// TestBreakEvenModelMonotonic: a dearer device call (more fixed cost, less bandwidth, wider
// elements) never lowers a break-even, a slower CPU never raises it, and a bus as slow as the
// CPU makes the device never pay.
func TestBreakEvenModelMonotonic(t *testing.T) {
	base := defaultModel
	scaled := func(f func(*breakEvenModel)) breakEvenModel {
		m := base
		f(&m)
		return m
	}
	for _, id := range kernel.All() {
		if !id.OnDevice() {
			continue
		}
		k := Kernel(id)
		b := base.breakEven(k)
		for _, tc := range []struct {
			name string
			m    breakEvenModel
			up   bool // the break-even may only grow (else only shrink)
		}{
			{"twice the call cost", scaled(func(m *breakEvenModel) { m.callSeconds *= 2 }), true},
			{"half the bandwidth", scaled(func(m *breakEvenModel) { m.bytesPerSecond /= 2 }), true},
			{"float32 elements", scaled(func(m *breakEvenModel) { m.elementBytes = 4 }), false},
			{"a CPU twice as slow", scaled(func(m *breakEvenModel) {
				m.cpu = func(f Family) float64 { return 2 * ModelCPUSecondsPerElement(f) }
			}), false},
		} {
			got := tc.m.breakEven(k)
			if tc.up {
				require.GreaterOrEqual(t, got, b, "%v: %s", k, tc.name)
			} else {
				require.LessOrEqual(t, got, b, "%v: %s", k, tc.name)
			}
		}
		if b != math.MaxInt {
			require.InDelta(t, 2*float64(b), float64(scaled(func(m *breakEvenModel) { m.callSeconds *= 2 }).breakEven(k)), 2,
				"%v: the break-even is proportional to the fixed cost", k)
		}
		slowBus := scaled(func(m *breakEvenModel) { m.bytesPerSecond = m.elementBytes / m.cpu(id.Family()) })
		require.Equal(t, math.MaxInt, slowBus.breakEven(k), "%v: a bus no faster than the CPU never pays", k)
	}
}

// TestSetBreakEvenOverridesTheModel: SetBreakEven replaces the model's value, a negative value
// restores it, and other kernels keep theirs.
func TestSetBreakEvenOverridesTheModel(t *testing.T) {
	k, other := KernelJetSecond, KernelJetFirst
	model, otherModel := DefaultBreakEven(k), BreakEven(other)
	require.Equal(t, model, BreakEven(k))
	SetBreakEven(k, 123)
	t.Cleanup(func() { SetBreakEven(k, -1) })
	require.Equal(t, 123, BreakEven(k))
	require.Equal(t, model, DefaultBreakEven(k), "the model is not changed by an override")
	require.Equal(t, otherModel, BreakEven(other))
	SetBreakEven(k, 0)
	require.Zero(t, BreakEven(k))
	SetBreakEven(k, -1)
	require.Equal(t, model, BreakEven(k))
}

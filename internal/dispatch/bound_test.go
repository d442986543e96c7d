package dispatch

import (
	"errors"
	"math"
	"testing"

	"github.com/gatejet/gatejet"
	"github.com/stretchr/testify/require"
)

// TestBindRefusesWhatCheckRefuses: Bind checks the kernel, the sizes and the scalars as Check
// does, with the same kinds, and declares the operands' lengths.
func TestBindRefusesWhatCheckRefuses(t *testing.T) {
	const n, k, p = 3, 4, 5
	b, err := Bind("test", KernelJetSecond, []int{n, k, p}, []float64{2})
	require.NoError(t, err)
	require.Equal(t, KernelJetSecond, b.Kernel())
	require.Equal(t, []int{n * k, n * k * p, 0}, []int{b.InLen(0), b.InLen(1), b.InLen(2)})
	require.Equal(t, n*k*k*p, b.OutLen(0))
	require.Equal(t, n*k*k*p, b.work)

	for _, tc := range []struct {
		name   string
		k      Kernel
		ints   []int
		floats []float64
		kind   error
	}{
		{"unknown kernel", 60000, []int{n, k, p}, []float64{2}, gatejet.ErrParam},
		{"ints count", KernelJetSecond, []int{n, k}, []float64{2}, gatejet.ErrParam},
		{"negative", KernelJetSecond, []int{-1, k, p}, []float64{2}, gatejet.ErrShape},
		{"K zero", KernelJetSecond, []int{n, 0, p}, []float64{2}, gatejet.ErrShape},
		{"no invTau", KernelJetSecond, []int{n, k, p}, nil, gatejet.ErrParam},
		{"bad invTau", KernelJetSecond, []int{n, k, p}, []float64{math.Inf(1)}, gatejet.ErrTemperature},
		{"NaN beta", KernelLogisticValue, []int{n, 2, p}, []float64{1, 1, 0, math.NaN()}, gatejet.ErrNonFinite},
		{"overflow", KernelJetSecond, []int{math.MaxInt / 2, k, p}, []float64{2}, gatejet.ErrSize},
		{"floats of an axis kernel", KernelSoftmaxBackward, []int{2, 3, 4}, []float64{1}, gatejet.ErrParam},
	} {
		_, err := Bind("test", tc.k, tc.ints, tc.floats)
		require.True(t, errors.Is(err, tc.kind), "%s: %v", tc.name, err)
		var ge *gatejet.Error
		require.True(t, errors.As(err, &ge) && ge.Op == "test", "%s: %v names the caller's operation", tc.name, err)
	}

	var zero Bound
	_, err = RunBound(&zero, Operands[float64]{})
	require.True(t, errors.Is(err, gatejet.ErrParam), "a Bound not made by Bind is refused: %v", err)
}

// runBoundReLU runs relu_forward of x through RunBound and returns the path, the output and
// the error.
func runBoundReLU(t *testing.T, x ...float64) (Path, []float64, error) {
	b, err := Bind("test", KernelReLUForward, []int{len(x)}, nil)
	require.NoError(t, err)
	y := make([]float64, len(x))
	var o Operands[float64]
	o.In[0], o.Out[0] = x, y
	p, err := RunBound(&b, o)
	return p, y, err
}

// TestRunBoundTakesRunsPaths: RunBound takes the path Run takes in every mode, with the same
// outputs, counters and errors.
func TestRunBoundTakesRunsPaths(t *testing.T) {
	for _, tc := range []struct {
		name    string
		mode    Mode
		backend bool
		fail    bool
		be      int
	}{
		{"off", ModeOff, true, false, 0},
		{"auto, no backend", ModeAuto, false, false, 0},
		{"auto", ModeAuto, true, false, 0},
		{"auto, below the break-even", ModeAuto, true, false, 3},
		{"auto, fallback", ModeAuto, true, true, 0},
		{"required", ModeRequired, true, false, 0},
		{"required, no backend", ModeRequired, false, false, 0},
		{"required, failure", ModeRequired, true, true, 0},
		{"invalid mode", Mode(7), true, false, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			type outcome struct {
				p      Path
				y      []float64
				err    string
				counts Counts
				calls  int64
			}
			var got [2]outcome
			for i, run := range []func() (Path, []float64, error){
				func() (Path, []float64, error) { return runReLU(-1, 2) },
				func() (Path, []float64, error) { return runBoundReLU(t, -1, 2) },
			} {
				isolate(t, tc.mode)
				var f *fakeBackend
				if tc.backend {
					f = registerFake(t, "fake", tc.fail)
				}
				SetBreakEven(KernelReLUForward, tc.be)
				p, y, err := run()
				got[i] = outcome{p: p, y: y, counts: Stats()}
				if err != nil {
					got[i].err = err.Error()
				}
				if f != nil {
					got[i].calls = f.launches.Load()
				}
			}
			require.Equal(t, got[0], got[1], "Run, then RunBound")
		})
	}
}

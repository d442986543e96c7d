package ops

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"
	"gorgonia.org/tensor"

	"github.com/gatejet/gatejet"
	"github.com/gatejet/gatejet/internal/kernel"
)

// TestLaunchBindRefusesADisagreement: a launch whose shapes or sizes disagree with its
// kernel's declaration is refused when it is bound, and every run returns that error without
// computing anything.
func TestLaunchBindRefusesADisagreement(t *testing.T) {
	four := tensor.Shape{4}
	for _, tc := range []struct {
		name string
		l    launch
		out  tensor.Shape
		kind error
	}{
		{"input shape", launch{k: kernel.ReLUForward, ints: []int{4}, in: []tensor.Shape{{5}}}, four, gatejet.ErrShape},
		{"output shape", launch{k: kernel.ReLUForward, ints: []int{4}, in: []tensor.Shape{four}}, tensor.Shape{2}, gatejet.ErrShape},
		{"input count", launch{k: kernel.ReLUBackward, ints: []int{4}, in: []tensor.Shape{four}}, four, gatejet.ErrParam},
		{"output slot", launch{k: kernel.ReLUForward, ints: []int{4}, in: []tensor.Shape{four}, out: 1}, four, gatejet.ErrParam},
		{"sizes", launch{k: kernel.ReLUForward, ints: []int{4, 1}, in: []tensor.Shape{four}}, four, gatejet.ErrParam},
		{"floats", launch{k: kernel.JetValue, ints: []int{1, 4, 1}, floats: []float64{0}, in: []tensor.Shape{four, four}}, four, gatejet.ErrTemperature},
	} {
		l := tc.l
		l.bind("test", tc.out)
		require.True(t, errors.Is(l.err, tc.kind), "%s: %v", tc.name, l.err)
		x := tensor.New(tensor.WithShape(4), tensor.WithBacking([]float64{-1, 2, -3, 4}))
		y := tensor.New(tensor.WithShape(4), tensor.WithBacking(make([]float64, 4)))
		var rec pathRecord
		err := runLaunch("test", &rec, tensor.Float64, &l, []*tensor.Dense{x}, y)
		require.Same(t, l.err, err, tc.name)
		require.Equal(t, []float64{0, 0, 0, 0}, y.Data(), "%s: nothing computed", tc.name)
		_, ran := rec.get()
		require.False(t, ran, "%s: no path recorded", tc.name)
	}

	ok := launch{k: kernel.ReLUForward, ints: []int{4}, in: []tensor.Shape{four}}
	ok.bind("test", four)
	require.NoError(t, ok.err)
}

// TestLaunchUnboundRunsChecked: a launch made for one call, not bound by an op's seam, is
// bound (and checked) by the run itself.
func TestLaunchUnboundRunsChecked(t *testing.T) {
	x := tensor.New(tensor.WithShape(4), tensor.WithBacking([]float64{-1, 2, -3, 4}))
	y := tensor.New(tensor.WithShape(4), tensor.WithBacking(make([]float64, 4)))
	var rec pathRecord
	l := launch{k: kernel.ReLUForward, ints: []int{4}, in: []tensor.Shape{{4}}}
	require.NoError(t, runLaunch("test", &rec, tensor.Float64, &l, []*tensor.Dense{x}, y))
	require.Equal(t, []float64{0, 2, 0, 4}, y.Data())
	_, ran := rec.get()
	require.True(t, ran)

	bad := launch{k: kernel.ReLUForward, ints: []int{4, 1}, in: []tensor.Shape{{4}}}
	err := runLaunch("test", &rec, tensor.Float64, &bad, []*tensor.Dense{x}, y)
	require.True(t, errors.Is(err, gatejet.ErrParam), "%v", err)
}

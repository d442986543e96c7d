package graphs

import (
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/gatejet/gatejet"
	"github.com/gatejet/gatejet/ops"
)

// TestBuildersPassOptions: the builders hand their ops.Options to the ops they build, so
// ReuseOutput reaches the Gauss-Newton slab op of GaussNewtonLogDet (the same buffer every
// run, the same numbers as without it), and a nil Option is refused.
func TestBuildersPassOptions(t *testing.T) {
	build := func(opts ...ops.Option) (*gorgonia.ExprGraph, *gorgonia.Node, *gorgonia.Node, error) {
		g := gorgonia.NewGraph()
		l := gorgonia.NewMatrix(g, tensor.Float64, gorgonia.WithShape(3, 4), gorgonia.WithName("l"),
			gorgonia.WithValue(tensor.New(tensor.WithShape(3, 4), tensor.WithBacking([]float64{
				0.5, 0.2, -0.1, 0.3, 0.9, -2, 0.4, 0.1, -0.3, 0.8, 0, 0.6}))))
		dv := make([]float64, 3*4*2)
		for i := range dv {
			dv[i] = float64(i%5) - 2
		}
		d := gorgonia.NewTensor(g, tensor.Float64, 3, gorgonia.WithShape(3, 4, 2), gorgonia.WithName("d"),
			gorgonia.WithValue(tensor.New(tensor.WithShape(3, 4, 2), tensor.WithBacking(dv))))
		ld, err := GaussNewtonLogDet(l, d, 1.3, 0.1, opts...)
		if err != nil {
			return nil, nil, nil, err
		}
		for _, n := range g.AllNodes() {
			if _, ok := n.Op().(ops.PathReporter); ok {
				return g, ld, n, nil
			}
		}
		t.Fatal("no ops node in the graph")
		return nil, nil, nil, nil
	}
	run := func(g *gorgonia.ExprGraph, ld, slab *gorgonia.Node, runs int) (vals []float64, ptrs []uintptr) {
		m := gorgonia.NewTapeMachine(g)
		defer m.Close()
		for range runs {
			require.NoError(t, m.RunAll())
			vals = append([]float64(nil), ld.Value().Data().([]float64)...)
			ptrs = append(ptrs, uintptr(unsafe.Pointer(&slab.Value().Data().([]float64)[0])))
			m.Reset()
		}
		return vals, ptrs
	}
	g, ld, slab, err := build(ops.ReuseOutput())
	require.NoError(t, err)
	got, ptrs := run(g, ld, slab, 3)
	require.Equal(t, ptrs[0], ptrs[1], "ReuseOutput did not reach the slab op")
	require.Equal(t, ptrs[1], ptrs[2])
	g, ld, slab, err = build()
	require.NoError(t, err)
	want, _ := run(g, ld, slab, 1)
	require.Equal(t, want, got)

	_, _, _, err = build(nil)
	require.ErrorIs(t, err, gatejet.ErrParam)
	for _, f := range []func() error{
		func() error {
			g := gorgonia.NewGraph()
			l := gorgonia.NewMatrix(g, tensor.Float64, gorgonia.WithShape(2, 3))
			d := gorgonia.NewTensor(g, tensor.Float64, 3, gorgonia.WithShape(2, 3, 1))
			_, err := CurvaturePenalty(l, d, 1, 1, nil)
			return err
		},
		func() error {
			g := gorgonia.NewGraph()
			l := gorgonia.NewMatrix(g, tensor.Float64, gorgonia.WithShape(2, 3))
			d := gorgonia.NewTensor(g, tensor.Float64, 3, gorgonia.WithShape(2, 3, 1))
			_, err := GaussNewtonSlabs(l, d, 1, nil)
			return err
		},
	} {
		require.ErrorIs(t, f(), gatejet.ErrParam)
	}
}

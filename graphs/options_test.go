package graphs

import (
	"math/rand/v2"
	"reflect"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/gatejet/gatejet"
	"github.com/gatejet/gatejet/internal/dispatch"
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
			if _, ok := n.Op().(dispatch.PathReporter); ok {
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

// graphsOpCase builds one of this package's own ops (SoftArgmin or LogDetPlusRidge) on a
// Float64 input with values, and a scalar cost of it.
type graphsOpCase struct {
	name  string
	build func(g *gorgonia.ExprGraph, opts ...ops.Option) (in, out *gorgonia.Node, err error)
}

func graphsOpCases() []graphsOpCase {
	return []graphsOpCase{
		{"SoftArgmin", func(g *gorgonia.ExprGraph, opts ...ops.Option) (*gorgonia.Node, *gorgonia.Node, error) {
			c := gorgonia.NewMatrix(g, tensor.Float64, gorgonia.WithShape(2, 3), gorgonia.WithName("c"),
				gorgonia.WithValue(denseOf(tensor.Float64, []int{2, 3}, []float64{1, 2, 3, 0.5, -1, 2})))
			p, err := SoftArgmin(c, 1.3, opts...)
			return c, p, err
		}},
		{"LogDetPlusRidge", func(g *gorgonia.ExprGraph, opts ...ops.Option) (*gorgonia.Node, *gorgonia.Node, error) {
			H := gorgonia.NewTensor(g, tensor.Float64, 3, gorgonia.WithShape(2, 3, 3), gorgonia.WithName("H"),
				gorgonia.WithValue(denseOf(tensor.Float64, []int{2, 3, 3}, spdBatch(rand.New(rand.NewPCG(1, 2)), 2, 3))))
			ld, err := LogDetPlusRidge(H, 0.1, opts...)
			return H, ld, err
		}},
	}
}

// TestGraphsOpsTakeOptions: SoftArgmin and LogDetPlusRidge take ops.Options like the ops of
// package ops: with ops.ReuseOutput a TapeMachine's runs write the same buffer, with the same
// numbers as without it; their ops report their paths (the CPU, forward and, on a
// LispMachine, DoDiff); a nil Option is an ErrParam error.
func TestGraphsOpsTakeOptions(t *testing.T) {
	for _, c := range graphsOpCases() {
		t.Run(c.name, func(t *testing.T) {
			run := func(opts ...ops.Option) (vals []float64, ptrs []uintptr, pr dispatch.PathReporter) {
				g := gorgonia.NewGraph()
				_, out, err := c.build(g, opts...)
				require.NoError(t, err)
				pr, ok := out.Op().(dispatch.PathReporter)
				require.True(t, ok, "the op is a PathReporter")
				m := gorgonia.NewTapeMachine(g)
				defer m.Close()
				for range 3 {
					require.NoError(t, m.RunAll())
					vals = append([]float64(nil), out.Value().Data().([]float64)...)
					ptrs = append(ptrs, uintptr(unsafe.Pointer(&out.Value().Data().([]float64)[0])))
					m.Reset()
				}
				return vals, ptrs, pr
			}
			got, ptrs, pr := run(ops.ReuseOutput())
			require.Equal(t, ptrs[0], ptrs[1], "ReuseOutput did not reach the op")
			require.Equal(t, ptrs[1], ptrs[2])
			require.Equal(t, dispatch.PathCounts{CPU: 3}, pr.PathCounts())
			p, ok := pr.LastPath()
			require.True(t, ok)
			require.Equal(t, dispatch.PathCPU, p)
			want, _, _ := run()
			require.Equal(t, want, got)

			// DoDiff on a LispMachine runs the gradient kernel through the seam as well.
			g := gorgonia.NewGraph()
			_, out, err := c.build(g)
			require.NoError(t, err)
			gorgonia.Must(gorgonia.Sum(out))
			m := gorgonia.NewLispMachine(g)
			require.NoError(t, m.RunAll())
			m.Close()
			require.Equal(t, dispatch.PathCounts{CPU: 1}, out.Op().(dispatch.PathReporter).DiffPathCounts())

			_, _, err = c.build(gorgonia.NewGraph(), nil)
			require.ErrorIs(t, err, gatejet.ErrParam)
		})
	}
}

// TestGraphsOpsCPUOnly: the kernels of SoftArgmin and LogDetPlusRidge run on the CPU only, so
// under cudaops.ModeRequired their Do is an ErrDevice error (the CPU never runs), and
// UsePreallocDo writes the value Do computes into the buffer it is given.
func TestGraphsOpsCPUOnly(t *testing.T) {
	for _, c := range graphsOpCases() {
		t.Run(c.name, func(t *testing.T) {
			node, out, err := c.build(gorgonia.NewGraph())
			require.NoError(t, err)
			op := out.Op()
			x := node.Value()
			want, err := op.Do(x)
			require.NoError(t, err)
			pre := tensor.New(tensor.Of(tensor.Float64), tensor.WithShape(out.Shape()...))
			got, err := op.(gorgonia.UsePreallocDoer).UsePreallocDo(pre, x)
			require.NoError(t, err)
			require.Same(t, pre, got)
			require.Equal(t, want.Data(), pre.Data())

			old := dispatch.SetMode(dispatch.ModeRequired)
			defer dispatch.SetMode(old)
			_, err = op.Do(x)
			require.ErrorIs(t, err, gatejet.ErrDevice)
		})
	}
}

// TestOptionTypes: every graph builder of this package takes the options of the ops it
// builds (ops.Option, as the ops' own constructors do), and GradCheck and RequireGradients
// take CheckOption, a type of another name, so that neither can be passed for the other.
func TestOptionTypes(t *testing.T) {
	opsOption := reflect.TypeOf(ops.Option(nil))
	for name, f := range map[string]any{
		"SoftArgmin": SoftArgmin, "LogDetPlusRidge": LogDetPlusRidge, "GaussNewtonSlabs": GaussNewtonSlabs,
		"GaussNewtonLogDet": GaussNewtonLogDet, "CurvaturePenalty": CurvaturePenalty,
		"ops.SoftmaxJetValue": ops.SoftmaxJetValue, "ops.Softmax": ops.Softmax,
	} {
		ft := reflect.TypeOf(f)
		require.True(t, ft.IsVariadic(), name)
		require.Equal(t, opsOption, ft.In(ft.NumIn()-1).Elem(), name)
	}
	checkOption := reflect.TypeOf(CheckOption(nil))
	require.NotEqual(t, opsOption, checkOption)
	for name, f := range map[string]any{"GradCheck": GradCheck, "RequireGradients": RequireGradients} {
		ft := reflect.TypeOf(f)
		require.Equal(t, checkOption, ft.In(ft.NumIn()-1).Elem(), name)
	}
	for _, o := range []any{WithStep(1e-6), WithTolerance(1e-6, 1e-6), WithMaxElements(3, 1), WithMachine(Lisp)} {
		require.Equal(t, checkOption, reflect.TypeOf(o))
	}
}

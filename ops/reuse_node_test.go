package ops

import (
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/gatejet/gatejet"
)

// requireReuseRefused checks the error of applying an op built with ReuseOutput a second time:
// an ErrParam *gatejet.Error of the op, reachable through gorgonia.ApplyOp's wrapping.
func requireReuseRefused(t *testing.T, err error, op string) {
	t.Helper()
	require.ErrorIs(t, err, gatejet.ErrParam)
	var ge *gatejet.Error
	require.True(t, errors.As(err, &ge), "want a *gatejet.Error, got %T: %v", err, err)
	require.Equal(t, op, ge.Op, "%v", err)
	require.Contains(t, err.Error(), "ReuseOutput")
}

// TestReuseOutputOneNodePerOp: the reported case. In one graph,
// v1 := SoftmaxJetValue(l1, d1, 1.3, ReuseOutput()) and v2 := gorgonia.ApplyOp(v1.Op(), l2, d2)
// made two nodes over one buffer, so Sub(v1, v2) was 0 everywhere. Applying the op again is
// now an ErrParam error; v2 built with the constructor has its own buffer, and Sub(v1, v2) on
// a TapeMachine, run after run with Reset, equals the difference of the plain op's values.
func TestReuseOutputOneNodePerOp(t *testing.T) {
	const n, k, p = 3, 4, 2
	for _, dt := range dtypes {
		t.Run(dt.String(), func(t *testing.T) {
			g := G.NewGraph()
			l1 := G.NewMatrix(g, dt, G.WithShape(n, k), G.WithName("l1"))
			d1 := G.NewTensor(g, dt, 3, G.WithShape(n, k, p), G.WithName("d1"))
			l2 := G.NewMatrix(g, dt, G.WithShape(n, k), G.WithName("l2"))
			d2 := G.NewTensor(g, dt, 3, G.WithShape(n, k, p), G.WithName("d2"))
			v1, err := SoftmaxJetValue(l1, d1, 1.3, ReuseOutput())
			require.NoError(t, err)
			shared, err := G.ApplyOp(v1.Op(), l2, d2)
			require.Nil(t, shared)
			requireReuseRefused(t, err, "ops.SoftmaxJetValue")

			v2, err := SoftmaxJetValue(l2, d2, 1.3, ReuseOutput())
			require.NoError(t, err)
			require.NotSame(t, v1.Op(), v2.Op())
			diff, err := G.Sub(v1, v2)
			require.NoError(t, err)
			plain, err := SoftmaxJetValue(l1, d1, 1.3)
			require.NoError(t, err)
			m := G.NewTapeMachine(g)
			defer m.Close()
			for run := 0; run < 3; run++ {
				in1 := jetInputsFor(int64(70+run), n, k, p)
				in2 := jetInputsFor(int64(80+run), n, k, p)
				vals1, vals2 := valuesFor(dt, in1[:2]), valuesFor(dt, in2[:2])
				require.NoError(t, G.Let(l1, vals1[0]))
				require.NoError(t, G.Let(d1, vals1[1]))
				require.NoError(t, G.Let(l2, vals2[0]))
				require.NoError(t, G.Let(d2, vals2[1]))
				require.NoError(t, m.RunAll())
				w1, err := plain.Op().Do(vals1...)
				require.NoError(t, err)
				w2, err := plain.Op().Do(vals2...)
				require.NoError(t, err)
				a, b := floats(t, w1), floats(t, w2)
				got := floats(t, diff.Value())
				nonzero := false
				for i := range got {
					require.Equal(t, castBack(dt, a[i]-b[i]), got[i], "run %d element %d", run, i)
					nonzero = nonzero || got[i] != 0
				}
				require.True(t, nonzero, "the two nodes have different inputs")
				m.Reset()
			}
		})
	}
}

// castBack rounds a difference of two values of dtype dt as the machine computes it.
func castBack(dt tensor.Dtype, x float64) float64 {
	if dt == tensor.Float32 {
		return float64(float32(x))
	}
	return x
}

// TestReuseOutputApplyOnceEveryOp: every op built with ReuseOutput — each constructor's, and
// the gradient ops gorgonia.Grad builds from them — refuses to make a second node; the same
// op without the option may be applied again as before.
func TestReuseOutputApplyOnceEveryOp(t *testing.T) {
	for _, c := range reuseCtors() {
		t.Run(c.name, func(t *testing.T) {
			g := G.NewGraph()
			ins := c.ins()
			nodes := nodesFor(g, tensor.Float64, ins)
			again := func(nd *G.Node) (*G.Node, error) {
				// Fresh inputs of the same shapes: a new node, not one Gorgonia would merge.
				kids := g.From(nd.ID())
				children := make([]*G.Node, 0, kids.Len())
				for kids.Next() {
					ch := kids.Node().(*G.Node)
					children = append(children, G.NewTensor(g, tensor.Float64, ch.Dims(), G.WithShape(ch.Shape()...),
						G.WithName(fmt.Sprintf("again%d_%d", nd.ID(), len(children)))))
				}
				return G.ApplyOp(nd.Op(), children...)
			}
			plain, err := c.build(nodes)
			require.NoError(t, err)
			_, err = again(plain)
			require.NoError(t, err, "an op without ReuseOutput may make several nodes")

			reused, err := c.build(nodes, ReuseOutput())
			require.NoError(t, err)
			_, err = again(reused)
			requireReuseRefused(t, err, reused.Op().(computer).name())

			cost, err := G.Sum(reused)
			require.NoError(t, err)
			_, err = G.Grad(cost, nodes[:reused.Op().Arity()]...)
			require.NoError(t, err)
			grads := 0
			for _, nd := range g.AllNodes() {
				op, ok := nd.Op().(computer)
				if !ok || nd == reused || op.outBuf() == nil {
					continue
				}
				grads++
				_, err := again(nd)
				requireReuseRefused(t, err, op.name())
			}
			require.Positive(t, grads, "Grad built gradient ops with ReuseOutput")
		})
	}
}

// TestReuseOutputTwoGraphsConcurrently: the reported case of two graphs sharing one
// ReuseOutput op, run by two TapeMachines at once, each reading the other's values. The
// second graph cannot take the first's op (ErrParam); with its own op, built by the
// constructor, both machines run at once (go test -race), run after run with new inputs,
// and every value equals the plain op's.
func TestReuseOutputTwoGraphsConcurrently(t *testing.T) {
	const n, k, p, runs = 8, 4, 3, 20
	type side struct {
		g    *G.ExprGraph
		l, d *G.Node
		out  *G.Node
	}
	mk := func(name string) side {
		g := G.NewGraph()
		return side{g: g,
			l: G.NewMatrix(g, tensor.Float64, G.WithShape(n, k), G.WithName("l"+name)),
			d: G.NewTensor(g, tensor.Float64, 3, G.WithShape(n, k, p), G.WithName("d"+name)),
		}
	}
	a, b := mk("a"), mk("b")
	var err error
	a.out, err = SoftmaxJetSecond(a.l, a.d, 1.3, ReuseOutput())
	require.NoError(t, err)
	shared, err := G.ApplyOp(a.out.Op(), b.l, b.d)
	require.Nil(t, shared)
	requireReuseRefused(t, err, "ops.SoftmaxJetSecond")
	b.out, err = SoftmaxJetSecond(b.l, b.d, 1.3, ReuseOutput())
	require.NoError(t, err)

	// The plain op's values for every run of each side, computed beforehand.
	pg := G.NewGraph()
	pl := G.NewMatrix(pg, tensor.Float64, G.WithShape(n, k), G.WithName("pl"))
	pd := G.NewTensor(pg, tensor.Float64, 3, G.WithShape(n, k, p), G.WithName("pd"))
	plain, err := SoftmaxJetSecond(pl, pd, 1.3)
	require.NoError(t, err)
	inputs := make([][][]G.Value, 2)
	wants := make([][][]float64, 2)
	for s := range inputs {
		for r := 0; r < runs; r++ {
			vals := valuesFor(tensor.Float64, jetInputsFor(int64(1000*s+r), n, k, p)[:2])
			w, err := plain.Op().Do(vals...)
			require.NoError(t, err)
			inputs[s] = append(inputs[s], vals)
			wants[s] = append(wants[s], floats(t, w))
		}
	}

	var wg sync.WaitGroup
	errs := make(chan error, 2)
	for s, sd := range []side{a, b} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			m := G.NewTapeMachine(sd.g)
			defer m.Close()
			for r := 0; r < runs; r++ {
				if err := G.Let(sd.l, inputs[s][r][0]); err != nil {
					errs <- err
					return
				}
				if err := G.Let(sd.d, inputs[s][r][1]); err != nil {
					errs <- err
					return
				}
				if err := m.RunAll(); err != nil {
					errs <- err
					return
				}
				got := sd.out.Value().Data().([]float64)
				for i, w := range wants[s][r] {
					if got[i] != w {
						errs <- fmt.Errorf("graph %d run %d element %d: got %v, want %v", s, r, i, got[i], w)
						return
					}
				}
				m.Reset()
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
}

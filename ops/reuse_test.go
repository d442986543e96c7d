package ops

import (
	"errors"
	"fmt"
	"runtime"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/gatejet/gatejet"
	"github.com/gatejet/gatejet/softmaxjet"
)

// reuseCtor is one public constructor, applied to fresh input nodes with the given options.
type reuseCtor struct {
	name  string
	ins   func() []input
	build func(in []*G.Node, opts ...Option) (*G.Node, error)
}

func reuseCtors() []reuseCtor {
	jet := func() []input { return jetInputsFor(5, 3, 4, 2) }
	coord := func() []input { return coordInputsFor(8, 3, 4, 2) }
	xy := func() []input { return jetInputsFor(6, 3, 4, 2)[:1] }
	xdy := func() []input {
		in := jetInputsFor(7, 3, 4, 2)
		return []input{in[0], {"dy", in[2].shape, in[2].vals}}
	}
	yd := func() []input {
		in := xdy()
		in[0] = input{"y", in[0].shape, softmaxRows(in[0].vals, 4)}
		return in
	}
	return []reuseCtor{
		{"SoftmaxJetValue", jet, func(in []*G.Node, o ...Option) (*G.Node, error) { return SoftmaxJetValue(in[0], in[1], 1.3, o...) }},
		{"SoftmaxJetFirst", jet, func(in []*G.Node, o ...Option) (*G.Node, error) { return SoftmaxJetFirst(in[0], in[1], 1.3, o...) }},
		{"SoftmaxJetSecond", jet, func(in []*G.Node, o ...Option) (*G.Node, error) { return SoftmaxJetSecond(in[0], in[1], 1.3, o...) }},
		{"SoftmaxJetHVP", jet, func(in []*G.Node, o ...Option) (*G.Node, error) {
			return SoftmaxJetHVP(in[0], in[1], in[2], 1.3, o...)
		}},
		{"SoftmaxJetGaussNewton", jet, func(in []*G.Node, o ...Option) (*G.Node, error) {
			return SoftmaxJetGaussNewton(in[0], in[1], 1.3, o...)
		}},
		{"LogisticJetValue", jet, func(in []*G.Node, o ...Option) (*G.Node, error) {
			return LogisticJetValue(in[0], in[1], reuseAlpha, reuseBeta, o...)
		}},
		{"LogisticJetFirst", jet, func(in []*G.Node, o ...Option) (*G.Node, error) {
			return LogisticJetFirst(in[0], in[1], reuseAlpha, reuseBeta, o...)
		}},
		{"LogisticJetSecond", jet, func(in []*G.Node, o ...Option) (*G.Node, error) {
			return LogisticJetSecond(in[0], in[1], reuseAlpha, reuseBeta, o...)
		}},
		{"LogisticJetHVP", jet, func(in []*G.Node, o ...Option) (*G.Node, error) {
			return LogisticJetHVP(in[0], in[1], in[2], reuseAlpha, reuseBeta, o...)
		}},
		{"LogisticJetGaussNewton", jet, func(in []*G.Node, o ...Option) (*G.Node, error) {
			return LogisticJetGaussNewton(in[0], in[1], reuseAlpha, reuseBeta, o...)
		}},
		{"SoftmaxBackward", yd, func(in []*G.Node, o ...Option) (*G.Node, error) { return SoftmaxBackward(in[0], in[1], -1, o...) }},
		{"LogSoftmaxBackward", yd, func(in []*G.Node, o ...Option) (*G.Node, error) {
			return LogSoftmaxBackward(in[0], in[1], 0, o...)
		}},
		{"ReLU", xy, func(in []*G.Node, o ...Option) (*G.Node, error) { return ReLU(in[0], o...) }},
		{"GELU", xy, func(in []*G.Node, o ...Option) (*G.Node, error) { return GELU(in[0], o...) }},
		{"SiLU", xy, func(in []*G.Node, o ...Option) (*G.Node, error) { return SiLU(in[0], o...) }},
		{"ReLUBackward", xdy, func(in []*G.Node, o ...Option) (*G.Node, error) { return ReLUBackward(in[0], in[1], o...) }},
		{"GELUBackward", xdy, func(in []*G.Node, o ...Option) (*G.Node, error) { return GELUBackward(in[0], in[1], o...) }},
		{"SiLUBackward", xdy, func(in []*G.Node, o ...Option) (*G.Node, error) { return SiLUBackward(in[0], in[1], o...) }},
		// Coordinate jets (coordjet.go).
		{"SoftmaxCoordJetFirst", coord, func(in []*G.Node, o ...Option) (*G.Node, error) {
			return SoftmaxCoordJetFirst(in[0], in[1], in[2], 1.3, o...)
		}},
		{"SoftmaxCoordJetSecond", coord, func(in []*G.Node, o ...Option) (*G.Node, error) {
			return SoftmaxCoordJetSecond(in[0], in[1], in[2], in[3], 1.3, o...)
		}},
		{"SoftmaxCoordJetHVP", coord, func(in []*G.Node, o ...Option) (*G.Node, error) {
			return SoftmaxCoordJetHVP(in[0], in[1], in[2], in[3], in[4], 1.3, o...)
		}},
		{"SoftmaxCoordJetGaussNewton", coord, func(in []*G.Node, o ...Option) (*G.Node, error) {
			return SoftmaxCoordJetGaussNewton(in[0], in[1], in[2], 1.3, o...)
		}},
		{"LogisticCoordJetFirst", coord, func(in []*G.Node, o ...Option) (*G.Node, error) {
			return LogisticCoordJetFirst(in[0], in[1], in[2], reuseAlpha, reuseBeta, o...)
		}},
		{"LogisticCoordJetSecond", coord, func(in []*G.Node, o ...Option) (*G.Node, error) {
			return LogisticCoordJetSecond(in[0], in[1], in[2], in[3], reuseAlpha, reuseBeta, o...)
		}},
		{"LogisticCoordJetHVP", coord, func(in []*G.Node, o ...Option) (*G.Node, error) {
			return LogisticCoordJetHVP(in[0], in[1], in[2], in[3], in[4], reuseAlpha, reuseBeta, o...)
		}},
		{"LogisticCoordJetGaussNewton", coord, func(in []*G.Node, o ...Option) (*G.Node, error) {
			return LogisticCoordJetGaussNewton(in[0], in[1], in[2], reuseAlpha, reuseBeta, o...)
		}},
		// Softmax-family forward (softmax.go).
		{"Softmax", xy, func(in []*G.Node, o ...Option) (*G.Node, error) { return Softmax(in[0], -1, o...) }},
		{"LogSoftmax", xy, func(in []*G.Node, o ...Option) (*G.Node, error) { return LogSoftmax(in[0], 0, o...) }},
	}
}

var (
	reuseAlpha = []float64{1.1, -0.6, 0.9, 2}
	reuseBeta  = []float64{0.2, 0, -0.3, 0.1}
)

// softmaxRows returns the softmax of each row of width k of x.
func softmaxRows(x []float64, k int) []float64 {
	out := make([]float64, len(x))
	for r := 0; r+k <= len(x); r += k {
		sum := 0.0
		for i := r; i < r+k; i++ {
			out[i] = float64(float32(1 + x[i]*x[i]))
			sum += out[i]
		}
		for i := r; i < r+k; i++ {
			out[i] /= sum
		}
	}
	return out
}

// dataPtr is the address of a tensor's first element.
func dataPtr(t *testing.T, v G.Value) uintptr {
	t.Helper()
	d, ok := v.(*tensor.Dense)
	require.True(t, ok, "want a *tensor.Dense, got %T", v)
	return d.Uintptr()
}

func nodesFor(g *G.ExprGraph, dt tensor.Dtype, ins []input) []*G.Node {
	ns := make([]*G.Node, len(ins))
	for i, in := range ins {
		ns[i] = G.NewTensor(g, dt, len(in.shape), G.WithShape(in.shape...), G.WithName(in.name))
	}
	return ns
}

func valuesFor(dt tensor.Dtype, ins []input) []G.Value {
	vs := make([]G.Value, len(ins))
	for i, in := range ins {
		vs[i] = toDense(dt, in.shape, in.vals)
	}
	return vs
}

// TestReuseOutputEveryConstructor: with ReuseOutput every op's Do writes the same memory each
// call and computes exactly what the op without the option computes; the two ops hash apart,
// so Gorgonia does not merge their nodes.
func TestReuseOutputEveryConstructor(t *testing.T) {
	for _, c := range reuseCtors() {
		for _, dt := range dtypes {
			t.Run(fmt.Sprintf("%s/%v", c.name, dt), func(t *testing.T) {
				ins := c.ins()
				g := G.NewGraph()
				nodes := nodesFor(g, dt, ins)
				plain, err := c.build(nodes)
				require.NoError(t, err)
				reused, err := c.build(nodes, ReuseOutput())
				require.NoError(t, err)
				require.NotSame(t, plain, reused, "a ReuseOutput node must not be merged with a plain one")
				require.NotEqual(t, plain.Op().Hashcode(), reused.Op().Hashcode())
				again, err := c.build(nodes, ReuseOutput())
				require.NoError(t, err)
				require.Same(t, reused, again, "equal ReuseOutput nodes are merged like any others")

				vals := valuesFor(dt, ins)[:plain.Op().Arity()]
				want, err := plain.Op().Do(vals...)
				require.NoError(t, err)
				first, err := reused.Op().Do(vals...)
				require.NoError(t, err)
				second, err := reused.Op().Do(vals...)
				require.NoError(t, err)
				require.Equal(t, floats(t, want), floats(t, first))
				require.Equal(t, floats(t, want), floats(t, second))
				require.Equal(t, dataPtr(t, first), dataPtr(t, second), "ReuseOutput must write the same buffer every call")
				require.NotSame(t, first, second, "each call returns its own tensor header")
				require.Equal(t, want.Shape(), second.Shape())
				again2, err := plain.Op().Do(vals...)
				require.NoError(t, err)
				require.NotEqual(t, dataPtr(t, want), dataPtr(t, again2), "without the option every Do allocates")
			})
		}
	}
}

// TestReuseOutputTapeMachine runs SoftmaxJetSecond with ReuseOutput on a TapeMachine with
// Reset between runs and new inputs each run: every run is right, writes the same buffer, and
// allocates a small fraction of the output, where the plain op allocates the whole output
// every run. A value kept from one run is overwritten by the next (the documented aliasing).
func TestReuseOutputTapeMachine(t *testing.T) {
	const n, k, p = 64, 8, 16
	for _, dt := range dtypes {
		t.Run(dt.String(), func(t *testing.T) {
			perRun := map[bool]uint64{}
			for _, reuse := range []bool{true, false} {
				g := G.NewGraph()
				l := G.NewMatrix(g, dt, G.WithShape(n, k), G.WithName("l"))
				d := G.NewTensor(g, dt, 3, G.WithShape(n, k, p), G.WithName("d"))
				var opts []Option
				if reuse {
					opts = append(opts, ReuseOutput())
				}
				out, err := SoftmaxJetSecond(l, d, 1.2, opts...)
				require.NoError(t, err)
				m := G.NewTapeMachine(g)
				var kept G.Value
				var ptr uintptr
				for run := 0; run < 4; run++ {
					ins := jetInputsFor(int64(40+run), n, k, p)
					require.NoError(t, G.Let(l, toDense(dt, ins[0].shape, ins[0].vals)))
					require.NoError(t, G.Let(d, toDense(dt, ins[1].shape, ins[1].vals)))
					require.NoError(t, m.RunAll())
					m.Reset()
					want := secondOf(t, dt, ins, 1.2)
					require.Equal(t, want, floats(t, out.Value()), "run %d", run)
					if !reuse {
						continue
					}
					if run == 0 {
						kept, ptr = out.Value(), dataPtr(t, out.Value())
						continue
					}
					require.Equal(t, ptr, dataPtr(t, out.Value()), "run %d wrote another buffer", run)
					require.Equal(t, want, floats(t, kept), "a kept value is overwritten by the next run")
				}
				var before, after runtime.MemStats
				runtime.ReadMemStats(&before)
				const runs = 5
				for i := 0; i < runs; i++ {
					require.NoError(t, m.RunAll())
					m.Reset()
				}
				runtime.ReadMemStats(&after)
				perRun[reuse] = (after.TotalAlloc - before.TotalAlloc) / runs
				m.Close()
			}
			outBytes := uint64(n*k*k*p) * uint64(dt.Size())
			t.Logf("bytes allocated per run: %d with ReuseOutput, %d without (output %d)", perRun[true], perRun[false], outBytes)
			require.GreaterOrEqual(t, perRun[false], outBytes, "the plain op allocates its output every run")
			require.Less(t, perRun[true], outBytes/16, "with ReuseOutput a run must not allocate the output")
		})
	}
}

func secondOf(t *testing.T, dt tensor.Dtype, ins []input, invTau float64) []float64 {
	sh := softmaxjet.Shape{N: ins[0].shape[0], K: ins[0].shape[1], P: ins[1].shape[2]}
	if dt == tensor.Float64 {
		dst := make([]float64, sh.SecondLen())
		require.NoError(t, softmaxjet.Softmax[float64]{InvTau: invTau}.Second(dst, typed[float64](ins[0].vals), typed[float64](ins[1].vals), sh))
		return dst
	}
	dst := make([]float32, sh.SecondLen())
	require.NoError(t, softmaxjet.Softmax[float32]{InvTau: invTau}.Second(dst, typed[float32](ins[0].vals), typed[float32](ins[1].vals), sh))
	return widen(dst)
}

// TestReuseOutputGradients: gradients through ReuseOutput ops (a jet channel and a softmax
// backward) equal those of the same graph without the option, bit for bit, over repeated
// runs of one TapeMachine; the gradient ops gorgonia.Grad builds inherit the option.
func TestReuseOutputGradients(t *testing.T) {
	const n, k, p = 5, 4, 3
	build := func(dt tensor.Dtype, opts ...Option) (*G.ExprGraph, *G.Node, *G.Node) {
		g := G.NewGraph()
		l := G.NewMatrix(g, dt, G.WithShape(n, k), G.WithName("l"))
		d := G.NewTensor(g, dt, 3, G.WithShape(n, k, p), G.WithName("d"))
		s, err := SoftmaxJetSecond(l, d, 0.8, opts...)
		require.NoError(t, err)
		y, err := G.SoftMax(l)
		require.NoError(t, err)
		sb, err := SoftmaxBackward(y, l, 1, opts...)
		require.NoError(t, err)
		w := G.NewConstant(tensor.New(tensor.WithShape(n, k, k, p), tensor.WithBacking(castTo(dt, weights(n*k*k*p)))))
		cost := G.Must(G.Add(G.Must(G.Sum(G.Must(G.HadamardProd(s, w)))), G.Must(G.Sum(G.Must(G.Square(sb))))))
		_, err = G.Grad(cost, l, d)
		require.NoError(t, err)
		return g, l, d
	}
	for _, dt := range dtypes {
		t.Run(dt.String(), func(t *testing.T) {
			var grads [2][][]float64
			for i, opts := range [][]Option{nil, {ReuseOutput()}} {
				g, l, d := build(dt, opts...)
				if opts != nil {
					var vjps, reusing int
					for _, nd := range g.AllNodes() {
						switch op := nd.Op().(type) {
						case *jetVJPOp:
							vjps++
							if op.reuses() {
								reusing++
							}
						case *axisGradOp:
							vjps++
							if op.reuses() {
								reusing++
							}
						}
					}
					require.Positive(t, vjps)
					require.Equal(t, vjps, reusing, "every gradient op of a ReuseOutput op reuses its output")
				}
				m := G.NewTapeMachine(g, G.BindDualValues(l, d))
				for run := 0; run < 3; run++ {
					ins := jetInputsFor(int64(60+run), n, k, p)
					require.NoError(t, G.Let(l, toDense(dt, ins[0].shape, ins[0].vals)))
					require.NoError(t, G.Let(d, toDense(dt, ins[1].shape, ins[1].vals)))
					require.NoError(t, m.RunAll())
					gl, err := l.Grad()
					require.NoError(t, err)
					gd, err := d.Grad()
					require.NoError(t, err)
					grads[i] = append(grads[i], floats(t, gl), floats(t, gd))
					m.Reset()
				}
				m.Close()
			}
			require.Equal(t, grads[0], grads[1])
		})
	}
}

func castTo(dt tensor.Dtype, x []float64) any {
	if dt == tensor.Float64 {
		return x
	}
	return typed[float32](x)
}

// TestReuseOutputConcurrentDo calls Do of one ReuseOutput op from several goroutines at once
// (go test -race): calls never write the buffer together — one that finds it busy writes a
// new tensor — and every result is right.
func TestReuseOutputConcurrentDo(t *testing.T) {
	const n, k, p = 16, 6, 8
	g := G.NewGraph()
	l := G.NewMatrix(g, tensor.Float64, G.WithShape(n, k), G.WithName("l"))
	d := G.NewTensor(g, tensor.Float64, 3, G.WithShape(n, k, p), G.WithName("d"))
	node, err := SoftmaxJetSecond(l, d, 1, ReuseOutput())
	require.NoError(t, err)
	op := node.Op()
	ins := jetInputsFor(9, n, k, p)
	vals := valuesFor(tensor.Float64, ins[:2])
	want := secondOf(t, tensor.Float64, ins, 1)
	first, err := op.Do(vals...)
	require.NoError(t, err)
	shared := dataPtr(t, first)

	var wg sync.WaitGroup
	var mu sync.Mutex
	var fresh, reused int
	errs := make(chan error, 8)
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 30; i++ {
				v, err := op.Do(vals...)
				if err != nil {
					errs <- err
					return
				}
				if v.(*tensor.Dense).Uintptr() == shared {
					mu.Lock()
					reused++
					mu.Unlock()
					continue // another call may be writing it again now: not ours to read
				}
				got := v.Data().([]float64)
				for j := range want {
					if got[j] != want[j] {
						errs <- fmt.Errorf("a fresh result differs at %d", j)
						return
					}
				}
				mu.Lock()
				fresh++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	t.Logf("%d calls wrote the shared buffer, %d found it busy and wrote a new tensor", reused, fresh)
	require.Equal(t, 8*30, reused+fresh)
	require.Positive(t, reused)
	require.Equal(t, want, first.Data().([]float64), "the shared buffer holds a whole, right result")
}

// TestNilOption: a nil Option is an ErrParam error naming opts, from every constructor.
func TestNilOption(t *testing.T) {
	for _, c := range reuseCtors() {
		g := G.NewGraph()
		_, err := c.build(nodesFor(g, tensor.Float64, c.ins()), nil)
		require.ErrorIs(t, err, gatejet.ErrParam, c.name)
		var ge *gatejet.Error
		require.True(t, errors.As(err, &ge), c.name)
		require.Equal(t, "opts", ge.Arg, c.name)
	}
}

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

			gradOf(t, reused, nodes)
			grads := 0
			built, cs := opsOf[computer](g)
			for i, nd := range built {
				op := cs[i]
				if nd == reused || op.outBuf() == nil {
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

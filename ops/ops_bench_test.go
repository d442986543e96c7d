package ops_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/gatejet/gatejet/backward"
	"github.com/gatejet/gatejet/internal/testkit"
	"github.com/gatejet/gatejet/ops"
	"github.com/gatejet/gatejet/softmaxjet"
)

// Benchmarks of every op of the package, usable with benchstat. Three ways of running an op:
//
//   - tape: the op alone in a graph built once and run by a TapeMachine with Reset between
//     runs (the steady state of a training loop; the machine calls the op's Do every run,
//     which allocates a new output, and that allocation is in the time);
//   - tape-reuse: the same with the op built with ops.ReuseOutput (Do writes one buffer);
//   - prealloc: the op's UsePreallocDo into a preallocated output (what a machine that keeps
//     its registers would do; no allocation).
//
// b.SetBytes is the output size, so MB/s is write bandwidth. Gorgonia's own softmax gradient
// (the op gorgonia.Grad puts behind gorgonia.SoftMax) runs on the same inputs as
// ops.SoftmaxBackward, by UsePreallocDo too, as BenchmarkSoftmaxBackwardOp/.../gorgonia.

var dtypes = []tensor.Dtype{tensor.Float64, tensor.Float32}

func dtName(dt tensor.Dtype) string {
	if dt == tensor.Float32 {
		return "f32"
	}
	return "f64"
}

// randDense returns a Dense of the given dtype with normal entries of standard deviation scale.
func randDense(rng *rand.Rand, dt tensor.Dtype, scale float64, shape ...int) *tensor.Dense {
	return testkit.Dense(dt, func() float64 { return scale * rng.NormFloat64() }, shape...)
}

// benchOp benchmarks the op that build puts in a graph of its own (the output node, on the
// input nodes ins, which are bound to vals) by tape and by prealloc.
func benchOp(b *testing.B, name string, build func(g *G.ExprGraph, opts ...ops.Option) (out *G.Node, ins []*G.Node, err error), vals []*tensor.Dense) {
	b.Helper()
	for _, way := range []struct {
		name string
		opts []ops.Option
	}{{"tape", nil}, {"tape-reuse", []ops.Option{ops.ReuseOutput()}}} {
		b.Run(name+"/"+way.name, func(b *testing.B) {
			g := G.NewGraph()
			out, ins, err := build(g, way.opts...)
			if err != nil {
				b.Fatal(err)
			}
			for i, n := range ins {
				if err := G.Let(n, vals[i]); err != nil {
					b.Fatal(err)
				}
			}
			// The heap settles after a few runs of a machine that allocates its outputs afresh.
			b.ReportAllocs()
			benchTape(b, g, 16, int64(out.Shape().TotalSize())*int64(out.Dtype().Size()))
		})
	}
	b.Run(name+"/prealloc", func(b *testing.B) {
		out, _, err := build(G.NewGraph())
		if err != nil {
			b.Fatal(err)
		}
		op, ok := out.Op().(G.UsePreallocDoer)
		if !ok {
			b.Skip("op has no UsePreallocDo")
		}
		benchPrealloc(b, op, out, vals, int64(out.Shape().TotalSize())*int64(out.Dtype().Size()))
	})
}

type jetShape struct{ n, k, p int }

// BenchmarkJetOps: the jet channels of both gates, by tape and by prealloc.
func BenchmarkJetOps(b *testing.B) {
	alpha, beta := make([]float64, 64), make([]float64, 64)
	for i := range alpha {
		alpha[i], beta[i] = 1+0.01*float64(i), 0.1
	}
	channels := []struct {
		name   string
		v      bool
		build  func(l, d, v *G.Node, o ...ops.Option) (*G.Node, error)
		shapes []jetShape
	}{
		{"SoftmaxJetValue", false, func(l, d, _ *G.Node, o ...ops.Option) (*G.Node, error) { return ops.SoftmaxJetValue(l, d, 1, o...) }, []jetShape{{4096, 16, 16}}},
		{"SoftmaxJetFirst", false, func(l, d, _ *G.Node, o ...ops.Option) (*G.Node, error) { return ops.SoftmaxJetFirst(l, d, 1, o...) }, []jetShape{{4096, 16, 16}}},
		{"SoftmaxJetSecond", false, func(l, d, _ *G.Node, o ...ops.Option) (*G.Node, error) { return ops.SoftmaxJetSecond(l, d, 1, o...) }, []jetShape{{4096, 16, 16}, {256, 64, 16}}},
		{"SoftmaxJetHVP", true, func(l, d, v *G.Node, o ...ops.Option) (*G.Node, error) { return ops.SoftmaxJetHVP(l, d, v, 1, o...) }, []jetShape{{4096, 16, 16}, {256, 64, 16}}},
		{"SoftmaxJetGaussNewton", false, func(l, d, _ *G.Node, o ...ops.Option) (*G.Node, error) {
			return ops.SoftmaxJetGaussNewton(l, d, 1, o...)
		}, []jetShape{{4096, 16, 16}}},
		{"LogisticJetValue", false, func(l, d, _ *G.Node, o ...ops.Option) (*G.Node, error) {
			return ops.LogisticJetValue(l, d, alpha[:16], beta[:16], o...)
		}, []jetShape{{4096, 16, 16}}},
		{"LogisticJetFirst", false, func(l, d, _ *G.Node, o ...ops.Option) (*G.Node, error) {
			return ops.LogisticJetFirst(l, d, alpha[:16], beta[:16], o...)
		}, []jetShape{{4096, 16, 16}}},
		{"LogisticJetSecond", false, func(l, d, _ *G.Node, o ...ops.Option) (*G.Node, error) {
			return ops.LogisticJetSecond(l, d, alpha[:16], beta[:16], o...)
		}, []jetShape{{4096, 16, 16}}},
		{"LogisticJetHVP", true, func(l, d, v *G.Node, o ...ops.Option) (*G.Node, error) {
			return ops.LogisticJetHVP(l, d, v, alpha[:16], beta[:16], o...)
		}, []jetShape{{4096, 16, 16}}},
		{"LogisticJetGaussNewton", false, func(l, d, _ *G.Node, o ...ops.Option) (*G.Node, error) {
			return ops.LogisticJetGaussNewton(l, d, alpha[:16], beta[:16], o...)
		}, []jetShape{{4096, 16, 16}}},
	}
	for _, ch := range channels {
		for _, s := range ch.shapes {
			for _, dt := range dtypes {
				rng := rand.New(rand.NewPCG(1, uint64(s.k)))
				vals := []*tensor.Dense{randDense(rng, dt, 1.5, s.n, s.k), randDense(rng, dt, 1, s.n, s.k, s.p)}
				if ch.v {
					vals = append(vals, randDense(rng, dt, 1, s.n, s.k))
				}
				build := func(g *G.ExprGraph, o ...ops.Option) (*G.Node, []*G.Node, error) {
					l := G.NewMatrix(g, dt, G.WithShape(s.n, s.k), G.WithName("l"))
					d := G.NewTensor(g, dt, 3, G.WithShape(s.n, s.k, s.p), G.WithName("d"))
					ins := []*G.Node{l, d}
					var v *G.Node
					if ch.v {
						v = G.NewMatrix(g, dt, G.WithShape(s.n, s.k), G.WithName("v"))
						ins = append(ins, v)
					}
					out, err := ch.build(l, d, v, o...)
					return out, ins, err
				}
				benchOp(b, fmt.Sprintf("%s/%s/N=%d/K=%d/P=%d", ch.name, dtName(dt), s.n, s.k, s.p), build, vals)
			}
		}
	}
}

// BenchmarkJetVJPOps: the gradient of Σ W⊙channel with respect to the logits (the VJP op that
// gorgonia.Grad puts behind the channel), by prealloc.
func BenchmarkJetVJPOps(b *testing.B) {
	channels := []struct {
		name  string
		v     bool
		build func(l, d, v *G.Node) (*G.Node, error)
		s     jetShape
	}{
		{"SoftmaxJetValue", false, func(l, d, _ *G.Node) (*G.Node, error) { return ops.SoftmaxJetValue(l, d, 1) }, jetShape{4096, 16, 16}},
		{"SoftmaxJetFirst", false, func(l, d, _ *G.Node) (*G.Node, error) { return ops.SoftmaxJetFirst(l, d, 1) }, jetShape{4096, 16, 16}},
		{"SoftmaxJetSecond", false, func(l, d, _ *G.Node) (*G.Node, error) { return ops.SoftmaxJetSecond(l, d, 1) }, jetShape{1024, 16, 16}},
		{"SoftmaxJetHVP", true, func(l, d, v *G.Node) (*G.Node, error) { return ops.SoftmaxJetHVP(l, d, v, 1) }, jetShape{4096, 16, 16}},
		{"SoftmaxJetGaussNewton", false, func(l, d, _ *G.Node) (*G.Node, error) { return ops.SoftmaxJetGaussNewton(l, d, 1) }, jetShape{4096, 16, 16}},
	}
	for _, ch := range channels {
		s := ch.s
		dt := tensor.Float64
		rng := rand.New(rand.NewPCG(2, uint64(s.k)))
		g := G.NewGraph()
		l := G.NewMatrix(g, dt, G.WithShape(s.n, s.k), G.WithName("l"))
		d := G.NewTensor(g, dt, 3, G.WithShape(s.n, s.k, s.p), G.WithName("d"))
		ins := []*G.Node{l, d}
		vals := []*tensor.Dense{randDense(rng, dt, 1.5, s.n, s.k), randDense(rng, dt, 1, s.n, s.k, s.p)}
		var v *G.Node
		if ch.v {
			v = G.NewMatrix(g, dt, G.WithShape(s.n, s.k), G.WithName("v"))
			ins = append(ins, v)
			vals = append(vals, randDense(rng, dt, 1, s.n, s.k))
		}
		out, err := ch.build(l, d, v)
		if err != nil {
			b.Fatal(err)
		}
		w := G.NewTensor(g, dt, out.Dims(), G.WithShape(out.Shape()...), G.WithName("w"))
		cost := G.Must(G.Sum(G.Must(G.HadamardProd(out, w))))
		if _, err := G.Grad(cost, l); err != nil {
			b.Fatal(err)
		}
		// The VJP node with respect to the logits: inputs (l, d, [v,] upstream).
		var vjp *G.Node
		for _, n := range g.AllNodes() {
			if n.Op() != nil && strings.HasSuffix(strings.SplitN(n.Op().String(), "{", 2)[0], "VJP") && strings.Contains(n.Op().String(), "wrt logits") {
				vjp = n
			}
		}
		if vjp == nil {
			b.Fatalf("%s: no VJP node with respect to the logits", ch.name)
		}
		up := randDense(rng, dt, 1, out.Shape()...)
		benchVJP(b, fmt.Sprintf("%s/%s/N=%d/K=%d/P=%d", ch.name, dtName(dt), s.n, s.k, s.p), vjp, append(vals, up))
	}
}

func benchVJP(b *testing.B, name string, n *G.Node, vals []*tensor.Dense) {
	b.Run(name+"/prealloc", func(b *testing.B) {
		// The bytes are those of the upstream gradient read.
		benchPrealloc(b, n.Op().(G.UsePreallocDoer), n, vals, int64(vals[len(vals)-1].Shape().TotalSize())*int64(n.Dtype().Size()))
	})
}

// benchTape runs g on a TapeMachine (RunAll, then Reset) warm times, then once per b.Loop,
// with bytes per run.
func benchTape(b *testing.B, g *G.ExprGraph, warm int, bytes int64) {
	m := G.NewTapeMachine(g)
	defer m.Close()
	run := func() {
		if err := m.RunAll(); err != nil {
			b.Fatal(err)
		}
		m.Reset()
	}
	for i := 0; i < warm; i++ {
		run()
	}
	b.SetBytes(bytes)
	b.ResetTimer()
	for b.Loop() {
		run()
	}
}

// benchPrealloc runs op's UsePreallocDo on vals into a buffer of n's shape and dtype once,
// then once per b.Loop, with bytes per run, reporting allocations.
func benchPrealloc(b *testing.B, op G.UsePreallocDoer, n *G.Node, vals []*tensor.Dense, bytes int64) {
	dst := tensor.New(tensor.WithShape(n.Shape()...), tensor.Of(n.Dtype()))
	args := make([]G.Value, len(vals))
	for i, v := range vals {
		args[i] = v
	}
	if _, err := op.UsePreallocDo(dst, args...); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(bytes)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if _, err := op.UsePreallocDo(dst, args...); err != nil {
			b.Fatal(err)
		}
	}
}

// softmaxOf writes a softmax along axis of random logits (a valid y for the backward ops).
func softmaxOf(rng *rand.Rand, dt tensor.Dtype, shape []int, axis int) *tensor.Dense {
	outer, n, inner := 1, shape[axis], 1
	for _, s := range shape[:axis] {
		outer *= s
	}
	for _, s := range shape[axis+1:] {
		inner *= s
	}
	y := make([]float64, outer*n*inner)
	for o := 0; o < outer; o++ {
		for i := 0; i < inner; i++ {
			sum := 0.0
			for k := 0; k < n; k++ {
				x := math.Exp(rng.NormFloat64())
				y[(o*n+k)*inner+i] = x
				sum += x
			}
			for k := 0; k < n; k++ {
				y[(o*n+k)*inner+i] /= sum
			}
		}
	}
	if dt == tensor.Float64 {
		return tensor.New(tensor.WithShape(shape...), tensor.WithBacking(y))
	}
	f := make([]float32, len(y))
	for i, x := range y {
		f[i] = float32(x)
	}
	return tensor.New(tensor.WithShape(shape...), tensor.WithBacking(f))
}

// BenchmarkSoftmaxBackwardOp: ops.SoftmaxBackward and ops.LogSoftmaxBackward on [4096 × 1024]
// along each axis, by prealloc, and Gorgonia's own softmax gradient op on the same (y, dy).
func BenchmarkSoftmaxBackwardOp(b *testing.B) {
	shape := []int{4096, 1024}
	for _, axis := range []int{1, 0} {
		for _, dt := range dtypes {
			rng := rand.New(rand.NewPCG(3, uint64(axis)))
			y, dy := softmaxOf(rng, dt, shape, axis), randDense(rng, dt, 1, shape...)
			name := fmt.Sprintf("%s/4096x1024/axis=%d", dtName(dt), axis)
			for _, k := range []struct {
				name string
				f    func(y, dy *G.Node, axis int, opts ...ops.Option) (*G.Node, error)
			}{{"SoftmaxBackward", ops.SoftmaxBackward}, {"LogSoftmaxBackward", ops.LogSoftmaxBackward}} {
				benchOp(b, k.name+"/"+name, func(g *G.ExprGraph, o ...ops.Option) (*G.Node, []*G.Node, error) {
					yn := G.NewTensor(g, dt, 2, G.WithShape(shape...), G.WithName("y"))
					dyn := G.NewTensor(g, dt, 2, G.WithShape(shape...), G.WithName("dy"))
					out, err := k.f(yn, dyn, axis, o...)
					return out, []*G.Node{yn, dyn}, err
				}, []*tensor.Dense{y, dy})
			}

			// Gorgonia's gradient op: (x, y, dy), x ignored.
			g2 := G.NewGraph()
			x := G.NewTensor(g2, dt, 2, G.WithShape(shape...), G.WithName("x"))
			sm, err := G.SoftMax(x, axis)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := G.Grad(G.Must(G.Sum(sm)), x); err != nil {
				b.Fatal(err)
			}
			var diff G.UsePreallocDoer
			for _, n := range g2.AllNodes() {
				if n.Op() != nil && strings.HasPrefix(n.Op().String(), "SoftmaxDiff") {
					diff = n.Op().(G.UsePreallocDoer)
				}
			}
			b.Run("SoftmaxBackward/"+name+"/gorgonia", func(b *testing.B) {
				dst := tensor.New(tensor.WithShape(shape...), tensor.Of(dt))
				b.SetBytes(int64(shape[0]*shape[1]) * int64(dt.Size()))
				b.ReportAllocs()
				for b.Loop() {
					if _, err := diff.UsePreallocDo(dst, y, y, dy); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// BenchmarkActivationOps: the activations and their backward ops on [4096 × 1024].
func BenchmarkActivationOps(b *testing.B) {
	shape := []int{4096, 1024}
	for _, dt := range dtypes {
		rng := rand.New(rand.NewPCG(4, 4))
		xv, dyv := randDense(rng, dt, 1, shape...), randDense(rng, dt, 1, shape...)
		for _, a := range []struct {
			name string
			fwd  func(x *G.Node, opts ...ops.Option) (*G.Node, error)
			bwd  func(x, dy *G.Node, opts ...ops.Option) (*G.Node, error)
		}{{"ReLU", ops.ReLU, ops.ReLUBackward}, {"GELU", ops.GELU, ops.GELUBackward}, {"SiLU", ops.SiLU, ops.SiLUBackward}} {
			name := fmt.Sprintf("%s/4096x1024", dtName(dt))
			benchOp(b, a.name+"/"+name, func(g *G.ExprGraph, o ...ops.Option) (*G.Node, []*G.Node, error) {
				x := G.NewTensor(g, dt, 2, G.WithShape(shape...), G.WithName("x"))
				out, err := a.fwd(x, o...)
				return out, []*G.Node{x}, err
			}, []*tensor.Dense{xv})
			benchOp(b, a.name+"Backward/"+name, func(g *G.ExprGraph, o ...ops.Option) (*G.Node, []*G.Node, error) {
				x := G.NewTensor(g, dt, 2, G.WithShape(shape...), G.WithName("x"))
				dy := G.NewTensor(g, dt, 2, G.WithShape(shape...), G.WithName("dy"))
				out, err := a.bwd(x, dy, o...)
				return out, []*G.Node{x, dy}, err
			}, []*tensor.Dense{xv, dyv})
		}
	}
}

// BenchmarkCallOverhead: an op's UsePreallocDo on a tiny input (one row of K = 4 atoms and
// P = 4 columns; 16 elements) against the kernel it runs called directly on the same slices,
// so that the difference is the cost of an op's call path (the checks, the dispatch and the
// path record), not of its arithmetic.
func BenchmarkCallOverhead(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	l, d := randDense(rng, tensor.Float64, 1, 1, 4), randDense(rng, tensor.Float64, 1, 1, 4, 4)
	x := randDense(rng, tensor.Float64, 1, 16)
	b.Run("SoftmaxJetFirst/op", func(b *testing.B) {
		g := G.NewGraph()
		ln := G.NewMatrix(g, tensor.Float64, G.WithShape(1, 4), G.WithName("l"))
		dn := G.NewTensor(g, tensor.Float64, 3, G.WithShape(1, 4, 4), G.WithName("d"))
		out, err := ops.SoftmaxJetFirst(ln, dn, 1)
		if err != nil {
			b.Fatal(err)
		}
		benchPrealloc(b, out.Op().(G.UsePreallocDoer), out, []*tensor.Dense{l, d}, 0)
	})
	b.Run("SoftmaxJetFirst/kernel", func(b *testing.B) {
		dst := make([]float64, 16)
		sm, sh := softmaxjet.Softmax[float64]{InvTau: 1}, softmaxjet.Shape{N: 1, K: 4, P: 4}
		lv, dv := l.Data().([]float64), d.Data().([]float64)
		b.ReportAllocs()
		for b.Loop() {
			if err := sm.First(dst, lv, dv, sh); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("ReLU/op", func(b *testing.B) {
		g := G.NewGraph()
		xn := G.NewMatrix(g, tensor.Float64, G.WithShape(1, 16), G.WithName("x"))
		out, err := ops.ReLU(xn)
		if err != nil {
			b.Fatal(err)
		}
		benchPrealloc(b, out.Op().(G.UsePreallocDoer), out, []*tensor.Dense{x}, 0)
	})
	b.Run("ReLU/kernel", func(b *testing.B) {
		dst, xv := make([]float64, 16), x.Data().([]float64)
		b.ReportAllocs()
		for b.Loop() {
			if err := backward.ReLU(dst, xv); err != nil {
				b.Fatal(err)
			}
		}
	})
}

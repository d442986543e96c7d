package ops_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/floats"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/gatejet/gatejet/graphs"
	"github.com/gatejet/gatejet/ops"
)

// gnShapes are the batch shapes [n,K,P] the Gauss-Newton channel's second-order tests run
// on: K = 1, P = 1, K = 2 and P > K included.
var gnShapes = [][3]int{{3, 4, 2}, {2, 1, 3}, {2, 3, 1}, {1, 1, 1}, {2, 2, 5}, {3, 3, 4}}

// newGNGraph is a firstGraph whose channel f is the Gauss-Newton slabs [n,K,K] instead of the
// first channel: c = Σ W⊙GN + Σ tanh(GN).
func newGNGraph(t *testing.T, dt tensor.Dtype, logistic bool, sh [3]int, seed uint64, opts ...ops.Option) *firstGraph {
	t.Helper()
	n, k, p := sh[0], sh[1], sh[2]
	rng := rand.New(rand.NewPCG(seed, 17))
	fg := &firstGraph{g: G.NewGraph(), invTau: 1.3}
	fg.l = variable(fg.g, dt, "l", []int{n, k}, normals(rng, n*k))
	fg.d = variable(fg.g, dt, "D", []int{n, k, p}, normals(rng, n*k*p))
	w := G.NewConstant(dense(dt, []int{n, k, k}, normals(rng, n*k*k)), G.WithName("W"))
	var err error
	if logistic {
		fg.alpha, fg.beta = normals(rng, k), normals(rng, k)
		for i := range fg.alpha {
			fg.alpha[i] += math.Copysign(0.5, fg.alpha[i]) // |α| ≥ 0.5: a gate that moves
		}
		fg.f, err = ops.LogisticJetGaussNewton(fg.l, fg.d, fg.alpha, fg.beta, opts...)
	} else {
		fg.f, err = ops.SoftmaxJetGaussNewton(fg.l, fg.d, fg.invTau, opts...)
	}
	require.NoError(t, err)
	fg.c = G.Must(G.Add(inner(fg.f, w), G.Must(G.Sum(G.Must(G.Tanh(fg.f))))))
	return fg
}

// firstOf is the first channel of fg's gate at logits l and decoded d.
func (fg *firstGraph) firstOf(t *testing.T, l, d *G.Node) *G.Node {
	t.Helper()
	var f *G.Node
	var err error
	if fg.alpha != nil {
		f, err = ops.LogisticJetFirst(l, d, fg.alpha, fg.beta)
	} else {
		f, err = ops.SoftmaxJetFirst(l, d, fg.invTau)
	}
	require.NoError(t, err)
	return f
}

// TestGaussNewtonVJPIsFirstVJP: the Gauss-Newton VJP kernel, at upstream G, agrees to
// round-off with the first channel's VJP at upstream Ĝ = (G + Gᵀ)·first, the identity the
// Gauss-Newton VJP's gradient is built on, for both gates.
func TestGaussNewtonVJPIsFirstVJP(t *testing.T) {
	for _, logistic := range []bool{false, true} {
		for i, sh := range gnShapes {
			t.Run(fmt.Sprintf("logistic=%v/%v", logistic, sh), func(t *testing.T) {
				n, k, p := sh[0], sh[1], sh[2]
				fg := newGNGraph(t, tensor.Float64, logistic, sh, uint64(50+i))
				rng := rand.New(rand.NewPCG(uint64(i), 19))
				gs := normals(rng, n*k*k)
				gv := G.NewConstant(dense(tensor.Float64, []int{n, k, k}, gs))
				want, err := graphs.Grad(inner(fg.f, gv), fg.l, fg.d)
				require.NoError(t, err)
				require.Contains(t, want[0].Op().String(), "JetGaussNewtonVJP")

				// Ĝ[r] = (G[r] + G[r]ᵀ)·first[r], by hand.
				f := eval(t, fg.firstOf(t, fg.l, fg.d))[0]
				gHat := make([]float64, n*k*p)
				for r := range n {
					for a := range k {
						for b := range k {
							s := gs[(r*k+a)*k+b] + gs[(r*k+b)*k+a]
							for c := range p {
								gHat[(r*k+a)*p+c] += s * f[(r*k+b)*p+c]
							}
						}
					}
				}
				first := fg.firstOf(t, fg.l, fg.d)
				got, err := graphs.Grad(inner(first, G.NewConstant(dense(tensor.Float64, []int{n, k, p}, gHat))), fg.l, fg.d)
				require.NoError(t, err)
				vals := eval(t, want[0], want[1], got[0], got[1])
				for j, name := range []string{"dl", "dD"} {
					e := relErr(vals[2+j], vals[j])
					t.Logf("%s: FirstVJP(Ĝ) against the Gauss-Newton VJP kernel, max error %.2g", name, e)
					require.LessOrEqual(t, e, 1e-13, "%s: FirstVJP(Ĝ) %v, Gauss-Newton VJP %v", name, vals[2+j], vals[j])
				}
			})
		}
	}
}

// TestGaussNewtonVJPHessianVectorProduct: the Hessian-vector product of a loss on the
// Gauss-Newton slabs, graphs.Grad of ⟨∇c, v⟩ through the Gauss-Newton VJP's gradient, agrees
// with central differences of ∇c along v (logits and decoded at once), for both gates and
// several shapes; and ⟨u, H·v⟩ = ⟨v, H·u⟩ to round-off.
func TestGaussNewtonVJPHessianVectorProduct(t *testing.T) {
	for _, logistic := range []bool{false, true} {
		for i, sh := range gnShapes {
			t.Run(fmt.Sprintf("logistic=%v/%v", logistic, sh), func(t *testing.T) {
				fg := newGNGraph(t, tensor.Float64, logistic, sh, uint64(i+1))
				rng := rand.New(rand.NewPCG(uint64(i), 3))
				nl, nd := sh[0]*sh[1], sh[0]*sh[1]*sh[2]
				vl, vd := normals(rng, nl), normals(rng, nd)
				ul, ud := normals(rng, nl), normals(rng, nd)
				grads, hv := fg.hvp(t, vl, vd)
				hu := fg.hvpOf(t, grads, ul, ud)
				got := eval(t, hv[0], hv[1], hu[0], hu[1])
				want := centralDiff(t, []*G.Node{fg.l, fg.d}, [][]float64{vl, vd}, 1e-5, grads[0], grads[1])
				for j, name := range []string{"H·v in l", "H·v in D"} {
					e := relErr(got[j], want[j])
					t.Logf("%s: max error %.2g (relative to 1 + max |H·v|)", name, e)
					require.LessOrEqual(t, e, 1e-7, "%s: got %v, central differences %v", name, got[j], want[j])
				}
				uHv, vHu := floats.Dot(ul, got[0])+floats.Dot(ud, got[1]), floats.Dot(vl, got[2])+floats.Dot(vd, got[3])
				sym := math.Abs(uHv-vHu) / (1 + math.Abs(uHv))
				t.Logf("symmetry: ⟨u,Hv⟩ = %.15g, ⟨v,Hu⟩ = %.15g, relative difference %.2g", uHv, vHu, sym)
				require.LessOrEqual(t, sym, 1e-12)
			})
		}
	}
}

// TestGaussNewtonVJPHessianGradCheck: graphs.GradCheck passes on ⟨∇c, v⟩ for a loss on the
// Gauss-Newton slabs, in logits and decoded, for both gates, in float64 (tight tolerances)
// and float32 (the default ones).
func TestGaussNewtonVJPHessianGradCheck(t *testing.T) {
	for _, dt := range []tensor.Dtype{tensor.Float64, tensor.Float32} {
		for _, logistic := range []bool{false, true} {
			for i, sh := range gnShapes {
				t.Run(fmt.Sprintf("%v/logistic=%v/%v", dt, logistic, sh), func(t *testing.T) {
					fg := newGNGraph(t, dt, logistic, sh, uint64(10+i))
					rng := rand.New(rand.NewPCG(uint64(i), 5))
					grads, err := graphs.Grad(fg.c, fg.l, fg.d)
					require.NoError(t, err)
					vl := G.NewConstant(dense(dt, fg.l.Shape(), normals(rng, fg.l.Shape().TotalSize())))
					vd := G.NewConstant(dense(dt, fg.d.Shape(), normals(rng, fg.d.Shape().TotalSize())))
					dir := G.Must(G.Add(inner(grads[0], vl), inner(grads[1], vd)))
					var opts []graphs.Option
					if dt == tensor.Float64 {
						opts = append(opts, graphs.WithStep(1e-5), graphs.WithTolerance(1e-7, 1e-8))
					}
					rep, err := graphs.GradCheck(dir, G.Nodes{fg.l, fg.d}, opts...)
					require.NoError(t, err, "%v", rep)
					for _, n := range rep.Nodes {
						t.Logf("%s: max abs error %.2g, max rel error %.2g", n.Name, n.MaxAbsErr, n.MaxRelErr)
					}
				})
			}
		}
	}
}

// TestGaussNewtonVJPPartials checks each gradient of the Gauss-Newton VJP ops on its own:
// with dl, dD the VJP of ⟨G, GN⟩ (G an input), the gradients of Sl = ⟨Ul, dl⟩ and
// SD = ⟨UD, dD⟩ with respect to logits, decoded and G agree with central differences of Sl
// and SD. GN is quadratic in decoded, so, unlike the other channels' dD, its dD depends on
// decoded, and both VJP ops report every input differentiable.
func TestGaussNewtonVJPPartials(t *testing.T) {
	for _, logistic := range []bool{false, true} {
		for i, sh := range gnShapes {
			t.Run(fmt.Sprintf("logistic=%v/%v", logistic, sh), func(t *testing.T) {
				n, k, p := sh[0], sh[1], sh[2]
				fg := newGNGraph(t, tensor.Float64, logistic, sh, uint64(20+i))
				rng := rand.New(rand.NewPCG(uint64(i), 9))
				gv := variable(fg.g, tensor.Float64, "G", []int{n, k, k}, normals(rng, n*k*k))
				vjp, err := graphs.Grad(inner(fg.f, gv), fg.l, fg.d)
				require.NoError(t, err)
				require.Contains(t, vjp[0].Op().String(), "JetGaussNewtonVJP")
				require.Contains(t, vjp[1].Op().String(), "JetGaussNewtonVJP")
				ul := G.NewConstant(dense(tensor.Float64, []int{n, k}, normals(rng, n*k)))
				ud := G.NewConstant(dense(tensor.Float64, []int{n, k, p}, normals(rng, n*k*p)))
				sl, sd := inner(vjp[0], ul), inner(vjp[1], ud)
				require.Equal(t, []bool{true, true, true}, vjp[0].Op().(G.SDOp).DiffWRT(3))
				require.Equal(t, []bool{true, true, true}, vjp[1].Op().(G.SDOp).DiffWRT(3))

				xs := []*G.Node{fg.l, fg.d, gv}
				gl, err := graphs.Grad(sl, xs...)
				require.NoError(t, err)
				gd, err := graphs.Grad(sd, xs...)
				require.NoError(t, err)
				got := eval(t, gl[0], gl[1], gl[2], gd[0], gd[1], gd[2])
				for xi, x := range xs {
					size := x.Shape().TotalSize()
					fdSl, fdSD := make([]float64, size), make([]float64, size)
					for j := range size {
						dirs := [][]float64{make([]float64, n*k), make([]float64, n*k*p), make([]float64, n*k*k)}
						dirs[xi][j] = 1
						fd := centralDiff(t, xs, dirs, 1e-5, sl, sd)
						fdSl[j], fdSD[j] = fd[0][0], fd[1][0]
					}
					for _, c := range []struct {
						name      string
						got, want []float64
					}{{"Sl", got[xi], fdSl}, {"SD", got[3+xi], fdSD}} {
						e := relErr(c.got, c.want)
						t.Logf("∂%s/∂%s: max error %.2g", c.name, x.Name(), e)
						require.LessOrEqual(t, e, 1e-7, "∂%s/∂%s: got %v, central differences %v", c.name, x.Name(), c.got, c.want)
					}
				}
			})
		}
	}
}

// TestGaussNewtonVJPHessianFloat32: the float32 Hessian-vector product of a loss on the
// Gauss-Newton slabs agrees with the float64 one at the same inputs within float32's
// precision; and with ReuseOutput, which the gradient ops inherit, the float64 one is
// unchanged.
func TestGaussNewtonVJPHessianFloat32(t *testing.T) {
	for _, logistic := range []bool{false, true} {
		for i, sh := range gnShapes {
			t.Run(fmt.Sprintf("logistic=%v/%v", logistic, sh), func(t *testing.T) {
				rng := rand.New(rand.NewPCG(uint64(i), 13))
				vl, vd := normals(rng, sh[0]*sh[1]), normals(rng, sh[0]*sh[1]*sh[2])
				hvpOf := func(dt tensor.Dtype, opts ...ops.Option) [][]float64 {
					fg := newGNGraph(t, dt, logistic, sh, uint64(30+i), opts...)
					_, hv := fg.hvp(t, vl, vd)
					return eval(t, hv[0], hv[1])
				}
				want, got := hvpOf(tensor.Float64), hvpOf(tensor.Float32)
				reused := hvpOf(tensor.Float64, ops.ReuseOutput())
				for j, name := range []string{"H·v in l", "H·v in D"} {
					e := relErr(got[j], want[j])
					t.Logf("%s: float32 against float64, max error %.2g", name, e)
					require.LessOrEqual(t, e, 1e-6, "%s: float32 %v, float64 %v", name, got[j], want[j])
					require.Equal(t, want[j], reused[j], "%s with ReuseOutput", name)
				}
			})
		}
	}
}

// TestGaussNewtonVJPThirdOrderNotDifferentiable: a third derivative of a loss on the
// Gauss-Newton slabs passes through the HVP's VJP, which is not differentiable; graphs.Grad
// reports it, naming the op, rather than dropping it as if it were a constant.
func TestGaussNewtonVJPThirdOrderNotDifferentiable(t *testing.T) {
	for _, logistic := range []bool{false, true} {
		fg := newGNGraph(t, tensor.Float64, logistic, [3]int{2, 3, 2}, 1)
		grads, err := graphs.Grad(fg.c, fg.l)
		require.NoError(t, err)
		hv, err := graphs.Grad(G.Must(G.Sum(G.Must(G.Square(grads[0])))), fg.l)
		require.NoError(t, err)
		_, err = graphs.Grad(G.Must(G.Sum(G.Must(G.Square(hv[0])))), fg.l)
		require.ErrorIs(t, err, graphs.ErrNotDifferentiable)
		require.Contains(t, err.Error(), "JetHVPVJP")
	}
}

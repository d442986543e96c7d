package ops

import (
	"errors"
	"fmt"
	"math"
	"math/rand"
	"testing"

	"github.com/stretchr/testify/require"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/gatejet/gatejet"
	"github.com/gatejet/gatejet/internal/check"
	"github.com/gatejet/gatejet/internal/dispatch"
	"github.com/gatejet/gatejet/internal/kernel"
	"github.com/gatejet/gatejet/softmaxjet"
)

// A gate declared only here, to show that a gate is one type the ops are generic over: the
// unnormalised exponential gate ζ_k = exp(s·l_k), with one scalar parameter s. Its kernels
// are plain loops (ζ' = sζ, ζ” = s²ζ, ζ”' = s³ζ, all diagonal), it has no device kernels,
// and nothing outside this file knows of it.
type expGate[T gatejet.Float] struct{ s float64 }

var testExpGate = &kernel.Gate{
	Name:   "test_exp",
	Title:  "TestExpJet",
	Params: []kernel.Param{{Name: "s"}},
	Check: func(op string, _ int, f []float64) error {
		if math.IsNaN(f[0]) || math.IsInf(f[0], 0) {
			return check.Errorf(gatejet.ErrParam, op, "s", "want a finite s, got %v", f[0])
		}
		return nil
	},
	CPU:    kernel.GateCPU(newExpGate[float64], newExpGate[float32]),
	Sample: func(_ int, u, _ func() float64) []float64 { return []float64{u() - 0.5} },
}

func init() { kernel.Register(testExpGate) }

func newExpGate[T gatejet.Float](f []float64, _ int) expGate[T] { return expGate[T]{f[0]} }

// rows calls f for each row n with the row's ζ_k·s^j for j = 0..3 (d[j][k]) and its decoded D.
func (g expGate[T]) rows(sh softmaxjet.Shape, l, d []T, f func(n int, z [4][]float64, D []T)) error {
	if err := sh.Check("expGate"); err != nil {
		return err
	}
	if len(l) != sh.LogitsLen() || len(d) != sh.DecodedLen() {
		return check.Errorf(gatejet.ErrSize, "expGate", "", "want logits %d and decoded %d, got %d and %d",
			sh.LogitsLen(), sh.DecodedLen(), len(l), len(d))
	}
	K, P := sh.K, sh.P
	for n := 0; n < sh.N; n++ {
		var z [4][]float64
		for j := range z {
			z[j] = make([]float64, K)
		}
		for k := 0; k < K; k++ {
			e := math.Exp(g.s * float64(l[n*K+k]))
			z[0][k], z[1][k], z[2][k], z[3][k] = e, g.s*e, g.s*g.s*e, g.s*g.s*g.s*e
		}
		f(n, z, d[n*K*P:(n+1)*K*P])
	}
	return nil
}

func (g expGate[T]) Value(dst, l, d []T, sh softmaxjet.Shape) error {
	K, P := sh.K, sh.P
	return g.rows(sh, l, d, func(n int, z [4][]float64, D []T) {
		for c := 0; c < P; c++ {
			acc := 0.0
			for k := 0; k < K; k++ {
				acc += z[0][k] * float64(D[k*P+c])
			}
			dst[n*P+c] = T(acc)
		}
	})
}

// diag writes out[n][a][c] = z[j][a]·w_a·D[a][c] (w = 1 without v).
func (g expGate[T]) diag(j int, dst, l, d, v []T, sh softmaxjet.Shape) error {
	K, P := sh.K, sh.P
	return g.rows(sh, l, d, func(n int, z [4][]float64, D []T) {
		for a := 0; a < K; a++ {
			w := vWeight(v, n*K+a)
			for c := 0; c < P; c++ {
				dst[(n*K+a)*P+c] = T(z[j][a] * w * float64(D[a*P+c]))
			}
		}
	})
}

func (g expGate[T]) First(dst, l, d []T, sh softmaxjet.Shape) error {
	return g.diag(1, dst, l, d, nil, sh)
}

func (g expGate[T]) HVP(dst, l, d, v []T, sh softmaxjet.Shape) error {
	return g.diag(2, dst, l, d, v, sh)
}

func (g expGate[T]) Second(dst, l, d []T, sh softmaxjet.Shape) error {
	K, P := sh.K, sh.P
	return g.rows(sh, l, d, func(n int, z [4][]float64, D []T) {
		for a := 0; a < K; a++ {
			for b := 0; b < K; b++ {
				for c := 0; c < P; c++ {
					x := 0.0
					if a == b {
						x = z[2][a] * float64(D[a*P+c])
					}
					dst[((n*K+a)*K+b)*P+c] = T(x)
				}
			}
		}
	})
}

func (g expGate[T]) GaussNewton(dst, l, d []T, sh softmaxjet.Shape) error {
	K, P := sh.K, sh.P
	return g.rows(sh, l, d, func(n int, z [4][]float64, D []T) {
		for a := 0; a < K; a++ {
			for b := 0; b < K; b++ {
				acc := 0.0
				for c := 0; c < P; c++ {
					acc += z[1][a] * float64(D[a*P+c]) * z[1][b] * float64(D[b*P+c])
				}
				dst[(n*K+a)*K+b] = T(acc)
			}
		}
	})
}

// pull writes, for a diagonal channel whose element [a][c] is z[j][a]·w_a·D[a][c] and whose
// upstream gradient at it is up(n, a, c): dLogits_a = Σ_c up·z[j+1][a]·w_a·D[a][c],
// dDecoded[a][c] = up·z[j][a]·w_a and, with v, dV_a = Σ_c up·z[j][a]·D[a][c].
func (g expGate[T]) pull(j int, dl, dd, dv, l, d, v []T, sh softmaxjet.Shape, up func(n, a, c int) float64) error {
	K, P := sh.K, sh.P
	return g.rows(sh, l, d, func(n int, z [4][]float64, D []T) {
		for a := 0; a < K; a++ {
			w := vWeight(v, n*K+a)
			sl, sv := 0.0, 0.0
			for c := 0; c < P; c++ {
				u := up(n, a, c)
				sl += u * z[j+1][a] * w * float64(D[a*P+c])
				sv += u * z[j][a] * float64(D[a*P+c])
				if dd != nil {
					dd[(n*K+a)*P+c] = T(u * z[j][a] * w)
				}
			}
			if dl != nil {
				dl[n*K+a] = T(sl)
			}
			if dv != nil {
				dv[n*K+a] = T(sv)
			}
		}
	})
}

func (g expGate[T]) ValueVJP(dl, dd, l, d, up []T, sh softmaxjet.Shape) error {
	P := sh.P
	return g.pull(0, dl, dd, nil, l, d, nil, sh, func(n, _, c int) float64 { return float64(up[n*P+c]) })
}

func (g expGate[T]) FirstVJP(dl, dd, l, d, up []T, sh softmaxjet.Shape) error {
	K, P := sh.K, sh.P
	return g.pull(1, dl, dd, nil, l, d, nil, sh, func(n, a, c int) float64 { return float64(up[(n*K+a)*P+c]) })
}

func (g expGate[T]) SecondVJP(dl, dd, l, d, up []T, sh softmaxjet.Shape) error {
	K, P := sh.K, sh.P
	return g.pull(2, dl, dd, nil, l, d, nil, sh, func(n, a, c int) float64 { return float64(up[((n*K+a)*K+a)*P+c]) })
}

func (g expGate[T]) HVPVJP(dl, dd, dv, l, d, v, up []T, sh softmaxjet.Shape) error {
	K, P := sh.K, sh.P
	return g.pull(2, dl, dd, dv, l, d, v, sh, func(n, a, c int) float64 { return float64(up[(n*K+a)*P+c]) })
}

// GaussNewtonVJP: gn[a][b] = Σ_c F[a][c]·F[b][c] with F = First, so the upstream gradient at
// F[a][c] is Σ_b (S[a][b] + S[b][a])·F[b][c], pulled back through First.
func (g expGate[T]) GaussNewtonVJP(dl, dd, l, d, up []T, sh softmaxjet.Shape) error {
	K, P := sh.K, sh.P
	first := make([]T, sh.DecodedLen())
	if err := g.First(first, l, d, sh); err != nil {
		return err
	}
	return g.pull(1, dl, dd, nil, l, d, nil, sh, func(n, a, c int) float64 {
		acc := 0.0
		for b := 0; b < K; b++ {
			acc += (float64(up[(n*K+a)*K+b]) + float64(up[(n*K+b)*K+a])) * float64(first[(n*K+b)*P+c])
		}
		return acc
	})
}

// expJet builds channel c of the test gate through the one jet constructor of this package.
func expJet(c channel, s float64, logits, decoded, v *G.Node, opts ...Option) (*G.Node, error) {
	return jetWith(c, testExpGate, logits, decoded, v, []float64{s}, opts...)
}

func expCase(c channel) graphCase {
	ins := jetInputsFor(int64(70+int(c)), tN, tK, tP)
	if !c.HasV() {
		ins = ins[:2]
	}
	return graphCase{name: "TestExpJet" + c.String(), inputs: ins, build: func(g *G.ExprGraph, in []*G.Node) (*G.Node, error) {
		var v *G.Node
		if c.HasV() {
			v = in[2]
		}
		return expJet(c, 0.6, in[0], in[1], v)
	}}
}

// TestGateDeclaredInATestRunsEndToEnd: a gate declared in this file runs through the ops on
// the CPU, on both machines and dtypes: its channels agree with central differences of the
// channel below them (computed through the ops), and the gradients of every channel's op
// agree with finite differences of a cost.
func TestGateDeclaredInATestRunsEndToEnd(t *testing.T) {
	fwd := func(c channel, dt tensor.Dtype, m machine, ins []input) []float64 {
		jc := expCase(c)
		jc.inputs = ins
		return forwardValue(t, jc, dt, m)
	}
	base := jetInputsFor(77, tN, tK, tP)
	K, P := tK, tP
	for _, dt := range dtypes {
		for _, m := range machines {
			t.Run(fmt.Sprintf("%v/%v", dt, m), func(t *testing.T) {
				// first[n][a][c] = ∂value[n][c]/∂l[n][a]; second = ∂first/∂l; HVP = second·v.
				value, first := fwd(kernel.Value, dt, m, base[:2]), fwd(kernel.First, dt, m, base[:2])
				second, hvp := fwd(kernel.Second, dt, m, base[:2]), fwd(kernel.HVP, dt, m, base)
				gn := fwd(kernel.GaussNewton, dt, m, base[:2])
				require.Len(t, value, tN*P)
				fdFirst, fdSecond := make([]float64, len(first)), make([]float64, len(second))
				for n := 0; n < tN; n++ {
					for a := 0; a < K; a++ {
						const h = 1e-5
						plus, minus := cloneInputs(base[:2]), cloneInputs(base[:2])
						plus[0].vals[n*K+a] += h
						minus[0].vals[n*K+a] -= h
						vp, vm := fwd(kernel.Value, tensor.Float64, tape, plus), fwd(kernel.Value, tensor.Float64, tape, minus)
						fp, fm := fwd(kernel.First, tensor.Float64, tape, plus), fwd(kernel.First, tensor.Float64, tape, minus)
						for c := 0; c < P; c++ {
							fdFirst[(n*K+a)*P+c] = (vp[n*P+c] - vm[n*P+c]) / (2 * h)
							for b := 0; b < K; b++ {
								fdSecond[((n*K+b)*K+a)*P+c] = (fp[(n*K+b)*P+c] - fm[(n*K+b)*P+c]) / (2 * h)
							}
						}
					}
				}
				tol := gradTol(dt)
				requireClose(t, fdFirst, first, tol, "first vs differences of value")
				requireClose(t, fdSecond, second, tol, "second vs differences of first")
				wantHVP, wantGN := make([]float64, len(hvp)), make([]float64, len(gn))
				v := base[2].vals
				for n := 0; n < tN; n++ {
					for a := 0; a < K; a++ {
						for c := 0; c < P; c++ {
							for b := 0; b < K; b++ {
								wantHVP[(n*K+a)*P+c] += second[((n*K+a)*K+b)*P+c] * v[n*K+b]
								wantGN[(n*K+a)*K+b] += first[(n*K+a)*P+c] * first[(n*K+b)*P+c]
							}
						}
					}
				}
				requireClose(t, wantHVP, hvp, tol, "hvp vs second·v")
				requireClose(t, wantGN, gn, tol, "Gauss-Newton vs first·firstᵀ")
			})
		}
	}
	for c := kernel.Value; c < kernel.NumChannels; c++ {
		t.Run("gradient/"+c.String(), func(t *testing.T) { checkGradients(t, expCase(c)) })
	}
}

func cloneInputs(ins []input) []input {
	out := make([]input, len(ins))
	for i, in := range ins {
		out[i] = in
		out[i].vals = append([]float64(nil), in.vals...)
	}
	return out
}

// TestGateDeclaredInATestNames: the op takes its name and parameters from the gate's
// declaration, and a bad parameter is refused through the gate's own check.
func TestGateDeclaredInATestNames(t *testing.T) {
	g := G.NewGraph()
	rng := rand.New(rand.NewSource(1))
	ins := jetInputsFor(rng.Int63(), tN, tK, tP)
	l := G.NewTensor(g, tensor.Float64, 2, G.WithShape(ins[0].shape...), G.WithValue(toDense(tensor.Float64, ins[0].shape, ins[0].vals)))
	d := G.NewTensor(g, tensor.Float64, 3, G.WithShape(ins[1].shape...), G.WithValue(toDense(tensor.Float64, ins[1].shape, ins[1].vals)))
	out, err := expJet(kernel.Second, 0.25, l, d, nil)
	require.NoError(t, err)
	require.Equal(t, "ops.TestExpJetSecond{s=0.25}", out.Op().String())
	_, err = expJet(kernel.Value, math.NaN(), l, d, nil)
	var ge *gatejet.Error
	require.True(t, errors.As(err, &ge), "%v", err)
	require.Equal(t, "ops.TestExpJetValue", ge.Op)
	require.Equal(t, "s", ge.Arg)
	require.False(t, testExpGate.Kernel(kernel.Value, false).OnDevice())
	require.Equal(t, "test_exp_hvp_vjp", testExpGate.Kernel(kernel.HVP, true).String())
}

// TestCPUOnlyGateDispatch: a gate without device kernels runs on the CPU under ModeAuto even
// with a backend registered and every break-even at zero, and ModeRequired refuses it with
// ErrDevice instead of running anything.
func TestCPUOnlyGateDispatch(t *testing.T) {
	f := withFake(t)
	dispatch.SetBreakEven(dispatch.Kernel(testExpGate.Kernel(kernel.First, false)), 0)
	t.Cleanup(func() { dispatch.SetBreakEven(dispatch.Kernel(testExpGate.Kernel(kernel.First, false)), -1) })
	c := expCase(kernel.First)
	got := forwardValue(t, c, tensor.Float64, tape)
	for _, x := range got {
		require.NotEqual(t, float64(marker), x, "the CPU, not the fake backend, wrote the output")
	}
	require.Zero(t, f.launches.Load())

	dispatch.SetMode(dispatch.ModeRequired)
	_, nodes, out := buildCase(t, c, tensor.Float64)
	_, err := out.Op().Do(nodes[0].Value(), nodes[1].Value())
	require.ErrorIs(t, err, gatejet.ErrDevice)
	require.ErrorContains(t, err, "runs on the CPU only")
	_, ok := LastPath(out)
	require.False(t, ok, "a refused computation ran on no path")
	require.Zero(t, f.launches.Load())
}

// vWeight is the direction's weight v[i] of a diagonal channel, 1 without v.
func vWeight[T gatejet.Float](v []T, i int) float64 {
	if v == nil {
		return 1
	}
	return float64(v[i])
}

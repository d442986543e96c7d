//go:build cgo

package emu

import (
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gatejet/gatejet/cudaops/internal/launch"
	"github.com/gatejet/gatejet/cudaops/internal/testcase"
	"github.com/gatejet/gatejet/internal/dispatch"
	"github.com/gatejet/gatejet/internal/kernel"
)

// naiveGates are the device gates' definitions, by gate name (kernel.Gate.Name): the gate ζ
// of one row of logits l as written in docs/math.md, with the gate's parameters by their
// declared names (kernel.Gate.Params; a scalar is a slice of one). Everything else the naive
// reference needs, every derivative of ζ to the third, comes from the definition by
// hyper-dual arithmetic (hyper), with no sharing with the kernels or with softmaxjet: a
// device gate is its definition here, and TestEveryDeviceGateIsDefined fails until it is.
var naiveGates = map[string]func(l []hyper, p map[string][]float64) []hyper{
	// ζ = softmax(s·l), s = invTau, as ζ_k = 1/Σ_j e^(s·(l_j − l_k)): for K = 1 the gate is
	// exactly 1 and its derivatives exactly 0, as the kernels give them.
	"jet": func(l []hyper, p map[string][]float64) []hyper {
		s := p["invTau"][0]
		z := make([]hyper, len(l))
		for k, x := range l {
			var sum hyper
			for _, y := range l {
				sum = sum.add(y.add(x.scale(-1)).scale(s).exp())
			}
			z[k] = sum.recip()
		}
		return z
	},
	// ζ_k = σ(α_k·l_k + β_k), σ(x) = 1/(1 + e^(−x)).
	"logistic": func(l []hyper, p map[string][]float64) []hyper {
		z := make([]hyper, len(l))
		for k, x := range l {
			z[k] = x.scale(-p["alpha"][k]).addConst(-p["beta"][k]).exp().addConst(1).recip()
		}
		return z
	},
}

// gateParams splits a call's floats into gate g's named parameters for K atoms, as g.Params
// declares them.
func gateParams(g *kernel.Gate, K int, floats []float64) map[string][]float64 {
	p := map[string][]float64{}
	for _, q := range g.Params {
		n := 1
		if q.PerAtom {
			n = K
		}
		p[q.Name], floats = floats[:n], floats[n:]
	}
	return p
}

// hyper is a hyper-dual number with three nilpotent parts ε1, ε2, ε3 (ε_i² = 0): component m
// is the coefficient of the product of the ε_i whose bits are set in m. Seeding l_a with ε1,
// l_b with ε2 and l_d with ε3, a function's component 7 is exactly ∂³f/∂l_a∂l_b∂l_d, 3 is
// ∂²f/∂l_a∂l_b and 1 is ∂f/∂l_a: no step, no truncation.
type hyper [8]float64

func (x hyper) add(y hyper) hyper {
	for m := range x {
		x[m] += y[m]
	}
	return x
}

func (x hyper) addConst(c float64) hyper { x[0] += c; return x }

func (x hyper) scale(c float64) hyper {
	for m := range x {
		x[m] *= c
	}
	return x
}

func (x hyper) mul(y hyper) hyper {
	var r hyper
	for m := range r {
		for s := m; ; s = (s - 1) & m { // every subset s of m
			r[m] += x[s] * y[m&^s]
			if s == 0 {
				break
			}
		}
	}
	return r
}

// apply is f(x) from f and its first three derivatives at x's real part: with h = x − x₀,
// h⁴ = 0, so the Taylor series ends at h³.
func (x hyper) apply(f0, f1, f2, f3 float64) hyper {
	h := x
	h[0] = 0
	h2 := h.mul(h)
	h3 := h2.mul(h)
	return h.scale(f1).add(h2.scale(f2 / 2)).add(h3.scale(f3 / 6)).addConst(f0)
}

func (x hyper) exp() hyper {
	e := math.Exp(x[0])
	return x.apply(e, e, e, e)
}

func (x hyper) recip() hyper {
	r := 1 / x[0]
	return x.apply(r, -r*r, 2*r*r*r, -6*r*r*r*r)
}

// rowTensors are one row's derivative tensors: the gate z, value m[c], first[a][c],
// second[a][b][c], third[a][b][d][c] = ∂second[a][b][c]/∂l_d, and the derivatives with respect
// to decoded, which do not depend on the column: dm/dD[k] = z_k, dFirst/dD[a][k] = ∂z_k/∂l_a
// (f1), dSecond/dD[a][b][k] = ∂²z_k/∂l_a∂l_b (s1).
type rowTensors struct {
	K, P                 int
	z, m                 []float64
	first, second, third func(idx ...int) float64
	f1, s1               func(idx ...int) float64
}

// gateTensors builds one row's tensors from the gate's definition zeta: its derivatives to the
// third by hyper-dual evaluation, each channel their contraction with the decoded values D,
// ẑ_c = Σ_k ζ_k·D[k][c].
func gateTensors(zeta func([]hyper, map[string][]float64) []hyper, p map[string][]float64, l, D []float64, K, P int) rowTensors {
	z1 := make([]float64, K*K)     // [a][k]
	z2 := make([]float64, K*K*K)   // [a][b][k]
	z3 := make([]float64, K*K*K*K) // [a][b][d][k]
	var z []float64
	x := make([]hyper, K)
	for a := 0; a < K; a++ {
		for b := 0; b < K; b++ {
			for d := 0; d < K; d++ {
				for k := range x {
					x[k] = hyper{0: l[k]}
				}
				x[a][1], x[b][2], x[d][4] = 1, 1, 1
				zk := zeta(x, p)
				for k, v := range zk {
					z3[((a*K+b)*K+d)*K+k] = v[7]
				}
				if d == 0 {
					for k, v := range zk {
						z2[(a*K+b)*K+k] = v[3]
					}
				}
				if b == 0 && d == 0 {
					for k, v := range zk {
						z1[a*K+k] = v[1]
					}
				}
				if z == nil {
					z = make([]float64, K)
					for k, v := range zk {
						z[k] = v[0]
					}
				}
			}
		}
	}
	// contract is Σ_k t[k]·D[k][c] for the K values of t.
	contract := func(t []float64, c int) float64 {
		x := 0.0
		for k, v := range t {
			x += v * D[k*P+c]
		}
		return x
	}
	return rowTensors{K: K, P: P, z: z,
		m: func() []float64 {
			m := make([]float64, P)
			for c := range m {
				m[c] = contract(z, c)
			}
			return m
		}(),
		first:  func(i ...int) float64 { return contract(z1[i[0]*K:(i[0]+1)*K], i[1]) },
		second: func(i ...int) float64 { return contract(z2[(i[0]*K+i[1])*K:][:K], i[2]) },
		third:  func(i ...int) float64 { return contract(z3[((i[0]*K+i[1])*K+i[2])*K:][:K], i[3]) },
		f1:     func(i ...int) float64 { return z1[i[0]*K+i[1]] },
		s1:     func(i ...int) float64 { return z2[(i[0]*K+i[1])*K+i[2]] },
	}
}

// naiveRow writes one row of kernel suffix ("value", …, "gauss_newton_vjp") by plain
// contractions of the tensors. in are the row's inputs after logits and decoded (v and/or the
// upstream G); out the row's outputs.
func naiveRow(suffix string, T rowTensors, in [][]float64, out [][]float64) {
	K, P := T.K, T.P
	switch suffix {
	case "value":
		copy(out[0], T.m)
	case "first":
		for a := 0; a < K; a++ {
			for c := 0; c < P; c++ {
				out[0][a*P+c] = T.first(a, c)
			}
		}
	case "second":
		for a := 0; a < K; a++ {
			for b := 0; b < K; b++ {
				for c := 0; c < P; c++ {
					out[0][(a*K+b)*P+c] = T.second(a, b, c)
				}
			}
		}
	case "hvp":
		v := in[0]
		for a := 0; a < K; a++ {
			for c := 0; c < P; c++ {
				x := 0.0
				for b := 0; b < K; b++ {
					x += T.second(a, b, c) * v[b]
				}
				out[0][a*P+c] = x
			}
		}
	case "gauss_newton":
		for a := 0; a < K; a++ {
			for b := 0; b < K; b++ {
				x := 0.0
				for c := 0; c < P; c++ {
					x += T.first(a, c) * T.first(b, c)
				}
				out[0][a*K+b] = x
			}
		}
	case "value_vjp":
		g := in[0]
		for dd := 0; dd < K; dd++ {
			x := 0.0
			for c := 0; c < P; c++ {
				x += g[c] * T.first(dd, c)
				out[1][dd*P+c] = g[c] * T.z[dd]
			}
			out[0][dd] = x
		}
	case "first_vjp", "second_vjp", "hvp_vjp", "gauss_newton_vjp":
		// Upstream on first: G1[a][c]. For second, hvp and gauss_newton the contraction with
		// the upstream is written through second/third directly below.
		var G []float64
		if suffix == "hvp_vjp" {
			G = in[1]
		} else {
			G = in[0]
		}
		for dd := 0; dd < K; dd++ {
			x := 0.0
			for c := 0; c < P; c++ {
				for a := 0; a < K; a++ {
					switch suffix {
					case "first_vjp":
						x += G[a*P+c] * T.second(a, dd, c)
					case "hvp_vjp":
						for b := 0; b < K; b++ {
							x += G[a*P+c] * in[0][b] * T.third(a, b, dd, c)
						}
					case "second_vjp":
						for b := 0; b < K; b++ {
							x += G[(a*K+b)*P+c] * T.third(a, b, dd, c)
						}
					case "gauss_newton_vjp":
						for b := 0; b < K; b++ {
							x += G[a*K+b] * (T.second(a, dd, c)*T.first(b, c) + T.first(a, c)*T.second(b, dd, c))
						}
					}
				}
			}
			out[0][dd] = x
		}
		for k := 0; k < K; k++ {
			for c := 0; c < P; c++ {
				x := 0.0
				for a := 0; a < K; a++ {
					switch suffix {
					case "first_vjp":
						x += G[a*P+c] * T.f1(a, k)
					case "hvp_vjp":
						for b := 0; b < K; b++ {
							x += G[a*P+c] * in[0][b] * T.s1(a, b, k)
						}
					case "second_vjp":
						for b := 0; b < K; b++ {
							x += G[(a*K+b)*P+c] * T.s1(a, b, k)
						}
					case "gauss_newton_vjp":
						for b := 0; b < K; b++ {
							x += G[a*K+b] * (T.f1(a, k)*T.first(b, c) + T.first(a, c)*T.f1(b, k))
						}
					}
				}
				out[1][k*P+c] = x
			}
		}
		if suffix == "hvp_vjp" {
			for b := 0; b < K; b++ {
				x := 0.0
				for a := 0; a < K; a++ {
					for c := 0; c < P; c++ {
						x += G[a*P+c] * T.second(a, b, c)
					}
				}
				out[2][b] = x
			}
		}
	}
}

// naiveCoordRow writes one row of coordinate jet suffix ("coord_first", …) by plain
// contractions over the 2K primaries (docs/math.md, "Latent coordinates"), from the row
// tensors over d0 (T) and the row's d1, d2 [K,P] and v [2K] (in, after logits and d0): the
// first channel first'[i][c] (i < K: T.first; K+k: ζ_k·d1[k][c]), the second channel
// second'[i][j][c] (ℓℓ: T.second; ℓt and tℓ: ∂ζ_k/∂ℓ_a·d1[k][c], with ∂ζ_k/∂ℓ_a = T.f1(a, k),
// the derivative of first[a][c] in D[k][c], which is the gate's Jacobian; tt: δ_kj·ζ_k·d2[k][c]),
// the HVP Σ_j second'[i][j][c]·v_j and the slab Σ_c first'[i][c]·first'[j][c].
func naiveCoordRow(suffix string, T rowTensors, in [][]float64, out []float64) {
	K, P := T.K, T.P
	d1 := in[0]
	first := func(i, c int) float64 {
		if i < K {
			return T.first(i, c)
		}
		return T.z[i-K] * d1[(i-K)*P+c]
	}
	second := func(i, j, c int) float64 {
		switch {
		case i < K && j < K:
			return T.second(i, j, c)
		case i < K:
			return T.f1(i, j-K) * d1[(j-K)*P+c]
		case j < K:
			return T.f1(j, i-K) * d1[(i-K)*P+c]
		case i == j:
			return T.z[i-K] * in[1][(i-K)*P+c]
		}
		return 0
	}
	K2 := 2 * K
	for i := 0; i < K2; i++ {
		switch suffix {
		case "coord_first":
			for c := 0; c < P; c++ {
				out[i*P+c] = first(i, c)
			}
		case "coord_second":
			for j := 0; j < K2; j++ {
				for c := 0; c < P; c++ {
					out[(i*K2+j)*P+c] = second(i, j, c)
				}
			}
		case "coord_hvp":
			for c := 0; c < P; c++ {
				x := 0.0
				for j := 0; j < K2; j++ {
					x += second(i, j, c) * in[2][j]
				}
				out[i*P+c] = x
			}
		case "coord_gauss_newton":
			for j := 0; j < K2; j++ {
				x := 0.0
				for c := 0; c < P; c++ {
					x += first(i, c) * first(j, c)
				}
				out[i*K2+j] = x
			}
		default:
			panic("naiveCoordRow: " + suffix)
		}
	}
}

// TestEveryDeviceGateIsDefined: every gate of the table with device kernels has its
// definition in naiveGates, so that TestJetsMatchMathMD checks its kernels.
func TestEveryDeviceGateIsDefined(t *testing.T) {
	n := 0
	for _, g := range kernel.Gates() {
		if g.Device == nil {
			continue
		}
		n++
		require.Contains(t, naiveGates, g.Name, "device gate %s (%s) has no definition in naiveGates", g.Name, g.Title)
	}
	require.Positive(t, n, "the table has device gates")
}

// TestHyperDual: the hyper-dual arithmetic gives the exact derivatives of a function whose
// derivatives are known in closed form, f(x, y, w) = e^(x·y)/(1 + w²) at (x, y, w) =
// (0.3, −1.2, 0.7), each variable seeded with one ε.
func TestHyperDual(t *testing.T) {
	x, y, w := hyper{0: 0.3, 1: 1}, hyper{0: -1.2, 2: 1}, hyper{0: 0.7, 4: 1}
	f := x.mul(y).exp().mul(w.mul(w).addConst(1).recip())
	e, q := math.Exp(0.3*-1.2), 1/(1+0.7*0.7)
	dq := -2 * 0.7 * q * q // d/dw of 1/(1+w²)
	want := hyper{
		0: e * q,
		1: -1.2 * e * q,            // ∂x
		2: 0.3 * e * q,             // ∂y
		3: (1 + 0.3*-1.2) * e * q,  // ∂x∂y: ∂x(x·e^(xy)) = e^(xy)(1 + xy)
		4: e * dq,                  // ∂w
		5: -1.2 * e * dq,           // ∂x∂w
		6: 0.3 * e * dq,            // ∂y∂w
		7: (1 + 0.3*-1.2) * e * dq, // ∂x∂y∂w
	}
	for m := range want {
		require.InDelta(t, want[m], f[m], 1e-15, "component %d", m)
	}
}

// TestJetsMatchMathMD: every row-jet and coordinate-jet kernel against the plain contractions
// above of the derivatives of its gate's definition.
func TestJetsMatchMathMD(t *testing.T) {
	rng := newRNG(41, 42)
	for _, k := range jetKernels() {
		gate := kernel.ID(k).Spec().Gate
		zeta, ok := naiveGates[gate.Name]
		if !ok {
			t.Fatalf("%s: no definition of gate %s in naiveGates", k, gate.Name)
		}
		suffix := strings.TrimPrefix(k.String(), gate.Name+"_")
		for _, sh := range [][3]int{{2, 1, 3}, {2, 3, 1}, {2, 8, 4}} {
			N, K, P := sh[0], sh[1], sh[2]
			c := testcase.New(k, dispatch.Float64, sh[:], rng)
			emulate(t, c, launch.Options{})
			want := testcase.Clone(c)
			l, D := c.F64.In[0], c.F64.In[1]
			p := gateParams(gate, K, c.Floats)
			for n := 0; n < N; n++ {
				T := gateTensors(zeta, p, l[n*K:(n+1)*K], D[n*K*P:(n+1)*K*P], K, P)
				var in, out [][]float64
				for _, x := range c.F64.In[2:len(kernel.ID(k).Spec().In)] {
					per := len(x) / N
					in = append(in, x[n*per:(n+1)*per])
				}
				for _, x := range want.F64.Out[:len(kernel.ID(k).Spec().Out)] {
					per := len(x) / N
					out = append(out, x[n*per:(n+1)*per])
				}
				if kernel.ID(k).Family() == kernel.CoordJet {
					naiveCoordRow(suffix, T, in, out[0])
				} else {
					naiveRow(suffix, T, in, out)
				}
			}
			for i := range kernel.ID(c.Kernel).Spec().Out {
				e := testcase.RelErr(c.F64.Out[i], want.F64.Out[i])
				require.LessOrEqual(t, e, 1e-12, "%s %v output %d", k, sh, i)
			}
		}
	}
}

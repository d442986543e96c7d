//go:build cgo

package emu

import (
	"github.com/stretchr/testify/require"
	"math"
	"strings"
	"testing"

	"github.com/gatejet/gatejet/cudaops/internal/launch"
	"github.com/gatejet/gatejet/cudaops/internal/testcase"
	"github.com/gatejet/gatejet/internal/dispatch"
	"github.com/gatejet/gatejet/internal/kernel"
)

// rowTensors are one row's derivative tensors, built term by term from docs/math.md with no
// sharing with the kernels or with softmaxjet: the gate z, value m[c], first[a][c],
// second[a][b][c], third[a][b][d][c] = ∂second[a][b][c]/∂l_d, and the derivatives with respect
// to decoded, which do not depend on the column: dm/dD[k] = z_k, dFirst/dD[a][k],
// dSecond/dD[a][b][k].
type rowTensors struct {
	K, P                 int
	z, m                 []float64
	first, second, third func(idx ...int) float64
	f1, s1               func(idx ...int) float64
}

func softmaxTensors(l, D []float64, K, P int, s float64) rowTensors {
	mx := math.Inf(-1)
	for _, x := range l {
		mx = math.Max(mx, x)
	}
	z := make([]float64, K)
	sum := 0.0
	for k := range z {
		z[k] = math.Exp(s * (l[k] - mx))
		sum += z[k]
	}
	for k := range z {
		z[k] /= sum
	}
	m := make([]float64, P)
	for c := range m {
		for k := 0; k < K; k++ {
			m[c] += z[k] * D[k*P+c]
		}
	}
	e := func(a, c int) float64 { return D[a*P+c] - m[c] }
	d := func(i, j int) float64 {
		if i == j {
			return 1
		}
		return 0
	}
	delta := func(a, dd int) float64 { return d(a, dd) - z[dd] }
	return rowTensors{K: K, P: P, z: z, m: m,
		first: func(i ...int) float64 { a, c := i[0], i[1]; return s * z[a] * e(a, c) },
		second: func(i ...int) float64 {
			a, b, c := i[0], i[1], i[2]
			return s * s * (d(a, b)*z[a]*e(a, c) - z[a]*z[b]*(e(a, c)+e(b, c)))
		},
		third: func(i ...int) float64 {
			a, b, dd, c := i[0], i[1], i[2], i[3]
			return s * s * s * (d(a, b)*(z[a]*delta(a, dd)*e(a, c)-z[a]*z[dd]*e(dd, c)) -
				z[a]*z[b]*(delta(a, dd)+delta(b, dd))*(e(a, c)+e(b, c)) + 2*z[a]*z[b]*z[dd]*e(dd, c))
		},
		f1: func(i ...int) float64 { a, k := i[0], i[1]; return s * z[a] * (d(a, k) - z[k]) },
		s1: func(i ...int) float64 {
			a, b, k := i[0], i[1], i[2]
			return s * s * (d(a, b)*z[a]*(d(a, k)-z[k]) - z[a]*z[b]*(d(a, k)+d(b, k)-2*z[k]))
		},
	}
}

func logisticTensors(l, D []float64, K, P int, alpha, beta []float64) rowTensors {
	z, d1, d2, d3 := make([]float64, K), make([]float64, K), make([]float64, K), make([]float64, K)
	for k := range z {
		sg := 1 / (1 + math.Exp(-(alpha[k]*l[k] + beta[k])))
		s1 := sg * (1 - sg)
		s2 := s1 * (1 - 2*sg)
		s3 := s2*(1-2*sg) - 2*s1*s1
		z[k], d1[k], d2[k], d3[k] = sg, alpha[k]*s1, alpha[k]*alpha[k]*s2, alpha[k]*alpha[k]*alpha[k]*s3
	}
	m := make([]float64, P)
	for c := range m {
		for k := 0; k < K; k++ {
			m[c] += z[k] * D[k*P+c]
		}
	}
	return rowTensors{K: K, P: P, z: z, m: m,
		first: func(i ...int) float64 { return d1[i[0]] * D[i[0]*P+i[1]] },
		second: func(i ...int) float64 {
			if i[0] != i[1] {
				return 0
			}
			return d2[i[0]] * D[i[0]*P+i[2]]
		},
		third: func(i ...int) float64 {
			if i[0] != i[1] || i[1] != i[2] {
				return 0
			}
			return d3[i[0]] * D[i[0]*P+i[3]]
		},
		f1: func(i ...int) float64 {
			if i[0] != i[1] {
				return 0
			}
			return d1[i[0]]
		},
		s1: func(i ...int) float64 {
			if i[0] != i[1] || i[1] != i[2] {
				return 0
			}
			return d2[i[0]]
		},
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

// TestJetsMatchMathMD: every row-jet and coordinate-jet kernel against the plain contractions
// above.
func TestJetsMatchMathMD(t *testing.T) {
	rng := newRNG(41, 42)
	for _, k := range jetKernels() {
		gate := kernel.ID(k).Spec().Gate
		suffix := strings.TrimPrefix(k.String(), gate.Name+"_")
		for _, sh := range [][3]int{{2, 1, 3}, {2, 3, 1}, {2, 8, 4}} {
			N, K, P := sh[0], sh[1], sh[2]
			c := testcase.New(k, dispatch.Float64, sh[:], rng)
			emulate(t, c, launch.Options{})
			want := testcase.Clone(c)
			l, D := c.F64.In[0], c.F64.In[1]
			for n := 0; n < N; n++ {
				var T rowTensors
				switch gate {
				case kernel.SoftmaxGate:
					T = softmaxTensors(l[n*K:(n+1)*K], D[n*K*P:(n+1)*K*P], K, P, c.Floats[0])
				case kernel.LogisticGate:
					T = logisticTensors(l[n*K:(n+1)*K], D[n*K*P:(n+1)*K*P], K, P, c.Floats[:K], c.Floats[K:])
				default:
					t.Fatalf("%s: no plain contractions of gate %s here: add its tensors", k, gate.Name)
				}
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

package softmaxjet

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"

	"github.com/gatejet/gatejet"
	"github.com/gatejet/gatejet/internal/basis"
	"github.com/gatejet/gatejet/internal/check"
	"github.com/gatejet/gatejet/internal/par"
	"github.com/gatejet/gatejet/internal/testkit"
	"github.com/gatejet/gatejet/internal/tower"
)

// The coordinate jets against the row program of internal/tower with latent primaries (the
// decoded rows a monomial expansion in each atom's coordinate, every derivative from jet
// arithmetic), against central differences, against themselves (symmetry, first·firstᵀ,
// second·v, the gate's own channels on the ℓ blocks) and in float32.

// coordCase is a batch of rows with latent coordinates t [N,K] decoded by monomials of a
// shared decoder B [nb,P]: d0, d1, d2 [N,K,P] are the decoded rows and their derivatives.
type coordCase struct {
	sh         Shape
	nb         int
	l, t, B, v []float64
	d0, d1, d2 []float64
}

func newCoordCase(rng *rand.Rand, sh Shape, logitScale float64) *coordCase {
	c := &coordCase{sh: sh, nb: 4}
	c.l = randn(rng, sh.N*sh.K, logitScale)
	c.t = make([]float64, sh.N*sh.K)
	for i := range c.t {
		c.t[i] = 2*rng.Float64() - 1
	}
	c.B = randn(rng, c.nb*sh.P, 1)
	c.v = randn(rng, 2*sh.N*sh.K, 1)
	c.decode()
	return c
}

// decode fills d0, d1, d2 from t and B.
func (c *coordCase) decode() {
	sh := c.sh
	c.d0, c.d1, c.d2 = make([]float64, sh.DecodedLen()), make([]float64, sh.DecodedLen()), make([]float64, sh.DecodedLen())
	phi := make([]float64, c.nb)
	for i, t := range c.t {
		for m, d := range [][]float64{c.d0, c.d1, c.d2} {
			basis.Monomial(phi, t, m)
			for b, f := range phi {
				for p := 0; p < sh.P; p++ {
					d[i*sh.P+p] += f * c.B[b*sh.P+p]
				}
			}
		}
	}
}

// coordGate is a gate under test: its softmaxjet.Gate and its tower gate.
type coordGate struct {
	name string
	f64  Gate[float64]
	f32  Gate[float32]
	tw   tower.Gate
}

func coordGates(K int, s float64, rng *rand.Rand) []coordGate {
	alpha, beta := make([]float64, K), make([]float64, K)
	for k := range alpha {
		alpha[k] = (0.5 + rng.Float64()) * s
		if k%3 == 1 {
			alpha[k] = -alpha[k]
		}
		beta[k] = rng.NormFloat64()
	}
	return []coordGate{
		{fmt.Sprintf("softmax(s=%g)", s), Softmax[float64]{InvTau: s}, Softmax[float32]{InvTau: s}, tower.Softmax(s)},
		{fmt.Sprintf("logistic(|α|≈%g)", s), Logistic[float64]{Alpha: alpha, Beta: beta}, Logistic[float32]{Alpha: alpha, Beta: beta}, tower.Logistic(alpha, beta)},
	}
}

// opaque hides a gate's type, so that the coordinate kernels run it through its methods.
type opaque[T gatejet.Float] struct{ Gate[T] }

// coordOut holds the four coordinate channels of a case.
type coordOut[T gatejet.Float] struct{ first, second, gn, hvp []T }

func runCoord[T gatejet.Float](t testing.TB, g Gate[T], c *coordCase) coordOut[T] {
	t.Helper()
	sh := c.sh
	K2 := 2 * sh.K
	l, d0, d1, d2, v := conv[T](c.l), conv[T](c.d0), conv[T](c.d1), conv[T](c.d2), conv[T](c.v)
	o := coordOut[T]{make([]T, sh.N*K2*sh.P), make([]T, sh.N*K2*K2*sh.P), make([]T, sh.N*K2*K2), make([]T, sh.N*K2*sh.P)}
	for _, x := range [][]T{o.first, o.second, o.gn, o.hvp} {
		for i := range x {
			x[i] = T(math.NaN()) // every element must be written
		}
	}
	require.NoError(t, CoordFirst(g, o.first, l, d0, d1, sh))
	require.NoError(t, CoordSecond(g, o.second, l, d0, d1, d2, sh))
	require.NoError(t, CoordGaussNewton(g, o.gn, l, d0, d1, sh))
	require.NoError(t, CoordHVP(g, o.hvp, l, d0, d1, d2, v, sh))
	return o
}

func conv[T gatejet.Float, S gatejet.Float](x []S) []T {
	out := make([]T, len(x))
	for i, v := range x {
		out[i] = T(v)
	}
	return out
}

// towerCoord is the row program's value, first [N,2K,P] and second [N,2K,2K,P] with the
// logits and the coordinates as primaries.
func towerCoord(t *testing.T, g tower.Gate, c *coordCase) (value, first, second []float64) {
	sh := c.sh
	K2 := 2 * sh.K
	pr, err := tower.NewProgram[float64](tower.ProgramSpec{K: sh.K, P: sh.P, Gate: g, Basis: basis.Monomials(c.nb), Decoder: c.B, LatentPrimaries: true})
	require.NoError(t, err)
	require.Equal(t, K2, pr.Primaries())
	value, first, second = make([]float64, sh.N*sh.P), make([]float64, sh.N*K2*sh.P), make([]float64, sh.N*K2*K2*sh.P)
	for n := 0; n < sh.N; n++ {
		require.NoError(t, pr.RowLatent(value[n*sh.P:(n+1)*sh.P], first[n*K2*sh.P:(n+1)*K2*sh.P], second[n*K2*K2*sh.P:(n+1)*K2*K2*sh.P],
			c.l[n*sh.K:(n+1)*sh.K], c.t[n*sh.K:(n+1)*sh.K]))
	}
	return
}

// coordGram is first·firstᵀ over c, [N,2K,2K], summed in order.
func coordGram(first []float64, sh Shape) []float64 {
	K2 := 2 * sh.K
	return firstGram(first, Shape{N: sh.N, K: K2, P: sh.P})
}

// coordSecondTimes is Σ_b second[a][b][c]·v_b, [N,2K,P].
func coordSecondTimes(second, v []float64, sh Shape) []float64 {
	return secondTimes(second, v, Shape{N: sh.N, K: 2 * sh.K, P: sh.P})
}

// requireRowsClose checks got against want row by row (w values a row), relative to the
// row's largest |want| (1 where it is 0).
func requireRowsClose[T gatejet.Float](t *testing.T, name string, got []T, want []float64, w int, tol float64) {
	t.Helper()
	require.Len(t, got, len(want), name)
	for n := 0; n < len(want)/w; n++ {
		sc := math.Max(testkit.MaxAbs(want[n*w:(n+1)*w]), math.SmallestNonzeroFloat64)
		for i := n * w; i < (n+1)*w; i++ {
			g, x := float64(got[i]), want[i]
			if math.IsNaN(x) || math.IsNaN(g) {
				require.True(t, math.IsNaN(x) && math.IsNaN(g), "%s[%d]: got %v, want %v", name, i, g, x)
				continue
			}
			require.LessOrEqual(t, math.Abs(g-x)/sc, tol, "%s[%d] (row %d, scale %g): got %v, want %v", name, i, n, sc, g, x)
		}
	}
}

// nearTies makes row 1 of the case's logits ties up to 1e-9 (a spread gate at any s).
func (c *coordCase) nearTies() {
	K := c.sh.K
	if c.sh.N < 2 {
		return
	}
	for k := 0; k < K; k++ {
		c.l[K+k] = 0.3 + 1e-9*float64(k)
	}
}

// coordScales are the natural magnitudes of the coordinate channels' entries, row by row:
// with A the gate's slope (s, or max|α|) and D0, D1, D2, V the row's largest |d0|, |d1|,
// |d2|, |v|, a derivative of first order in ℓ scales as A·D0, one in t as D1; of second
// order A²·D0 (ℓℓ), A·D1 (ℓt), D2 (tt). The slab's entry (a, b) scales as P times the
// product of first's, the HVP's as Σ_b second's·V. Errors are measured against these, as
// the channels' oracle tests do: a row whose gate is one-hot has exact derivatives near 0
// that the rounding of e = d0 − ẑ (of order ulp(D0)) meets at its natural scale.
func coordScales(c *coordCase, A float64) (first, second, gn, hvp []float64) {
	sh := c.sh
	K, P, K2 := sh.K, sh.P, 2*sh.K
	for n := 0; n < sh.N; n++ {
		r := func(x []float64) float64 { return testkit.MaxAbs(x[n*K*P : (n+1)*K*P]) }
		D0, D1, D2, V := r(c.d0), r(c.d1), r(c.d2), testkit.MaxAbs(c.v[n*K2:(n+1)*K2])
		f := make([]float64, K2)
		for a := range f {
			f[a] = D1
			if a < K {
				f[a] = A * D0
			}
		}
		for a := 0; a < K2; a++ {
			for c := 0; c < P; c++ {
				first = append(first, f[a])
			}
			h := 0.0
			for b := 0; b < K2; b++ {
				sc := D2
				switch {
				case a < K && b < K:
					sc = A * A * D0
				case a < K || b < K:
					sc = A * D1
				}
				for c := 0; c < P; c++ {
					second = append(second, sc)
				}
				gn = append(gn, float64(P)*f[a]*f[b])
				h += sc * V
			}
			for c := 0; c < P; c++ {
				hvp = append(hvp, h)
			}
		}
	}
	return
}

// requireClose checks got against want entry by entry, relative to scale.
func requireClose[T gatejet.Float](t *testing.T, name string, got []T, want, scale []float64, tol float64) {
	t.Helper()
	require.Len(t, got, len(want), name)
	worst := 0.0
	for i, x := range want {
		g := float64(got[i])
		if math.IsNaN(x) || math.IsNaN(g) {
			require.True(t, math.IsNaN(x) && math.IsNaN(g), "%s[%d]: got %v, want %v", name, i, g, x)
			continue
		}
		e := math.Abs(g - x)
		if e == 0 {
			continue
		}
		e /= scale[i]
		require.LessOrEqual(t, e, tol, "%s[%d] (scale %g): got %v, want %v", name, i, scale[i], g, x)
		worst = max(worst, e)
	}
	t.Logf("%-24s worst error %.1e of the natural scale", name, worst)
}

// TestCoordAgainstTower: first and second at 1e-12 of the tower's (relative to each entry's
// natural scale, coordScales), the slab at 1e-12 of the tower's first·firstᵀ and the HVP of
// its second·v, for both gates, through their own rows and through their methods (opaque),
// across temperatures (slopes) from 1e-3 to 1e3 with near-tied logits.
func TestCoordAgainstTower(t *testing.T) {
	rng := rand.New(rand.NewPCG(25, 1))
	for _, s := range []float64{1e-3, 0.7, 1, 30, 1e3} {
		for _, sh := range []Shape{{N: 4, K: 3, P: 5}, {N: 3, K: 6, P: 2}, {N: 2, K: 1, P: 3}} {
			for _, g := range coordGates(sh.K, s, rng) {
				c := newCoordCase(rng, sh, 1.5)
				c.nearTies()
				t.Run(fmt.Sprintf("%s/K=%d", g.name, sh.K), func(t *testing.T) {
					_, first, second := towerCoord(t, g.tw, c)
					A := s
					if lg, ok := g.f64.(Logistic[float64]); ok {
						A = testkit.MaxAbs(lg.Alpha)
					}
					s1, s2, sgn, shvp := coordScales(c, A)
					for _, via := range []struct {
						name string
						g    Gate[float64]
					}{{"rows", g.f64}, {"methods", opaque[float64]{g.f64}}} {
						o := runCoord(t, via.g, c)
						requireClose(t, via.name+"/first", o.first, first, s1, 1e-12)
						requireClose(t, via.name+"/second", o.second, second, s2, 1e-12)
						requireClose(t, via.name+"/gn", o.gn, coordGram(first, sh), sgn, 1e-12)
						requireClose(t, via.name+"/hvp", o.hvp, coordSecondTimes(second, c.v, sh), shvp, 1e-12)
					}
				})
			}
		}
	}
}

// TestCoordFD: first is the central-difference Jacobian of the value in p = (ℓ, t) (t moving
// d0 through the basis), second that of first.
func TestCoordFD(t *testing.T) {
	rng := rand.New(rand.NewPCG(25, 2))
	sh := Shape{N: 2, K: 3, P: 4}
	for _, g := range coordGates(sh.K, 1.3, rng) {
		t.Run(g.name, func(t *testing.T) {
			c := newCoordCase(rng, sh, 1)
			K2 := 2 * sh.K
			// p [N,2K]: logits then coordinates, row by row.
			p := make([]float64, sh.N*K2)
			load := func() {
				for n := 0; n < sh.N; n++ {
					copy(c.l[n*sh.K:(n+1)*sh.K], p[n*K2:n*K2+sh.K])
					copy(c.t[n*sh.K:(n+1)*sh.K], p[n*K2+sh.K:(n+1)*K2])
				}
				c.decode()
			}
			for n := 0; n < sh.N; n++ {
				copy(p[n*K2:], c.l[n*sh.K:(n+1)*sh.K])
				copy(p[n*K2+sh.K:], c.t[n*sh.K:(n+1)*sh.K])
			}
			value := func() []float64 {
				load()
				out := make([]float64, sh.ValueLen())
				require.NoError(t, g.f64.Value(out, c.l, c.d0, sh))
				return out
			}
			first := func() []float64 {
				load()
				out := make([]float64, sh.N*K2*sh.P)
				require.NoError(t, CoordFirst(g.f64, out, c.l, c.d0, c.d1, sh))
				return out
			}
			csh := Shape{N: sh.N, K: K2, P: sh.P}
			J := testkit.FDJacobian(p, value, 1e-5)
			got := first()
			require.Less(t, relErr(got, jacobianChannel(J, csh, sh.P), 1e-3), 1e-8, "first vs FD of value")
			J = testkit.FDJacobian(p, first, 1e-5)
			load()
			second := make([]float64, sh.N*K2*K2*sh.P)
			require.NoError(t, CoordSecond(g.f64, second, c.l, c.d0, c.d1, c.d2, sh))
			require.Less(t, relErr(second, jacobianChannel(J, csh, K2*sh.P), 1e-3), 1e-8, "second vs FD of first")
		})
	}
}

// TestCoordStructure: the ℓ blocks are the gate's own channels bit for bit (first's ℓ rows,
// second's ℓℓ block, the slab's ℓℓ block), second and the slab are exactly symmetric, the tt
// block is zero off its diagonal, and the matrix-free products agree with the materialised
// channels: slab = first·firstᵀ, HVP = second·v. For float64 and float32, with and without
// the AVX loops.
func TestCoordStructure(t *testing.T) {
	forFloats(t, coordStructure[float64], coordStructure[float32])
}

func coordStructure[T gatejet.Float](t *testing.T) {
	rng := rand.New(rand.NewPCG(25, 3))
	defer func(u bool) { useAVX = u }(useAVX)
	for _, avx := range []bool{false, true} {
		useAVX = avx && hasAVX
		for _, sh := range []Shape{{N: 3, K: 5, P: 7}, {N: 2, K: 8, P: 16}, {N: 2, K: 1, P: 1}} {
			rng32 := rand.New(rand.NewPCG(uint64(sh.K), 4))
			for _, g := range coordGates(sh.K, 1.7, rng) {
				var gt Gate[T]
				if isFloat32[T]() {
					gt = any(g.f32).(Gate[T])
				} else {
					gt = any(g.f64).(Gate[T])
				}
				c := newCoordCase(rng32, sh, 1.2)
				name := fmt.Sprintf("avx=%v/%s/K=%d", avx, g.name, sh.K)
				o := runCoord(t, gt, c)
				K, P, K2 := sh.K, sh.P, 2*sh.K
				l, d0, v := conv[T](c.l), conv[T](c.d0), conv[T](c.v)
				first, second, gn := make([]T, sh.FirstLen()), make([]T, sh.SecondLen()), make([]T, sh.GNLen())
				require.NoError(t, gt.First(first, l, d0, sh))
				require.NoError(t, gt.Second(second, l, d0, sh))
				require.NoError(t, gt.GaussNewton(gn, l, d0, sh))
				for n := 0; n < sh.N; n++ {
					for a := 0; a < K; a++ {
						requireSameBits(t, name+"/first ℓ rows", o.first[(n*K2+a)*P:(n*K2+a+1)*P], first[(n*K+a)*P:(n*K+a+1)*P])
						for b := 0; b < K; b++ {
							requireSameBits(t, name+"/second ℓℓ", o.second[((n*K2+a)*K2+b)*P:((n*K2+a)*K2+b+1)*P], second[((n*K+a)*K+b)*P:((n*K+a)*K+b+1)*P])
							requireSameBits(t, name+"/gn ℓℓ", o.gn[(n*K2+a)*K2+b:(n*K2+a)*K2+b+1], gn[(n*K+a)*K+b:(n*K+a)*K+b+1])
						}
					}
					for a := 0; a < K2; a++ {
						for b := 0; b < K2; b++ {
							requireSameBits(t, name+"/second symmetric", o.second[((n*K2+a)*K2+b)*P:((n*K2+a)*K2+b+1)*P], o.second[((n*K2+b)*K2+a)*P:((n*K2+b)*K2+a+1)*P])
							require.True(t, sameBits(o.gn[(n*K2+a)*K2+b], o.gn[(n*K2+b)*K2+a]), "%s: gn symmetric", name)
							if a >= K && b >= K && a != b {
								require.Equal(t, make([]T, P), o.second[((n*K2+a)*K2+b)*P:((n*K2+a)*K2+b+1)*P], "%s: tt off the diagonal", name)
							}
						}
					}
				}
				tol := 1e-13
				if isFloat32[T]() {
					tol = 1e-5
				}
				f64 := func(x []T) []float64 { return conv[float64](x) }
				require.Less(t, relErr(o.gn, coordGram(f64(o.first), sh), 1e-300), tol, "%s: gn vs first·firstᵀ", name)
				require.Less(t, relErr(o.hvp, coordSecondTimes(f64(o.second), f64(v), sh), 1e-300), tol, "%s: hvp vs second·v", name)
			}
		}
	}
}

func requireSameBits[T gatejet.Float](t *testing.T, what string, got, want []T) {
	t.Helper()
	require.Len(t, got, len(want), what)
	for i := range got {
		require.True(t, sameBitsOrNaN(got[i], want[i]), "%s[%d]: %v, want %v", what, i, got[i], want[i])
	}
}

// TestCoordFloat32: float32 within float32's precision of float64, both gates, with
// temperatures from 1e-3 to 1e3 and near ties.
func TestCoordFloat32(t *testing.T) {
	rng := rand.New(rand.NewPCG(25, 5))
	sh := Shape{N: 4, K: 7, P: 9}
	for _, s := range []float64{1e-3, 1, 1e3} {
		for _, g := range coordGates(sh.K, s, rng) {
			c := newCoordCase(rng, sh, 1.5)
			c.nearTies()
			o64, o32 := runCoord(t, g.f64, c), runCoord(t, g.f32, c)
			K2 := 2 * sh.K
			// Rows are compared at their own scale, and relative to float32's rounding of the
			// inputs: 1e-5 of the row's largest entry.
			requireRowsClose(t, g.name+"/first", o32.first, conv[float64](o64.first), K2*sh.P, 1e-5)
			requireRowsClose(t, g.name+"/second", o32.second, conv[float64](o64.second), K2*K2*sh.P, 1e-5)
			requireRowsClose(t, g.name+"/gn", o32.gn, conv[float64](o64.gn), K2*K2, 1e-5)
			requireRowsClose(t, g.name+"/hvp", o32.hvp, conv[float64](o64.hvp), K2*sh.P, 1e-5)
		}
	}
}

// TestCoordNonFinite: a NaN logit, a NaN coordinate derivative or an all −Inf row spoils its
// own row only; −Inf logits beside finite ones mask their atoms.
func TestCoordNonFinite(t *testing.T) {
	rng := rand.New(rand.NewPCG(25, 6))
	sh := Shape{N: 4, K: 4, P: 3}
	for _, g := range coordGates(sh.K, 1, rng) {
		for _, via := range []Gate[float64]{g.f64, opaque[float64]{g.f64}} {
			c := newCoordCase(rng, sh, 1)
			clean := runCoord(t, via, c)
			c.l[1*sh.K+2] = math.NaN()
			c.d1[(2*sh.K+1)*sh.P+1] = math.NaN()
			c.d2[(3*sh.K+0)*sh.P+2] = math.Inf(1)
			dirty := runCoord(t, via, c)
			K2 := 2 * sh.K
			for _, ch := range []struct {
				name       string
				clean, got []float64
				w          int
			}{{"first", clean.first, dirty.first, K2 * sh.P}, {"second", clean.second, dirty.second, K2 * K2 * sh.P}, {"gn", clean.gn, dirty.gn, K2 * K2}, {"hvp", clean.hvp, dirty.hvp, K2 * sh.P}} {
				requireSameBits(t, g.name+"/"+ch.name+" row 0", ch.got[:ch.w], ch.clean[:ch.w])
				require.True(t, slices.ContainsFunc(ch.got[ch.w:2*ch.w], math.IsNaN), "%s/%s: the NaN logit's row", g.name, ch.name)
			}
		}
	}
}

// TestCoordErrors: the calls' checks, as the channels': shapes, sizes (overflow of the
// coordinate outputs, not only of N·K·K·P), short and nil buffers, overlaps, the gate's
// parameters, a nil gate; an empty batch is valid.
func TestCoordErrors(t *testing.T) {
	sh := Shape{N: 2, K: 3, P: 4}
	K2 := 2 * sh.K
	l, d0, d1, d2, v := make([]float64, 6), make([]float64, 24), make([]float64, 24), make([]float64, 24), make([]float64, 12)
	first, second, gn := make([]float64, 2*K2*4), make([]float64, 2*K2*K2*4), make([]float64, 2*K2*K2)
	sm := Softmax[float64]{InvTau: 1}
	lg := Logistic[float64]{Alpha: []float64{1, 1, 1}, Beta: []float64{0, 0, 0}}
	calls := func(g Gate[float64], sh Shape) map[string]func() error {
		return map[string]func() error{
			"first":  func() error { return CoordFirst(g, first, l, d0, d1, sh) },
			"second": func() error { return CoordSecond(g, second, l, d0, d1, d2, sh) },
			"gn":     func() error { return CoordGaussNewton(g, gn, l, d0, d1, sh) },
			"hvp":    func() error { return CoordHVP(g, first, l, d0, d1, d2, v, sh) },
		}
	}
	for _, g := range []Gate[float64]{sm, lg, opaque[float64]{sm}, &sm} {
		for name, call := range calls(g, sh) {
			require.NoError(t, call(), name)
		}
		for name, call := range calls(g, Shape{N: 2, K: 0, P: 4}) {
			testkit.RequireError(t, call(), gatejet.ErrShape, coordOps[coordIndex(name)], "shape")
		}
		for name, call := range calls(g, Shape{N: -1, K: 3, P: 4}) {
			testkit.RequireError(t, call(), gatejet.ErrShape, coordOps[coordIndex(name)], "shape")
		}
		// N·K·K·P fits, N·2K·2K·P does not.
		big := Shape{N: 1, K: 1 << 20, P: 1 << 21}
		require.NoError(t, big.Check("x"))
		for name, call := range calls(g, big) {
			testkit.RequireError(t, call(), gatejet.ErrSize, coordOps[coordIndex(name)], "shape")
		}
		for name, call := range calls(g, Shape{N: 0, K: 3, P: 4}) {
			testkit.RequireError(t, call(), gatejet.ErrSize, coordOps[coordIndex(name)], "dst")
		}
	}
	empty := Shape{N: 0, K: 3, P: 4}
	for _, g := range []Gate[float64]{sm, lg, opaque[float64]{sm}} {
		require.NoError(t, CoordFirst(g, nil, nil, nil, nil, empty))
		require.NoError(t, CoordSecond(g, nil, nil, nil, nil, nil, empty))
		require.NoError(t, CoordGaussNewton(g, nil, nil, nil, nil, empty))
		require.NoError(t, CoordHVP(g, nil, nil, nil, nil, nil, nil, empty))
	}
	// Short, long and nil buffers, each argument.
	op := coordOps[coordHVP]
	testkit.RequireError(t, CoordHVP(sm, first[1:], l, d0, d1, d2, v, sh), gatejet.ErrSize, op, "dst")
	testkit.RequireError(t, CoordHVP(sm, first, l[1:], d0, d1, d2, v, sh), gatejet.ErrSize, op, "logits")
	testkit.RequireError(t, CoordHVP(sm, first, l, nil, d1, d2, v, sh), gatejet.ErrSize, op, "d0")
	testkit.RequireError(t, CoordHVP(sm, first, l, d0, d1[2:], d2, v, sh), gatejet.ErrSize, op, "d1")
	testkit.RequireError(t, CoordHVP(sm, first, l, d0, d1, append(d2, 0), v, sh), gatejet.ErrSize, op, "d2")
	testkit.RequireError(t, CoordHVP(sm, first, l, d0, d1, d2, v[:6], sh), gatejet.ErrSize, op, "v")
	testkit.RequireError(t, CoordSecond(sm, second[:len(second)-1], l, d0, d1, d2, sh), gatejet.ErrSize, coordOps[coordSecond], "dst")
	testkit.RequireError(t, CoordGaussNewton(lg, gn[:3], l, d0, d1, sh), gatejet.ErrSize, coordOps[coordGN], "dst")
	// Overlaps: dst with each input, and with the logistic gate's parameters.
	arena := make([]float64, 4096)
	testkit.RequireError(t, CoordFirst(sm, arena[:2*K2*4], arena[40:46], d0, d1, sh), gatejet.ErrParam, coordOps[coordFirst], "dst")
	testkit.RequireError(t, CoordSecond(sm, arena[:len(second)], l, d0, d1, arena[len(second)-1:len(second)+23], sh), gatejet.ErrParam, coordOps[coordSecond], "dst")
	testkit.RequireError(t, CoordHVP(opaque[float64]{sm}, arena[:2*K2*4], l, d0, d1, d2, arena[10:22], sh), gatejet.ErrParam, op, "dst")
	alpha := arena[:3]
	testkit.RequireError(t, CoordFirst(Logistic[float64]{Alpha: alpha, Beta: []float64{0, 0, 0}}, arena[:2*K2*4], l, d0, d1, sh), gatejet.ErrParam, coordOps[coordFirst], "dst")
	// The gate's parameters.
	testkit.RequireError(t, CoordSecond(Softmax[float64]{InvTau: 0}, second, l, d0, d1, d2, sh), gatejet.ErrTemperature, coordOps[coordSecond], "invTau")
	testkit.RequireError(t, CoordSecond(Softmax[float64]{InvTau: math.Inf(1)}, second, l, d0, d1, d2, sh), gatejet.ErrTemperature, coordOps[coordSecond], "invTau")
	testkit.RequireError(t, CoordHVP(Logistic[float64]{Alpha: []float64{1, 1}, Beta: []float64{0, 0, 0}}, first, l, d0, d1, d2, v, sh), gatejet.ErrParam, op, "alpha")
	testkit.RequireError(t, CoordGaussNewton(Logistic[float64]{Alpha: []float64{1, math.NaN(), 1}, Beta: []float64{0, 0, 0}}, gn, l, d0, d1, sh), gatejet.ErrNonFinite, coordOps[coordGN], "alpha")
	// Through the methods, the gate's own checks report.
	require.ErrorIs(t, CoordSecond(opaque[float64]{Softmax[float64]{InvTau: -1}}, second, l, d0, d1, d2, sh), gatejet.ErrTemperature)
	// No gate.
	var nilSoftmax *Softmax[float64]
	for _, g := range []Gate[float64]{nil, nilSoftmax} {
		testkit.RequireError(t, CoordFirst(g, first, l, d0, d1, sh), gatejet.ErrParam, coordOps[coordFirst], "g")
	}
}

func coordIndex(name string) coordKind {
	return map[string]coordKind{"first": coordFirst, "second": coordSecond, "gn": coordGN, "hvp": coordHVP}[name]
}

// TestCoordWorkspaceLimit: the per-row workspace is checked against gatejet.MaxBytes before
// anything is allocated.
func TestCoordWorkspaceLimit(t *testing.T) {
	sh := Shape{N: 1, K: 64, P: 64}
	K2 := 2 * sh.K
	l, d := make([]float64, sh.K), make([]float64, sh.DecodedLen())
	second := make([]float64, K2*K2*sh.P)
	testkit.WithMaxBytes(t, 64<<10)
	testkit.RequireError(t, CoordSecond(Softmax[float64]{InvTau: 1}, second, l, d, d, d, sh), gatejet.ErrSize, coordOps[coordSecond], "shape")
	testkit.RequireError(t, CoordSecond(opaque[float64]{Softmax[float64]{InvTau: 1}}, second, l, d, d, d, sh), gatejet.ErrSize, coordOps[coordSecond], "shape")
}

// TestCoordCores: the same bits on one core and split over several, from the rows and
// through the methods.
func TestCoordCores(t *testing.T) {
	rng := rand.New(rand.NewPCG(25, 7))
	sh := Shape{N: 37, K: 5, P: 6}
	for _, g := range coordGates(sh.K, 2, rng) {
		c := newCoordCase(rng, sh, 1)
		prevW, prevP := par.SetMinWork(1<<62), par.SetMaxProcs(1)
		one := runCoord(t, g.f64, c)
		par.SetMinWork(0)
		par.SetMaxProcs(prevP)
		many := runCoord(t, g.f64, c)
		par.SetMinWork(prevW)
		requireSameBits(t, g.name+"/first", many.first, one.first)
		requireSameBits(t, g.name+"/second", many.second, one.second)
		requireSameBits(t, g.name+"/gn", many.gn, one.gn)
		requireSameBits(t, g.name+"/hvp", many.hvp, one.hvp)
	}
}

// TestCoordSteadyAllocs: the built-in gates' coordinate kernels allocate nothing once warm.
func TestCoordSteadyAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector's sync.Pool drops items at random")
	}
	rng := rand.New(rand.NewPCG(25, 8))
	sh := Shape{N: 8, K: 4, P: 8}
	for _, g := range coordGates(sh.K, 1, rng) {
		c := newCoordCase(rng, sh, 1)
		K2 := 2 * sh.K
		o := coordOut[float64]{make([]float64, sh.N*K2*sh.P), make([]float64, sh.N*K2*K2*sh.P), make([]float64, sh.N*K2*K2), make([]float64, sh.N*K2*sh.P)}
		run := func() {
			_ = CoordFirst(g.f64, o.first, c.l, c.d0, c.d1, sh)
			_ = CoordSecond(g.f64, o.second, c.l, c.d0, c.d1, c.d2, sh)
			_ = CoordGaussNewton(g.f64, o.gn, c.l, c.d0, c.d1, sh)
			_ = CoordHVP(g.f64, o.hvp, c.l, c.d0, c.d1, c.d2, c.v, sh)
		}
		run()
		require.Zero(t, testing.AllocsPerRun(20, run), g.name)
	}
}

// TestScaleVecEqualsGo: the AVX writer of the coordinate blocks gives scaleGo's bits, with
// and without non-temporal stores, on aligned and unaligned rows, for every P up to 40,
// ordinary, extreme and non-finite values, and writes nothing outside its rows.
func TestScaleVecEqualsGo(t *testing.T) {
	testkit.RequireAVX(t, "loops", hasAVX, &useAVX)
	t.Run("f64", func(t *testing.T) { scaleVecEqualsGo[float64](t) })
	t.Run("f32", func(t *testing.T) { scaleVecEqualsGo[float32](t) })
}

func scaleVecEqualsGo[T gatejet.Float](t *testing.T) {
	var zero T
	size := int(unsafe.Sizeof(zero))
	rng := rand.New(rand.NewPCG(25, uint64(size)))
	const guard = 40
	sentinel := T(math.Float32frombits(0x7fc0beef))
	for P := 1; P <= 40; P++ {
		for _, n := range []int{0, 1, 3, 16} {
			for _, xs := range []int{0, P} {
				f := randn(rng, n, 1)
				x := make([]T, max(1, n)*P)
				for i := range x {
					x[i] = T(rng.NormFloat64() * math.Pow(10, float64(rng.IntN(60)-30)))
				}
				if n > 0 {
					f[rng.IntN(n)] = []float64{math.NaN(), math.Inf(-1), 1e300, 0}[rng.IntN(4)]
					x[rng.IntN(len(x))] = T([]float64{math.NaN(), math.Inf(1), 5e-324}[rng.IntN(3)])
				}
				want := make([]T, n*P)
				useAVX = false
				scaleVec(want, x, f, n, P, xs, false)
				useAVX = true
				for _, nt := range []bool{false, true} {
					for _, shift := range []int{0, 1} {
						buf := make([]T, n*P+2*guard+64)
						for i := range buf {
							buf[i] = sentinel
						}
						start := guard + (64-int(uintptr(unsafe.Pointer(&buf[guard])))%64)%64/size + shift
						o := buf[start : start+n*P]
						used := scaleVec(o, x, f, n, P, xs, nt)
						what := fmt.Sprintf("P=%d n=%d xs=%d nt=%v shift=%d", P, n, xs, nt, shift)
						require.Equal(t, nt && n > 0 && shift == 0 && P*size%(4*size) == 0, used, "non-temporal stores %s", what)
						for i := range want {
							require.True(t, sameBits(want[i], o[i]), "%s [%d]: AVX %v, Go %v", what, i, o[i], want[i])
						}
						for i := range buf {
							if (i < start || i >= start+len(o)) && !sameBits(sentinel, buf[i]) {
								t.Fatalf("%s: written outside the rows at %d", what, i)
							}
						}
					}
				}
			}
		}
	}
}

// TestCoordSecondNonTemporal: the coordinate second channel gives the same bits with
// non-temporal stores as without, with the AVX loops and the Go loops, for both gates and
// both element types (the float32 rows that leave float32's safe range included).
func TestCoordSecondNonTemporal(t *testing.T) {
	defer func(n int, u bool) { ntMin, useAVX = n, u }(ntMin, useAVX)
	rng := rand.New(rand.NewPCG(25, 9))
	for _, sh := range []Shape{{N: 5, K: 4, P: 8}, {N: 3, K: 5, P: 6}, {N: 4, K: 16, P: 16}} {
		for _, g := range coordGates(sh.K, 1.3, rng) {
			c := newCoordCase(rng, sh, 1.5)
			c.d0[3] = 1e35 // a float32 row outside the fast range
			K2 := 2 * sh.K
			var ref64 []float64
			var ref32 []float32
			for _, avx := range []bool{false, true} {
				for _, nt := range []int{1 << 62, 0} {
					useAVX, ntMin = avx && hasAVX, nt
					g64, g32 := make([]float64, sh.N*K2*K2*sh.P), make([]float32, sh.N*K2*K2*sh.P)
					require.NoError(t, CoordSecond(g.f64, g64, c.l, c.d0, c.d1, c.d2, sh))
					require.NoError(t, CoordSecond(g.f32, g32, conv[float32](c.l), conv[float32](c.d0), conv[float32](c.d1), conv[float32](c.d2), sh))
					if ref64 == nil {
						ref64, ref32 = g64, g32
						continue
					}
					what := fmt.Sprintf("%s %+v avx=%v ntMin=%d", g.name, sh, avx, nt)
					requireSameBits(t, what+" f64", g64, ref64)
					requireSameBits(t, what+" f32", g32, ref32)
				}
			}
		}
	}
}

// TestGramRowBits: the Gram writer, four columns at a time, gives the bits of one dot
// product at a time, each summed over c in order.
func TestGramRowBits(t *testing.T) {
	rng := rand.New(rand.NewPCG(25, 10))
	for K := 1; K <= 11; K++ {
		for _, P := range []int{1, 3, 16} {
			f, e := randn(rng, K, 1), randn(rng, K*P, 1)
			got := make([]float64, K*K)
			gramRow(got, f, e, K, P)
			for a := 0; a < K; a++ {
				for b := 0; b < K; b++ {
					dot := 0.0
					for c := 0; c < P; c++ {
						dot += float64(e[a*P+c] * e[b*P+c])
					}
					lo, hi := min(a, b), max(a, b)
					require.True(t, sameBits(f[lo]*f[hi]*dot, got[a*K+b]), "K=%d P=%d (%d,%d)", K, P, a, b)
				}
			}
		}
	}
}

// FuzzCoordKernels: arbitrary shapes, gates and values never panic; invalid shapes and
// parameters are errors; each row is what the row alone gives (non-finite values stay in
// their row); second and the slab are exactly symmetric; on finite inputs of moderate size
// the outputs are finite.
func FuzzCoordKernels(f *testing.F) {
	f.Add([]byte{2, 3, 4, 100, 7, 9, 200, 13, 40, 50, 60, 70, 80, 90})
	f.Add([]byte{0, 1, 1, 0})
	f.Add([]byte{1, 17, 2, 255, 0, 1, 2, 3, 4, 5, 6})
	f.Add([]byte{3, 2, 2, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		r := &fuzzReader{b: data}
		sh := Shape{N: int(r.byte() % 5), K: int(r.byte() % 9), P: int(r.byte() % 6)}
		kind := r.byte()
		s := []float64{0, math.NaN(), 1e3, 1e-3, 0.7, gatejet.MaxInvTau, 1e200, 2}[kind%8]
		var g Gate[float64] = Softmax[float64]{InvTau: s}
		validGate := check.InvTau("", s) == nil
		if kind&8 != 0 {
			alpha, beta := make([]float64, max(sh.K, 0)), make([]float64, max(sh.K, 0))
			for k := range alpha {
				alpha[k], beta[k] = s*float64(1-2*(k%2)), r.float()
			}
			g = Logistic[float64]{Alpha: alpha, Beta: beta}
			validGate = check.LogisticGate("", sh.K, alpha, beta) == nil
		}
		if kind&16 != 0 {
			g = opaque[float64]{g}
		}
		shapeErr := coordCheck("fuzz", sh)
		if shapeErr != nil {
			require.Error(t, CoordSecond(g, nil, nil, nil, nil, nil, sh), "invalid shape %+v", sh)
			return
		}
		K2, P := 2*sh.K, sh.P
		in := func(n int) []float64 {
			x := make([]float64, n)
			for i := range x {
				x[i] = r.float()
			}
			return x
		}
		l, d0, d1, d2, v := in(sh.LogitsLen()), in(sh.DecodedLen()), in(sh.DecodedLen()), in(sh.DecodedLen()), in(2*sh.LogitsLen())
		run := func(sh Shape, l, d0, d1, d2, v []float64) (o [4][]float64, err error) {
			o = [4][]float64{make([]float64, sh.N*K2*P), make([]float64, sh.N*K2*K2*P), make([]float64, sh.N*K2*K2), make([]float64, sh.N*K2*P)}
			for i, e := range []error{CoordFirst(g, o[0], l, d0, d1, sh), CoordSecond(g, o[1], l, d0, d1, d2, sh),
				CoordGaussNewton(g, o[2], l, d0, d1, sh), CoordHVP(g, o[3], l, d0, d1, d2, v, sh)} {
				if (e == nil) != (err == nil) && i > 0 {
					t.Fatalf("kernels disagree on the call: %v, %v", err, e)
				}
				err = e
			}
			return
		}
		o, err := run(sh, l, d0, d1, d2, v)
		if validGate != (err == nil) {
			t.Fatalf("s=%v: err=%v", s, err)
		}
		if err != nil {
			return
		}
		w := [4]int{K2 * P, K2 * K2 * P, K2 * K2, K2 * P}
		K := sh.K
		for n := 0; n < sh.N; n++ {
			row := func(x []float64, m int) []float64 { return x[n*m : (n+1)*m] }
			one, err := run(Shape{N: 1, K: K, P: P}, row(l, K), row(d0, K*P), row(d1, K*P), row(d2, K*P), row(v, K2))
			require.NoError(t, err)
			for i := range o {
				requireSameBits(t, fmt.Sprintf("channel %d row %d alone", i, n), row(o[i], w[i]), one[i])
			}
		}
		for n := 0; n < sh.N; n++ {
			for a := 0; a < K2; a++ {
				for b := 0; b < K2; b++ {
					require.True(t, sameBitsOrNaN(o[2][(n*K2+a)*K2+b], o[2][(n*K2+b)*K2+a]), "slab symmetric")
					for c := 0; c < P; c++ {
						require.True(t, sameBitsOrNaN(o[1][((n*K2+a)*K2+b)*P+c], o[1][((n*K2+b)*K2+a)*P+c]), "second symmetric")
					}
				}
			}
		}
		for _, x := range [][]float64{l, d0, d1, d2, v} {
			if m := testkit.MaxAbs(x); !(m <= 8) {
				return
			}
		}
		if kind&8 != 0 && s > 1e3 {
			return // a saturated logistic atom at |α| = 1e100: exact zeros, checked in limits
		}
		for i := range o {
			for j, x := range o[i] {
				require.False(t, math.IsNaN(x) || math.IsInf(x, 0), "channel %d [%d] = %v from finite input (s=%g)", i, j, x, s)
			}
		}
	})
}

// TestCoordHVPVecEqualsGo: the AVX loops of the coordinate HVP's rows give the Go loops'
// bits for K up to 5 and every P up to 20, ordinary, extreme and non-finite values, and
// write nothing outside their rows.
func TestCoordHVPVecEqualsGo(t *testing.T) {
	testkit.RequireAVX(t, "loops", hasAVX, &useAVX)
	t.Run("f64", func(t *testing.T) { coordHVPVecEqualsGo[float64](t) })
	t.Run("f32", func(t *testing.T) { coordHVPVecEqualsGo[float32](t) })
}

func coordHVPVecEqualsGo[T gatejet.Float](t *testing.T) {
	var zero T
	rng := rand.New(rand.NewPCG(25, uint64(unsafe.Sizeof(zero))))
	sentinel := T(math.Float32frombits(0x7fc0beef))
	wild := func(n int) []float64 {
		x := randn(rng, n, 1)
		for i := range x {
			x[i] *= math.Pow(10, float64(rng.IntN(40)-20))
		}
		if n > 0 {
			x[rng.IntN(n)] = []float64{math.NaN(), math.Inf(1), 5e-324, 1e300}[rng.IntN(4)]
		}
		return x
	}
	for K := 1; K <= 5; K++ {
		for P := 1; P <= 20; P++ {
			e, q, g, su, vt, f, h := wild(K*P), wild(P), wild(K), wild(K), wild(K), wild(K), wild(K)
			x, y := conv[T](wild(K*P)), conv[T](wild(K*P))
			for _, which := range []string{"l", "t"} {
				want := make([]T, K*P)
				run := func(o []T) {
					if which == "l" {
						coordHVPlVec(o, e, x, q, g, su, vt, K, P)
					} else {
						coordHVPtVec(o, x, y, f, h, K, P)
					}
				}
				useAVX = false
				run(want)
				useAVX = true
				buf := make([]T, K*P+9)
				for i := range buf {
					buf[i] = sentinel
				}
				o := buf[1+rng.IntN(4) : K*P+5]
				o = o[:K*P]
				run(o)
				for i := range want {
					require.True(t, sameBits(want[i], o[i]), "%s K=%d P=%d [%d]: AVX %v, Go %v", which, K, P, i, o[i], want[i])
				}
				n := 0
				for _, v := range buf {
					if sameBits(v, sentinel) {
						n++
					}
				}
				require.Equal(t, len(buf)-K*P, n, "%s K=%d P=%d: written outside the rows", which, K, P)
			}
		}
	}
}

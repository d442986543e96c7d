package tower

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gatejet/gatejet"
	"github.com/gatejet/gatejet/internal/par"
	"github.com/gatejet/gatejet/internal/testkit"
)

// progRBF is a test basis of Gaussian radial functions Φ_b(t) = exp(−|t − c_b|²/(2w²)).
type progRBF struct {
	centers [][]float64
	w       float64
}

func (r progRBF) Len() int { return len(r.centers) }
func (r progRBF) Dim() int { return len(r.centers[0]) }
func (r progRBF) Eval(t, phi, dphi, d2phi []float64) {
	d, w2 := len(t), r.w*r.w
	for b, c := range r.centers {
		q := 0.0
		for i := range t {
			q += (t[i] - c[i]) * (t[i] - c[i])
		}
		f := math.Exp(-q / (2 * w2))
		phi[b] = f
		for i := 0; i < d && dphi != nil; i++ {
			dphi[b*d+i] = -f * (t[i] - c[i]) / w2
		}
		for i := 0; i < d && d2phi != nil; i++ {
			for j := 0; j < d; j++ {
				v := f * (t[i] - c[i]) * (t[j] - c[j]) / (w2 * w2)
				if i == j {
					v -= f / w2
				}
				d2phi[(b*d+i)*d+j] = v
			}
		}
	}
}

// progMono is a test basis of monomials 1, t, …, t^(nb−1) in d = 1.
type progMono struct{ nb int }

func (p progMono) Len() int { return p.nb }
func (p progMono) Dim() int { return 1 }
func (p progMono) Eval(t, phi, dphi, d2phi []float64) {
	x := t[0]
	for b := 0; b < p.nb; b++ {
		fb := float64(b)
		phi[b] = math.Pow(x, fb)
		if dphi != nil {
			dphi[b] = fb * math.Pow(x, fb-1)
		}
		if d2phi != nil {
			d2phi[b] = fb * (fb - 1) * math.Pow(x, fb-2)
		}
	}
}

// progConstBasis has d = 0: constant functions 1, 1/2, 1/3, ….
type progConstBasis struct{ nb int }

func (p progConstBasis) Len() int { return p.nb }
func (p progConstBasis) Dim() int { return 0 }
func (p progConstBasis) Eval(_, phi, _, _ []float64) {
	for b := range phi {
		phi[b] = 1 / float64(b+1)
	}
}

func progNormals(r *rand.Rand, n int, scale float64) []float64 {
	x := make([]float64, n)
	for i := range x {
		x[i] = scale * r.NormFloat64()
	}
	return x
}

// progCase is one row program and one row of inputs: logits [K] and x2, the decoded values
// [K×P] (no basis) or the latent coordinates [K×d].
type progCase struct {
	name   string
	spec   ProgramSpec
	logits []float64
	x2     []float64
	// The gate's parameters, for the reference: softmax of invTau, or logistic of alpha, beta.
	logistic    bool
	invTau      float64
	alpha, beta []float64
}

func (pc progCase) d() int {
	if pc.spec.Basis == nil {
		return 0
	}
	return pc.spec.Basis.Dim()
}

// m is the number of primaries.
func (pc progCase) m() int {
	if pc.spec.LatentPrimaries {
		return pc.spec.K * (1 + pc.d())
	}
	return pc.spec.K
}

// eval runs the program on the case's row with the primaries x (logits, then the latent
// coordinates when they are primaries).
func (pc progCase) eval(t *testing.T, pr *Program[float64], x []float64) (value, first, second []float64) {
	t.Helper()
	K, P, m := pc.spec.K, pc.spec.P, pc.m()
	value, first, second = make([]float64, P), make([]float64, m*P), make([]float64, m*m*P)
	logits, x2 := x[:K], pc.x2
	if pc.spec.LatentPrimaries {
		x2 = x[K:]
	}
	var err error
	if pc.spec.Basis == nil {
		err = pr.RowDecoded(value, first, second, logits, x2)
	} else {
		err = pr.RowLatent(value, first, second, logits, x2)
	}
	require.NoError(t, err)
	return value, first, second
}

func (pc progCase) primaries() []float64 {
	x := append([]float64(nil), pc.logits...)
	if pc.spec.LatentPrimaries {
		x = append(x, pc.x2...)
	}
	return x
}

// naiveValue computes ẑ directly in float64 from the gate and the basis.
func (pc progCase) naiveValue() []float64 {
	K, P := pc.spec.K, pc.spec.P
	z := make([]float64, K)
	if pc.logistic {
		for k := range z {
			z[k] = 1 / (1 + math.Exp(-(pc.alpha[k]*pc.logits[k] + pc.beta[k])))
		}
	} else {
		mx, sum := math.Inf(-1), 0.0
		for _, l := range pc.logits {
			mx = math.Max(mx, l)
		}
		for k, l := range pc.logits {
			z[k] = math.Exp(pc.invTau * (l - mx))
			sum += z[k]
		}
		for k := range z {
			z[k] /= sum
		}
	}
	dec := pc.x2
	if b := pc.spec.Basis; b != nil {
		d, nb := b.Dim(), b.Len()
		dec = make([]float64, K*P)
		phi := make([]float64, nb)
		for k := 0; k < K; k++ {
			b.Eval(pc.x2[k*d:k*d+d], phi, nil, nil)
			for c := 0; c < P; c++ {
				for j := 0; j < nb; j++ {
					dec[k*P+c] += phi[j] * pc.spec.Decoder[j*P+c]
				}
			}
		}
	}
	v := make([]float64, P)
	for k := 0; k < K; k++ {
		for c := 0; c < P; c++ {
			v[c] += z[k] * dec[k*P+c]
		}
	}
	return v
}

func progCases() []progCase {
	r := rand.New(rand.NewPCG(7, 11))
	rbf1 := progRBF{centers: [][]float64{{-1}, {-0.3}, {0.4}, {1.2}}, w: 0.8}
	rbf2 := progRBF{centers: [][]float64{{-1, 0}, {0.5, -0.5}, {0, 1}, {1, 1}, {-0.5, -1}}, w: 0.9}
	mk := func(name string, K, P int, logistic bool, basis Basis, latent bool) progCase {
		spec := ProgramSpec{K: K, P: P, Gate: Softmax(1.3), Basis: basis, LatentPrimaries: latent}
		pc := progCase{logistic: logistic, invTau: 1.3}
		if logistic {
			pc.alpha = make([]float64, K)
			for k := range pc.alpha {
				pc.alpha[k] = (0.5 + 1.5*r.Float64()) * float64(1-2*(k%2))
			}
			pc.beta = progNormals(r, K, 0.5)
			spec.Gate = Logistic(pc.alpha, pc.beta)
		}
		pc.name, pc.spec, pc.logits = name, spec, progNormals(r, K, 1)
		if basis == nil {
			pc.x2 = progNormals(r, K*P, 1)
		} else {
			pc.spec.Decoder = progNormals(r, basis.Len()*P, 1)
			pc.x2 = progNormals(r, K*basis.Dim(), 0.7)
		}
		return pc
	}
	return []progCase{
		mk("softmax/decoded/K=4", 4, 3, false, nil, false),
		mk("softmax/decoded/K=1", 1, 2, false, nil, false),
		mk("logistic/decoded/K=3", 3, 2, true, nil, false),
		mk("softmax/mono-d1/latent", 3, 2, false, progMono{nb: 4}, true),
		mk("softmax/mono-d1/logits-only", 3, 2, false, progMono{nb: 4}, false),
		mk("softmax/rbf-d1/latent", 4, 2, false, rbf1, true),
		mk("softmax/rbf-d2/latent", 3, 2, false, rbf2, true),
		mk("softmax/rbf-d2/logits-only", 3, 3, false, rbf2, false),
		mk("logistic/rbf-d2/latent", 3, 2, true, rbf2, true),
		mk("logistic/mono-d1/latent", 2, 3, true, progMono{nb: 3}, true),
		mk("softmax/const-d0/latent", 3, 2, false, progConstBasis{nb: 2}, true),
	}
}

func TestProgTestBases(t *testing.T) {
	// The test bases' derivatives, against central differences.
	const h = 1e-5
	for _, b := range []Basis{progRBF{centers: [][]float64{{-1, 0.2}, {0.5, -0.5}}, w: 0.9}, progMono{nb: 4}, progRBF{centers: [][]float64{{0.3}}, w: 0.6}} {
		d, nb := b.Dim(), b.Len()
		t0 := []float64{0.37, -0.21}[:d]
		phi, dphi, d2phi := make([]float64, nb), make([]float64, nb*d), make([]float64, nb*d*d)
		b.Eval(t0, phi, dphi, d2phi)
		for i := 0; i < d; i++ {
			tp, tm := append([]float64(nil), t0...), append([]float64(nil), t0...)
			tp[i] += h
			tm[i] -= h
			pp, dp, pm, dm := make([]float64, nb), make([]float64, nb*d), make([]float64, nb), make([]float64, nb*d)
			b.Eval(tp, pp, dp, nil)
			b.Eval(tm, pm, dm, nil)
			for j := 0; j < nb; j++ {
				require.InDelta(t, (pp[j]-pm[j])/(2*h), dphi[j*d+i], 1e-9)
				for a := 0; a < d; a++ {
					require.InDelta(t, (dp[j*d+a]-dm[j*d+a])/(2*h), d2phi[(j*d+a)*d+i], 1e-9)
				}
			}
		}
	}
}

// TestProgramAgainstFiniteDifferences checks value against a direct evaluation, first against
// central differences of value, and second against central differences of first.
func TestProgramAgainstFiniteDifferences(t *testing.T) {
	const h = 1e-5
	for _, pc := range progCases() {
		t.Run(pc.name, func(t *testing.T) {
			pr, err := NewProgram[float64](pc.spec)
			require.NoError(t, err)
			m, P, K := pc.m(), pc.spec.P, pc.spec.K
			require.Equal(t, m, pr.Primaries())
			x := pc.primaries()
			value, first, second := pc.eval(t, pr, x)

			naive := pc.naiveValue()
			for c := range value {
				require.InDelta(t, naive[c], value[c], 1e-14*math.Max(1, math.Abs(naive[c])), "value[%d]", c)
			}

			fdFirst, fdSecond := make([]float64, m*P), make([]float64, m*m*P)
			for b := 0; b < m; b++ {
				xp, xm := append([]float64(nil), x...), append([]float64(nil), x...)
				xp[b] += h
				xm[b] -= h
				vp, fp, _ := pc.eval(t, pr, xp)
				vm, fm, _ := pc.eval(t, pr, xm)
				for c := 0; c < P; c++ {
					fdFirst[b*P+c] = (vp[c] - vm[c]) / (2 * h)
					for a := 0; a < m; a++ {
						fdSecond[(a*m+b)*P+c] = (fp[a*P+c] - fm[a*P+c]) / (2 * h)
					}
				}
			}
			worst1, worst2 := 0.0, 0.0
			for i := range first {
				worst1 = math.Max(worst1, math.Abs(first[i]-fdFirst[i]))
			}
			for i := range second {
				worst2 = math.Max(worst2, math.Abs(second[i]-fdSecond[i]))
			}
			t.Logf("m=%d: max |first − fd| = %.1e (scale %.2g), max |second − fd| = %.1e (scale %.2g)",
				m, worst1, testkit.MaxAbs(fdFirst), worst2, testkit.MaxAbs(fdSecond))
			tol1 := 1e-7 * math.Max(1, testkit.MaxAbs(fdFirst))
			for i := range first {
				require.InDelta(t, fdFirst[i], first[i], tol1, "first[a=%d][c=%d]", i/P, i%P)
			}
			tol2 := 1e-7 * math.Max(1, testkit.MaxAbs(fdSecond))
			for i := range second {
				require.InDelta(t, fdSecond[i], second[i], tol2, "second[a=%d][b=%d][c=%d]", i/P/m, i/P%m, i%P)
			}
			if K > 1 && (pc.spec.Basis == nil || pc.d() > 0) { // with d = 0 every atom decodes alike
				require.Greater(t, testkit.MaxAbs(second), 1e-3, "the test exercises a non-trivial second channel")
			}

			// Symmetry, exact.
			for a := 0; a < m; a++ {
				for b := 0; b < m; b++ {
					for c := 0; c < P; c++ {
						require.Equal(t, second[(a*m+b)*P+c], second[(b*m+a)*P+c], "second[%d][%d][%d]", a, b, c)
					}
				}
			}

			// Softmax: ẑ is invariant to adding a constant to every logit, so the sums over
			// the logit primaries vanish (for every first index a, logit or latent).
			if !pc.logistic {
				s1 := 1e-13 * math.Max(1, testkit.MaxAbs(first))
				s2 := 1e-13 * math.Max(1, testkit.MaxAbs(second))
				for c := 0; c < P; c++ {
					sum := 0.0
					for a := 0; a < K; a++ {
						sum += first[a*P+c]
					}
					require.InDelta(t, 0, sum, s1, "Σ_a first[a][%d]", c)
					for a := 0; a < m; a++ {
						sum := 0.0
						for b := 0; b < K; b++ {
							sum += second[(a*m+b)*P+c]
						}
						require.InDelta(t, 0, sum, s2, "Σ_b second[%d][b][%d]", a, c)
					}
				}
			}

			// Logistic: each logit gates its own atom, so the logit block of second is
			// diagonal.
			if pc.logistic {
				for a := 0; a < K; a++ {
					for b := 0; b < K; b++ {
						for c := 0; c < P && a != b; c++ {
							require.Zero(t, second[(a*m+b)*P+c])
						}
					}
				}
			}
		})
	}
}

// progAnalyticSoftmax is the closed form of math.md, written out independently in float64.
func progAnalyticSoftmax(l, D []float64, s float64, K, P int) (value, first, second []float64) {
	mx := math.Inf(-1)
	for _, v := range l {
		mx = math.Max(mx, v)
	}
	z, sum := make([]float64, K), 0.0
	for k := range z {
		z[k] = math.Exp(s * (l[k] - mx))
		sum += z[k]
	}
	for k := range z {
		z[k] /= sum
	}
	value = make([]float64, P)
	for k := 0; k < K; k++ {
		for c := 0; c < P; c++ {
			value[c] += z[k] * D[k*P+c]
		}
	}
	e := func(a, c int) float64 { return D[a*P+c] - value[c] }
	first, second = make([]float64, K*P), make([]float64, K*K*P)
	for a := 0; a < K; a++ {
		for c := 0; c < P; c++ {
			first[a*P+c] = s * z[a] * e(a, c)
			for b := 0; b < K; b++ {
				v := -z[a] * z[b] * (e(a, c) + e(b, c))
				if a == b {
					v += z[a] * e(a, c)
				}
				second[(a*K+b)*P+c] = s * s * v
			}
		}
	}
	return value, first, second
}

func TestTowerExtremes(t *testing.T) {
	const K, P = 5, 3
	r := rand.New(rand.NewPCG(3, 5))
	D := progNormals(r, K*P, 1)
	run := func(l []float64, s float64) (v, f, sc []float64) {
		v, f, sc = make([]float64, P), make([]float64, K*P), make([]float64, K*K*P)
		require.NoError(t, TowerChannels(v, f, sc, l, D, Shape{N: 1, K: K, P: P}, s))
		return v, f, sc
	}
	// Dyadic spreads, so that l − max l is exact whatever the offset.
	for _, tc := range []struct {
		name   string
		spread []float64
		s      float64
	}{
		{"s=1e3/spread≈4/s", []float64{0, 1.0 / 1024, 3.0 / 1024, -2.0 / 1024, 0.5 / 1024}, 1e3},
		{"s=1e3/one-hot", []float64{0, -1, -0.5, -2, -0.25}, 1e3},
		{"s=1/spread=1", []float64{0, -1, 0.5, -2, 0.25}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v0, f0, s0 := run(tc.spread, tc.s)
			av, af, as := progAnalyticSoftmax(tc.spread, D, tc.s, K, P)
			scale := testkit.MaxAbs(D)
			for _, ch := range []struct {
				got, want []float64
				order     int
			}{{v0, av, 0}, {f0, af, 1}, {s0, as, 2}} {
				tol := 1e-13 * math.Pow(tc.s, float64(ch.order)) * scale
				for i := range ch.got {
					require.False(t, math.IsNaN(ch.got[i]) || math.IsInf(ch.got[i], 0), "finite")
					require.InDelta(t, ch.want[i], ch.got[i], tol, "order %d entry %d", ch.order, i)
				}
			}
			for _, off := range []float64{1e4, -1e4} {
				l := make([]float64, K)
				for k := range l {
					l[k] = tc.spread[k] + off
					require.Equal(t, tc.spread[k], l[k]-off, "exact offset")
				}
				v, f, s := run(l, tc.s)
				require.Equal(t, v0, v, "offset %v", off)
				require.Equal(t, f0, f, "offset %v", off)
				require.Equal(t, s0, s, "offset %v", off)
			}
		})
	}
}

func progAllNaN(t *testing.T, xs []float64, msg string) {
	t.Helper()
	for i, x := range xs {
		require.True(t, math.IsNaN(x), "%s[%d] = %v, want NaN", msg, i, x)
	}
}

func progAllFinite(t *testing.T, xs []float64, msg string) {
	t.Helper()
	for i, x := range xs {
		require.False(t, math.IsNaN(x) || math.IsInf(x, 0), "%s[%d] = %v, want finite", msg, i, x)
	}
}

func TestTowerNonFinite(t *testing.T) {
	const K, P = 5, 3
	inf := math.Inf(1)
	r := rand.New(rand.NewPCG(9, 9))
	rows := [][]float64{
		progNormals(r, K, 1),
		{-inf, -inf, -inf, -inf, -inf},
		{0.3, -inf, -0.4, -inf, 1.1},
		{0.3, math.NaN(), -0.4, 0.2, 1.1},
		{0.3, inf, -0.4, 0.2, 1.1},
		progNormals(r, K, 1), // NaN in decoded[4][1]
		progNormals(r, K, 1),
	}
	N := len(rows)
	sh := Shape{N: N, K: K, P: P}
	logits := make([]float64, 0, N*K)
	for _, l := range rows {
		logits = append(logits, l...)
	}
	decoded := progNormals(r, N*K*P, 1)
	decoded[(5*K+4)*P+1] = math.NaN()
	for _, gate := range []string{"softmax", "logistic"} {
		t.Run(gate, func(t *testing.T) {
			alpha, beta := []float64{1, -0.5, 2, 0.7, 1.3}, []float64{0.1, 0, -0.3, 0.2, 0}
			call := func(v, f, s, l, d []float64, sh Shape) {
				if gate == "softmax" {
					require.NoError(t, TowerChannels(v, f, s, l, d, sh, 1.7))
				} else {
					require.NoError(t, TowerLogisticChannels(v, f, s, l, d, sh, alpha[:sh.K], beta[:sh.K]))
				}
			}
			value, first, second := make([]float64, N*P), make([]float64, N*K*P), make([]float64, N*K*K*P)
			call(value, first, second, logits, decoded, sh)
			row := func(n int) (v, f, s []float64) {
				return value[n*P : n*P+P], first[n*K*P : (n+1)*K*P], second[n*K*K*P : (n+1)*K*K*P]
			}
			// Every row is what evaluating it alone gives: nothing leaks between rows.
			for n := 0; n < N; n++ {
				v1, f1, s1 := make([]float64, P), make([]float64, K*P), make([]float64, K*K*P)
				call(v1, f1, s1, logits[n*K:n*K+K], decoded[n*K*P:(n+1)*K*P], Shape{N: 1, K: K, P: P})
				v, f, s := row(n)
				for i := range v1 {
					require.True(t, v1[i] == v[i] || math.IsNaN(v1[i]) && math.IsNaN(v[i]), "row %d value", n)
				}
				for i := range f1 {
					require.True(t, f1[i] == f[i] || math.IsNaN(f1[i]) && math.IsNaN(f[i]), "row %d first", n)
				}
				for i := range s1 {
					require.True(t, s1[i] == s[i] || math.IsNaN(s1[i]) && math.IsNaN(s[i]), "row %d second", n)
				}
			}
			for _, n := range []int{0, 6} {
				v, f, s := row(n)
				progAllFinite(t, v, "value")
				progAllFinite(t, f, "first")
				progAllFinite(t, s, "second")
			}
			// A NaN logit poisons its row, whatever the gate.
			v, f, s := row(3)
			progAllNaN(t, v, "value")
			progAllNaN(t, f, "first")
			progAllNaN(t, s, "second")
			// A NaN decoded value poisons its column only.
			v, f, s = row(5)
			for c := 0; c < P; c++ {
				require.Equal(t, c == 1, math.IsNaN(v[c]), "value[%d]", c)
				for a := 0; a < K; a++ {
					if gate == "softmax" || a == 4 {
						require.Equal(t, c == 1, math.IsNaN(f[a*P+c]), "first[%d][%d]", a, c)
					}
				}
			}
			progAllFinite(t, s[:1], "second")
			if gate != "softmax" {
				// ±Inf logits saturate a logistic gate (ζ = 0 or 1, zero derivatives).
				for _, n := range []int{1, 2, 4} {
					v, f, s := row(n)
					progAllFinite(t, v, "value")
					progAllFinite(t, f, "first")
					progAllFinite(t, s, "second")
				}
				return
			}
			for _, n := range []int{1, 4} { // all −Inf; a +Inf logit
				v, f, s := row(n)
				progAllNaN(t, v, "value")
				progAllNaN(t, f, "first")
				progAllNaN(t, s, "second")
			}
			// −Inf logits alongside finite ones: ζ = 0 for those atoms, finite channels equal
			// to those of the problem without them, and zero channels for them.
			v, f, s = row(2)
			keep := []int{0, 2, 4}
			kr := len(keep)
			lr, dr := make([]float64, 0, kr), make([]float64, 0, kr*P)
			for _, k := range keep {
				lr = append(lr, rows[2][k])
				dr = append(dr, decoded[(2*K+k)*P:(2*K+k+1)*P]...)
			}
			vr, fr, sr := make([]float64, P), make([]float64, kr*P), make([]float64, kr*kr*P)
			require.NoError(t, TowerChannels(vr, fr, sr, lr, dr, Shape{N: 1, K: kr, P: P}, 1.7))
			require.Equal(t, vr, v)
			pos := map[int]int{0: 0, 2: 1, 4: 2}
			for a := 0; a < K; a++ {
				ia, oka := pos[a]
				for c := 0; c < P; c++ {
					want := 0.0
					if oka {
						want = fr[ia*P+c]
					}
					require.Equal(t, want, f[a*P+c], "first[%d][%d]", a, c)
					for b := 0; b < K; b++ {
						ib, okb := pos[b]
						want := 0.0
						if oka && okb {
							want = sr[(ia*kr+ib)*P+c]
						}
						require.Equal(t, want, s[(a*K+b)*P+c], "second[%d][%d][%d]", a, b, c)
					}
				}
			}
		})
	}
}

func TestTowerFloat32MatchesFloat64(t *testing.T) {
	const N, K, P = 64, 8, 5
	r := rand.New(rand.NewPCG(1, 2))
	sh := Shape{N: N, K: K, P: P}
	l64, d64 := progNormals(r, N*K, 1.5), progNormals(r, N*K*P, 1)
	l32, d32 := make([]float32, len(l64)), make([]float32, len(d64))
	for i, v := range l64 {
		l32[i] = float32(v)
		l64[i] = float64(l32[i]) // the same inputs in both precisions
	}
	for i, v := range d64 {
		d32[i] = float32(v)
		d64[i] = float64(d32[i])
	}
	alpha, beta := []float64{1, -0.5, 2, 0.7, 1.3, -1.1, 0.4, 0.9}, progNormals(r, K, 0.5)
	for _, gate := range []string{"softmax", "logistic"} {
		t.Run(gate, func(t *testing.T) {
			v64, f64, s64 := make([]float64, N*P), make([]float64, N*K*P), make([]float64, N*K*K*P)
			v32, f32, s32 := make([]float32, N*P), make([]float32, N*K*P), make([]float32, N*K*K*P)
			if gate == "softmax" {
				require.NoError(t, TowerChannels(v64, f64, s64, l64, d64, sh, 1.3))
				require.NoError(t, TowerChannels(v32, f32, s32, l32, d32, sh, 1.3))
			} else {
				require.NoError(t, TowerLogisticChannels(v64, f64, s64, l64, d64, sh, alpha, beta))
				require.NoError(t, TowerLogisticChannels(v32, f32, s32, l32, d32, sh, alpha, beta))
			}
			for _, ch := range []struct {
				name string
				a    []float64
				b    []float32
				w    int // values per row
			}{{"value", v64, v32, P}, {"first", f64, f32, K * P}, {"second", s64, s32, K * K * P}} {
				worst := 0.0
				for n := 0; n < N; n++ {
					a, b := ch.a[n*ch.w:(n+1)*ch.w], ch.b[n*ch.w:(n+1)*ch.w]
					scale := testkit.MaxAbs(a)
					for i := range a {
						worst = math.Max(worst, math.Abs(a[i]-float64(b[i]))/scale)
					}
				}
				t.Logf("%s: max |f32 − f64| / row scale = %.2e", ch.name, worst)
				require.Less(t, worst, 1e-5, ch.name)
			}
		})
	}
}

// TestTowerBatchDeterministic checks that the batch entry points give, bit for bit, what the
// row program gives row by row, however the rows are split over goroutines, and that nil
// outputs are skipped without changing the others.
func TestTowerBatchDeterministic(t *testing.T) {
	const N, K, P = 37, 6, 4
	r := rand.New(rand.NewPCG(4, 4))
	sh := Shape{N: N, K: K, P: P}
	logits, decoded := progNormals(r, N*K, 1), progNormals(r, N*K*P, 1)
	alpha, beta := progNormals(r, K, 1), progNormals(r, K, 1)
	for _, gate := range []string{"softmax", "logistic"} {
		t.Run(gate, func(t *testing.T) {
			spec := ProgramSpec{K: K, P: P, Gate: Softmax(0.8)}
			call := TowerChannels[float64]
			if gate == "logistic" {
				spec = ProgramSpec{K: K, P: P, Gate: Logistic(alpha, beta)}
				call = func(v, f, s, l, d []float64, sh Shape, _ float64) error {
					return TowerLogisticChannels(v, f, s, l, d, sh, alpha, beta)
				}
			}
			pr, err := NewProgram[float64](spec)
			require.NoError(t, err)
			wv, wf, ws := make([]float64, N*P), make([]float64, N*K*P), make([]float64, N*K*K*P)
			for n := 0; n < N; n++ {
				require.NoError(t, pr.RowDecoded(wv[n*P:(n+1)*P], wf[n*K*P:(n+1)*K*P], ws[n*K*K*P:(n+1)*K*K*P], logits[n*K:(n+1)*K], decoded[n*K*P:(n+1)*K*P]))
			}
			for _, minWork := range []int64{0, par.DefaultMinWork, math.MaxInt64} {
				old := par.SetMinWork(minWork)
				v, f, s := make([]float64, N*P), make([]float64, N*K*P), make([]float64, N*K*K*P)
				require.NoError(t, call(v, f, s, logits, decoded, sh, 0.8))
				so := make([]float64, N*K*K*P)
				require.NoError(t, call(nil, nil, so, logits, decoded, sh, 0.8))
				fo := make([]float64, N*K*P)
				require.NoError(t, call(nil, fo, nil, logits, decoded, sh, 0.8))
				require.NoError(t, call(nil, nil, nil, logits, decoded, sh, 0.8))
				par.SetMinWork(old)
				require.Equal(t, wv, v)
				require.Equal(t, wf, f)
				require.Equal(t, ws, s)
				require.Equal(t, ws, so)
				require.Equal(t, wf, fo)
			}
		})
	}
	// The empty batch.
	require.NoError(t, TowerChannels[float64](nil, nil, nil, nil, nil, Shape{N: 0, K: 3, P: 2}, 1))
	require.NoError(t, TowerLogisticChannels[float32]([]float32{}, nil, nil, []float32{}, nil, Shape{N: 0, K: 1, P: 1}, []float64{1}, []float64{0}))
}

// TestTowerConcurrentCalls runs the batch entry points from several goroutines at once, in
// both element types (they share the workspace pool); run it with -race.
func TestTowerConcurrentCalls(t *testing.T) {
	const N, K, P = 40, 5, 3
	sh := Shape{N: N, K: K, P: P}
	r := rand.New(rand.NewPCG(2, 8))
	l64, d64 := progNormals(r, N*K, 1), progNormals(r, N*K*P, 1)
	l32, d32 := make([]float32, len(l64)), make([]float32, len(d64))
	for i := range l64 {
		l32[i] = float32(l64[i])
	}
	for i := range d64 {
		d32[i] = float32(d64[i])
	}
	want64, want32 := make([]float64, N*K*K*P), make([]float32, N*K*K*P)
	require.NoError(t, TowerChannels(nil, nil, want64, l64, d64, sh, 1.1))
	require.NoError(t, TowerChannels(nil, nil, want32, l32, d32, sh, 1.1))
	defer par.SetMinWork(par.SetMinWork(0))
	const G = 8
	got64, got32 := make([][]float64, G), make([][]float32, G)
	errs := make(chan error, 2*G)
	done := make(chan struct{})
	for g := 0; g < G; g++ {
		got64[g], got32[g] = make([]float64, N*K*K*P), make([]float32, N*K*K*P)
		go func() { errs <- TowerChannels(nil, nil, got64[g], l64, d64, sh, 1.1); done <- struct{}{} }()
		go func() { errs <- TowerChannels(nil, nil, got32[g], l32, d32, sh, 1.1); done <- struct{}{} }()
	}
	for i := 0; i < 2*G; i++ {
		<-done
		require.NoError(t, <-errs)
	}
	for g := 0; g < G; g++ {
		require.Equal(t, want64, got64[g])
		require.Equal(t, want32, got32[g])
	}
}

func TestProgramRowAllocatesNothing(t *testing.T) {
	for _, pc := range progCases() {
		pr, err := NewProgram[float64](pc.spec)
		require.NoError(t, err)
		m, P := pc.m(), pc.spec.P
		v, f, s := make([]float64, P), make([]float64, m*P), make([]float64, m*m*P)
		x := pc.primaries()
		x2 := pc.x2
		if pc.spec.LatentPrimaries {
			x2 = x[pc.spec.K:]
		}
		row := func() {
			if pc.spec.Basis == nil {
				_ = pr.RowDecoded(v, f, s, x[:pc.spec.K], x2)
			} else {
				_ = pr.RowLatent(v, f, s, x[:pc.spec.K], x2)
			}
		}
		assert.Zero(t, testing.AllocsPerRun(10, row), pc.name)
	}
}

func TestTowerErrors(t *testing.T) {
	const N, K, P = 2, 3, 4
	sh := Shape{N: N, K: K, P: P}
	l, d := make([]float64, N*K), make([]float64, N*K*P)
	v, f, s := make([]float64, N*P), make([]float64, N*K*P), make([]float64, N*K*K*P)
	one := []float64{1, 1, 1}
	zero := []float64{0, 0, 0}
	cases := []struct {
		name string
		call func() error
		kind error
	}{
		{"N<0", func() error { return TowerChannels(v, f, s, l, d, Shape{N: -1, K: K, P: P}, 1) }, gatejet.ErrShape},
		{"K=0", func() error { return TowerChannels(v, f, s, l, d, Shape{N: N, K: 0, P: P}, 1) }, gatejet.ErrShape},
		{"P=0", func() error { return TowerChannels(v, f, s, l, d, Shape{N: N, K: K, P: 0}, 1) }, gatejet.ErrShape},
		{"overflow", func() error { return TowerChannels(v, f, s, l, d, Shape{N: 1 << 20, K: 1 << 20, P: 1 << 30}, 1) }, gatejet.ErrSize},
		{"logits", func() error { return TowerChannels(v, f, s, l[1:], d, sh, 1) }, gatejet.ErrSize},
		{"logits nil", func() error { return TowerChannels(v, f, s, nil, d, sh, 1) }, gatejet.ErrSize},
		{"decoded", func() error { return TowerChannels(v, f, s, l, d[:5], sh, 1) }, gatejet.ErrSize},
		{"value", func() error { return TowerChannels(v[1:], f, s, l, d, sh, 1) }, gatejet.ErrSize},
		{"value empty", func() error { return TowerChannels([]float64{}, f, s, l, d, sh, 1) }, gatejet.ErrSize},
		{"first", func() error { return TowerChannels(v, append(f, 0), s, l, d, sh, 1) }, gatejet.ErrSize},
		{"second", func() error { return TowerChannels(v, f, s[:7], l, d, sh, 1) }, gatejet.ErrSize},
		{"invTau=0", func() error { return TowerChannels(v, f, s, l, d, sh, 0) }, gatejet.ErrTemperature},
		{"invTau<0", func() error { return TowerChannels(v, f, s, l, d, sh, -1) }, gatejet.ErrTemperature},
		{"invTau=NaN", func() error { return TowerChannels(v, f, s, l, d, sh, math.NaN()) }, gatejet.ErrTemperature},
		{"invTau=Inf", func() error { return TowerChannels(v, f, s, l, d, sh, math.Inf(1)) }, gatejet.ErrTemperature},
		{"logistic shape", func() error { return TowerLogisticChannels(v, f, s, l, d, Shape{N: N, K: 0, P: P}, nil, nil) }, gatejet.ErrShape},
		{"logistic size", func() error { return TowerLogisticChannels(v, f, s[1:], l, d, sh, one, zero) }, gatejet.ErrSize},
		{"alpha length", func() error { return TowerLogisticChannels(v, f, s, l, d, sh, one[:2], zero) }, gatejet.ErrParam},
		{"beta nil", func() error { return TowerLogisticChannels(v, f, s, l, d, sh, one, nil) }, gatejet.ErrParam},
		{"alpha NaN", func() error { return TowerLogisticChannels(v, f, s, l, d, sh, []float64{1, math.NaN(), 1}, zero) }, gatejet.ErrNonFinite},
		{"beta Inf", func() error { return TowerLogisticChannels(v, f, s, l, d, sh, one, []float64{0, 0, math.Inf(-1)}) }, gatejet.ErrNonFinite},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			require.Contains(t, testkit.RequireGatejetError(t, tc.call, tc.kind).Op, "tower.Tower")
		})
	}
}

func TestProgramErrors(t *testing.T) {
	rbf := progRBF{centers: [][]float64{{0, 0}, {1, 1}}, w: 1}
	dec := make([]float64, 2*3)
	cases := []struct {
		name string
		spec ProgramSpec
		kind error
	}{
		{"K=0", ProgramSpec{K: 0, P: 3, Gate: Softmax(1)}, gatejet.ErrShape},
		{"P<0", ProgramSpec{K: 2, P: -1, Gate: Softmax(1)}, gatejet.ErrShape},
		{"invTau", ProgramSpec{K: 2, P: 3, Gate: Softmax(0)}, gatejet.ErrTemperature},
		{"no gate", ProgramSpec{K: 2, P: 3}, gatejet.ErrParam},
		{"alpha", ProgramSpec{K: 2, P: 3, Gate: Logistic([]float64{1}, []float64{0, 0})}, gatejet.ErrParam},
		{"beta", ProgramSpec{K: 2, P: 3, Gate: Logistic([]float64{1, 1}, []float64{0, math.NaN()})}, gatejet.ErrNonFinite},
		{"latent without basis", ProgramSpec{K: 2, P: 3, Gate: Softmax(1), LatentPrimaries: true}, gatejet.ErrParam},
		{"decoder without basis", ProgramSpec{K: 2, P: 3, Gate: Softmax(1), Decoder: dec}, gatejet.ErrParam},
		{"decoder length", ProgramSpec{K: 2, P: 3, Gate: Softmax(1), Basis: rbf, Decoder: dec[1:]}, gatejet.ErrSize},
		{"basis Len", ProgramSpec{K: 2, P: 3, Gate: Softmax(1), Basis: progMono{nb: 0}}, gatejet.ErrParam},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var err error
			require.NotPanics(t, func() { _, err = NewProgram[float32](tc.spec) })
			require.ErrorIs(t, err, tc.kind)
		})
	}

	// Row-level misuse.
	withBasis, err := NewProgram[float64](ProgramSpec{K: 2, P: 3, Gate: Softmax(1), Basis: rbf, Decoder: dec, LatentPrimaries: true})
	require.NoError(t, err)
	require.Equal(t, 6, withBasis.Primaries())
	plain, err := NewProgram[float64](ProgramSpec{K: 2, P: 3, Gate: Softmax(1)})
	require.NoError(t, err)
	l, D, tk := make([]float64, 2), make([]float64, 6), make([]float64, 4)
	require.ErrorIs(t, withBasis.RowDecoded(nil, nil, nil, l, D), gatejet.ErrParam)
	require.ErrorIs(t, plain.RowLatent(nil, nil, nil, l, tk), gatejet.ErrParam)
	require.ErrorIs(t, plain.RowDecoded(nil, nil, nil, l[:1], D), gatejet.ErrSize)
	require.ErrorIs(t, plain.RowDecoded(nil, nil, nil, l, D[:5]), gatejet.ErrSize)
	require.ErrorIs(t, plain.RowDecoded(make([]float64, 2), nil, nil, l, D), gatejet.ErrSize)
	require.ErrorIs(t, plain.RowDecoded(nil, make([]float64, 5), nil, l, D), gatejet.ErrSize)
	require.ErrorIs(t, plain.RowDecoded(nil, nil, make([]float64, 11), l, D), gatejet.ErrSize)
	require.ErrorIs(t, withBasis.RowLatent(nil, nil, nil, l, tk[:3]), gatejet.ErrSize)
	require.ErrorIs(t, withBasis.RowLatent(nil, make([]float64, 6), nil, l, tk), gatejet.ErrSize, "first is m·P = 18")
	require.NoError(t, withBasis.RowLatent(make([]float64, 3), make([]float64, 18), make([]float64, 108), l, tk))
	require.NoError(t, plain.RowDecoded(nil, nil, nil, l, D))
}

package softmaxjet

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gatejet/gatejet/internal/testkit"
	"github.com/gatejet/gatejet/internal/tower"
)

// The closed forms against the order-2 jet tower, the oracle: value, first and second agree to
// 1e-13 relative to the channel's natural magnitude in the row, s^j·max|D| for the j-th
// derivative of the softmax gate (the gate's derivatives are bounded by s^j), max|α|^j·max|D|
// for the logistic gate. The matrix-free products (HVP, Gauss-Newton slabs, the logit parts of
// the value and first VJPs) are checked against the same contractions of the tower channels.

const orcTol = 1e-13

// orcShape keeps the tower, O(K³·P) per row, quick for big K.
func orcShape(K int) Shape {
	switch {
	case K >= 100:
		return Shape{N: 2, K: K, P: 2}
	case K >= 40:
		return Shape{N: 3, K: K, P: 3}
	default:
		return Shape{N: 6, K: K, P: 5}
	}
}

// orcInputs draws logits and decoded values; one row has −Inf logits for half its atoms and
// one row is offset by 1e4.
func orcInputs(sh Shape, seed uint64) (logits, decoded []float64) {
	r := rand.New(rand.NewPCG(seed, uint64(sh.K)))
	logits, decoded = randn(r, sh.N*sh.K, 1.5), randn(r, sh.N*sh.K*sh.P, 1)
	if sh.N >= 2 && sh.K >= 2 {
		for k := 0; k < sh.K; k += 2 {
			logits[sh.K+k] = math.Inf(-1)
		}
	}
	if sh.N >= 3 {
		for k := 0; k < sh.K; k++ {
			logits[2*sh.K+k] += 1e4
		}
	}
	return logits, decoded
}

// orcCompare reports the worst |got − want| / scale_n over rows n (w values per row) and fails
// above orcTol. NaN must match NaN.
func orcCompare(t *testing.T, name string, got, want []float64, w int, scale func(n int) float64) {
	t.Helper()
	require.Len(t, got, len(want), name)
	worst, worstAt := 0.0, -1
	for i := range want {
		if math.IsNaN(want[i]) || math.IsNaN(got[i]) {
			require.True(t, math.IsNaN(want[i]) && math.IsNaN(got[i]), "%s[%d]: closed form %v, tower %v", name, i, got[i], want[i])
			continue
		}
		if got[i] == want[i] {
			continue
		}
		sc := scale(i / w)
		if sc == 0 {
			sc = 1
		}
		if e := math.Abs(got[i]-want[i]) / sc; e > worst || math.IsNaN(e) {
			worst, worstAt = e, i
		}
	}
	if worstAt < 0 {
		t.Logf("%-14s identical", name)
		return
	}
	t.Logf("%-14s worst rel. error %.2e (entry %d: closed form %v, tower %v)", name, worst, worstAt, got[worstAt], want[worstAt])
	require.LessOrEqual(t, worst, orcTol, "%s: entry %d: closed form %v, tower %v", name, worstAt, got[worstAt], want[worstAt])
}

// orcRowMaxAbs returns, for row n, max |x| over that row's w values.
func orcRowMaxAbs(x []float64, w int) func(n int) float64 {
	return func(n int) float64 { return testkit.MaxAbs(x[n*w : (n+1)*w]) }
}

func TestClosedFormEqualsTower(t *testing.T) {
	for _, K := range testKs {
		sh := orcShape(K)
		N, P := sh.N, sh.P
		logits, decoded := orcInputs(sh, 17)
		v := randn(rand.New(rand.NewPCG(5, uint64(K))), N*K, 1) // a direction / upstream
		g := randn(rand.New(rand.NewPCG(6, uint64(K))), N*K*P, 1)
		gv := g[:N*P]
		dmax := orcRowMaxAbs(decoded, K*P)

		for _, s := range []float64{1.3, 0.25} {
			t.Run(fmt.Sprintf("softmax/K=%d/s=%v", K, s), func(t *testing.T) {
				tv, tf, ts := make([]float64, N*P), make([]float64, N*K*P), make([]float64, N*K*K*P)
				require.NoError(t, tower.TowerChannels(tv, tf, ts, logits, decoded, tower.Shape(sh), s))
				nat := func(j int) func(n int) float64 {
					return func(n int) float64 { return math.Pow(s, float64(j)) * dmax(n) }
				}

				cv, cf, cs := make([]float64, N*P), make([]float64, N*K*P), make([]float64, N*K*K*P)
				require.NoError(t, Softmax[float64]{InvTau: s}.Value(cv, logits, decoded, sh))
				require.NoError(t, Softmax[float64]{InvTau: s}.First(cf, logits, decoded, sh))
				require.NoError(t, Softmax[float64]{InvTau: s}.Second(cs, logits, decoded, sh))
				orcCompare(t, "Value", cv, tv, P, nat(0))
				orcCompare(t, "First", cf, tf, K*P, nat(1))
				orcCompare(t, "Second", cs, ts, K*K*P, nat(2))

				// HVP: Σ_b second[a][b][c]·v_b.
				hv := make([]float64, N*K*P)
				require.NoError(t, Softmax[float64]{InvTau: s}.HVP(hv, logits, decoded, v, sh))
				vmax := orcRowMaxAbs(v, K)
				orcCompare(t, "HVP", hv, secondTimes(ts, v, sh), K*P, func(n int) float64 { return nat(2)(n) * vmax(n) })

				// Gauss-Newton: Σ_c first[a][c]·first[b][c].
				gn := make([]float64, N*K*K)
				require.NoError(t, Softmax[float64]{InvTau: s}.GaussNewton(gn, logits, decoded, sh))
				orcCompare(t, "GaussNewton", gn, firstGram(tf, sh), K*K, func(n int) float64 { return float64(P) * math.Pow(nat(1)(n), 2) })

				// Logit parts of the VJPs: dl_a = Σ_c first[a][c] g_c for the value channel and
				// dl_b = Σ_{a,c} G[a][c] second[a][b][c] for the first channel.
				dl, wantDL := make([]float64, N*K), make([]float64, N*K)
				require.NoError(t, Softmax[float64]{InvTau: s}.ValueVJP(dl, nil, logits, decoded, gv, sh))
				for n := 0; n < N; n++ {
					for a := 0; a < K; a++ {
						for c := 0; c < P; c++ {
							wantDL[n*K+a] += tf[(n*K+a)*P+c] * gv[n*P+c]
						}
					}
				}
				gvmax := orcRowMaxAbs(gv, P)
				orcCompare(t, "ValueVJP.dl", dl, wantDL, K, func(n int) float64 { return float64(P) * nat(1)(n) * gvmax(n) })

				clear(wantDL)
				require.NoError(t, Softmax[float64]{InvTau: s}.FirstVJP(dl, nil, logits, decoded, g, sh))
				for n := 0; n < N; n++ {
					for a := 0; a < K; a++ {
						for b := 0; b < K; b++ {
							for c := 0; c < P; c++ {
								wantDL[n*K+b] += g[(n*K+a)*P+c] * ts[((n*K+a)*K+b)*P+c]
							}
						}
					}
				}
				gmax := orcRowMaxAbs(g, K*P)
				orcCompare(t, "FirstVJP.dl", dl, wantDL, K, func(n int) float64 { return float64(P) * nat(2)(n) * gmax(n) })
			})
		}

		t.Run(fmt.Sprintf("logistic/K=%d", K), func(t *testing.T) {
			r := rand.New(rand.NewPCG(8, uint64(K)))
			alpha, beta := make([]float64, K), randn(r, K, 0.5)
			amax := 0.0
			for k := range alpha {
				alpha[k] = (0.3 + 1.7*r.Float64()) * float64(1-2*(k%2))
				amax = math.Max(amax, math.Abs(alpha[k]))
			}
			tv, tf, ts := make([]float64, N*P), make([]float64, N*K*P), make([]float64, N*K*K*P)
			require.NoError(t, tower.TowerLogisticChannels(tv, tf, ts, logits, decoded, tower.Shape(sh), alpha, beta))
			nat := func(j int) func(n int) float64 {
				return func(n int) float64 { return math.Pow(amax, float64(j)) * dmax(n) }
			}
			cv, cf, cs := make([]float64, N*P), make([]float64, N*K*P), make([]float64, N*K*K*P)
			require.NoError(t, Logistic[float64]{Alpha: alpha, Beta: beta}.Value(cv, logits, decoded, sh))
			require.NoError(t, Logistic[float64]{Alpha: alpha, Beta: beta}.First(cf, logits, decoded, sh))
			require.NoError(t, Logistic[float64]{Alpha: alpha, Beta: beta}.Second(cs, logits, decoded, sh))
			orcCompare(t, "LogisticValue", cv, tv, P, nat(0))
			orcCompare(t, "LogisticFirst", cf, tf, K*P, nat(1))
			orcCompare(t, "LogisticSecond", cs, ts, K*K*P, nat(2))
		})
	}
}

// TestClosedFormEqualsTowerFloat32 checks the float32 closed forms (float64 inside) against the
// float32 tower (float32 inside): they are different roundings of the same quantities.
func TestClosedFormEqualsTowerFloat32(t *testing.T) {
	sh := Shape{N: 16, K: 16, P: 8}
	l64, d64 := orcInputs(sh, 23)
	l, d := make([]float32, len(l64)), make([]float32, len(d64))
	for i := range l64 {
		l[i] = float32(l64[i])
	}
	for i := range d64 {
		d[i] = float32(d64[i])
	}
	const s = 1.3
	tv, tf, ts := make([]float32, sh.N*sh.P), make([]float32, sh.N*sh.K*sh.P), make([]float32, sh.N*sh.K*sh.K*sh.P)
	require.NoError(t, tower.TowerChannels(tv, tf, ts, l, d, tower.Shape(sh), s))
	cs := make([]float32, len(ts))
	require.NoError(t, Softmax[float32]{InvTau: s}.Second(cs, l, d, sh))
	w := sh.K * sh.K * sh.P
	for n := 0; n < sh.N; n++ {
		scale := s * s * testkit.MaxAbs(d[n*sh.K*sh.P:(n+1)*sh.K*sh.P])
		for i := n * w; i < (n+1)*w; i++ {
			require.InDelta(t, float64(ts[i]), float64(cs[i]), 1e-5*scale, "second[%d]", i)
		}
	}
}

package gatetest

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gatejet/gatejet"
	"github.com/gatejet/gatejet/internal/basis"
	"github.com/gatejet/gatejet/internal/tower"
	"github.com/gatejet/gatejet/softmaxjet"
)

// The coordinate jets of the gate (softmaxjet.CoordFirst …): every gate has them, through its
// own rows where softmaxjet has them and through its methods otherwise.

// methodsOnly hides a gate's type, so that the coordinate kernels run it through its methods.
type methodsOnly[T gatejet.Float] struct{ softmaxjet.Gate[T] }

// coordChannels are the four coordinate channels of gate g.
func coordChannels[T gatejet.Float](t *testing.T, g softmaxjet.Gate[T], l, d0, d1, d2, v []T, sh softmaxjet.Shape) (first, second, gn, hvp []T) {
	K2 := 2 * sh.K
	first, second, gn, hvp = make([]T, sh.N*K2*sh.P), make([]T, sh.N*K2*K2*sh.P), make([]T, sh.N*K2*K2), make([]T, sh.N*K2*sh.P)
	require.NoError(t, softmaxjet.CoordFirst(g, first, l, d0, d1, sh))
	require.NoError(t, softmaxjet.CoordSecond(g, second, l, d0, d1, d2, sh))
	require.NoError(t, softmaxjet.CoordGaussNewton(g, gn, l, d0, d1, sh))
	require.NoError(t, softmaxjet.CoordHVP(g, hvp, l, d0, d1, d2, v, sh))
	return
}

// testCoordinates: the coordinate channels, from the gate's own rows and through its
// methods, against the tower's row program with the logits and the latent coordinates as
// primaries (the decoded rows monomials in the coordinates), the slab against first·firstᵀ
// and the HVP against second·v of the tower's channels; float32 against float64.
func testCoordinates(t *testing.T, g Gate) {
	rng := rand.New(rand.NewPCG(25, 26))
	const nb = 4
	for _, K := range testKs {
		sh := softmaxjet.Shape{N: 2, K: K, P: 3}
		K2, P := 2*K, sh.P
		a := newArgs(g, g.F64, rng, sh)
		tc, B, v := make([]float64, sh.N*K), randn(rng, nb*P, 1), randn(rng, sh.N*K2, 1)
		for i := range tc {
			tc[i] = 2*rng.Float64() - 1
		}
		d := [3][]float64{}
		phi := make([]float64, nb)
		for m := range d {
			d[m] = make([]float64, sh.DecodedLen())
			for i, x := range tc {
				basis.Monomial(phi, x, m)
				for b, f := range phi {
					for c := 0; c < P; c++ {
						d[m][i*P+c] += f * B[b*P+c]
					}
				}
			}
		}
		pr, err := tower.NewProgram[float64](tower.ProgramSpec{K: K, P: P, Gate: tower.JetGate(g.Jets(a.floats, K), nil),
			Basis: basis.Monomials(nb), Decoder: B, LatentPrimaries: true})
		require.NoError(t, err)
		first, second := make([]float64, sh.N*K2*P), make([]float64, sh.N*K2*K2*P)
		for n := 0; n < sh.N; n++ {
			require.NoError(t, pr.RowLatent(make([]float64, P), first[n*K2*P:(n+1)*K2*P], second[n*K2*K2*P:(n+1)*K2*K2*P], a.l[n*K:(n+1)*K], tc[n*K:(n+1)*K]))
		}
		csh := softmaxjet.Shape{N: sh.N, K: K2, P: P}
		want := [4][]float64{first, second, firstGram(first, csh), secondTimes(second, v, csh)}
		names := [4]string{"CoordFirst", "CoordSecond", "CoordGaussNewton", "CoordHVP"}
		for _, gt := range []struct {
			name string
			g    softmaxjet.Gate[float64]
		}{{"rows", a.gate}, {"methods", methodsOnly[float64]{a.gate}}} {
			f, s, gn, h := coordChannels(t, gt.g, a.l, d[0], d[1], d[2], v, sh)
			for i, got := range [4][]float64{f, s, gn, h} {
				require.Less(t, relErr(got, want[i], 1e-3), 1e-11, "%s (%s) K=%d vs the row program", names[i], gt.name, K)
			}
		}
		f, s, gn, h := coordChannels(t, g.F32(a.floats, K), conv[float32](a.l), conv[float32](d[0]), conv[float32](d[1]), conv[float32](d[2]), conv[float32](v), sh)
		for i, got := range [4][]float32{f, s, gn, h} {
			require.Less(t, relErr(got, want[i], 1e-3), 1e-5, "%s float32 K=%d", names[i], K)
		}
	}
}

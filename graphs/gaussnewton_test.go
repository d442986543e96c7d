package graphs

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gatejet/gatejet"
	"github.com/stretchr/testify/require"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

func jetInputs(t testing.TB, dt tensor.Dtype, seed uint64, n, k, p int) (*gorgonia.ExprGraph, *gorgonia.Node, *gorgonia.Node) {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 3))
	g := gorgonia.NewGraph()
	logits := gorgonia.NewMatrix(g, dt, gorgonia.WithShape(n, k), gorgonia.WithName("logits"),
		gorgonia.WithValue(randDense(dt, rng, -1, 1, n, k)))
	decoded := gorgonia.NewTensor(g, dt, 3, gorgonia.WithShape(n, k, p), gorgonia.WithName("decoded"),
		gorgonia.WithValue(randDense(dt, rng, -1, 1, n, k, p)))
	return g, logits, decoded
}

func TestGaussNewtonSlabsAndPenaltyValues(t *testing.T) {
	const n, k, p, s, weight = 3, 4, 5, 1.5, 0.7
	g, logits, decoded := jetInputs(t, tensor.Float64, 1, n, k, p)
	gn, err := GaussNewtonSlabs(logits, decoded, s)
	require.NoError(t, err)
	require.Equal(t, tensor.Shape{n, k, k}, gn.Shape())
	pen, err := CurvaturePenalty(logits, decoded, s, weight)
	require.NoError(t, err)
	require.True(t, pen.IsScalar())
	m := gorgonia.NewTapeMachine(g)
	require.NoError(t, m.RunAll())
	m.Close()

	// First channel by hand: first[a][c] = s·ζ_a·(D[a][c] − ẑ_c).
	l, _ := floatsOf(logits.Value())
	d, _ := floatsOf(decoded.Value())
	h, _ := floatsOf(gn.Value())
	trace := 0.0
	for r := 0; r < n; r++ {
		z := mustSlice(SoftArgminProbs(negate(l[r*k:(r+1)*k], s), 1)) // softmax(s·l)
		zhat := make([]float64, p)
		for a := 0; a < k; a++ {
			for c := 0; c < p; c++ {
				zhat[c] += z[a] * d[(r*k+a)*p+c]
			}
		}
		first := make([]float64, k*p)
		for a := 0; a < k; a++ {
			for c := 0; c < p; c++ {
				first[a*p+c] = s * z[a] * (d[(r*k+a)*p+c] - zhat[c])
			}
		}
		for a := 0; a < k; a++ {
			rowSum := 0.0
			for b := 0; b < k; b++ {
				want := 0.0
				for c := 0; c < p; c++ {
					want += first[a*p+c] * first[b*p+c]
				}
				got := h[(r*k+a)*k+b]
				require.InDelta(t, want, got, 1e-13, "slab %d (%d,%d)", r, a, b)
				require.InDelta(t, h[(r*k+b)*k+a], got, 1e-15, "symmetric")
				rowSum += got
			}
			require.InDelta(t, 0, rowSum, 1e-13, "H·1 = 0")
			trace += h[(r*k+a)*k+a]
		}
	}
	got, ok := scalarOf(pen.Value())
	require.True(t, ok)
	require.InDelta(t, weight*trace/n, got, 1e-13, "penalty = weight·mean trace(H)")
}

func negate(x []float64, s float64) []float64 {
	out := make([]float64, len(x))
	for i, v := range x {
		out[i] = -s * v
	}
	return out
}

func TestCurvaturePenaltyGradCheck(t *testing.T) {
	eachDtypeMachine(t, func(t *testing.T, dt tensor.Dtype, m Machine) {
		_, logits, decoded := jetInputs(t, dt, 2, 3, 4, 3)
		pen, err := CurvaturePenalty(logits, decoded, 1.3, 0.9)
		require.NoError(t, err)
		RequireGradients(t, pen, gorgonia.Nodes{logits, decoded}, WithMachine(m))
	})
}

func TestGaussNewtonLogDetGradCheck(t *testing.T) {
	eachDtypeMachine(t, func(t *testing.T, dt tensor.Dtype, m Machine) {
		g, logits, decoded := jetInputs(t, dt, 3, 2, 3, 4)
		ld, err := GaussNewtonLogDet(logits, decoded, 1.1, 0.05)
		require.NoError(t, err)
		require.Equal(t, tensor.Shape{2}, ld.Shape())
		rng := rand.New(rand.NewPCG(4, 4))
		w := gorgonia.NewVector(g, dt, gorgonia.WithShape(2), gorgonia.WithName("w"),
			gorgonia.WithValue(randDense(dt, rng, 0.5, 1.5, 2)))
		// −½·Σ_r w_r·log det(H_r + λI): a weighted Laplace log-det term
		cost := gorgonia.Must(gorgonia.Mul(gorgonia.Must(gorgonia.Sum(gorgonia.Must(gorgonia.HadamardProd(ld, w)))), scalarConst(dt, -0.5)))
		RequireGradients(t, cost, gorgonia.Nodes{logits, decoded, w}, WithMachine(m))
	})
}

func TestGaussNewtonArgErrors(t *testing.T) {
	_, logits, decoded := jetInputs(t, tensor.Float64, 5, 2, 3, 4)
	_, err := GaussNewtonLogDet(logits, decoded, 1, 0)
	require.ErrorIs(t, err, gatejet.ErrParam)
	_, err = GaussNewtonLogDet(logits, decoded, -1, 0.1)
	require.ErrorIs(t, err, gatejet.ErrTemperature)
	_, err = CurvaturePenalty(logits, decoded, 1, math.NaN())
	require.ErrorIs(t, err, gatejet.ErrParam)
	_, err = CurvaturePenalty(logits, logits, 1, 1)
	require.Error(t, err)
	_, err = GaussNewtonSlabs(logits, decoded, math.Inf(1))
	require.ErrorIs(t, err, gatejet.ErrTemperature)
}

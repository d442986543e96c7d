package softmaxjet

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gatejet/gatejet/internal/testkit"
)

// Helpers several test files share.

// forFloats runs the float64 and the float32 instance of a generic test as subtests.
func forFloats(t *testing.T, f64, f32 func(*testing.T)) {
	t.Run("float64", f64)
	t.Run("float32", f32)
}

// jacobianChannel arranges the Jacobian J[i][j] = ∂f_j/∂l_i of a batch channel f with w values
// per row (testkit.FDJacobian's layout) as the next channel, [N,K,w]: entry (n, a, j) is
// J[n·K+a][n·w+j], row n's values by its own logit a (rows do not mix). The first channel is
// jacobianChannel(J of value, sh, P); the second, jacobianChannel(J of first, sh, K·P).
func jacobianChannel(J [][]float64, sh Shape, w int) []float64 {
	out := make([]float64, 0, sh.N*sh.K*w)
	for n := 0; n < sh.N; n++ {
		for a := 0; a < sh.K; a++ {
			out = append(out, J[n*sh.K+a][n*w:(n+1)*w]...)
		}
	}
	return out
}

// secondTimes is the HVP a materialised second channel implies:
// out[n][a][c] = Σ_b second[n][a][b][c]·v[n][b], summed over b in order.
func secondTimes(second, v []float64, sh Shape) []float64 {
	out := make([]float64, sh.FirstLen())
	contractSecond(out, second, v, sh)
	return out
}

// firstGram is the Gauss-Newton slabs a materialised first channel implies:
// out[n][a][b] = Σ_c first[n][a][c]·first[n][b][c], summed over c in order.
func firstGram(first []float64, sh Shape) []float64 {
	K, P := sh.K, sh.P
	out := make([]float64, sh.GNLen())
	for n := 0; n < sh.N; n++ {
		for a := 0; a < K; a++ {
			for b := 0; b < K; b++ {
				out[(n*K+a)*K+b] = dot(first[(n*K+a)*P:(n*K+a+1)*P], first[(n*K+b)*P:(n*K+b+1)*P])
			}
		}
	}
	return out
}

// requireChannelsMatchFD checks one gate's five channels on the case c: channel(name)
// evaluates one ("value", "first", "second", "hvp", "gn") at the current logits c.l, which the
// finite differences perturb in place, and naive() is a textbook value. The value must match
// naive, first the central-difference Jacobian of naive, second that of first, and the
// matrix-free products the materialised channels (hvp = second·v, gn = first·firstᵀ) to
// productTol.
func requireChannelsMatchFD(t *testing.T, c jetCase, channel func(name string) []float64, naive func() []float64, productTol float64) {
	t.Helper()
	sh := c.sh
	require.Less(t, relErr(channel("value"), naive(), 1), 1e-14, "value vs textbook value")

	// first[n][a][c] = ∂value[n][c]/∂l[n][a]
	J := testkit.FDJacobian(c.l, naive, 1e-5)
	first := channel("first")
	require.Less(t, relErr(first, jacobianChannel(J, sh, sh.P), 1e-3), 1e-8, "first vs FD of value")

	// second[n][a][b][c] = ∂first[n][b][c]/∂l[n][a]
	J = testkit.FDJacobian(c.l, func() []float64 { return channel("first") }, 1e-5)
	second := channel("second")
	require.Less(t, relErr(second, jacobianChannel(J, sh, sh.K*sh.P), 1e-3), 1e-8, "second vs FD of first")

	require.Less(t, relErr(channel("hvp"), secondTimes(second, c.v, sh), 1e-12), productTol, "hvp vs second·v")
	require.Less(t, relErr(channel("gn"), firstGram(first, sh), 1e-12), productTol, "gauss-newton vs first·firstᵀ")
}

// requireVJPMatchesFD checks a VJP's outputs — dLogits, dDecoded and, withDV, dV — against
// the central-difference gradient of L = ⟨g, channel⟩ by the case's logits, decoded values
// and direction (perturbed in place), and returns dDecoded.
func requireVJPMatchesFD(t *testing.T, c jetCase, withDV bool, vjp func(dl, dd, dv []float64) error, L func() float64) []float64 {
	t.Helper()
	dl, dd, dv := make([]float64, c.sh.LogitsLen()), make([]float64, c.sh.DecodedLen()), make([]float64, c.sh.LogitsLen())
	require.NoError(t, vjp(dl, dd, dv))
	const h = 1e-5
	require.Less(t, relErr(dl, fdGrad(c.l, L, h), 1e-3), 1e-7, "dLogits")
	require.Less(t, relErr(dd, fdGrad(c.d, L, h), 1e-3), 1e-7, "dDecoded")
	if withDV {
		require.Less(t, relErr(dv, fdGrad(c.v, L, h), 1e-3), 1e-7, "dV")
	}
	return dd
}

package graphs

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/gatejet/gatejet/internal/golden"
)

// TestCoordGaussNewtonLogDetPyTorch: the evidence term and its gradients in the logits, d0, d1,
// the inverse temperature, log σ and log λ against torch (testdata/golden/coord_jet_softmax_*,
// make_coord_golden.py: autograd through the Jacobian and torch.logdet, the temperature a
// tensor), at normwise relative error 1e-12 in float64 and 1e-5 in float32 (inputs rounded,
// compared with the float64 answer), or ε·κ where that is larger: κ is the largest condition
// number of the rows' H/σ² + λI (from the file's slabs, with gonum) and ε the dtype's unit
// roundoff, the size of the error that rounding the matrix alone makes in its log-determinant.
// Only the file at inverse temperature 1e3 needs it (its logit block is s² = 1e6 times the
// coordinate block, κ ≈ 2e7); the others have κ < 400.
func TestCoordGaussNewtonLogDetPyTorch(t *testing.T) {
	jets, err := golden.CoordJets("../testdata/golden")
	require.NoError(t, err)
	worst := map[string]float64{}
	files := 0
	for _, j := range jets {
		if j.Gate != "softmax" {
			continue
		}
		files++
		e := j.Evidence
		kappa := evidenceCondition(j)
		t.Logf("%s: κ = %.3g", j.File, kappa)
		for _, p := range []struct {
			dt  tensor.Dtype
			tol float64
		}{{tensor.Float64, max(golden.Tol, 0x1p-53*kappa)}, {tensor.Float32, max(1e-5, 0x1p-24*kappa)}} {
			g := gorgonia.NewGraph()
			tensorIn := func(name string, x []float64, shape ...int) *gorgonia.Node {
				return gorgonia.NewTensor(g, p.dt, len(shape), gorgonia.WithShape(shape...), gorgonia.WithName(name),
					gorgonia.WithValue(denseOf(p.dt, shape, x)))
			}
			scalarIn := func(name string, x float64) *gorgonia.Node {
				var v any = x
				if p.dt == tensor.Float32 {
					v = float32(x)
				}
				return gorgonia.NewScalar(g, p.dt, gorgonia.WithName(name), gorgonia.WithValue(v))
			}
			in := gorgonia.Nodes{
				tensorIn("logits", j.Logits, j.N, j.K), tensorIn("d0", j.D0, j.N, j.K, j.P), tensorIn("d1", j.D1, j.N, j.K, j.P),
				scalarIn("invTau", j.InvTau), scalarIn("logSigma", e.LogSigma), scalarIn("logLambda", e.LogLambda),
			}
			ld, err := CoordGaussNewtonLogDet(in[0], in[1], in[2], in[3], in[4], in[5])
			require.NoError(t, err, j.File)
			w := tensorIn("w", e.W, j.N)
			cost := gorgonia.Must(gorgonia.Sum(gorgonia.Must(gorgonia.HadamardProd(ld, w))))
			grads, err := Grad(cost, in...)
			require.NoError(t, err, j.File)
			m := gorgonia.NewTapeMachine(g)
			require.NoError(t, m.RunAll(), j.File)
			check := func(what string, got, want []float64) {
				err := golden.RelErr(got, want)
				assert.LessOrEqual(t, err, p.tol, "%s %v %s: normwise relative error %.3g against torch", j.File, p.dt, what, err)
				key := fmt.Sprintf("%v %s", p.dt, what)
				if kappa > 1e3 {
					key = fmt.Sprintf("%s (κ %.2g)", key, kappa)
				}
				worst[key] = max(worst[key], err)
			}
			check("logdet", valueFloat64s(ld.Value()), e.LogDet)
			for i, want := range [][]float64{e.DLogits, e.DD0, e.DD1, {e.DInvTau}, {e.DLogSigma}, {e.DLogLambda}} {
				check("d/d"+in[i].Name(), valueFloat64s(grads[i].Value()), want)
			}
			m.Close()
		}
	}
	require.NotZero(t, files, "no softmax coordinate-jet files")
	for _, k := range slices.Sorted(maps.Keys(worst)) {
		t.Logf("max normwise relative error %-36s %.3g", k, worst[k])
	}
}

// evidenceCondition returns the largest 2-norm condition number over the rows of the file's
// H/σ² + λI, from its Gauss-Newton slabs.
func evidenceCondition(j *golden.CoordJet) float64 {
	K2 := 2 * j.K
	c, lambda := math.Exp(-2*j.Evidence.LogSigma), math.Exp(j.Evidence.LogLambda)
	kappa := 1.0
	for r := range j.N {
		A := mat.NewSymDense(K2, nil)
		for a := range K2 {
			for b := a; b < K2; b++ {
				A.SetSym(a, b, c*j.GaussNewton[(r*K2+a)*K2+b])
			}
			A.SetSym(a, a, A.At(a, a)+lambda)
		}
		var es mat.EigenSym
		if !es.Factorize(A, false) {
			panic("evidenceCondition: no eigenvalues")
		}
		v := es.Values(nil)
		kappa = max(kappa, v[len(v)-1]/v[0])
	}
	return kappa
}

// valueFloat64s is a Dense's or a scalar's data as float64s.
func valueFloat64s(v gorgonia.Value) []float64 {
	switch x := v.Data().(type) {
	case []float64:
		return slices.Clone(x)
	case []float32:
		out := make([]float64, len(x))
		for i, f := range x {
			out[i] = float64(f)
		}
		return out
	case float64:
		return []float64{x}
	case float32:
		return []float64{float64(x)}
	}
	panic(fmt.Sprintf("valueFloat64s: %T", v.Data()))
}

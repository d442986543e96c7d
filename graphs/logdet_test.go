package graphs

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gatejet/gatejet"
	"github.com/gatejet/gatejet/internal/check"
	"github.com/gatejet/gatejet/internal/graphmath"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// spdBatch returns n matrices K×K whose symmetric part is positive definite
// (A·Aᵀ/K + ½I) plus an antisymmetric part, which LogDetPlusRidge must ignore.
func spdBatch(rng *rand.Rand, n, k int) []float64 {
	h := make([]float64, n*k*k)
	for r := 0; r < n; r++ {
		a := make([]float64, k*k)
		b := make([]float64, k*k)
		for i := range a {
			a[i] = rng.NormFloat64()
			b[i] = rng.NormFloat64()
		}
		for i := 0; i < k; i++ {
			for j := 0; j < k; j++ {
				s := 0.0
				for p := 0; p < k; p++ {
					s += a[i*k+p] * a[j*k+p]
				}
				v := s/float64(k) + 0.3*(b[i*k+j]-b[j*k+i])
				if i == j {
					v += 0.5
				}
				h[r*k*k+i*k+j] = v
			}
		}
	}
	return h
}

const opLogDet = graphmath.OpLogDet

// denseOf builds a Dense of dtype dt holding a copy of x.
func denseOf(dt tensor.Dtype, shape []int, x []float64) *tensor.Dense {
	if dt == tensor.Float32 {
		b := make([]float32, len(x))
		for i, v := range x {
			b[i] = float32(v)
		}
		return tensor.New(tensor.WithShape(shape...), tensor.WithBacking(b))
	}
	return tensor.New(tensor.WithShape(shape...), tensor.WithBacking(append([]float64(nil), x...)))
}

// logDetOps returns the op of a LogDetPlusRidge node over Float64 H [n,K,K] and the op of
// its gradient node, to be called directly.
func logDetOps(t *testing.T, n, k int, lambda float64) (fwd, grad gorgonia.Op) {
	t.Helper()
	g := gorgonia.NewGraph()
	H := gorgonia.NewTensor(g, tensor.Float64, 3, gorgonia.WithShape(n, k, k), gorgonia.WithName("H"))
	ld, err := LogDetPlusRidge(H, lambda)
	require.NoError(t, err)
	up := gorgonia.NewVector(g, tensor.Float64, gorgonia.WithShape(n), gorgonia.WithName("up"))
	dh, err := ld.Op().(gorgonia.SDOp).SymDiff(gorgonia.Nodes{H}, ld, up)
	require.NoError(t, err)
	return ld.Op(), dh[0].Op()
}

// symRidge returns sym(H_r) + λI as a gonum SymDense.
func symRidge(h []float64, r, k int, lambda float64) *mat.SymDense {
	s := mat.NewSymDense(k, nil)
	for i := 0; i < k; i++ {
		for j := i; j < k; j++ {
			v := 0.5 * (h[r*k*k+i*k+j] + h[r*k*k+j*k+i])
			if i == j {
				v += lambda
			}
			s.SetSym(i, j, v)
		}
	}
	return s
}

func TestLogDetPlusRidgeForwardAndGradient(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 11))
	const n, k, lambda = 4, 5, 0.25
	h := spdBatch(rng, n, k)
	gw := []float64{0.5, -1, 2, 0.75}
	for _, dt := range []tensor.Dtype{tensor.Float64, tensor.Float32} {
		g := gorgonia.NewGraph()
		H := gorgonia.NewTensor(g, dt, 3, gorgonia.WithShape(n, k, k), gorgonia.WithName("H"),
			gorgonia.WithValue(denseOf(dt, []int{n, k, k}, h)))
		w := gorgonia.NewVector(g, dt, gorgonia.WithShape(n), gorgonia.WithName("w"),
			gorgonia.WithValue(denseOf(dt, []int{n}, gw)))
		ld, err := LogDetPlusRidge(H, lambda)
		require.NoError(t, err)
		require.Equal(t, tensor.Shape{n}, ld.Shape())
		cost := gorgonia.Must(gorgonia.Sum(gorgonia.Must(gorgonia.HadamardProd(ld, w))))
		grads, err := gorgonia.Grad(cost, H)
		require.NoError(t, err)
		m := gorgonia.NewTapeMachine(g)
		require.NoError(t, m.RunAll())
		m.Close()
		got, _ := floatsOf(ld.Value())
		dh, _ := floatsOf(grads[0].Value())
		tol := 1e-12
		if dt == tensor.Float32 {
			tol = 1e-5
		}
		hv, _ := floatsOf(H.Value()) // the values the graph saw (rounded for float32)
		for r := 0; r < n; r++ {
			s := symRidge(hv, r, k, lambda)
			var ch mat.Cholesky
			require.True(t, ch.Factorize(s))
			require.InDelta(t, ch.LogDet(), got[r], tol*(1+math.Abs(ch.LogDet())), "row %d", r)
			var inv mat.SymDense
			require.NoError(t, ch.InverseTo(&inv))
			for i := 0; i < k; i++ {
				for j := 0; j < k; j++ {
					want := gw[r] * inv.At(i, j)
					require.InDelta(t, want, dh[r*k*k+i*k+j], tol*(1+math.Abs(want)), "row %d (%d,%d)", r, i, j)
					// the gradient is symmetric although H is not
					require.Equal(t, dh[r*k*k+i*k+j], dh[r*k*k+j*k+i])
				}
			}
		}
	}
}

func TestLogDetPlusRidgeGradCheck(t *testing.T) {
	eachDtypeMachine(t, func(t *testing.T, dt tensor.Dtype, m Machine) {
		for _, k := range []int{1, 2, 4} {
			t.Run(fmt.Sprintf("K=%d", k), func(t *testing.T) {
				cost, xs := logDetCost(t, dt, 3, k, 12)
				RequireGradients(t, cost, xs, WithMachine(m))
			})
		}
	})
}

func TestLogDetPlusRidgeNotSPD(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 13))
	const n, k = 3, 3
	h := spdBatch(rng, n, k)
	// row 1 gets a negative eigenvalue: sym(H) − 10·I
	for i := 0; i < k; i++ {
		h[1*k*k+i*k+i] -= 10
	}
	build := func(lambda float64) (*gorgonia.Node, *gorgonia.Node, *gorgonia.ExprGraph) {
		g := gorgonia.NewGraph()
		H := gorgonia.NewTensor(g, tensor.Float64, 3, gorgonia.WithShape(n, k, k), gorgonia.WithName("H"),
			gorgonia.WithValue(denseOf(tensor.Float64, []int{n, k, k}, h)))
		ld, err := LogDetPlusRidge(H, lambda)
		require.NoError(t, err)
		return H, gorgonia.Must(gorgonia.Sum(ld)), g
	}
	checkErr := func(err error) {
		t.Helper()
		require.Error(t, err)
		require.True(t, errors.Is(err, ErrNotSPD), "%v", err)
		require.Contains(t, err.Error(), "row 1")
	}
	// A machine's error hides the op's error from errors.Is; OpError digs it out.
	checkMachineErr := func(err error) {
		t.Helper()
		require.Error(t, err)
		ge := OpError(err)
		require.NotNil(t, ge, "%v", err)
		checkErr(ge)
		require.Equal(t, "graphs.LogDetPlusRidge", ge.Op)
	}

	// Tape machine, forward
	_, _, g := build(0.1)
	tm := gorgonia.NewTapeMachine(g)
	checkMachineErr(tm.RunAll())
	tm.Close()

	// Lisp machine, forward only: with its reverse pass enabled, a LispMachine whose
	// forward pass fails keeps running in the background (Gorgonia v0.9.18), a data race.
	_, _, g = build(0.1)
	lm := gorgonia.NewLispMachine(g, gorgonia.ExecuteFwdOnly())
	checkMachineErr(lm.RunAll())
	lm.Close()

	// GradCheck reports the op's error kind
	H, cost, _ := build(0.1)
	for _, m := range []Machine{Tape, Lisp} {
		rep, err := GradCheck(cost, gorgonia.Nodes{H}, WithMachine(m))
		require.Nil(t, rep)
		checkErr(err)
		var ge *gatejet.Error
		require.True(t, errors.As(err, &ge))
		require.Equal(t, "graphs.GradCheck", ge.Op)
	}

	// the gradient op alone reports it too
	_, gradOp := logDetOps(t, n, k, 0.1)
	_, err := gradOp.Do(denseOf(tensor.Float64, []int{n, k, k}, h), denseOf(tensor.Float64, []int{n}, []float64{1, 1, 1}))
	checkErr(err)

	// a ridge large enough fixes it
	H, cost, _ = build(20)
	RequireGradients(t, cost, gorgonia.Nodes{H})
}

func TestLogDetPlusRidgeNonFinite(t *testing.T) {
	rng := rand.New(rand.NewPCG(14, 14))
	const n, k = 3, 2
	h := spdBatch(rng, n, k)
	h[1*k*k+1] = math.NaN() // off-diagonal of row 1
	op, gradOp := logDetOps(t, n, k, 0)
	v, err := op.Do(denseOf(tensor.Float64, []int{n, k, k}, h))
	require.NoError(t, err)
	out, _ := floatsOf(v)
	require.False(t, math.IsNaN(out[0]))
	require.True(t, math.IsNaN(out[1]))
	require.False(t, math.IsNaN(out[2]))
	dv, err := gradOp.Do(denseOf(tensor.Float64, []int{n, k, k}, h), denseOf(tensor.Float64, []int{n}, []float64{1, 1, 1}))
	require.NoError(t, err)
	d, _ := floatsOf(dv)
	for i := 0; i < k*k; i++ {
		require.False(t, math.IsNaN(d[i]))
		require.True(t, math.IsNaN(d[k*k+i]))
		require.False(t, math.IsNaN(d[2*k*k+i]))
	}
}

func TestLogDetPlusRidgeArgErrors(t *testing.T) {
	g := gorgonia.NewGraph()
	h3 := gorgonia.NewTensor(g, tensor.Float64, 3, gorgonia.WithShape(2, 3, 3), gorgonia.WithName("h3"))
	h2 := gorgonia.NewMatrix(g, tensor.Float64, gorgonia.WithShape(3, 3), gorgonia.WithName("h2"))
	rect := gorgonia.NewTensor(g, tensor.Float64, 3, gorgonia.WithShape(2, 3, 4), gorgonia.WithName("rect"))
	ints := gorgonia.NewTensor(g, tensor.Int, 3, gorgonia.WithShape(2, 3, 3), gorgonia.WithName("ints"))
	for _, tc := range []struct {
		h      *gorgonia.Node
		lambda float64
		kind   error
	}{
		{nil, 0, gatejet.ErrParam},
		{h3, -1, gatejet.ErrParam},
		{h3, math.Inf(1), gatejet.ErrParam},
		{h3, math.NaN(), gatejet.ErrParam},
		{h2, 0, gatejet.ErrRank},
		{rect, 0, gatejet.ErrShape},
		{ints, 0, gatejet.ErrDType},
	} {
		_, err := LogDetPlusRidge(tc.h, tc.lambda)
		require.ErrorIs(t, err, tc.kind)
	}
	// differentiating the gradient node fails loudly
	_, gradOp := logDetOps(t, 2, 3, 0)
	_, err := gradOp.(gorgonia.SDOp).SymDiff(nil, nil, nil)
	require.ErrorIs(t, err, gatejet.ErrParam)
}

// TestLogDetPlusRidgePivot: the ErrNotSPD error names the first pivot that is not
// positive and its value, both for a small matrix (LAPACK's unblocked factorisation) and
// for K > 64, where Potrf factors in blocks and the failing pivot lies in a later block.
func TestLogDetPlusRidgePivot(t *testing.T) {
	for _, tc := range []struct {
		k, pivot int
		want     string
	}{
		{3, 1, "row 0: sym(H)+0.5I has a non-positive pivot -1.5 at 1 (K=3)"},
		{70, 66, "row 0: sym(H)+0.5I has a non-positive pivot -1.5 at 66 (K=70)"},
	} {
		// diagonal: 1 everywhere but −2 at the pivot and at the last index (after the
		// pivot, which must not be the one named).
		h := make([]float64, tc.k*tc.k)
		for i := 0; i < tc.k; i++ {
			h[i*tc.k+i] = 1
		}
		h[tc.pivot*tc.k+tc.pivot] = -2
		h[(tc.k-1)*tc.k+tc.k-1] = -2
		op, gradOp := logDetOps(t, 1, tc.k, 0.5)
		_, err := op.Do(denseOf(tensor.Float64, []int{1, tc.k, tc.k}, h))
		require.ErrorIs(t, err, ErrNotSPD)
		require.EqualError(t, err, check.Errorf(ErrNotSPD, opLogDet, "H", "%s", tc.want).Error())
		_, err = gradOp.Do(denseOf(tensor.Float64, []int{1, tc.k, tc.k}, h), denseOf(tensor.Float64, []int{1}, []float64{1}))
		require.EqualError(t, err, check.Errorf(ErrNotSPD, opLogDet, "H", "%s", tc.want).Error())
	}
}

// TestLogDetPlusRidgeRowAllocs: factorising a row, and inverting it, allocate nothing once
// the work buffer exists (K = 65 takes Potrf's and Potri's blocked paths).
func TestLogDetPlusRidgeRowAllocs(t *testing.T) {
	for _, k := range []int{1, 5, 65} {
		h := spdBatch(rand.New(rand.NewPCG(15, uint64(k))), 1, k)
		work, inv := make([]float64, k*k), make([]float64, k*k)
		allocs := testing.AllocsPerRun(10, func() {
			pivot, finite, _ := graphmath.Factor(work, h, k, 0.1)
			if pivot >= 0 || !finite {
				t.Fatalf("K=%d: pivot %d, finite %v", k, pivot, finite)
			}
			graphmath.Inverse(inv, work, k, 1)
		})
		require.Zero(t, allocs, "K=%d", k)
	}
}

package ops

import (
	"fmt"
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// plainValue builds the value channel from Gorgonia's own primitives:
// BatchedMatMul(reshape(softmax(s·logits)) [n,1,K], decoded [n,K,P]) reshaped to [n,P].
func plainValue(l, d *G.Node, invTau float64) (*G.Node, error) {
	n, k, p := d.Shape()[0], d.Shape()[1], d.Shape()[2]
	var s *G.Node
	if l.Dtype() == tensor.Float32 {
		s = G.NewConstant(float32(invTau))
	} else {
		s = G.NewConstant(invTau)
	}
	z, err := G.SoftMax(G.Must(G.Mul(l, s)), 1)
	if err != nil {
		return nil, err
	}
	z3, err := G.Reshape(z, tensor.Shape{n, 1, k})
	if err != nil {
		return nil, err
	}
	m, err := G.BatchedMatMul(z3, d)
	if err != nil {
		return nil, err
	}
	return G.Reshape(m, tensor.Shape{n, p})
}

// TestFirstMatchesGorgoniaAutodiff compares the jet with an independent route, Gorgonia's own
// autodiff of SoftMax + BatchedMatMul, on a TapeMachine:
//   - the value channel equals the plain route's value;
//   - the gradients of Σ W⊙value with respect to logits and decoded agree (ValueVJP against
//     Gorgonia's softmax and batched-matmul gradients);
//   - the first channel contracted with W, Σ_c first[r][a][c]·W[r][c], equals the plain
//     route's gradient with respect to logits (first is that Jacobian);
//   - the gradient of Σ_{a,c} first·W' (through FirstVJP, the second channel contracted) equals
//     the derivative of the plain route's gradient along each logit, by finite differences of
//     the plain route (an independent second-order check).
func TestFirstMatchesGorgoniaAutodiff(t *testing.T) {
	const n, k, p = 3, 4, 2
	ins := jetInputsFor(77, n, k, p)[:2]
	w := weights(n * p)
	for _, dt := range dtypes {
		t.Run(fmt.Sprint(dt), func(t *testing.T) {
			tol := 1e-12
			if dt == tensor.Float32 {
				tol = 2e-5
			}
			plain := graphCase{name: "plain", inputs: ins, build: func(g *G.ExprGraph, in []*G.Node) (*G.Node, error) {
				return plainValue(in[0], in[1], tInvTau)
			}}
			ours := graphCase{name: "ours", inputs: ins, build: func(g *G.ExprGraph, in []*G.Node) (*G.Node, error) {
				return SoftmaxJetValue(in[0], in[1], tInvTau)
			}}
			requireClose(t, forwardValue(t, plain, dt, tape), forwardValue(t, ours, dt, tape), tol, "value")

			// Gradients of the linear cost Σ W⊙value.
			pg := linearGrads(t, plain, dt, w)
			og := linearGrads(t, ours, dt, w)
			requireClose(t, pg[0], og[0], tol, "d/dlogits")
			requireClose(t, pg[1], og[1], tol, "d/ddecoded")

			// first contracted with W is the plain route's logits gradient.
			first := forwardValue(t, graphCase{name: "first", inputs: ins, build: func(g *G.ExprGraph, in []*G.Node) (*G.Node, error) {
				return SoftmaxJetFirst(in[0], in[1], tInvTau)
			}}, dt, tape)
			contracted := make([]float64, n*k)
			for r := 0; r < n; r++ {
				for a := 0; a < k; a++ {
					for c := 0; c < p; c++ {
						contracted[r*k+a] += first[(r*k+a)*p+c] * w[r*p+c]
					}
				}
			}
			requireClose(t, pg[0], contracted, tol, "first·W")
		})
	}
}

// linearGrads returns the gradients of Σ W⊙out with respect to the case's inputs, from
// gorgonia.Grad on a TapeMachine.
func linearGrads(t *testing.T, c graphCase, dt tensor.Dtype, w []float64) [][]float64 {
	t.Helper()
	return linearGradsOn(t, c, dt, w, tape)
}

// linearGradsOn is linearGrads on machine m.
func linearGradsOn(t *testing.T, c graphCase, dt tensor.Dtype, w []float64, m machine) [][]float64 {
	t.Helper()
	g, nodes, out := buildCase(t, c, dt)
	wn := G.NewTensor(g, dt, out.Dims(), G.WithShape(out.Shape()...), G.WithName("W"), G.WithValue(toDense(dt, out.Shape(), w)))
	cost := G.Must(G.Sum(G.Must(G.HadamardProd(out, wn))))
	return runGrads(t, g, cost, nodes, m)
}

// TestFirstGradientMatchesPlainRouteSecondOrder: the first channel is the Jacobian that
// Gorgonia's autodiff of the plain route gives column by column (gradient of Σ_r value[r][c]
// with respect to the logits), and the gradient of Σ W'⊙first (FirstVJP: the second channel
// contracted with W') equals the central differences of that plain-route Jacobian.
func TestFirstGradientMatchesPlainRouteSecondOrder(t *testing.T) {
	const n, k, p = 2, 3, 2
	ins := jetInputsFor(78, n, k, p)[:2]
	wp := weights(n * k * p)
	// ours: d/dl Σ W'⊙first(l, D)
	ours := graphCase{name: "first", inputs: ins, build: func(g *G.ExprGraph, in []*G.Node) (*G.Node, error) {
		return SoftmaxJetFirst(in[0], in[1], tInvTau)
	}}
	og := linearGrads(t, ours, tensor.Float64, wp)

	// plainFirst returns first [n,K,P] from the plain route: column c is the logits gradient of
	// Σ_r value[r][c] (rows do not interact).
	plainFirst := func(l []float64) []float64 {
		f := make([]float64, n*k*p)
		for c := 0; c < p; c++ {
			w := make([]float64, n*p)
			for r := 0; r < n; r++ {
				w[r*p+c] = 1
			}
			gc := graphCase{name: "plain", inputs: []input{{"logits", ins[0].shape, l}, ins[1]},
				build: func(g *G.ExprGraph, in []*G.Node) (*G.Node, error) { return plainValue(in[0], in[1], tInvTau) }}
			gl := linearGrads(t, gc, tensor.Float64, w)[0]
			for r := 0; r < n; r++ {
				for a := 0; a < k; a++ {
					f[(r*k+a)*p+c] = gl[r*k+a]
				}
			}
		}
		return f
	}
	base := plainFirst(ins[0].vals)
	requireClose(t, base, forwardValue(t, ours, tensor.Float64, tape), 1e-12, "first vs plain Jacobian")
	num := make([]float64, n*k)
	for j := range num {
		l := append([]float64(nil), ins[0].vals...)
		const h = 1e-5
		l[j] += h
		fp := plainFirst(l)
		l[j] -= 2 * h
		fm := plainFirst(l)
		for i := range fp {
			num[j] += wp[i] * (fp[i] - fm[i]) / (2 * h)
		}
	}
	requireClose(t, num, og[0], 1e-7, "d/dl Σ W'⊙first")
}

// linearGradsLisp is linearGrads on a LispMachine (DoDiff).
func linearGradsLisp(t *testing.T, c graphCase, dt tensor.Dtype, w []float64) [][]float64 {
	t.Helper()
	return linearGradsOn(t, c, dt, w, lisp)
}

package ops_test

import (
	"testing"

	"github.com/stretchr/testify/require"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/gatejet/gatejet/graphs"
	"github.com/gatejet/gatejet/ops"
)

// TestDoubleBackwardThirdOrderNotDifferentiable: a third derivative through Softmax,
// LogSoftmax or an activation passes through a double backward, which is not differentiable.
// graphs.Grad reports it, naming the op, although x also reaches the cost through
// differentiable ops: the double backward is not dropped as if it were a constant, which
// would give a wrong third derivative.
func TestDoubleBackwardThirdOrderNotDifferentiable(t *testing.T) {
	for _, tc := range []struct {
		name string
		f    func(x *G.Node) (*G.Node, error)
	}{
		{"SoftmaxBackwardGrad", func(x *G.Node) (*G.Node, error) { return ops.Softmax(x, 1) }},
		{"LogSoftmaxBackwardGrad", func(x *G.Node) (*G.Node, error) { return ops.LogSoftmax(x, 1) }},
		{"GELUBackwardGrad", func(x *G.Node) (*G.Node, error) { return ops.GELU(x) }},
		{"SiLUBackwardGrad", func(x *G.Node) (*G.Node, error) { return ops.SiLU(x) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := G.NewGraph()
			x := variable(g, tensor.Float64, "x", []int{2, 3}, []float64{0.3, -0.5, 1.1, 0.2, 0.9, -1})
			y, err := tc.f(x)
			require.NoError(t, err)
			w := G.NewConstant(dense(tensor.Float64, []int{2, 3}, []float64{1, -2, 0.5, 0.3, 2, -1}))
			c := G.Must(G.Add(inner(y, w), G.Must(G.Sum(G.Must(G.Tanh(y))))))
			g1, err := graphs.Grad(c, x)
			require.NoError(t, err)
			g2, err := graphs.Grad(G.Must(G.Sum(G.Must(G.Square(g1[0])))), x)
			require.NoError(t, err)
			_, err = graphs.Grad(G.Must(G.Sum(G.Must(G.Square(g2[0])))), x)
			require.ErrorIs(t, err, graphs.ErrNotDifferentiable)
			require.Contains(t, err.Error(), tc.name)
		})
	}
}

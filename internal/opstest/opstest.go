// Package opstest is the ops layer's part of the gate suite (internal/gatetest is the maths
// layer's): a gate's ops test file calls Run with the gate's exported constructors, and the
// suite checks that each builds the node the table's route builds (so that the ops' suites,
// which iterate kernel.Gates and build every gate through that route, cover the
// constructors), and that each refuses bad inputs with the *gatejet.Error the error catalogue
// documents: wrong ranks, shapes, dtypes, nil or foreign nodes, and every parameter made
// non-finite, named by the table's parameter name.
package opstest

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/gatejet/gatejet"
	"github.com/gatejet/gatejet/internal/kernel"
	"github.com/gatejet/gatejet/ops"
)

// Constructor is a gate's exported constructor of one channel, with the gate's parameters
// taken from a call's floats (v is nil but for the HVP).
type Constructor func(l, d, v *G.Node, floats []float64) (*G.Node, error)

// Gate is a gate's ops under test: its table entry, its exported constructors by channel,
// and the table's route (ops.JetOp, which ops exports to its own tests).
type Gate struct {
	Table        *kernel.Gate
	Constructors [kernel.NumChannels]Constructor
	TablePath    func(c kernel.Channel, g *kernel.Gate, l, d, v *G.Node, floats []float64, opts ...ops.Option) (*G.Node, error)
}

const n, K, P = 2, 3, 2

// Run runs the ops suite on g, as subtests.
func Run(t *testing.T, g Gate) {
	require.NotNil(t, g.Table)
	require.NotNil(t, g.TablePath)
	for c, ctor := range g.Constructors {
		require.NotNil(t, ctor, "the constructor of %v", kernel.Channel(c))
	}
	rng := rand.New(rand.NewPCG(1, 2))
	floats := g.Table.Sample(K, rng.Float64, rng.NormFloat64)
	for c := range kernel.NumChannels {
		name := g.Table.Title + c.String()
		t.Run(name, func(t *testing.T) {
			t.Run("TablePath", func(t *testing.T) { testTablePath(t, g, c, floats) })
			t.Run("Refusals", func(t *testing.T) { testRefusals(t, g, c, floats, "ops."+name) })
		})
	}
}

func node(g *G.ExprGraph, dt tensor.Dtype, name string, shape ...int) *G.Node {
	if len(shape) == 0 {
		return G.NewScalar(g, dt, G.WithName(name))
	}
	return G.NewTensor(g, dt, len(shape), G.WithShape(shape...), G.WithName(name))
}

// inputs are a channel's input nodes in graph g: logits [n,K], decoded [n,K,P], v [n,K] (or
// nil).
func inputs(g *G.ExprGraph, dt tensor.Dtype, c kernel.Channel) (l, d, v *G.Node) {
	l, d = node(g, dt, "l", n, K), node(g, dt, "d", n, K, P)
	if c.HasV() {
		v = node(g, dt, "v", n, K)
	}
	return l, d, v
}

// testTablePath: the constructor builds the very node the table's route builds (Gorgonia
// merges equal nodes of a graph), in both dtypes.
func testTablePath(t *testing.T, g Gate, c kernel.Channel, floats []float64) {
	for _, dt := range []tensor.Dtype{tensor.Float64, tensor.Float32} {
		gr := G.NewGraph()
		l, d, v := inputs(gr, dt, c)
		want, err := g.TablePath(c, g.Table, l, d, v, floats)
		require.NoError(t, err)
		got, err := g.Constructors[c](l, d, v, floats)
		require.NoError(t, err)
		require.Same(t, want, got, "%v: the constructor's node is not the table route's", dt)
	}
}

// testRefusals: bad inputs are refused with the catalogue's kinds, op and argument.
func testRefusals(t *testing.T, g Gate, c kernel.Channel, floats []float64, op string) {
	ctor := g.Constructors[c]
	f64 := tensor.Float64
	gr, other := G.NewGraph(), G.NewGraph()
	l, d, v := inputs(gr, f64, c)
	cases := []struct {
		name    string
		l, d, v *G.Node
		kind    error
		arg     string
	}{
		{"logits rank 1", node(gr, f64, "l1", n), d, v, gatejet.ErrRank, "logits"},
		{"logits scalar", node(gr, f64, "s"), d, v, gatejet.ErrRank, "logits"},
		{"decoded rank 2", l, node(gr, f64, "d2", n, K), v, gatejet.ErrRank, "decoded"},
		{"decoded rank 4", l, node(gr, f64, "d4", n, K, P, 1), v, gatejet.ErrRank, "decoded"},
		{"n mismatch", l, node(gr, f64, "dn", n+1, K, P), v, gatejet.ErrShape, "decoded"},
		{"K mismatch", l, node(gr, f64, "dk", n, K+1, P), v, gatejet.ErrShape, "decoded"},
		{"logits nil", nil, d, v, gatejet.ErrParam, "logits"},
		{"decoded nil", l, nil, v, gatejet.ErrParam, "decoded"},
		{"decoded float32", l, node(gr, tensor.Float32, "d32", n, K, P), v, gatejet.ErrDType, "decoded"},
		{"logits int", node(gr, tensor.Int, "li", n, K), d, v, gatejet.ErrDType, "logits"},
		{"two graphs", l, node(other, f64, "do", n, K, P), v, gatejet.ErrParam, "decoded"},
	}
	if c.HasV() {
		cases = append(cases, []struct {
			name    string
			l, d, v *G.Node
			kind    error
			arg     string
		}{
			{"v nil", l, d, nil, gatejet.ErrParam, "v"},
			{"v K mismatch", l, d, node(gr, f64, "vk", n, K+1), gatejet.ErrShape, "v"},
			{"v rank 3", l, d, node(gr, f64, "v3", n, K, P), gatejet.ErrRank, "v"},
			{"v float32", l, d, node(gr, tensor.Float32, "v32", n, K), gatejet.ErrDType, "v"},
			{"v other graph", l, d, node(other, f64, "vo", n, K), gatejet.ErrParam, "v"},
		}...)
	}
	for _, tc := range cases {
		var err error
		require.NotPanics(t, func() { _, err = ctor(tc.l, tc.d, tc.v, floats) }, tc.name)
		requireError(t, err, tc.kind, op, tc.arg, tc.name)
	}
	// Each float non-finite in turn: refused, naming the parameter that holds it.
	i := 0
	for _, p := range g.Table.Params {
		cnt := 1
		if p.PerAtom {
			cnt = K
		}
		for range cnt {
			for _, bad := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
				f := append([]float64(nil), floats...)
				f[i] = bad
				var err error
				require.NotPanics(t, func() { _, err = ctor(l, d, v, f) })
				requireError(t, err, nil, op, p.Name, fmt.Sprintf("float %d (%s) = %v", i, p.Name, bad))
			}
			i++
		}
	}
}

// requireError requires err to be a *gatejet.Error of op and arg and, unless kind is nil,
// of that kind.
func requireError(t *testing.T, err error, kind error, op, arg, what string) {
	t.Helper()
	require.Error(t, err, what)
	if kind != nil {
		require.ErrorIs(t, err, kind, what)
	}
	var ge *gatejet.Error
	require.True(t, errors.As(err, &ge), "%s: want a *gatejet.Error, got %T: %v", what, err, err)
	require.Equal(t, op, ge.Op, "%s: %v", what, err)
	require.Equal(t, arg, ge.Arg, "%s: %v", what, err)
}

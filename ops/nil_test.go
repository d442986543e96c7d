package ops

import (
	"testing"

	"github.com/stretchr/testify/require"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/gatejet/gatejet"
)

// TestCarelessOpCalls: every op of this package — each constructor's, and the gradient ops
// gorgonia.Grad builds from them — reached through the public gorgonia.Op interfaces and
// called with nil or missing arguments returns an ErrParam error or a safe zero value, never
// panics: WriteHash(nil), DiffWRT(-1), SymDiff and DoDiff with nil nodes, Do and InferShape
// with nothing or nil, UsePreallocDo into nil.
func TestCarelessOpCalls(t *testing.T) {
	for _, c := range reuseCtors() {
		t.Run(c.name, func(t *testing.T) {
			g := G.NewGraph()
			nodes := nodesFor(g, tensor.Float64, c.ins())
			n, err := c.build(nodes)
			require.NoError(t, err)
			cost, err := G.Sum(n)
			require.NoError(t, err)
			_, err = G.Grad(cost, nodes[:n.Op().Arity()]...)
			require.NoError(t, err)
			ops := 0
			for _, nd := range g.AllNodes() {
				op, ok := nd.Op().(computer)
				if !ok {
					continue
				}
				ops++
				gop := nd.Op()
				arity := gop.Arity()
				require.NotPanics(t, func() {
					gop.WriteHash(nil)
					require.Nil(t, gop.(G.SDOp).DiffWRT(-1))
					_, err := gop.(G.SDOp).SymDiff(make(G.Nodes, arity), nil, nil)
					require.ErrorIs(t, err, gatejet.ErrParam, op.name())
					_, err = gop.(G.SDOp).SymDiff(nodes[:min(arity, len(nodes))], nd, nil)
					require.ErrorIs(t, err, gatejet.ErrParam, op.name())
					err = gop.(G.ADOp).DoDiff(G.ExecutionContext{}, make(G.Nodes, arity), nil)
					require.ErrorIs(t, err, gatejet.ErrParam, op.name())
					err = gop.(G.ADOp).DoDiff(G.ExecutionContext{}, nil, nil)
					require.ErrorIs(t, err, gatejet.ErrParam, op.name())
					_, err = gop.Do()
					require.ErrorIs(t, err, gatejet.ErrParam, op.name())
					_, err = gop.Do(make([]G.Value, arity)...)
					require.ErrorIs(t, err, gatejet.ErrParam, op.name())
					_, err = gop.(G.UsePreallocDoer).UsePreallocDo(nil, make([]G.Value, arity)...)
					require.ErrorIs(t, err, gatejet.ErrParam, op.name())
					_, err = gop.InferShape()
					require.ErrorIs(t, err, gatejet.ErrParam, op.name())
					_, err = gop.InferShape(make([]G.DimSizer, arity)...)
					require.Error(t, err, op.name())
				})
			}
			require.Greater(t, ops, 1, "the forward op and its gradient ops")
		})
	}
	require.NotPanics(t, func() {
		_, ok := LastPath(nil)
		require.False(t, ok)
		_, ok = LastPath(new(G.Node))
		require.False(t, ok)
	})
}

package tower

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gatejet/gatejet"
)

// TestGateChannelsIsTheBuiltinRoute: the oracle of a gate given as its jets is, for the two
// built-in gates' jets, the oracle TowerChannels and TowerLogisticChannels are, bit for bit.
func TestGateChannelsIsTheBuiltinRoute(t *testing.T) {
	sh := Shape{N: 3, K: 4, P: 2}
	l, d := make([]float64, sh.N*sh.K), make([]float64, sh.N*sh.K*sh.P)
	for i := range l {
		l[i] = math.Sin(float64(3*i) + 0.2)
	}
	for i := range d {
		d[i] = math.Cos(float64(5*i) + 0.1)
	}
	alpha, beta := []float64{1.1, -0.6, 2, 0.7}, []float64{0.2, -0.3, 0, 0.5}
	outs := func() [3][]float64 {
		return [3][]float64{make([]float64, sh.N*sh.P), make([]float64, sh.N*sh.K*sh.P), make([]float64, sh.N*sh.K*sh.K*sh.P)}
	}
	want, got := outs(), outs()
	require.NoError(t, TowerChannels(want[0], want[1], want[2], l, d, sh, 1.3))
	require.NoError(t, GateChannels(got[0], got[1], got[2], l, d, sh, SoftmaxJets[float64](1.3)))
	require.Equal(t, want, got)
	want, got = outs(), outs()
	require.NoError(t, TowerLogisticChannels(want[0], want[1], want[2], l, d, sh, alpha, beta))
	require.NoError(t, GateChannels(got[0], got[1], got[2], l, d, sh, LogisticJets[float64](alpha, beta)))
	require.Equal(t, want, got)
	require.ErrorIs(t, GateChannels(got[0], nil, nil, l, d, sh, nil), gatejet.ErrParam)
}

package cudaops

import (
	"testing"

	"github.com/gatejet/gatejet/internal/dispatch"
	"github.com/stretchr/testify/require"
)

// TestSameValuesAsTheDispatcher: the modes, paths and variable name declared here are the
// dispatcher's, value for value, so the conversions between them are the identity; the
// counters are the dispatcher's too.
func TestSameValuesAsTheDispatcher(t *testing.T) {
	for _, m := range []Mode{ModeOff, ModeAuto, ModeRequired, Mode(7)} {
		require.Equal(t, dispatch.Mode(m).String(), m.String())
	}
	require.Equal(t, []dispatch.Mode{dispatch.ModeOff, dispatch.ModeAuto, dispatch.ModeRequired},
		[]dispatch.Mode{dispatch.Mode(ModeOff), dispatch.Mode(ModeAuto), dispatch.Mode(ModeRequired)})
	require.Equal(t, []dispatch.Path{dispatch.PathCPU, dispatch.PathGPU, dispatch.PathCPUFallback},
		[]dispatch.Path{dispatch.Path(PathCPU), dispatch.Path(PathGPU), dispatch.Path(PathCPUFallback)})
	require.Equal(t, []string{"cpu", "gpu", "cpu-fallback"}, []string{PathCPU.String(), PathGPU.String(), PathCPUFallback.String()})
	require.Equal(t, dispatch.EnvVar, EnvVar)

	prev := SetMode(ModeOff)
	defer SetMode(prev)
	require.Equal(t, dispatch.ModeOff, dispatch.CurrentMode())
	require.Equal(t, ModeOff, CurrentMode())
	m, err := ParseMode(" Required ")
	require.NoError(t, err)
	require.Equal(t, ModeRequired, m)

	before := Stats()
	_, err = dispatch.Run(dispatch.NewCall[float64](dispatch.KernelReLUForward, [][]float64{{1, -1}}, [][]float64{make([]float64, 2)}, []int{2}, nil))
	require.NoError(t, err)
	require.Equal(t, before.CPU+1, Stats().CPU)
}

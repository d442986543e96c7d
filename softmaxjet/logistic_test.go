package softmaxjet

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestLogisticDerivsStable(t *testing.T) {
	for _, x := range []float64{-800, -40, -1, 0, 1, 40, 800} {
		s0, s1, s2, s3 := logisticDerivs(x)
		for _, v := range []float64{s0, s1, s2, s3} {
			require.False(t, math.IsNaN(v) || math.IsInf(v, 0), "x=%v", x)
		}
		if math.Abs(x) < 50 {
			h := 1e-5
			p0, p1, p2, _ := logisticDerivs(x + h)
			m0, m1, m2, _ := logisticDerivs(x - h)
			require.InDelta(t, (p0-m0)/(2*h), s1, 1e-9)
			require.InDelta(t, (p1-m1)/(2*h), s2, 1e-9)
			require.InDelta(t, (p2-m2)/(2*h), s3, 1e-9)
		}
	}
}

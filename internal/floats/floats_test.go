package floats

import (
	"math"
	"testing"
)

func TestConvert(t *testing.T) {
	x := []float64{1, 0.1, -2.5, math.Inf(-1)}
	y := To32(x)
	if len(y) != len(x) || y[1] != float32(0.1) || y[3] != float32(math.Inf(-1)) {
		t.Fatalf("To32(%v) = %v", x, y)
	}
	if z := To64(y); z[1] != float64(float32(0.1)) || z[2] != -2.5 {
		t.Fatalf("To64(%v) = %v", y, z)
	}
}

func TestBitsEqual(t *testing.T) {
	nan := math.NaN()
	for _, c := range []struct {
		a, b []float64
		want bool
	}{
		{nil, []float64{}, true},
		{[]float64{1, nan}, []float64{1, nan}, true},
		{[]float64{0}, []float64{math.Copysign(0, -1)}, false},
		{[]float64{1}, []float64{1, 2}, false},
		{[]float64{1, 2}, []float64{1, 3}, false},
	} {
		if got := BitsEqual(c.a, c.b); got != c.want {
			t.Errorf("BitsEqual(%v, %v) = %v, want %v", c.a, c.b, got, c.want)
		}
	}
}

package softmaxjet

import (
	"testing"
	"time"

	"github.com/gatejet/gatejet"
)

// BenchmarkCoord times the coordinate jets beside the channels over the logits alone, on
// the same shapes and naming (kernel/dtype/N/K/P; b.SetBytes is the output size, so MB/s
// compares the time per output byte):
//
//	go test -run '^$' -bench 'Coord/(Second|CoordSecond)/f64/N=4096' -count 5 ./softmaxjet
func BenchmarkCoord(b *testing.B) {
	benchCoord[float64](b, "f64")
	benchCoord[float32](b, "f32")
}

func benchCoord[T gatejet.Float](b *testing.B, name string) {
	for _, sh := range benchShapes {
		l, d0, v := benchInputs[T](sh)
		d1, d2, vv := make([]T, len(d0)), make([]T, len(d0)), make([]T, 2*len(v))
		for i := range d0 {
			d1[i], d2[i] = d0[(i+7)%len(d0)], d0[(i+13)%len(d0)]
		}
		copy(vv, v)
		copy(vv[len(v):], v)
		K2 := 2 * sh.K
		sm := Softmax[T]{InvTau: 1}
		alpha, beta := make([]float64, sh.K), make([]float64, sh.K)
		for k := range alpha {
			alpha[k], beta[k] = 1+0.01*float64(k), 0.1
		}
		lg := Logistic[T]{Alpha: alpha, Beta: beta}
		run := func(kernel string, outLen int, f func(out []T) error) {
			benchOutput(b, benchName(kernel, name, sh), outLen, f)
		}
		run("Second", sh.SecondLen(), func(o []T) error { return sm.Second(o, l, d0, sh) })
		run("CoordSecond", sh.N*K2*K2*sh.P, func(o []T) error { return CoordSecond(sm, o, l, d0, d1, d2, sh) })
		run("CoordFirst", sh.N*K2*sh.P, func(o []T) error { return CoordFirst(sm, o, l, d0, d1, sh) })
		run("CoordGaussNewton", sh.N*K2*K2, func(o []T) error { return CoordGaussNewton(sm, o, l, d0, d1, sh) })
		run("CoordHVP", sh.N*K2*sh.P, func(o []T) error { return CoordHVP(sm, o, l, d0, d1, d2, vv, sh) })
		run("LogisticCoordSecond", sh.N*K2*K2*sh.P, func(o []T) error { return CoordSecond(lg, o, l, d0, d1, d2, sh) })
	}
}

// BenchmarkCoordSecondPerByte runs the softmax second channel and the coordinate second
// channel alternately, on the same rows, and reports the ratio of their times per output
// byte (coord/second-per-byte): on a machine shared with other work, the pairing keeps
// load that comes and goes out of the ratio.
//
//	go test -run '^$' -bench CoordSecondPerByte -benchtime 40x -count 5 ./softmaxjet
func BenchmarkCoordSecondPerByte(b *testing.B) {
	sh := Shape{N: 4096, K: 16, P: 16}
	l, d0, _ := benchInputs[float64](sh)
	d1, d2 := make([]float64, len(d0)), make([]float64, len(d0))
	for i := range d0 {
		d1[i], d2[i] = d0[(i+7)%len(d0)], d0[(i+13)%len(d0)]
	}
	var g Gate[float64] = Softmax[float64]{InvTau: 1}
	K2 := 2 * sh.K
	second, coord := make([]float64, sh.SecondLen()), make([]float64, sh.N*K2*K2*sh.P)
	run := func() (ts, tc time.Duration) {
		t0 := time.Now()
		if err := g.Second(second, l, d0, sh); err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		if err := CoordSecond(g, coord, l, d0, d1, d2, sh); err != nil {
			b.Fatal(err)
		}
		return t1.Sub(t0), time.Since(t1)
	}
	run()
	var ts, tc time.Duration
	for b.Loop() {
		s, c := run()
		ts, tc = ts+s, tc+c
	}
	perByte := func(t time.Duration, n int) float64 { return float64(t) / float64(8*n) }
	b.ReportMetric(perByte(tc, len(coord))/perByte(ts, len(second)), "coord/second-per-byte")
	b.ReportMetric(perByte(ts, len(second))*1e3/float64(b.N), "second-ps/byte")
	b.ReportMetric(perByte(tc, len(coord))*1e3/float64(b.N), "coord-ps/byte")
}

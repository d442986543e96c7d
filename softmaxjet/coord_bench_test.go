package softmaxjet

import (
	"testing"
	"time"

	"github.com/gatejet/gatejet"
)

// BenchmarkCoord times the coordinate jets beside the channels over the logits alone, on
// the same shapes and naming (kernel/dtype/N/K/P; b.SetBytes is the output size, so MB/s
// compares the time per output byte; BenchmarkCoordPerByte pairs them call by call).
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
		var sm Gate[T] = Softmax[T]{InvTau: 1} // held as a Gate: no allocation a call
		alpha, beta := make([]float64, sh.K), make([]float64, sh.K)
		for k := range alpha {
			alpha[k], beta[k] = 1+0.01*float64(k), 0.1
		}
		var lg Gate[T] = Logistic[T]{Alpha: alpha, Beta: beta}
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

// BenchmarkCoordPerByte runs each softmax channel and its coordinate twin alternately, on
// the same rows, and reports the ratio of their times per output byte
// (coord/channel-per-byte): on a machine shared with other work, the pairing keeps load that
// comes and goes out of the ratio. The second channels' pair is the speed target
// (issue 25's target: within 1.5×):
//
//	go test -run '^$' -bench 'CoordPerByte/Second' -benchtime 40x -count 5 ./softmaxjet
func BenchmarkCoordPerByte(b *testing.B) {
	sh := Shape{N: 4096, K: 16, P: 16}
	l, d0, v := benchInputs[float64](sh)
	d1, d2, vv := make([]float64, len(d0)), make([]float64, len(d0)), make([]float64, 2*len(v))
	for i := range d0 {
		d1[i], d2[i] = d0[(i+7)%len(d0)], d0[(i+13)%len(d0)]
	}
	copy(vv, v)
	copy(vv[len(v):], v)
	var g Gate[float64] = Softmax[float64]{InvTau: 1}
	K2 := 2 * sh.K
	for _, c := range []struct {
		name         string
		n, nc        int // output lengths
		chann, coord func(o []float64) error
	}{
		{"First", sh.FirstLen(), sh.N * K2 * sh.P,
			func(o []float64) error { return g.First(o, l, d0, sh) },
			func(o []float64) error { return CoordFirst(g, o, l, d0, d1, sh) }},
		{"Second", sh.SecondLen(), sh.N * K2 * K2 * sh.P,
			func(o []float64) error { return g.Second(o, l, d0, sh) },
			func(o []float64) error { return CoordSecond(g, o, l, d0, d1, d2, sh) }},
		{"GaussNewton", sh.GNLen(), sh.N * K2 * K2,
			func(o []float64) error { return g.GaussNewton(o, l, d0, sh) },
			func(o []float64) error { return CoordGaussNewton(g, o, l, d0, d1, sh) }},
		{"HVP", sh.FirstLen(), sh.N * K2 * sh.P,
			func(o []float64) error { return g.HVP(o, l, d0, v, sh) },
			func(o []float64) error { return CoordHVP(g, o, l, d0, d1, d2, vv, sh) }},
	} {
		b.Run(benchName(c.name, "f64", sh), func(b *testing.B) {
			out, outc := make([]float64, c.n), make([]float64, c.nc)
			run := func() (ts, tc time.Duration) {
				t0 := time.Now()
				if err := c.chann(out); err != nil {
					b.Fatal(err)
				}
				t1 := time.Now()
				if err := c.coord(outc); err != nil {
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
			perByte := func(t time.Duration, n int) float64 { return float64(t) / float64(8*n) / float64(b.N) }
			b.ReportMetric(perByte(tc, c.nc)/perByte(ts, c.n), "coord/channel-per-byte")
			b.ReportMetric(perByte(ts, c.n)*1e3, "channel-ps/byte")
			b.ReportMetric(perByte(tc, c.nc)*1e3, "coord-ps/byte")
		})
	}
}

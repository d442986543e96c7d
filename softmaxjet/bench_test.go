package softmaxjet

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"unsafe"

	"github.com/gatejet/gatejet"
)

// Benchmarks of the closed forms. The tower path on the same shapes is in tower_bench_test.go;
// benchstat pairs them by name. b.SetBytes is the output size, so MB/s is write bandwidth.

var benchShapes = []Shape{{4096, 16, 16}, {256, 64, 16}}

func benchInputs[T gatejet.Float](sh Shape) (l, d, v []T) {
	rng := rand.New(rand.NewPCG(1, uint64(sh.K)))
	l, d, v = make([]T, sh.LogitsLen()), make([]T, sh.DecodedLen()), make([]T, sh.LogitsLen())
	for i := range l {
		l[i], v[i] = T(rng.NormFloat64()), T(rng.NormFloat64())
	}
	for i := range d {
		d[i] = T(rng.NormFloat64())
	}
	return
}

// benchName is the name of a kernel's sub-benchmark, kernel/dtype/N=…/K=…/P=…, the same in
// every benchmark of this package, so that benchstat pairs them.
func benchName(kernel, dtype string, sh Shape) string {
	return fmt.Sprintf("%s/%s/N=%d/K=%d/P=%d", kernel, dtype, sh.N, sh.K, sh.P)
}

// benchOutput runs, as the sub-benchmark name, f writing an output of outLen elements: one
// call first (it touches the output's pages and fills the workspace pools), then the timed
// loop. b.SetBytes is the output's size.
func benchOutput[T gatejet.Float](b *testing.B, name string, outLen int, f func(out []T) error) {
	b.Run(name, func(b *testing.B) {
		out := make([]T, outLen)
		if err := f(out); err != nil {
			b.Fatal(err)
		}
		b.SetBytes(int64(outLen) * int64(unsafe.Sizeof(T(0))))
		b.ReportAllocs()
		for b.Loop() {
			if err := f(out); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func benchKernels[T gatejet.Float](b *testing.B, name string) {
	for _, sh := range benchShapes {
		l, d, v := benchInputs[T](sh)
		gFirst, gSecond := make([]T, sh.FirstLen()), make([]T, sh.SecondLen())
		dl := make([]T, sh.LogitsLen())
		run := func(kernel string, outLen int, f func(out []T) error) {
			benchOutput(b, benchName(kernel, name, sh), outLen, f)
		}
		run("Value", sh.ValueLen(), func(o []T) error { return Softmax[T]{InvTau: 1}.Value(o, l, d, sh) })
		run("First", sh.FirstLen(), func(o []T) error { return Softmax[T]{InvTau: 1}.First(o, l, d, sh) })
		run("Second", sh.SecondLen(), func(o []T) error { return Softmax[T]{InvTau: 1}.Second(o, l, d, sh) })
		run("HVP", sh.FirstLen(), func(o []T) error { return Softmax[T]{InvTau: 1}.HVP(o, l, d, v, sh) })
		run("GaussNewton", sh.GNLen(), func(o []T) error { return Softmax[T]{InvTau: 1}.GaussNewton(o, l, d, sh) })
		run("FirstVJP", sh.DecodedLen(), func(o []T) error { return Softmax[T]{InvTau: 1}.FirstVJP(dl, o, l, d, gFirst, sh) })
		run("SecondVJP", sh.DecodedLen(), func(o []T) error { return Softmax[T]{InvTau: 1}.SecondVJP(dl, o, l, d, gSecond, sh) })
		run("HVPVJP", sh.DecodedLen(), func(o []T) error { return Softmax[T]{InvTau: 1}.HVPVJP(dl, o, nil, l, d, v, gFirst, sh) })
	}
}

func BenchmarkClosedForm(b *testing.B) {
	benchKernels[float64](b, "f64")
	benchKernels[float32](b, "f32")
}

// BenchmarkHVPScaling shows the HVP's cost growing linearly in K, against building second and
// contracting it (quadratic in K).
func BenchmarkHVPScaling(b *testing.B) {
	for _, K := range []int{8, 16, 32, 64, 128, 256} {
		sh := Shape{N: 65536 / K, K: K, P: 16}
		l, d, v := benchInputs[float64](sh)
		out := make([]float64, sh.FirstLen())
		b.Run(fmt.Sprintf("hvp/K=%d", K), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				if err := (Softmax[float64]{InvTau: 1}).HVP(out, l, d, v, sh); err != nil {
					b.Fatal(err)
				}
			}
		})
		if K > 128 {
			continue // second alone is N·K²·P·8 bytes: 512 MiB at K=256
		}
		sec := make([]float64, sh.SecondLen())
		b.Run(fmt.Sprintf("second+contract/K=%d", K), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				if err := (Softmax[float64]{InvTau: 1}).Second(sec, l, d, sh); err != nil {
					b.Fatal(err)
				}
				contractSecond(out, sec, v, sh)
			}
		})
	}
}

// contractSecond is out[n][a][c] = Σ_b second[n][a][b][c]·v[n][b].
func contractSecond(out, sec, v []float64, sh Shape) {
	K, P := sh.K, sh.P
	clear(out)
	for n := 0; n < sh.N; n++ {
		for a := 0; a < K; a++ {
			o := out[(n*K+a)*P : (n*K+a)*P+P]
			for b := 0; b < K; b++ {
				vb := v[n*K+b]
				s := sec[((n*K+a)*K+b)*P : ((n*K+a)*K+b)*P+P]
				for c := range o {
					o[c] += s[c] * vb
				}
			}
		}
	}
}

// BenchmarkCallOverhead times calls on one small row (N=1, K=4, P=4), where the checks, the
// job and the pooled scratch cost about as much as the row: the fixed cost of a call.
func BenchmarkCallOverhead(b *testing.B) {
	sh := Shape{N: 1, K: 4, P: 4}
	l, d, v := benchInputs[float64](sh)
	out := make([]float64, sh.FirstLen())
	alpha, beta := []float64{1, 1, 1, 1}, []float64{0, 0, 0, 0}
	for _, k := range []struct {
		name string
		call func() error
	}{
		{"First", func() error { return Softmax[float64]{InvTau: 1}.First(out, l, d, sh) }},
		{"HVP", func() error { return Softmax[float64]{InvTau: 1}.HVP(out, l, d, v, sh) }},
		{"LogisticFirst", func() error { return Logistic[float64]{Alpha: alpha, Beta: beta}.First(out, l, d, sh) }},
	} {
		b.Run(k.name, func(b *testing.B) {
			for range b.N {
				if err := k.call(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

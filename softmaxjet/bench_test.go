package softmaxjet

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// Benchmarks of the closed forms. The tower path on the same shapes is in tower_bench_test.go;
// benchstat pairs them by name. b.SetBytes is the output size, so MB/s is write bandwidth.

type benchShape struct{ N, K, P int }

var benchShapes = []benchShape{{4096, 16, 16}, {256, 64, 16}}

func benchInputs[T Float](sh Shape) (l, d, v []T) {
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

func benchKernels[T Float](b *testing.B, name string) {
	var zero T
	size := int64(8)
	if any(zero) == any(float32(0)) {
		size = 4
	}
	for _, bs := range benchShapes {
		sh := Shape{bs.N, bs.K, bs.P}
		l, d, v := benchInputs[T](sh)
		gFirst, gSecond := make([]T, sh.FirstLen()), make([]T, sh.SecondLen())
		dl := make([]T, sh.LogitsLen())
		run := func(kernel string, outLen int, f func(out []T) error) {
			b.Run(fmt.Sprintf("%s/%s/N=%d/K=%d/P=%d", kernel, name, sh.N, sh.K, sh.P), func(b *testing.B) {
				out := make([]T, outLen)
				b.SetBytes(int64(outLen) * size)
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					if err := f(out); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
		run("Value", sh.ValueLen(), func(o []T) error { return Value(o, l, d, sh, 1) })
		run("First", sh.FirstLen(), func(o []T) error { return First(o, l, d, sh, 1) })
		run("Second", sh.SecondLen(), func(o []T) error { return Second(o, l, d, sh, 1) })
		run("HVP", sh.FirstLen(), func(o []T) error { return HVP(o, l, d, v, sh, 1) })
		run("GaussNewton", sh.GNLen(), func(o []T) error { return GaussNewton(o, l, d, sh, 1) })
		run("FirstVJP", sh.DecodedLen(), func(o []T) error { return FirstVJP(dl, o, l, d, gFirst, sh, 1) })
		run("SecondVJP", sh.DecodedLen(), func(o []T) error { return SecondVJP(dl, o, l, d, gSecond, sh, 1) })
		run("HVPVJP", sh.DecodedLen(), func(o []T) error { return HVPVJP(dl, o, nil, l, d, v, gFirst, sh, 1) })
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
				if err := HVP(out, l, d, v, sh, 1); err != nil {
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
				if err := Second(sec, l, d, sh, 1); err != nil {
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

package softmaxjet

import (
	"fmt"
	"testing"
)

// BenchmarkMoreKernels covers the kernels BenchmarkClosedForm leaves out: the softmax gate's
// ValueVJP and GaussNewtonVJP, and every kernel of the logistic gate, on the same shapes and
// with the same naming (kernel/dtype/N/K/P). b.SetBytes is the output size.
func BenchmarkMoreKernels(b *testing.B) {
	moreKernels[float64](b, "f64")
	moreKernels[float32](b, "f32")
}

func moreKernels[T Float](b *testing.B, name string) {
	var zero T
	size := int64(8)
	if any(zero) == any(float32(0)) {
		size = 4
	}
	for _, bs := range benchShapes {
		sh := Shape{bs.N, bs.K, bs.P}
		l, d, v := benchInputs[T](sh)
		alpha, beta := make([]float64, sh.K), make([]float64, sh.K)
		for k := range alpha {
			alpha[k], beta[k] = 1+0.01*float64(k), 0.1
		}
		gValue, gFirst, gSecond, gGN := make([]T, sh.ValueLen()), make([]T, sh.FirstLen()), make([]T, sh.SecondLen()), make([]T, sh.GNLen())
		for i := range gFirst {
			gFirst[i] = T(0.001 * float64(i%97))
		}
		dl, dv := make([]T, sh.LogitsLen()), make([]T, sh.LogitsLen())
		run := func(kernel string, outLen int, f func(out []T) error) {
			b.Run(fmt.Sprintf("%s/%s/N=%d/K=%d/P=%d", kernel, name, sh.N, sh.K, sh.P), func(b *testing.B) {
				out := make([]T, outLen)
				if err := f(out); err != nil {
					b.Fatal(err)
				}
				b.SetBytes(int64(outLen) * size)
				b.ReportAllocs()
				b.ResetTimer()
				for b.Loop() {
					if err := f(out); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
		run("ValueVJP", sh.DecodedLen(), func(o []T) error { return ValueVJP(dl, o, l, d, gValue, sh, 1) })
		run("GaussNewtonVJP", sh.DecodedLen(), func(o []T) error { return GaussNewtonVJP(dl, o, l, d, gGN, sh, 1) })
		run("LogisticValue", sh.ValueLen(), func(o []T) error { return LogisticValue(o, l, d, sh, alpha, beta) })
		run("LogisticFirst", sh.FirstLen(), func(o []T) error { return LogisticFirst(o, l, d, sh, alpha, beta) })
		run("LogisticSecond", sh.SecondLen(), func(o []T) error { return LogisticSecond(o, l, d, sh, alpha, beta) })
		run("LogisticHVP", sh.FirstLen(), func(o []T) error { return LogisticHVP(o, l, d, v, sh, alpha, beta) })
		run("LogisticGaussNewton", sh.GNLen(), func(o []T) error { return LogisticGaussNewton(o, l, d, sh, alpha, beta) })
		run("LogisticValueVJP", sh.DecodedLen(), func(o []T) error { return LogisticValueVJP(dl, o, l, d, gValue, sh, alpha, beta) })
		run("LogisticFirstVJP", sh.DecodedLen(), func(o []T) error { return LogisticFirstVJP(dl, o, l, d, gFirst, sh, alpha, beta) })
		run("LogisticSecondVJP", sh.DecodedLen(), func(o []T) error { return LogisticSecondVJP(dl, o, l, d, gSecond, sh, alpha, beta) })
		run("LogisticHVPVJP", sh.DecodedLen(), func(o []T) error { return LogisticHVPVJP(dl, o, dv, l, d, v, gFirst, sh, alpha, beta) })
		run("LogisticGaussNewtonVJP", sh.DecodedLen(), func(o []T) error { return LogisticGaussNewtonVJP(dl, o, l, d, gGN, sh, alpha, beta) })
	}
}

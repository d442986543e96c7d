package softmaxjet

import (
	"fmt"
	"testing"
	"time"
)

// BenchmarkMoreKernels covers the kernels BenchmarkClosedForm leaves out: the softmax gate's
// ValueVJP and GaussNewtonVJP, and every kernel of the logistic gate, on the same shapes and
// with the same naming (kernel/dtype/N/K/P). b.SetBytes is the output size.
func BenchmarkMoreKernels(b *testing.B) {
	moreKernels[float64](b, "f64")
	moreKernels[float32](b, "f32")
}

func moreKernels[T Float](b *testing.B, name string) {
	for _, sh := range benchShapes {
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
			benchOutput(b, benchName(kernel, name, sh), outLen, f)
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

// BenchmarkSecondRowPrep times the fixed work of a second-channel row before its K² blocks
// (secondRow.prep: gate, value channel, centring, coefficients), in ns/row, on 256 rows that
// stay in the caches, with the AVX loops and with the Go loops. It is the same for both
// element types but for the centring, and it is what the blocks' writes must hide.
func BenchmarkSecondRowPrep(b *testing.B) {
	for _, K := range []int{16, 64} {
		b.Run(fmt.Sprintf("K=%d/f64", K), func(b *testing.B) { benchSecondRowPrep[float64](b, K, 16) })
		b.Run(fmt.Sprintf("K=%d/f32", K), func(b *testing.B) { benchSecondRowPrep[float32](b, K, 16) })
	}
}

func benchSecondRowPrep[T Float](b *testing.B, K, P int) {
	sh := Shape{N: 256, K: K, P: P}
	l, d, _ := benchInputs[T](sh)
	for _, avx := range []bool{true, false} {
		name := "go"
		if avx {
			if !hasAVX {
				continue
			}
			name = "avx"
		}
		b.Run(name, func(b *testing.B) {
			defer func(u bool) { useAVX = u }(useAVX)
			useAVX = avx
			n, _ := scratchLen[T](secondRows[T]{}, K, P)
			r := newSecondRow[T](n, K, P, 1)
			defer r.sc.release()
			start := time.Now()
			iters := 0
			for b.Loop() {
				for n := 0; n < sh.N; n++ {
					r.prep(l[n*K:n*K+K], d[n*K*P:(n+1)*K*P])
				}
				iters++
			}
			b.ReportMetric(float64(time.Since(start).Nanoseconds())/float64(iters*sh.N), "ns/row")
		})
	}
}

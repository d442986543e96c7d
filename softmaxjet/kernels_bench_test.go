package softmaxjet

import (
	"fmt"
	"testing"
	"time"

	"github.com/gatejet/gatejet"
)

// BenchmarkMoreKernels covers the kernels BenchmarkClosedForm leaves out: the softmax gate's
// ValueVJP and GaussNewtonVJP, and every kernel of the logistic gate, on the same shapes and
// with the same naming (kernel/dtype/N/K/P). b.SetBytes is the output size.
func BenchmarkMoreKernels(b *testing.B) {
	moreKernels[float64](b, "f64")
	moreKernels[float32](b, "f32")
}

func moreKernels[T gatejet.Float](b *testing.B, name string) {
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
		run("ValueVJP", sh.DecodedLen(), func(o []T) error { return Softmax[T]{InvTau: 1}.ValueVJP(dl, o, l, d, gValue, sh) })
		run("GaussNewtonVJP", sh.DecodedLen(), func(o []T) error { return Softmax[T]{InvTau: 1}.GaussNewtonVJP(dl, o, l, d, gGN, sh) })
		run("LogisticValue", sh.ValueLen(), func(o []T) error { return Logistic[T]{Alpha: alpha, Beta: beta}.Value(o, l, d, sh) })
		run("LogisticFirst", sh.FirstLen(), func(o []T) error { return Logistic[T]{Alpha: alpha, Beta: beta}.First(o, l, d, sh) })
		run("LogisticSecond", sh.SecondLen(), func(o []T) error { return Logistic[T]{Alpha: alpha, Beta: beta}.Second(o, l, d, sh) })
		run("LogisticHVP", sh.FirstLen(), func(o []T) error { return Logistic[T]{Alpha: alpha, Beta: beta}.HVP(o, l, d, v, sh) })
		run("LogisticGaussNewton", sh.GNLen(), func(o []T) error { return Logistic[T]{Alpha: alpha, Beta: beta}.GaussNewton(o, l, d, sh) })
		run("LogisticValueVJP", sh.DecodedLen(), func(o []T) error { return Logistic[T]{Alpha: alpha, Beta: beta}.ValueVJP(dl, o, l, d, gValue, sh) })
		run("LogisticFirstVJP", sh.DecodedLen(), func(o []T) error { return Logistic[T]{Alpha: alpha, Beta: beta}.FirstVJP(dl, o, l, d, gFirst, sh) })
		run("LogisticSecondVJP", sh.DecodedLen(), func(o []T) error { return Logistic[T]{Alpha: alpha, Beta: beta}.SecondVJP(dl, o, l, d, gSecond, sh) })
		run("LogisticHVPVJP", sh.DecodedLen(), func(o []T) error { return Logistic[T]{Alpha: alpha, Beta: beta}.HVPVJP(dl, o, dv, l, d, v, gFirst, sh) })
		run("LogisticGaussNewtonVJP", sh.DecodedLen(), func(o []T) error { return Logistic[T]{Alpha: alpha, Beta: beta}.GaussNewtonVJP(dl, o, l, d, gGN, sh) })
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

func benchSecondRowPrep[T gatejet.Float](b *testing.B, K, P int) {
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

package backward_test

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"unsafe"

	"github.com/gatejet/gatejet"
	"github.com/gatejet/gatejet/backward"
)

// benchForward benchmarks Softmax or LogSoftmax on a [4096 × 1024] tensor of logits in
// [-8, 8]. SetBytes counts x read and y written.
func benchForward[T gatejet.Float](b *testing.B, f func(y, x []T, shape []int, axis int) error, axis int) {
	shape := []int{4096, 1024}
	x64 := randVec(rand.New(rand.NewPCG(1, 2)), prod(shape), -8, 8)
	x, y := make([]T, len(x64)), make([]T, len(x64))
	for i, v := range x64 {
		x[i] = T(v)
	}
	var z T
	loop(b, int64(2*len(x)*int(unsafe.Sizeof(z))), func() {
		if err := f(y, x, shape, axis); err != nil {
			b.Fatal(err)
		}
	})
}

func BenchmarkSoftmax(b *testing.B) {
	for _, axis := range []int{-1, 0} {
		b.Run(fmt.Sprintf("f64/4096x1024/axis=%d", axis), func(b *testing.B) { benchForward(b, backward.Softmax[float64], axis) })
		b.Run(fmt.Sprintf("f32/4096x1024/axis=%d", axis), func(b *testing.B) { benchForward(b, backward.Softmax[float32], axis) })
	}
}

func BenchmarkLogSoftmax(b *testing.B) {
	for _, axis := range []int{-1, 0} {
		b.Run(fmt.Sprintf("f64/4096x1024/axis=%d", axis), func(b *testing.B) { benchForward(b, backward.LogSoftmax[float64], axis) })
		b.Run(fmt.Sprintf("f32/4096x1024/axis=%d", axis), func(b *testing.B) { benchForward(b, backward.LogSoftmax[float32], axis) })
	}
}

package backward_test

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"
	"unsafe"

	"github.com/gatejet/gatejet"
	"github.com/gatejet/gatejet/backward"
)

// benchAxis benchmarks a single-output axis kernel on a [4096 × 1024] tensor. SetBytes counts
// the memory a kernel must move at least: y and dy read, dx written.
func benchAxis[T gatejet.Float](b *testing.B, f func(dx, y, dy []T, shape []int, axis int) error, log bool, axis int) {
	shape := []int{4096, 1024}
	c := axisCase{shape, axis}
	y64, dy64, _ := axisInputs(rand.New(rand.NewPCG(1, 1)), axisCase{[]int{4096, 1024}, -1}, log)
	y, dy, dx := make([]T, len(y64)), make([]T, len(y64)), make([]T, len(y64))
	for i := range y64 {
		y[i], dy[i] = T(y64[i]), T(dy64[i])
	}
	var z T
	loop(b, int64(3*len(y)*int(unsafe.Sizeof(z))), func() {
		if err := f(dx, y, dy, c.shape, c.axis); err != nil {
			b.Fatal(err)
		}
	})
}

func BenchmarkSoftmaxBackward(b *testing.B) {
	for _, axis := range []int{-1, 0} {
		b.Run(fmt.Sprintf("f64/4096x1024/axis=%d", axis), func(b *testing.B) { benchAxis(b, backward.SoftmaxBackward[float64], false, axis) })
		b.Run(fmt.Sprintf("f32/4096x1024/axis=%d", axis), func(b *testing.B) { benchAxis(b, backward.SoftmaxBackward[float32], false, axis) })
	}
}

func BenchmarkLogSoftmaxBackward(b *testing.B) {
	for _, axis := range []int{-1, 0} {
		b.Run(fmt.Sprintf("f64/4096x1024/axis=%d", axis), func(b *testing.B) { benchAxis(b, backward.LogSoftmaxBackward[float64], true, axis) })
		b.Run(fmt.Sprintf("f32/4096x1024/axis=%d", axis), func(b *testing.B) { benchAxis(b, backward.LogSoftmaxBackward[float32], true, axis) })
	}
}

// BenchmarkSoftmaxBackwardGrad moves y, dy, g in and gy, gdy out.
func BenchmarkSoftmaxBackwardGrad(b *testing.B) {
	for _, axis := range []int{-1, 0} {
		b.Run(fmt.Sprintf("f64/4096x1024/axis=%d", axis), func(b *testing.B) {
			shape := []int{4096, 1024}
			y, dy, g := axisInputs(rand.New(rand.NewPCG(1, 1)), axisCase{shape, -1}, false)
			gy, gdy := make([]float64, len(y)), make([]float64, len(y))
			loop(b, int64(5*8*len(y)), func() {
				if err := backward.SoftmaxBackwardGrad(gy, gdy, y, dy, g, shape, axis); err != nil {
					b.Fatal(err)
				}
			})
		})
	}
}

// loop runs f b.N times, reporting besides the mean the fastest single call as min-ns/op and
// min-GB/s for the given byte count: on a shared machine the mean measures the neighbours, the
// minimum the kernel.
func loop(b *testing.B, bytes int64, f func()) {
	b.Helper()
	b.SetBytes(bytes)
	f() // warm pools and caches
	b.ResetTimer()
	best := time.Duration(1 << 62)
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		f()
		if d := time.Since(t0); d < best {
			best = d
		}
	}
	b.ReportMetric(float64(best.Nanoseconds()), "min-ns/op")
	b.ReportMetric(float64(bytes)/float64(best.Nanoseconds()), "min-GB/s")
}

const actN = 1 << 20

func actData[T gatejet.Float]() (x, dy, g []T) {
	r := rand.New(rand.NewPCG(2, 2))
	x, dy, g = make([]T, actN), make([]T, actN), make([]T, actN)
	for i := range x {
		x[i], dy[i], g[i] = T(8*r.Float64()-4), T(2*r.Float64()-1), T(2*r.Float64()-1)
	}
	return x, dy, g
}

func benchActivations[T gatejet.Float](b *testing.B, prefix string,
	fwd map[string]func(y, x []T) error,
	bw map[string]func(dx, x, dy []T) error,
	grad map[string]func(gx, gdy, x, dy, g []T) error,
) {
	x, dy, g := actData[T]()
	o0, o1 := make([]T, actN), make([]T, actN)
	var z T
	size := int64(actN * int(unsafe.Sizeof(z)))
	for _, name := range []string{"ReLU", "GELU", "SiLU"} {
		b.Run(name+"/"+prefix, func(b *testing.B) {
			loop(b, 2*size, func() { _ = fwd[name](o0, x) })
		})
		b.Run(name+"Backward/"+prefix, func(b *testing.B) {
			loop(b, 3*size, func() { _ = bw[name](o0, x, dy) })
		})
		b.Run(name+"BackwardGrad/"+prefix, func(b *testing.B) {
			loop(b, 5*size, func() { _ = grad[name](o0, o1, x, dy, g) })
		})
	}
}

func BenchmarkActivations(b *testing.B) {
	benchActivations(b, "f64",
		map[string]func(y, x []float64) error{"ReLU": backward.ReLU[float64], "GELU": backward.GELU[float64], "SiLU": backward.SiLU[float64]},
		map[string]func(dx, x, dy []float64) error{"ReLU": backward.ReLUBackward[float64], "GELU": backward.GELUBackward[float64], "SiLU": backward.SiLUBackward[float64]},
		map[string]func(gx, gdy, x, dy, g []float64) error{"ReLU": backward.ReLUBackwardGrad[float64], "GELU": backward.GELUBackwardGrad[float64], "SiLU": backward.SiLUBackwardGrad[float64]},
	)
	benchActivations(b, "f32",
		map[string]func(y, x []float32) error{"ReLU": backward.ReLU[float32], "GELU": backward.GELU[float32], "SiLU": backward.SiLU[float32]},
		map[string]func(dx, x, dy []float32) error{"ReLU": backward.ReLUBackward[float32], "GELU": backward.GELUBackward[float32], "SiLU": backward.SiLUBackward[float32]},
		map[string]func(gx, gdy, x, dy, g []float32) error{"ReLU": backward.ReLUBackwardGrad[float32], "GELU": backward.GELUBackwardGrad[float32], "SiLU": backward.SiLUBackwardGrad[float32]},
	)
}

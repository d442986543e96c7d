//go:build !amd64 || purego

package backward

// Off amd64 (or with the purego tag) the stride-1 softmax backward runs the Go loops.

const hasAVX = false

var useAVX = false

func dotVec[T Float](a, b []T) float64 { return dot(a, b) }

func writeSoftmaxVec[T Float](xs, ys, ds []T, av float64) {
	ys, ds = ys[:len(xs)], ds[:len(xs)]
	for i := range xs {
		xs[i] = T(float64(ys[i]) * (float64(ds[i]) - av))
	}
}

func dotRows4[T Float](acc []float64, a, b []T, stride int) int { return 0 }

func writeRow[T Float](dx, y, dy []T, a []float64) int { return 0 }

//go:build !amd64 || purego

package backward

import "github.com/gatejet/gatejet"

// Off amd64 (or with the purego tag) the stride-1 softmax backward and forward run the Go
// loops.

const hasAVX, hasAVX2 = false, false

var useAVX = false

func dotVec[T gatejet.Float](a, b []T) float64 { return dot(a, b) }

func writeSoftmaxVec[T gatejet.Float](xs, ys, ds []T, av float64) {
	ys, ds = ys[:len(xs)], ds[:len(xs)]
	for i := range xs {
		xs[i] = T(float64(ys[i]) * (float64(ds[i]) - av))
	}
}

func dotRows4[T gatejet.Float](acc []float64, a, b []T, stride int) int { return 0 }

func writeRow[T gatejet.Float](dx, y, dy []T, a []float64) int { return 0 }

func maxLanes[T gatejet.Float](x []T) (m0, m1, m2, m3 float64) { return maxLanesGo(x) }

func expSumLanes[T gatejet.Float](e []float64, x []T, sh float64, acc *[4]float64) int {
	return expSumLanesGo(e, x, sh, acc)
}

func scaleLanes[T gatejet.Float](y []T, e []float64, r float64) int { return 0 }

func expLanes[T gatejet.Float](dst []float64, src []T) int { return 0 }

//go:build !amd64 || purego

package softmaxjet

import "github.com/gatejet/gatejet"

// hasAVX is false off amd64 (or with the purego tag): the row loop is rowT.
const hasAVX = false

var useAVX = false

func secondCoefsVec[T gatejet.Float](c []T, nsz, diag, z []float64, s2 float64, K int) bool {
	return secondCoefs(nsz[:K], diag[:K], z[:K], s2)
}

func rowVec[T gatejet.Float](o, c []T, nsz, z, diag []float64, e []T, K, P, os int, nt bool) bool {
	rowT(o, nsz, z, diag, e, K, P, os)
	return false
}

func scaleVec[T gatejet.Float](o, x []T, f []float64, n, P, xs int, nt bool) bool {
	scaleGo(o, x, f, n, P, xs)
	return false
}

func gateVec[T gatejet.Float](z []float64, l []T, s float64, K int) { gateGo(z, l, s, K) }

func meanVec[T gatejet.Float](m, z []float64, d []T, K, P int) { meanGo(m, z, d, K, P) }

func centreVec[E, T gatejet.Float](e []E, d []T, m []float64, K, P int, check bool) bool {
	return centre(e, d, m, K, P, check)
}

func hvpOutVec[T gatejet.Float](o []T, e, w, f, u []float64, K, P int) { hvpOutGo(o, e, w, f, u, K, P) }

func coordHVPlVec[T gatejet.Float](o []T, e []float64, d1 []T, q, g, su, vt []float64, K, P int) {
	coordHVPlGo(o, e, d1, q, g, su, vt, K, P)
}

func coordHVPtVec[T gatejet.Float](o, x, y []T, f, h []float64, K, P int) {
	coordHVPtGo(o, x, y, f, h, K, P)
}

func sfence() {}

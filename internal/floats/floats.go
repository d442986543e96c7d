// Package floats holds the float-slice helpers that the tests of several packages and the
// example programs share: conversion between the two precisions and bitwise comparison.
package floats

import (
	"math"

	"github.com/gatejet/gatejet"
)

// Convert returns a copy of x with every element converted to To (rounded when To is float32).
func Convert[To, From gatejet.Float](x []From) []To {
	y := make([]To, len(x))
	for i, v := range x {
		y[i] = To(v)
	}
	return y
}

// To32 returns x rounded to float32.
func To32(x []float64) []float32 { return Convert[float32](x) }

// To64 returns x widened to float64.
func To64(x []float32) []float64 { return Convert[float64](x) }

// BitsEqual reports whether a and b hold the same float64 bit patterns (NaNs included).
func BitsEqual(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Float64bits(a[i]) != math.Float64bits(b[i]) {
			return false
		}
	}
	return true
}

package main

import (
	. "github.com/mmcloughlin/avo/build"
)

// softmaxjet generates softmaxjet/slab_amd64.s.
func softmaxjet() {
	coefPad := coefPadData()
	coef(f64, coefPad)
	coef(f32, coefPad)
	row(f32)
	row(f64)
	centreAVX32()
	centreAVX64()
	mean(f32)
	mean(f64)
	hvpOut(f64)
	hvpOut(f32)
	scaleRows(f64)
	scaleRows(f32)
	coordHVP(f64)
	coordHVP(f32)
	sfence()
	g := gateData()
	gate(f64, g)
	gate(f32, g)
}

func sfence() {
	routine("sfence", "The store fence after the non-temporal stores of rowAVX64, rowAVX32, scaleAVX64 and scaleAVX32.")
	SFENCE()
	RET()
}

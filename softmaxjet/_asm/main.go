// Command _asm generates softmaxjet/slab_amd64.s, the AVX/AVX2 loops of the second channel
// (coef, row, centre, mean, hvpOut) and of the softmax gate, with avo
// (github.com/mmcloughlin/avo). Each loop is written once here as a Go function of its element
// type (elem below) and generated for float64 and for float32 data; the arithmetic is the Go
// loops' (slab_other.go, -tags purego), operation for operation and in their order, so the
// bits are the same. No FMA anywhere: Go rounds a product and a sum separately, and so must
// these loops. The Go declarations stay in slab_amd64.go (avo reads the signatures there for
// the argument offsets).
//
// Regenerate after changing this file (from the repository root):
//
//	go generate ./softmaxjet/
//
// or, here: go run . -out ../slab_amd64.s
//
// This is a module of its own (go.mod here), so the main module needs nothing of avo; the go
// tool ignores directories whose names begin with _.
package main

import (
	"fmt"

	. "github.com/mmcloughlin/avo/build"
	"github.com/mmcloughlin/avo/gotypes"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

func main() {
	Package("github.com/gatejet/gatejet/softmaxjet")
	ConstraintExpr("amd64,!purego")

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
	sfence()
	g := gateData()
	gate(f64, g)
	gate(f32, g)
	Generate()
}

// elem is the element type of the data slices; the arithmetic is in float64 except in the
// float32 row writer, which adds and multiplies float32 lanes as rowT does.
type elem struct {
	bits  int // 64 or 32
	size  int // bytes
	shift int // log2(size)
}

var (
	f64 = elem{bits: 64, size: 8, shift: 3}
	f32 = elem{bits: 32, size: 4, shift: 2}
)

// name is the routine's name for e: coefAVX64, coefAVX32.
func (e elem) name(base string) string { return fmt.Sprintf("%sAVX%d", base, e.bits) }

// lbl is the name of label l in e's routine with label prefix p: lbl("c", "p1") is c64_p1.
func (e elem) lbl(p, l string) string { return fmt.Sprintf("%s%d_%s", p, e.bits, l) }

// at is element i of the data at base: (base)(i*size).
func (e elem) at(base, i GPPhysical) Mem { return Mem{Base: base, Index: i, Scale: uint8(e.size)} }

// load puts four elements at m into the four float64 lanes of y (widened for float32).
func (e elem) load(m Mem, y VecPhysical) {
	if e.bits == 64 {
		VMOVUPD(m, y)
	} else {
		VCVTPS2PD(m, y)
	}
}

// store writes the four float64 lanes of y to m, rounded once to float32 for the float32 twin
// (through the low half of y).
func (e elem) store(y VecPhysical, m Mem) {
	if e.bits == 64 {
		VMOVUPD(y, m)
	} else {
		VCVTPD2PSY(y, y.AsX())
		VMOVUPS(y.AsX(), m)
	}
}

// storeScalar writes the float64 in the low lane of x to m, rounded once to float32 for the
// float32 twin (in x).
func (e elem) storeScalar(x VecPhysical, m Mem) {
	if e.bits == 64 {
		VMOVSD(x, m)
	} else {
		VCVTSD2SS(x, x, x)
		VMOVSS(x, m)
	}
}

// loadScalar puts the element at m into the low float64 lane of x (widened for float32).
func (e elem) loadScalar(m Mem, x VecPhysical) {
	if e.bits == 64 {
		VMOVSD(m, x)
	} else {
		VCVTSS2SD(m, x, x)
	}
}

// addr is the frame address of an argument or result, for instructions that take it as a
// memory operand (avo's Load and Store pick their own moves).
func addr(c gotypes.Component) Mem {
	b, err := c.Resolve()
	if err != nil {
		panic(err)
	}
	return b.Addr
}

// routine starts the TEXT of the Go declaration name, NOSPLIT, with doc as its first lines.
func routine(name string, doc ...string) {
	Implement(name)
	Attributes(NOSPLIT)
	Comment(doc...)
}

// broadcastQ sets the four int64 lanes of y to v, through AX and the low half of y.
func broadcastQ(v uint64, y VecPhysical) {
	MOVQ(U64(v), RAX)
	MOVQ(RAX, y.AsX())
	VPBROADCASTQ(y.AsX(), y)
}

// mem is (base) plus disp.
func mem(base GPPhysical, disp int) Mem { return Mem{Base: base, Disp: disp} }

// memx is disp(base)(index*scale).
func memx(disp int, base, index GPPhysical, scale uint8) Mem {
	return Mem{Disp: disp, Base: base, Index: index, Scale: scale}
}

func sfence() {
	routine("sfence", "The store fence after the non-temporal stores of rowAVX64 and rowAVX32.")
	SFENCE()
	RET()
}

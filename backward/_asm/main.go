// Command _asm generates backward/vec_amd64.s, the AVX loops of the stride-1 softmax backward,
// with avo (github.com/mmcloughlin/avo). Each loop is written once here and generated for
// float64 and for float32 data (elem below): the float32 twin widens every element to float64
// as it is loaded and rounds once as it is stored, so both do the Go loops' operations in
// their order and give their bits. The Go declarations stay in vec_amd64.go, each with the
// Go loop it must match (avo reads the signatures from there for the argument offsets); the
// pure-Go twins are vec_other.go (-tags purego, or not amd64).
//
// Regenerate after changing this file (from the repository root):
//
//	go generate ./backward/
//
// or, here: go run . -out ../vec_amd64.s
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
	Package("github.com/gatejet/gatejet/backward")
	ConstraintExpr("amd64,!purego")

	for _, e := range []elem{f64, f32} {
		dot(e)
	}
	for _, e := range []elem{f64, f32} {
		writeSoftmax(e)
	}
	for _, e := range []elem{f64, f32} {
		dotRows4(e)
	}
	for _, e := range []elem{f64, f32} {
		writeRow(e)
	}
	Generate()
}

// elem is the element type of the data slices; the arithmetic is in float64 either way.
type elem struct {
	bits  int // 64 or 32
	size  int // bytes
	shift int // log2(size)
}

var (
	f64 = elem{bits: 64, size: 8, shift: 3}
	f32 = elem{bits: 32, size: 4, shift: 2}
)

// name is the routine's name for e: dotAVX64, dotAVX32.
func (e elem) name(base string) string { return fmt.Sprintf("%sAVX%d", base, e.bits) }

// label is a label of e's routine: d64_loop, d32_loop.
func (e elem) label(prefix, l string) string { return fmt.Sprintf("%s%d_%s", prefix, e.bits, l) }

// at is element i of the data at base: (base)(i*size).
func (e elem) at(base, i GPPhysical) Mem { return Mem{Base: base, Index: i, Scale: uint8(e.size)} }

// load puts four elements at m into the four float64 lanes of y.
func (e elem) load(m Mem, y VecPhysical) {
	if e.bits == 64 {
		VMOVUPD(m, y)
	} else {
		VCVTPS2PD(m, y)
	}
}

// mul multiplies y by the four elements at m, in float64; the float32 twin widens them into
// tmp first.
func (e elem) mul(m Mem, y, tmp VecPhysical) {
	if e.bits == 64 {
		VMULPD(m, y, y)
	} else {
		VCVTPS2PD(m, tmp)
		VMULPD(tmp, y, y)
	}
}

// store writes the four float64 lanes of y to m, rounded once to float32 for the float32 twin
// (in place, through the low half of y).
func (e elem) store(y VecPhysical, m Mem) {
	if e.bits == 64 {
		VMOVUPD(y, m)
	} else {
		x := y.AsX()
		VCVTPD2PSY(y, x)
		VMOVUPS(x, m)
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

// loop4 runs body for AX = 0, 4, 8, … while AX < CX.
func loop4(e elem, prefix string, body func()) {
	top, done := e.label(prefix, "loop"), e.label(prefix, "done")
	Label(top)
	CMPQ(RAX, RCX)
	JAE(LabelRef(done))
	body()
	ADDQ(U8(4), RAX)
	JMP(LabelRef(top))
	Label(done)
}

func dot(e elem) {
	Implement(e.name("dot"))
	Attributes(NOSPLIT)
	if e.bits == 64 {
		Comment("The four interleaved partial sums of Σ a_i·b_i over the first len(a) &^ 3 elements:",
			"lane j adds a_i·b_i for i ≡ j (mod 4) in index order, each product rounded, then the",
			"sum (as dot).")
	} else {
		Comment("dotAVX64 for float32 data, each element widened to float64 first.")
	}
	Load(Param("a").Base(), RSI)
	Load(Param("a").Len(), RCX)
	Load(Param("b").Base(), RDI)
	ANDQ(I8(-4), RCX)
	XORQ(RAX, RAX)
	VXORPD(Y0, Y0, Y0)
	loop4(e, "d", func() {
		e.load(e.at(RSI, RAX), Y1)
		e.mul(e.at(RDI, RAX), Y1, Y2)
		VADDPD(Y1, Y0, Y0)
	})
	VMOVUPD(Y0, addr(Return("s0")))
	VZEROUPPER()
	RET()
}

// writeSoftmax generates writeSoftmaxAVX64 and writeSoftmaxAVX32, dx_i = y_i·(dy_i − av).
func writeSoftmax(e elem) {
	if e.bits == 64 {
		write(e, "writeSoftmax", "w", "dx_i = y_i·(dy_i − av) for the first len(dx) &^ 3 elements.")
	} else {
		write(e, "writeSoftmax", "w", "writeSoftmaxAVX64 for float32 data: computed in float64, rounded once to float32.")
	}
}

// writeRow generates writeRowAVX64 and writeRowAVX32, dx_i = y_i·(dy_i − a_i).
func writeRow(e elem) {
	if e.bits == 64 {
		write(e, "writeRow", "x", "dx_i = y_i·(dy_i − a_i) for the first len(dx) &^ 3 columns.")
	} else {
		write(e, "writeRow", "x", "writeRowAVX64 for float32 rows: computed in float64, rounded once.")
	}
}

// write is writeSoftmax, with the float64 av broadcast in Y0, and writeRow, with the float64
// slice a at R8: dx_i = y_i·(dy_i − av) or y_i·(dy_i − a_i), labels prefixed by label.
func write(e elem, base, label string, doc ...string) {
	Implement(e.name(base))
	Attributes(NOSPLIT)
	Comment(doc...)
	Load(Param("dx").Base(), RDI)
	Load(Param("dx").Len(), RCX)
	Load(Param("y").Base(), RSI)
	Load(Param("dy").Base(), RDX)
	var sub Op = Y0
	if base == "writeRow" {
		Load(Param("a").Base(), R8)
		sub = f64.at(R8, RAX)
	} else {
		VBROADCASTSD(addr(Param("av")), Y0)
	}
	ANDQ(I8(-4), RCX)
	XORQ(RAX, RAX)
	loop4(e, label, func() {
		e.load(e.at(RDX, RAX), Y1)
		VSUBPD(sub, Y1, Y1)
		e.mul(e.at(RSI, RAX), Y1, Y2)
		e.store(Y1, e.at(RDI, RAX))
	})
	VZEROUPPER()
	RET()
}

func dotRows4(e elem) {
	Implement(e.name("dotRows4"))
	Attributes(NOSPLIT)
	if e.bits == 64 {
		Comment("acc[i] += a[i]·b[i], then the same for rows a[stride:], a[2·stride:], a[3·stride:]",
			"(and b), in row order, for the first len(acc) &^ 3 columns.")
	} else {
		Comment("dotRows4AVX64 for float32 rows, each element widened to float64 first.")
	}
	Load(Param("acc").Base(), RDI)
	Load(Param("acc").Len(), RCX)
	Load(Param("a").Base(), RSI)
	Load(Param("b").Base(), RDX)
	Load(Param("stride"), R8)
	SHLQ(U8(e.shift), R8)
	ANDQ(I8(-4), RCX)
	XORQ(RAX, RAX)
	loop4(e, "r", func() {
		LEAQ(e.at(RSI, RAX), R9)
		LEAQ(e.at(RDX, RAX), R10)
		VMOVUPD(f64.at(RDI, RAX), Y0)
		for q := 0; q < 4; q++ {
			if q > 0 {
				ADDQ(R8, R9)
				ADDQ(R8, R10)
			}
			e.load(Mem{Base: R9}, Y1)
			e.mul(Mem{Base: R10}, Y1, Y2)
			VADDPD(Y1, Y0, Y0)
		}
		VMOVUPD(Y0, f64.at(RDI, RAX))
	})
	VZEROUPPER()
	RET()
}

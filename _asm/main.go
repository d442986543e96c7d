// Command _asm generates the AVX/AVX2 assembly of two packages with avo
// (github.com/mmcloughlin/avo): softmaxjet/slab_amd64.s, the loops of the second channel
// (coef, row, centre, mean, hvpOut), of the softmax gate and of the coordinate jets
// (coordscale.go) (softmaxjet.go and the files it names), and backward/vec_amd64.s, the loops of the stride-1 softmax backward (backward.go)
// and forward, its exponential included (forward.go).
// Each loop is written once as a Go function of its element type (elem below) and generated
// for float64 and for float32 data; the arithmetic is the Go loops' (slab_other.go and
// vec_other.go, -tags purego), operation for operation and in their order, so the bits are
// the same. No FMA anywhere: Go rounds a product and a sum separately, and so must these
// loops. The Go declarations stay in slab_amd64.go and vec_amd64.go (avo reads the
// signatures there for the argument offsets).
//
// Regenerate after changing this module (from the repository root):
//
//	go generate ./softmaxjet/ ./backward/
//
// which runs, in softmaxjet/_asm or backward/_asm (a go.work there makes this module the
// workspace): go run ../../_asm -out ../slab_amd64.s (or ../vec_amd64.s). The package is the
// name of the directory above the one it runs in.
//
// This is a module of its own (go.mod here), so the main module needs nothing of avo; the go
// tool ignores directories whose names begin with _.
package main

import (
	"fmt"
	"log"
	"os"
	"path/filepath"
	"strings"

	. "github.com/mmcloughlin/avo/build"
	"github.com/mmcloughlin/avo/gotypes"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

// families are the routines of each package, in the order of its file.
var families = map[string]func(){
	"softmaxjet": softmaxjet,
	"backward":   backward,
}

func main() {
	wd, err := os.Getwd()
	if err != nil {
		log.Fatal(err)
	}
	pkg := filepath.Base(filepath.Dir(wd))
	routines, ok := families[pkg]
	if !ok {
		log.Fatalf("_asm runs in softmaxjet/_asm or backward/_asm, not in %s", wd)
	}
	Package("github.com/gatejet/gatejet/" + pkg)
	ConstraintExpr("amd64,!purego")
	routines()
	Generate()
}

// elem is the element type of the data slices; the arithmetic is in float64 except in the
// float32 row writer of softmaxjet, which adds and multiplies float32 lanes as rowT does.
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

// labels is lbl with the prefix p.
func (e elem) labels(p string) func(string) string {
	return func(l string) string { return e.lbl(p, l) }
}

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

// routine starts the TEXT of e's routine base (as routine), with doc64 as its first lines for
// float64 data and doc32 for float32 data.
func (e elem) routine(base string, doc64, doc32 []string) {
	if e.bits == 64 {
		routine(e.name(base), doc64...)
	} else {
		routine(e.name(base), doc32...)
	}
}

// arg is an argument of the routine, by name ("len(s)" for the length of the slice s), and
// the register it is loaded into.
type arg struct {
	name string
	r    Register
}

// loadArgs loads the arguments in order: an integer's value, a slice's base address, or the
// length asked for.
func loadArgs(args ...arg) {
	for _, a := range args {
		if s, ok := strings.CutPrefix(a.name, "len("); ok {
			Load(Param(strings.TrimSuffix(s, ")")).Len(), a.r)
			continue
		}
		p := Param(a.name)
		if _, err := p.Resolve(); err != nil {
			p = p.Base()
		}
		Load(p, a.r)
	}
}

// roundDown sets dst to src rounded down to a multiple of n, a power of 2.
func roundDown(src, dst GPPhysical, n int) {
	MOVQ(src, dst)
	ANDQ(I8(-n), dst)
}

// whileBelow is the loop top: while i < n (unsigned), body and i += step; then on at exit.
func whileBelow(top, exit string, i GPPhysical, n Op, step int, body func()) {
	Label(top)
	CMPQ(i, n)
	JAE(LabelRef(exit))
	body()
	next(i, step)
	JMP(LabelRef(top))
}

// repeatBelow is the loop top that runs body at least once: body and i += step, again while
// i < n (unsigned).
func repeatBelow(top string, i GPPhysical, n Op, step Op, body func()) {
	Label(top)
	body()
	ADDQ(step, i)
	CMPQ(i, n)
	JB(LabelRef(top))
}

// next is i += step, by INCQ for 1.
func next(i GPPhysical, step int) {
	if step == 1 {
		INCQ(i)
	} else {
		ADDQ(U8(step), i)
	}
}

// across sets the low lane of y to the minimum or maximum of its four lanes, by the packed
// and scalar instructions pd and sd (VMINPD and VMINSD, or VMAXPD and VMAXSD), with tmp as
// scratch: the upper half against the lower, then the two lanes left.
func across(y, tmp VecPhysical, pd, sd func(...Op)) {
	x := y.AsX()
	VEXTRACTF128(U8(1), y, tmp)
	pd(tmp, x, x)
	VPERMILPD(U8(1), x, tmp)
	sd(tmp, x, x)
}

// horner sets acc to the polynomial c[0]·x^n + c[1]·x^(n−1) + … + c[n−1]·x (no constant term)
// in Horner's order: acc = c[0]·x, then acc = (acc + c[i])·x for each further c[i], each
// product and sum rounded on its own, as the Go loops nest them.
func horner(x, acc VecPhysical, c ...Mem) {
	VMULPD(c[0], x, acc)
	for _, k := range c[1:] {
		VADDPD(k, acc, acc)
		VMULPD(x, acc, acc)
	}
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

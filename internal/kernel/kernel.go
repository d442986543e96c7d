// Package kernel is the one table of gatejet's kernels. Each kernel is declared once, here:
// its name (which is also the stem of its device entry points), its family and, for row jets,
// its gate and channel, the lengths of its inputs and outputs as functions of its sizes, its
// scalar parameters, its CPU functions for both element types, and its device layout when it
// has device kernels. ops, cudaops, the launch planner, the emulator, cpuref and gpubench all
// read this table; none of them lists the kernels again.
//
// A gate's ten row-jet kernels (five channels, forward and VJP) and its four coordinate jets
// are declared together by one Gate value (gate.go); the kernels of the built-in gates, the softmax-family axis kernels,
// the activations and the batch kernels of graphs' ops are in table.go. A kernel with a nil
// Device (the batch kernels) runs on the CPU only.
package kernel

import (
	"math"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/gatejet/gatejet"
	"github.com/gatejet/gatejet/internal/check"
)

// ID identifies one kernel of the table. The zero ID is no kernel.
type ID uint16

// Family is an argument convention shared by several kernels: what the sizes (the Ints of a
// call) mean.
type Family uint8

const (
	// NoFamily is the family of the zero ID and of IDs not in the table.
	NoFamily Family = iota
	// RowJet kernels take sizes [N, K, P]: N rows ≥ 0, K atoms ≥ 1, P output columns ≥ 1.
	RowJet
	// Axis kernels take sizes [outer, n, inner]; every tensor is [outer, n, inner] and the
	// reduction runs along n.
	Axis
	// Elementwise kernels take sizes [len]; every slice has len elements.
	Elementwise
	// Batch kernels take sizes [N, K]: N rows of K elements, or N matrices K×K. They run on
	// the CPU only (the soft-argmin and the log-determinant of package graphs, the row
	// contractions of the coordinate jets' gradients).
	Batch
	// CoordJet kernels take the row jets' sizes [N, K, P]: the jets over the 2K primaries
	// (logits and latent coordinates) of a gate, whose decoded rows d0 and their derivatives
	// d1, d2 in the coordinates are [N,K,P] inputs.
	CoordJet
)

var familyNames = [...]string{NoFamily: "unknown", RowJet: "row_jet", Axis: "axis", Elementwise: "elementwise", Batch: "batch", CoordJet: "coord_jet"}

func (f Family) String() string {
	if int(f) < len(familyNames) {
		return familyNames[f]
	}
	return familyNames[NoFamily]
}

// NumInts is the number of sizes the family takes (0 for NoFamily).
func (f Family) NumInts() int {
	switch f {
	case RowJet, Axis, CoordJet:
		return 3
	case Elementwise:
		return 1
	case Batch:
		return 2
	}
	return 0
}

// Dim is the length of one operand as a function of the sizes.
type Dim uint8

const (
	NK     Dim = iota + 1 // N·K: logits, a direction v, dLogits, dV
	NKP                   // N·K·P: decoded, first, hvp, dDecoded
	NP                    // N·P: value
	NKKP                  // N·K·K·P: second
	NKK                   // N·K·K: a Gauss-Newton slab
	Whole                 // the product of every size: axis, elementwise and batch tensors
	N                     // N: one value per row or matrix of a batch
	N2K                   // N·2K: a direction over the primaries (coordinate jets)
	N2KP                  // N·2K·P: a coordinate jet's first channel and HVP
	N2K2KP                // N·2K·2K·P: a coordinate jet's second channel
	N2K2K                 // N·2K·2K: a coordinate jet's Gauss-Newton slab
)

// Len evaluates d for the sizes ints (the family's count, all ≥ 0); ok is false when the
// product overflows int.
func (d Dim) Len(ints []int) (n int, ok bool) {
	switch d {
	case NK:
		return mul(ints[0], ints[1])
	case NKP:
		return mul(ints[0], ints[1], ints[2])
	case NP:
		return mul(ints[0], ints[2])
	case NKKP:
		return mul(ints[0], ints[1], ints[1], ints[2])
	case NKK:
		return mul(ints[0], ints[1], ints[1])
	case N:
		return ints[0], true
	case N2K:
		return mul(ints[0], 2, ints[1])
	case N2KP:
		return mul(ints[0], 2, ints[1], ints[2])
	case N2K2KP:
		return mul(ints[0], 2, ints[1], 2, ints[1], ints[2])
	case N2K2K:
		return mul(ints[0], 2, ints[1], 2, ints[1])
	}
	return mul(ints...)
}

// Shape is the tensor shape of an operand of length d for sizes [N, K, P] (row and
// coordinate jets only).
func (d Dim) Shape(N, K, P int) []int {
	switch d {
	case N2K:
		return []int{N, 2 * K}
	case N2KP:
		return []int{N, 2 * K, P}
	case N2K2KP:
		return []int{N, 2 * K, 2 * K, P}
	case N2K2K:
		return []int{N, 2 * K, 2 * K}
	case NK:
		return []int{N, K}
	case NP:
		return []int{N, P}
	case NKKP:
		return []int{N, K, K, P}
	case NKK:
		return []int{N, K, K}
	}
	return []int{N, K, P}
}

func mul(xs ...int) (int, bool) {
	p := 1
	for _, x := range xs {
		if x != 0 && p > math.MaxInt/x {
			return 0, false
		}
		p *= x
	}
	return p, true
}

// Limits of the operand counts of any kernel.
const (
	MaxIn  = 5
	MaxOut = 3
)

// Operands are one call's slices in the kernel's order: In[:NumIn] and Out[:NumOut].
type Operands[T gatejet.Float] struct {
	In  [MaxIn][]T
	Out [MaxOut][]T
}

// CPU is a kernel's CPU function over element type T: it validates its operands, sizes and
// parameters itself and writes every output it is given (an output the kernel may skip is
// left alone when nil).
type CPU[T gatejet.Float] func(o *Operands[T], ints []int, floats []float64) error

// Spec is one kernel's declaration.
type Spec struct {
	// Name is the kernel's name in snake case; its device entry points are
	// gj_<Name>_f32 and gj_<Name>_f64.
	Name   string
	Family Family
	// Gate, Channel and VJP place a row-jet kernel in its gate's ten, Gate and Channel a
	// coordinate jet among its gate's four (nil Gate otherwise).
	Gate    *Gate
	Channel Channel
	VJP     bool
	// In and Out are the lengths of the operands, in order.
	In, Out []Dim
	// Skippable has bit i set when Out[i] may be nil on the CPU (the CPU function then does
	// not compute it); a device kernel writes every output.
	Skippable uint8
	// Floats is the number of floats a kernel without a gate takes (a gate's kernels take
	// the gate's).
	Floats int
	F64    CPU[float64]
	F32    CPU[float32]
	// Device is how the device kernels are built and launched; nil for a CPU-only kernel.
	Device *Device
}

// Device describes a kernel's device entry points.
type Device struct {
	// Module names the GJ_FAMILY_<Module> macro that selects the kernel's module of
	// cudaops/kernels/gatejet.cu.
	Module string
	// Shared is a row or coordinate jet's dynamic shared memory (the launch planner),
	// measured from the kernel itself (shared_layouts.go, generated); nil until measured.
	Shared *Shared
	// Width is a row or coordinate jet's parallel work a row, from which the planner picks
	// the block size: the class of its widest output row (JetWidth).
	Width Width
	// Floats is how the call's floats reach the kernel: the first one as the scalar s, or
	// all of them as a device array.
	Floats FloatsPassing
	// Warp: a row jet that also has a warp-per-row variant, one warp a row instead of one
	// block, with entry points gj_<Name>_warp_f32/_f64 (WarpSuffix); the launch planner
	// chooses between them.
	Warp bool
}

// WarpSuffix ends the entry-point stem of a kernel's warp-per-row variant: <Name>_warp.
const WarpSuffix = "_warp"

// FloatsPassing is how a kernel receives its floats.
type FloatsPassing uint8

const (
	// NoFloats: the kernel takes none.
	NoFloats FloatsPassing = iota
	// ScalarS: the kernel reads floats[0] as its scalar argument s.
	ScalarS
	// FloatsArray: the kernel reads every float from a device array of float64.
	FloatsArray
)

// Width is the parallel work of one row of a row or coordinate jet with K atoms and column
// tile CT, from which the planner picks the block size. The classes are in order of work
// (JetWidth takes the largest), K·K against K·CT aside: no jet's outputs mix them.
type Width uint8

const (
	WidthCols Width = iota // CT
	WidthKP                // K·CT
	WidthKK                // K·K
	WidthKKP               // K·K·CT
)

// JetWidth is the width of a jet whose outputs are out: the class of its widest output's row
// per column tile, the work its threads share (P columns counted as the tile's CT, 2K
// primaries as K atoms). A VJP's widest output is its decoded gradient, K·CT.
func JetWidth(out []Dim) Width {
	w := WidthCols
	for _, d := range out {
		var dw Width
		switch d {
		case NK, NKP, N2K, N2KP:
			dw = WidthKP
		case NKK, N2K2K:
			dw = WidthKK
		case NKKP, N2K2KP:
			dw = WidthKKP
		}
		w = max(w, dw)
	}
	return w
}

// Of evaluates the width.
func (w Width) Of(K, CT int) int {
	switch w {
	case WidthKP:
		return K * CT
	case WidthKK:
		return K * K
	case WidthKKP:
		return K * K * CT
	}
	return CT
}

// Shared is the dynamic shared memory one row of a row or coordinate jet carves with K atoms
// and column tile CT, in doubles: each field times its term, K·K + Kp·pow2(K) +
// Tile·K·(CT|1) + Cols·CT + One (the field K times the K atoms). The table's layouts are not
// written by hand: `go generate ./cudaops/...` measures each kernel on the host emulator and
// writes them into shared_layouts.go.
type Shared struct {
	K, Kp, Tile, Cols, One int
}

// Doubles evaluates the layout at K atoms and column tile CT (CT|1 is the odd row stride of a
// K×CT tile, gj_stride).
func (l Shared) Doubles(K, CT int) int {
	p := 1
	for p < K {
		p <<= 1
	}
	return l.K*K + l.Kp*p + l.Tile*K*(CT|1) + l.Cols*CT + l.One
}

// The registry: the built-in kernels of table.go, then any registered later (test gates).
var (
	regMu sync.Mutex
	specs atomic.Pointer[[]*Spec] // index ID; entry 0 is nil; never mutated once published
)

// register appends the specs and returns the ID of the first. Callers hold regMu.
func registerLocked(ss []Spec) ID {
	old := *specs.Load()
	if len(old)+len(ss) > math.MaxUint16 {
		panic("kernel: table full")
	}
	next := make([]*Spec, len(old), len(old)+len(ss))
	copy(next, old)
	first := ID(len(old))
	for i := range ss {
		s := ss[i]
		mustValid(&s)
		next = append(next, &s)
	}
	specs.Store(&next)
	return first
}

// mustValid panics on a declaration that is incomplete: a programming error of the table,
// reached at package initialisation (and so by every test).
func mustValid(s *Spec) {
	switch {
	case s.Name == "":
		panic("kernel: a kernel without a name")
	case s.Family == NoFamily:
		panic("kernel: " + s.Name + ": no family")
	case s.F64 == nil || s.F32 == nil:
		panic("kernel: " + s.Name + ": no CPU function for both element types")
	case len(s.In) == 0 || len(s.In) > MaxIn || len(s.Out) == 0 || len(s.Out) > MaxOut:
		panic("kernel: " + s.Name + ": operand counts out of range")
	case (s.Family == RowJet || s.Family == CoordJet) != (s.Gate != nil):
		panic("kernel: " + s.Name + ": a row or coordinate jet needs its gate, and only they have one")
	}
	for _, t := range All() {
		if t.Spec().Name == s.Name {
			panic("kernel: " + s.Name + " declared twice")
		}
	}
}

// Spec returns the kernel's declaration, or nil for an ID not in the table.
func (id ID) Spec() *Spec {
	t := *specs.Load()
	if int(id) >= len(t) {
		return nil
	}
	return t[id]
}

// Valid reports whether id is in the table.
func (id ID) Valid() bool { return id.Spec() != nil }

// String returns the kernel's name, or "kernel(N)" for an ID not in the table.
func (id ID) String() string {
	if s := id.Spec(); s != nil {
		return s.Name
	}
	return "kernel(" + strconv.Itoa(int(id)) + ")"
}

// Family returns the kernel's family (NoFamily for an ID not in the table).
func (id ID) Family() Family {
	if s := id.Spec(); s != nil {
		return s.Family
	}
	return NoFamily
}

// OnDevice reports whether the kernel has device entry points.
func (id ID) OnDevice() bool {
	s := id.Spec()
	return s != nil && s.Device != nil
}

// All returns every kernel of the table in ID order.
func All() []ID {
	t := *specs.Load()
	out := make([]ID, 0, len(t))
	for i := 1; i < len(t); i++ {
		out = append(out, ID(i))
	}
	return out
}

// ByName returns the kernel called name.
func ByName(name string) (ID, bool) {
	for _, id := range All() {
		if id.Spec().Name == name {
			return id, true
		}
	}
	return 0, false
}

// Sizes checks a call's sizes against the kernel's declaration and returns the declaration:
// a known kernel and the family's count of sizes (ErrParam), sizes ≥ 0 and, for row and
// coordinate jets, K ≥ 1 and P ≥ 1 (ErrShape).
func (id ID) Sizes(op string, ints []int) (*Spec, error) {
	sp := id.Spec()
	if sp == nil {
		return nil, check.Errorf(gatejet.ErrParam, op, "Kernel", "unknown kernel %v", id)
	}
	if want := sp.Family.NumInts(); len(ints) != want {
		return nil, check.Errorf(gatejet.ErrParam, op, "Ints", "%v wants %d sizes, got %d", id, want, len(ints))
	}
	for _, x := range ints {
		if x < 0 {
			return nil, check.Errorf(gatejet.ErrShape, op, "Ints", "%v: negative size in %v", id, ints)
		}
	}
	if (sp.Family == RowJet || sp.Family == CoordJet) && (ints[1] < 1 || ints[2] < 1) {
		return nil, check.Errorf(gatejet.ErrShape, op, "Ints", "%v: want K ≥ 1 and P ≥ 1, got K=%d P=%d", id, ints[1], ints[2])
	}
	return sp, nil
}

// Args checks a call's sizes (Sizes) and the count of its floats, the gate's or the
// kernel's Floats (ErrParam), and returns the kernel's declaration. The values of the floats are the gate's
// Check's business.
func (id ID) Args(op string, ints []int, floats []float64) (*Spec, error) {
	sp, err := id.Sizes(op, ints)
	if err != nil {
		return nil, err
	}
	want := sp.Floats
	if sp.Gate != nil {
		want = sp.Gate.NumFloats(ints[1])
	}
	if len(floats) != want {
		return nil, check.Errorf(gatejet.ErrParam, op, "Floats", "%v wants %d floats, got %d", id, want, len(floats))
	}
	return sp, nil
}

// Run runs the kernel's CPU function on o after checking its sizes and floats (Args). The
// CPU function validates the operands and the floats' values itself.
func Run[T gatejet.Float](op string, id ID, o *Operands[T], ints []int, floats []float64) error {
	sp, err := id.Args(op, ints, floats)
	if err != nil {
		return err
	}
	return CPUOf[T](sp)(o, ints, floats)
}

// CPUOf is the kernel's CPU function over element type T (sp.F64 or sp.F32).
func CPUOf[T gatejet.Float](sp *Spec) CPU[T] {
	if f, ok := any(sp.F64).(CPU[T]); ok {
		return f
	}
	return any(sp.F32).(CPU[T])
}

// ModuleKernels returns the entry-point stems of device module m: the names of its kernels,
// in ID order, each followed by <name>_warp when the kernel has a warp-per-row variant.
func ModuleKernels(m string) []string {
	var out []string
	for _, id := range All() {
		if d := id.Spec().Device; d != nil && d.Module == m {
			out = append(out, id.Spec().Name)
			if d.Warp {
				out = append(out, id.Spec().Name+WarpSuffix)
			}
		}
	}
	return out
}

// Modules returns the device modules of the table (Device.Module), in the order of their
// first kernel.
func Modules() []string {
	var out []string
	for _, id := range All() {
		if d := id.Spec().Device; d != nil && !slices.Contains(out, d.Module) {
			out = append(out, d.Module)
		}
	}
	return out
}

// NumIn is the number of inputs the kernel takes (0 for an ID not in the table).
func (id ID) NumIn() int {
	if s := id.Spec(); s != nil {
		return len(s.In)
	}
	return 0
}

// NumOut is the number of outputs the kernel writes (0 for an ID not in the table).
func (id ID) NumOut() int {
	if s := id.Spec(); s != nil {
		return len(s.Out)
	}
	return 0
}

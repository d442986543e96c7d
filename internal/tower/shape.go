package tower

import (
	"math"
	"unsafe"

	"github.com/gatejet/gatejet"
	"github.com/gatejet/gatejet/internal/check"
)

// Float is the element type of the jets: float32 or float64. It has the type set of
// softmaxjet.Float, so that a type parameter of one satisfies the other.
type Float interface{ ~float32 | ~float64 }

// Shape is a batch of N rows, each gating K atoms whose decoded values have P output columns,
// with softmaxjet.Shape's fields and layouts (convert one with tower.Shape(sh)):
//
//	logits [N,K]   decoded [N,K,P]   value [N,P]   first [N,K,P]   second [N,K,K,P]
//
// N = 0 is a valid (empty) batch; K and P must be at least 1.
type Shape struct{ N, K, P int }

// Check reports an ErrShape error unless N ≥ 0, K ≥ 1, P ≥ 1 and N·K·K·P fits in an int.
func (sh Shape) Check(op string) error { return check.BatchShape(op, sh.N, sh.K, sh.P) }

// addInts returns the sum of non-negative sizes, and false if it overflows int.
func addInts(xs ...int) (int, bool) {
	s := 0
	for _, x := range xs {
		if x < 0 || s > math.MaxInt-x {
			return 0, false
		}
		s += x
	}
	return s, true
}

// slot is a slice argument of a call: its name, its length and the length wanted of it, and
// its memory for the overlap checks. An output may be nil (skipped) and must share no memory
// with any other argument, because the rows are written while the inputs are read.
type slot struct {
	name      string
	len, want int
	output    bool
	isNil     bool
	mem       []byte
}

// in is an input slot.
func in[T Float](name string, s []T, want int) slot {
	return slot{name: name, len: len(s), want: want, isNil: s == nil, mem: memOf(s)}
}

// outSlot is an output slot (nil skips the output).
func outSlot[T Float](name string, s []T, want int) slot {
	sl := in(name, s, want)
	sl.output = true
	return sl
}

// memOf views a slice's memory as bytes, so that slices of different element types can be
// compared with check.Overlap.
func memOf[T Float](s []T) []byte {
	var zero T
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(s))), len(s)*int(unsafe.Sizeof(zero)))
}

// checkLens reports an ErrSize error naming the first slot whose length is not the one wanted
// (a nil output is skipped).
func checkLens(op string, sh Shape, slots ...slot) error {
	for _, s := range slots {
		if s.output && s.isNil || s.len == s.want {
			continue
		}
		return check.Errorf(gatejet.ErrSize, op, s.name, "want %d elements for N=%d K=%d P=%d, got %d", s.want, sh.N, sh.K, sh.P, s.len)
	}
	return nil
}

// checkDisjoint reports an ErrParam error naming the first output that shares memory with
// another slot, input or output.
func checkDisjoint(op string, slots ...slot) error {
	for i, o := range slots {
		if !o.output || len(o.mem) == 0 {
			continue
		}
		for j, s := range slots {
			if j != i && check.Overlap(o.mem, s.mem) {
				return overlapErr(op, o.name, s.name)
			}
		}
	}
	return nil
}

// checkGateDisjoint reports an ErrParam error naming the first output that shares memory with
// the logistic gate's alpha or beta, which are read while the outputs are written.
func checkGateDisjoint(op string, alpha, beta []float64, slots ...slot) error {
	a, b := memOf(alpha), memOf(beta)
	for _, o := range slots {
		switch {
		case !o.output:
		case check.Overlap(o.mem, a):
			return overlapErr(op, o.name, "alpha")
		case check.Overlap(o.mem, b):
			return overlapErr(op, o.name, "beta")
		}
	}
	return nil
}

func overlapErr(op, out, other string) error {
	return check.Errorf(gatejet.ErrParam, op, out, "%s overlaps %s: an output must share no memory with the other arguments", out, other)
}

package softmaxjet

import (
	"unsafe"

	"github.com/gatejet/gatejet"
	"github.com/gatejet/gatejet/internal/check"
)

// Float is the element type of every kernel: float32 or float64. Whatever the element type,
// the per-row scalars (gate, reductions) are computed in float64; see the package doc for
// the one place float32 arithmetic is used.
type Float interface{ ~float32 | ~float64 }

// Shape is a batch of N rows, each gating K atoms whose decoded values have P output columns.
// N = 0 is a valid (empty) batch; K and P must be at least 1.
//
// Layouts, row-major with rows stacked:
//
//	logits  [N,K]     decoded [N,K,P]   value [N,P]
//	first   [N,K,P]   second  [N,K,K,P] hvp   [N,K,P]   gaussNewton [N,K,K]
type Shape struct{ N, K, P int }

// Check reports an ErrShape error unless N ≥ 0, K ≥ 1, P ≥ 1 and every buffer size the shape
// implies fits in an int.
func (sh Shape) Check(op string) error { return check.BatchShape(op, sh.N, sh.K, sh.P) }

// LogitsLen is the length of logits (and of a direction v): N·K.
func (sh Shape) LogitsLen() int { return sh.N * sh.K }

// DecodedLen is the length of decoded values: N·K·P.
func (sh Shape) DecodedLen() int { return sh.N * sh.K * sh.P }

// ValueLen is the length of the value channel: N·P.
func (sh Shape) ValueLen() int { return sh.N * sh.P }

// FirstLen is the length of the first channel and of a Hessian-vector product: N·K·P.
func (sh Shape) FirstLen() int { return sh.N * sh.K * sh.P }

// SecondLen is the length of the second channel: N·K·K·P.
func (sh Shape) SecondLen() int { return sh.N * sh.K * sh.K * sh.P }

// GNLen is the length of the Gauss-Newton slabs: N·K·K.
func (sh Shape) GNLen() int { return sh.N * sh.K * sh.K }

// buf names a slice argument, the length the shape requires of it and its memory.
type buf struct {
	name     string
	got      int
	want     int
	optional bool // a nil slice is allowed (the output is skipped)
	isNil    bool
	out      bool   // an output: it must share no memory with any other argument
	mem      []byte // the slice's memory, for the overlap check
}

// need is an input of the given length.
func need[T Float](name string, s []T, want int) buf {
	return buf{name: name, got: len(s), want: want, mem: bytesOf(s)}
}

// out is an output of the given length.
func out[T Float](name string, s []T, want int) buf {
	return buf{name: name, got: len(s), want: want, out: true, mem: bytesOf(s)}
}

// opt is an output of the given length that may be nil (skipped).
func opt[T Float](name string, s []T, want int) buf {
	return buf{name: name, got: len(s), want: want, optional: true, isNil: s == nil, out: true, mem: bytesOf(s)}
}

// bytesOf views a slice's memory as bytes, so that slices of different element types (the
// outputs and the float64 gate parameters) can be compared with check.Overlap.
func bytesOf[T Float](s []T) []byte {
	var zero T
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(s))), len(s)*int(unsafe.Sizeof(zero)))
}

// validate checks a kernel call: the shape and every buffer length, the gate (check.InvTau,
// or check.LogisticGate: lengths, finite values, |α| ≤ gatejet.MaxLogisticAlpha), then that
// no output overlaps an input (α and β included) or another output.
func validate(op string, sh Shape, g gate, bufs ...buf) error {
	if err := checkLengths(op, sh, bufs...); err != nil {
		return err
	}
	if g.logistic {
		if err := check.LogisticGate(op, sh.K, g.alpha, g.beta); err != nil {
			return err
		}
	} else if err := check.InvTau(op, g.s); err != nil {
		return err
	}
	if err := checkOverlap(op, bufs...); err != nil {
		return err
	}
	return checkParamOverlap(op, g.alpha, g.beta, bufs...)
}

// checkLengths checks the shape and every buffer length.
func checkLengths(op string, sh Shape, bufs ...buf) error {
	if err := sh.Check(op); err != nil {
		return err
	}
	for _, b := range bufs {
		if b.optional && b.isNil {
			continue
		}
		if b.got != b.want {
			return check.Errorf(gatejet.ErrSize, op, b.name, "want %d elements for N=%d K=%d P=%d, got %d", b.want, sh.N, sh.K, sh.P, b.got)
		}
	}
	return nil
}

// checkOverlap reports an ErrParam error naming an output that shares memory with another
// argument, input or output: the kernels read their inputs while they write, row by row and
// from several goroutines, so an overlap would give a wrong result, not an in-place one. It
// is the last check of a call (a few comparisons of addresses per pair of arguments).
func checkOverlap(op string, bufs ...buf) error {
	for i := range bufs {
		b := &bufs[i]
		if !b.out || len(b.mem) == 0 {
			continue
		}
		for j := range bufs {
			if j != i && check.Overlap(b.mem, bufs[j].mem) {
				return overlapError(op, b.name, bufs[j].name)
			}
		}
	}
	return nil
}

// overlapError is the ErrParam error of an output that shares memory with another argument.
func overlapError(op, out, other string) error {
	return check.Errorf(gatejet.ErrParam, op, out, "%s overlaps %s: an output must share no memory with the other arguments", out, other)
}

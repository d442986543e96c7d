package dispatch

import (
	"math"
	"sync"

	"github.com/gatejet/gatejet"
	"github.com/gatejet/gatejet/internal/check"
	"github.com/gatejet/gatejet/internal/kernel"
)

// Bound is a kernel call whose kernel, sizes and scalars are fixed and checked once, by Bind:
// an op's call, of which only the operands change from run to run. RunBound runs it. The zero
// Bound is bound to no kernel, and RunBound refuses it.
type Bound struct {
	kernel Kernel
	ints   []int
	floats []float64
	sp     *kernel.Spec
	work   int // output elements (Call.Work)
	in     [kernel.MaxIn]int
	out    [kernel.MaxOut]int
}

// Bind checks kernel k's sizes ints and scalars floats as Check does (a known kernel, the
// counts, the sizes and the gate's check of the floats; the errors are Check's, of operation
// op) and returns the call bound to them. It keeps ints and floats, which must not change
// afterwards.
func Bind(op string, k Kernel, ints []int, floats []float64) (Bound, error) {
	sp, err := k.id().Args(op, ints, floats)
	if err != nil {
		return Bound{}, err
	}
	b := Bound{kernel: k, ints: ints, floats: floats, sp: sp}
	for i, d := range sp.In {
		if b.in[i], err = boundLen(op, k, d, ints); err != nil {
			return Bound{}, err
		}
	}
	for i, d := range sp.Out {
		if b.out[i], err = boundLen(op, k, d, ints); err != nil {
			return Bound{}, err
		}
		if b.work > math.MaxInt-b.out[i] {
			return Bound{}, check.Errorf(gatejet.ErrSize, op, "Ints", "%v: sizes %v overflow int", k, ints)
		}
		b.work += b.out[i]
	}
	if g := sp.Gate; g != nil {
		if err := g.Check(op, ints[1], floats); err != nil {
			return Bound{}, err
		}
	}
	return b, nil
}

func boundLen(op string, k Kernel, d kernel.Dim, ints []int) (int, error) {
	n, ok := d.Len(ints)
	if !ok {
		return 0, check.Errorf(gatejet.ErrSize, op, "Ints", "%v: sizes %v overflow int", k, ints)
	}
	return n, nil
}

// Kernel is the kernel the call is bound to.
func (b *Bound) Kernel() Kernel { return b.kernel }

// InLen is the length of input i (OutLen: of output i) that the bound kernel declares for its
// sizes, and 0 past the kernel's counts.
func (b *Bound) InLen(i int) int { return b.in[i] }

// OutLen is the length of output i the bound kernel declares for its sizes (see InLen).
func (b *Bound) OutLen(i int) int { return b.out[i] }

// RunBound computes the bound call on the operands o, which must have the lengths the kernel
// declares (InLen, OutLen; a skippable output may be nil), as Run computes the Call of the
// same kernel, sizes, scalars and operands: the same paths, counters and errors. On the
// CPU path it runs the kernel's CPU function straight away, without checking again what Bind
// checked: the function checks its operands itself. A device path goes through Run.
func RunBound[T gatejet.Float](b *Bound, o Operands[T]) (Path, error) {
	if b.sp == nil {
		return PathCPU, check.Errorf(gatejet.ErrParam, runOp, "", "a call bound to no kernel")
	}
	cb := callPool.Get().(*callBuf)
	c := &cb.call
	*Ops[T](c) = o
	var p Path
	var err error
	if m := CurrentMode(); m == ModeRequired || m == ModeAuto && autoBackend(b.sp.Device != nil, b.kernel, b.work) != nil {
		c.Kernel, c.DType, c.Ints, c.Floats, c.Work = b.kernel, DTypeOf[T](), cb.ints[:copy(cb.ints[:], b.ints)], b.floats, b.work
		p, err = Run(c)
	} else {
		nCPU.Add(1)
		p, err = PathCPU, kernel.CPUOf[T](b.sp)(Ops[T](c), b.ints, b.floats)
	}
	*c = Call{} // drop the references to the caller's memory
	callPool.Put(cb)
	return p, err
}

// callBuf is a pooled Call with room for its sizes, so that steady-state calls allocate
// nothing: the operands handed to a CPU function through a func value, and a Call handed to
// a backend, would escape to the heap if they were on the stack.
type callBuf struct {
	call Call
	ints [3]int
}

var callPool = sync.Pool{New: func() any { return new(callBuf) }}

package check

import (
	"unsafe"

	"github.com/gatejet/gatejet"
)

// Arg is a slice argument of a batch call (softmaxjet's kernels, internal/tower's channels):
// its name, its length and the length the shape requires of it, and its memory for the
// overlap checks. An output must share no memory with any other argument, because the rows
// are written while the inputs are read.
type Arg struct {
	Name      string
	Len, Want int
	Output    bool
	Optional  bool // an output that may be nil (skipped)
	Nil       bool
	Mem       []byte
}

// In is an input of the given length.
func In[T any](name string, s []T, want int) Arg {
	return Arg{Name: name, Len: len(s), Want: want, Nil: s == nil, Mem: Mem(s)}
}

// Out is an output of the given length.
func Out[T any](name string, s []T, want int) Arg {
	a := In(name, s, want)
	a.Output = true
	return a
}

// OptOut is an output of the given length that may be nil (skipped).
func OptOut[T any](name string, s []T, want int) Arg {
	a := Out(name, s, want)
	a.Optional = true
	return a
}

// Mem views a slice's memory as bytes, so that slices of different element types (the outputs
// and the float64 gate parameters) can be compared with Overlap.
func Mem[T any](s []T) []byte {
	var zero T
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(s))), len(s)*int(unsafe.Sizeof(zero)))
}

// Lengths reports an ErrSize error naming the first argument whose length is not the one
// the batch of N rows of K atoms and P columns wants (a nil optional output is skipped).
func Lengths(op string, N, K, P int, args ...Arg) error {
	for _, a := range args {
		if a.Optional && a.Nil || a.Len == a.Want {
			continue
		}
		return Errorf(gatejet.ErrSize, op, a.Name, "want %d elements for N=%d K=%d P=%d, got %d", a.Want, N, K, P, a.Len)
	}
	return nil
}

// Disjoint reports an ErrParam error naming the first output that shares memory with another
// argument, input or output.
func Disjoint(op string, args ...Arg) error {
	for i := range args {
		o := &args[i]
		if !o.Output || len(o.Mem) == 0 {
			continue
		}
		for j := range args {
			if j != i && Overlap(o.Mem, args[j].Mem) {
				return overlapError(op, o.Name, args[j].Name)
			}
		}
	}
	return nil
}

// GateDisjoint reports an ErrParam error naming the first output that shares memory with the
// logistic gate's alpha or beta, which are read while the outputs are written (none for nil
// alpha and beta).
func GateDisjoint(op string, alpha, beta []float64, args ...Arg) error {
	names, params := [...]string{"alpha", "beta"}, [...][]float64{alpha, beta}
	return ParamsDisjoint(op, names[:], params[:], args...)
}

// ParamsDisjoint reports an ErrParam error naming the first output that shares memory with one
// of a gate's vector parameters params (named names[i]), which are read while the outputs are
// written; for each output the params are tried in order.
func ParamsDisjoint(op string, names []string, params [][]float64, args ...Arg) error {
	for i := range args {
		o := &args[i]
		if !o.Output {
			continue
		}
		for j, p := range params {
			if Overlap(o.Mem, Mem(p)) {
				return overlapError(op, o.Name, names[j])
			}
		}
	}
	return nil
}

func overlapError(op, out, other string) error {
	return Errorf(gatejet.ErrParam, op, out, "%s overlaps %s: an output must share no memory with the other arguments", out, other)
}

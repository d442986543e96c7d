package kernel

import (
	"unsafe"

	"github.com/gatejet/gatejet"
)

// DType is an element type of a kernel's operands.
type DType int8

const (
	// DTypeInvalid is the zero DType.
	DTypeInvalid DType = iota
	// Float32 is []float32 operands.
	Float32
	// Float64 is []float64 operands.
	Float64
)

// String returns "float32", "float64" or "invalid".
func (d DType) String() string {
	switch d {
	case Float32:
		return "float32"
	case Float64:
		return "float64"
	}
	return "invalid"
}

// Size is the size of one element in bytes (0 for DTypeInvalid).
func (d DType) Size() int {
	switch d {
	case Float32:
		return 4
	case Float64:
		return 8
	}
	return 0
}

// DTypeOf is the DType of element type T.
func DTypeOf[T gatejet.Float]() DType {
	var z T
	if unsafe.Sizeof(z) == 4 {
		return Float32
	}
	return Float64
}

// Entry is the name of the kernel's device entry point for element type dt:
// gj_<name>_f32 or gj_<name>_f64.
func (id ID) Entry(dt DType) string {
	suffix := "_f64"
	if dt == Float32 {
		suffix = "_f32"
	}
	return "gj_" + id.String() + suffix
}

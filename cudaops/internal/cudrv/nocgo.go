//go:build (gatejetcuda || cuda) && !cgo

package cudrv

// The driver and NVRTC are opened through cgo. Built with CGO_ENABLED=0, this package holds only
// this file, and the compiler's "undefined" error names what to change.
var _ = gatejetcuda_needs_cgo_set_CGO_ENABLED_1_with_a_C_compiler

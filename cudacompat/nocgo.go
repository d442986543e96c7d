//go:build !cgo

package cu

// The driver is opened through cgo. Built with CGO_ENABLED=0, the package holds only this file,
// and the compiler's "undefined" error names what to change.
var _ = gorgonia_org_cu_needs_cgo_set_CGO_ENABLED_1_with_a_C_compiler

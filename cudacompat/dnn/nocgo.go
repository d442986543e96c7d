//go:build !cgo

package cudnn

// cuDNN is opened through cgo: built with CGO_ENABLED=0, the compiler's "undefined" error names
// what to change.
var _ = gorgonia_org_cu_dnn_needs_cgo_set_CGO_ENABLED_1_with_a_C_compiler

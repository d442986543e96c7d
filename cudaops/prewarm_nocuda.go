//go:build !cuda

package cudaops

// Prewarm compiles and loads the device modules holding the given kernels. This build has no
// device backend (it was built without the tag cuda), so it returns an ErrDevice error;
// callers may ignore it.
func Prewarm(kernels ...Kernel) error {
	return deviceError0("built without the cuda tag: no device backend")
}

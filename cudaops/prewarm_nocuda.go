//go:build !gatejetcuda

package cudaops

// Prewarm compiles and loads the device modules holding the given kernels. This build has no
// device backend (it was built without the tag gatejetcuda), so it returns an ErrDevice
// error; callers may ignore it.
func Prewarm(kernels ...Kernel) error {
	return deviceError0("built without the gatejetcuda tag: no device backend")
}

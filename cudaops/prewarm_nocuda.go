//go:build !gatejetcuda

package cudaops

import "errors"

// noDeviceBuild is why this build registers no device backend of its own.
var noDeviceBuild = errors.New("built without the gatejetcuda tag: no device backend")

func init() { noDevice.Store(&noDeviceBuild) }

// Prewarm compiles and loads the device modules holding the given kernels. This build has no
// device backend (it was built without the tag gatejetcuda), so it returns an ErrDevice
// error; callers may ignore it.
func Prewarm(kernels ...Kernel) error {
	return deviceError0("%v", noDeviceBuild)
}

//go:build !gatejetcuda

package cudaops

import (
	"errors"

	"github.com/gatejet/gatejet"
	"github.com/gatejet/gatejet/internal/check"
	"github.com/gatejet/gatejet/internal/dispatch"
)

// noDeviceBuild is why this build registers no device backend of its own.
var noDeviceBuild = errors.New("built without the gatejetcuda tag: no device backend")

func init() { dispatch.SetUnavailable(noDeviceBuild) }

// Prewarm compiles and loads every device module, for both element types, so that the first
// call does not pay for compiling the kernels. This build has no device backend (it was built
// without the tag gatejetcuda), so it returns an ErrDevice error; callers may ignore it.
func Prewarm() error {
	return check.Errorf(gatejet.ErrDevice, "cudaops.Prewarm", "", "%v", noDeviceBuild)
}

//go:build !gatejetcuda

package cudaops

import (
	"testing"

	"github.com/gatejet/gatejet"
	"github.com/stretchr/testify/require"
)

// TestPrewarmWithoutCUDA: a build without the gatejetcuda tag has no device to prewarm; Prewarm says
// so with an ErrDevice error instead of pretending it compiled anything.
func TestPrewarmWithoutCUDA(t *testing.T) {
	err := Prewarm()
	require.ErrorIs(t, err, gatejet.ErrDevice)
	require.Contains(t, err.Error(), "gatejetcuda tag")
}

// TestUnavailableSaysWhy: without a backend, Unavailable is an ErrDevice error naming the
// missing build tag.
func TestUnavailableSaysWhy(t *testing.T) {
	err := Unavailable()
	require.ErrorIs(t, err, gatejet.ErrDevice)
	require.Contains(t, err.Error(), "gatejetcuda")
}

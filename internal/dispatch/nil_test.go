package dispatch

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gatejet/gatejet"
	"github.com/gatejet/gatejet/internal/testkit"
)

// requireParam checks an ErrParam *gatejet.Error of operation op and argument arg.
func requireParam(t *testing.T, err error, op, arg string) {
	t.Helper()
	testkit.RequireError(t, err, gatejet.ErrParam, op, arg)
}

// TestNilCall: the methods of a nil *Call return zero values or ErrParam errors, never panic.
func TestNilCall(t *testing.T) {
	var c *Call
	require.NotPanics(t, func() {
		require.Zero(t, c.OutputElements())
		in, out, err := c.Lengths()
		require.Nil(t, in)
		require.Nil(t, out)
		requireParam(t, err, "cudaops.Call", "")
		requireParam(t, c.Check(), "cudaops.Call", "")
	})
}

// TestNilLaunchError: a nil *LaunchError, or one without its parts, formats and unwraps
// without panicking; the parts it has are reached by errors.Is.
func TestNilLaunchError(t *testing.T) {
	cause := errors.New("out of memory")
	require.NotPanics(t, func() {
		var nilErr *LaunchError
		require.Equal(t, "<nil>", nilErr.Error())
		require.Nil(t, nilErr.Unwrap())
		empty := &LaunchError{}
		require.Equal(t, "<nil>", empty.Error())
		require.Empty(t, empty.Unwrap())
		require.False(t, errors.Is(empty, gatejet.ErrDevice))
		onlyCause := &LaunchError{Cause: cause}
		require.ErrorIs(t, onlyCause, cause)
	})
}

// nilBackend is a Backend whose methods dereference their receiver.
type nilBackend struct{ name string }

func (b *nilBackend) Name() string         { return b.name }
func (b *nilBackend) Launch(c *Call) error { return errors.New(b.name) }
func (b *nilBackend) Close() error         { return nil }

// TestRegisterNilPointer: a nil pointer of a Backend type is ignored like a nil Backend, so
// that Run never calls a method on it.
func TestRegisterNilPointer(t *testing.T) {
	before := Active()
	unregister := Register((*nilBackend)(nil))
	require.Equal(t, before, Active())
	unregister()
	require.Equal(t, before, Active())
	old := SetMode(ModeRequired)
	defer SetMode(old)
	require.NotPanics(t, func() {
		_, _ = Run(NewCall(KernelReLUForward, [][]float64{{1}}, [][]float64{{0}}, []int{1}, nil))
	})
}

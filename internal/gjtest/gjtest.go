// Package gjtest holds assertions that several packages' tests share.
package gjtest

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gatejet/gatejet"
)

// Error requires err to match kind and to be a *gatejet.Error of operation op and argument
// arg, and returns it.
func Error(t testing.TB, err error, kind error, op, arg string) *gatejet.Error {
	t.Helper()
	require.ErrorIs(t, err, kind)
	var ge *gatejet.Error
	require.True(t, errors.As(err, &ge), "want a *gatejet.Error, got %T: %v", err, err)
	require.Equal(t, op, ge.Op, "%v", err)
	require.Equal(t, arg, ge.Arg, "%v", err)
	return ge
}

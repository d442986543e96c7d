package graphs

import (
	"errors"
	"fmt"
	"testing"

	"github.com/gatejet/gatejet/internal/check"
	pkgerrors "github.com/pkg/errors"
	"github.com/stretchr/testify/require"
)

// contextual mimics Gorgonia's machine error: an embedded error with Err() but no Unwrap.
type contextual struct{ error }

func (c contextual) Err() error { return c.error }

type causer struct{ cause error }

func (c causer) Error() string { return "causer" }
func (c causer) Cause() error  { return c.cause }

func TestOpError(t *testing.T) {
	ge := check.Errorf(ErrNotSPD, "graphs.LogDetPlusRidge", "H", "row 0")
	require.Nil(t, OpError(nil))
	require.Nil(t, OpError(errors.New("plain")))
	require.Same(t, ge, OpError(ge))
	hidden := contextual{pkgerrors.Wrap(ge, "PC 3")}
	require.False(t, errors.Is(hidden, ErrNotSPD), "the reason OpError exists")
	require.Same(t, ge, OpError(hidden))
	require.Same(t, ge, OpError(fmt.Errorf("run: %w", pkgerrors.Wrap(hidden, "RunAll"))))
	require.Same(t, ge, OpError(errors.Join(errors.New("a"), hidden)))
	require.Same(t, ge, OpError(causer{hidden}))
	require.Nil(t, OpError(errors.Join(errors.New("a"), errors.New("b"))))
}

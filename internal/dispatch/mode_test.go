package dispatch

import (
	"errors"
	"testing"

	"github.com/gatejet/gatejet"
	"github.com/stretchr/testify/require"
)

func TestParseMode(t *testing.T) {
	for s, want := range map[string]Mode{
		"off": ModeOff, "OFF": ModeOff, " Auto ": ModeAuto, "auto": ModeAuto,
		"required": ModeRequired, "Required\n": ModeRequired,
	} {
		got, err := ParseMode(s)
		require.NoError(t, err, "%q", s)
		require.Equal(t, want, got, "%q", s)
	}
	for _, s := range []string{"", "on", "gpu", "require", "1", "auto,off"} {
		_, err := ParseMode(s)
		require.Error(t, err, "%q", s)
		require.True(t, errors.Is(err, gatejet.ErrParam), "%q: %v", s, err)
	}
}

func TestModeString(t *testing.T) {
	require.Equal(t, "off", ModeOff.String())
	require.Equal(t, "auto", ModeAuto.String())
	require.Equal(t, "required", ModeRequired.String())
	require.Equal(t, "Mode(7)", Mode(7).String())
	for _, m := range []Mode{ModeOff, ModeAuto, ModeRequired} {
		back, err := ParseMode(m.String())
		require.NoError(t, err)
		require.Equal(t, m, back)
	}
}

func TestModeFromEnv(t *testing.T) {
	m, err := modeFromEnv("", false)
	require.NoError(t, err)
	require.Equal(t, ModeAuto, m, "unset → auto")

	m, err = modeFromEnv("OFF", true)
	require.NoError(t, err)
	require.Equal(t, ModeOff, m)

	m, err = modeFromEnv("required", true)
	require.NoError(t, err)
	require.Equal(t, ModeRequired, m)

	m, err = modeFromEnv("", true)
	require.Error(t, err, "set but empty is invalid")
	require.Equal(t, ModeAuto, m)

	m, err = modeFromEnv("fast", true)
	require.True(t, errors.Is(err, gatejet.ErrParam))
	require.Equal(t, ModeAuto, m, "invalid → auto")
	require.Contains(t, err.Error(), EnvVar)
	require.Contains(t, err.Error(), `"fast"`)
}

// TestEnvAtInit checks the value the package itself read, in whatever environment the test
// binary was started with (go test normally leaves GATEJET_GPU unset).
func TestEnvAtInit(t *testing.T) {
	want, wantErr := modeFromEnv(lookupEnv())
	require.Equal(t, wantErr == nil, EnvError() == nil)
	old := SetMode(want)
	defer SetMode(old)
	require.Equal(t, want, CurrentMode())
}

func TestSetModeReturnsOld(t *testing.T) {
	old := SetMode(ModeOff)
	defer SetMode(old)
	require.Equal(t, ModeOff, SetMode(ModeRequired))
	require.Equal(t, ModeRequired, CurrentMode())
	require.Equal(t, ModeRequired, SetMode(ModeAuto))
	require.Equal(t, ModeAuto, CurrentMode())
}

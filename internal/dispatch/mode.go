package dispatch

import (
	"os"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/gatejet/gatejet"
	"github.com/gatejet/gatejet/internal/check"
)

// Mode is the process-wide GPU residency policy that Run applies to every Call.
type Mode int32

const (
	// ModeOff runs everything on the CPU; no backend is ever called.
	ModeOff Mode = iota
	// ModeAuto uses the registered backend when the call's Work reaches the kernel's
	// break-even, and falls back to the CPU on any device error (recorded, see
	// LastFallbackError). It is the default.
	ModeAuto
	// ModeRequired makes the device mandatory: without a backend, or when the backend fails,
	// Run returns an ErrDevice error and never runs the CPU code. A nil error under
	// ModeRequired therefore proves that the kernel ran on the device.
	ModeRequired
)

// EnvVar is the environment variable read once, at package initialisation, for the initial
// mode: "off", "auto" or "required" (case-insensitive, surrounding blanks ignored).
const EnvVar = "GATEJET_GPU"

// String returns "off", "auto" or "required" (or "Mode(n)" for an invalid value).
func (m Mode) String() string {
	switch m {
	case ModeOff:
		return "off"
	case ModeAuto:
		return "auto"
	case ModeRequired:
		return "required"
	}
	return "Mode(" + strconv.Itoa(int(m)) + ")"
}

// ParseMode parses "off", "auto" or "required", ignoring case and surrounding blanks. Anything
// else is an ErrParam error.
func ParseMode(s string) (Mode, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "off":
		return ModeOff, nil
	case "auto":
		return ModeAuto, nil
	case "required":
		return ModeRequired, nil
	}
	return ModeAuto, check.Errorf(gatejet.ErrParam, "cudaops.ParseMode", "mode",
		`want "off", "auto" or "required", got %q`, s)
}

var (
	mode     atomic.Int32
	envError error // set once in init, read-only afterwards
)

func init() {
	m, err := modeFromEnv(os.LookupEnv(EnvVar))
	mode.Store(int32(m))
	envError = err
}

// modeFromEnv is the pure part of init: unset → ModeAuto; invalid → ModeAuto and an error.
func modeFromEnv(v string, set bool) (Mode, error) {
	if !set {
		return ModeAuto, nil
	}
	m, err := ParseMode(v)
	if err != nil {
		return ModeAuto, check.Errorf(gatejet.ErrParam, "cudaops", EnvVar,
			`want "off", "auto" or "required", got %q; using "auto"`, v)
	}
	return m, nil
}

// SetMode sets the process-wide mode and returns the previous one. It is safe for concurrent
// use; calls already inside Run keep the mode they started with. An invalid value is stored
// as given and behaves like ModeOff.
func SetMode(m Mode) Mode { return Mode(mode.Swap(int32(m))) }

// CurrentMode returns the process-wide mode. Its initial value comes from GATEJET_GPU (unset
// or invalid: ModeAuto; see EnvError).
func CurrentMode() Mode { return Mode(mode.Load()) }

// EnvError reports an invalid GATEJET_GPU value found at initialisation (an ErrParam error),
// or nil when the variable was unset or valid.
func EnvError() error { return envError }

package cudaops

import "github.com/gatejet/gatejet/internal/dispatch"

// Mode is the process-wide GPU residency policy applied to every kernel call.
type Mode int32

const (
	// ModeOff runs everything on the CPU; no device backend is ever called.
	ModeOff Mode = iota
	// ModeAuto uses the device backend, when one is registered, for calls large enough to
	// gain from it, and falls back to the CPU on any device error (recorded, see
	// LastFallbackError). It is the default.
	ModeAuto
	// ModeRequired makes the device mandatory: without a backend, or when the backend fails,
	// a call returns an ErrDevice error and never runs the CPU code. A nil error under
	// ModeRequired therefore proves that the kernel ran on the device.
	ModeRequired
)

// EnvVar is the environment variable read once, at package initialisation, for the initial
// mode: "off", "auto" or "required" (case-insensitive, surrounding blanks ignored).
const EnvVar = "GATEJET_GPU"

// String returns "off", "auto" or "required" (or "Mode(n)" for an invalid value).
func (m Mode) String() string { return dispatch.Mode(m).String() }

// ParseMode parses "off", "auto" or "required", ignoring case and surrounding blanks. Anything
// else is an ErrParam error.
func ParseMode(s string) (Mode, error) {
	m, err := dispatch.ParseMode(s)
	return Mode(m), err
}

// SetMode sets the process-wide mode and returns the previous one. It is safe for concurrent
// use; calls already running keep the mode they started with. An invalid value is stored as
// given and behaves like ModeOff.
func SetMode(m Mode) Mode { return Mode(dispatch.SetMode(dispatch.Mode(m))) }

// CurrentMode returns the process-wide mode. Its initial value comes from GATEJET_GPU (unset
// or invalid: ModeAuto; see EnvError).
func CurrentMode() Mode { return Mode(dispatch.CurrentMode()) }

// EnvError reports an invalid GATEJET_GPU value found at initialisation (an ErrParam error),
// or nil when the variable was unset or valid.
func EnvError() error { return dispatch.EnvError() }

// Unavailable returns nil when a device backend is registered, and otherwise an ErrDevice
// error that says why none is: the build has no device backend (no gatejetcuda tag), or why
// the gatejetcuda backend did not open (no driver, no device, no NVRTC). A program that
// requires the GPU can report it before it starts work.
func Unavailable() error { return dispatch.Unavailable() }

// Path says where one computation ran (see ops.LastPath).
type Path int32

const (
	// PathCPU: the CPU ran it by policy (ModeOff, no backend, or a call too small to gain).
	PathCPU Path = iota
	// PathGPU: the device ran it.
	PathGPU
	// PathCPUFallback: the device was tried and failed (ModeAuto); the CPU ran it.
	PathCPUFallback
)

// String returns "cpu", "gpu" or "cpu-fallback".
func (p Path) String() string { return dispatch.Path(p).String() }

// Counts is a snapshot of the process-wide kernel-call counters.
type Counts struct {
	CPU          uint64 // calls that ran on the CPU by policy
	GPU          uint64 // calls the device backend ran
	CPUFallback  uint64 // ModeAuto calls whose device attempt failed and then ran on the CPU
	DeviceErrors uint64 // ModeRequired calls that returned an error instead of running
}

// Stats returns the counters of every kernel call since the program started. Take the
// difference of two snapshots to count the calls of one piece of work.
func Stats() Counts { return Counts(dispatch.Stats()) }

// LastFallbackError returns the device error behind the most recent ModeAuto fallback to the
// CPU (PathCPUFallback), or nil.
func LastFallbackError() error { return dispatch.LastFallbackError() }

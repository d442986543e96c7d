// Package cudaops runs gatejet's kernels on a GPU when one is available and worth it.
//
// # Dispatch
//
// Every kernel invocation is a Call: a Kernel name, host input and output slices (all
// []float64 or all []float32), integer sizes and float scalars, in the order documented on
// each Kernel constant. Run applies the process-wide residency Mode:
//
//   - ModeOff: always the CPU function the caller passes;
//   - ModeAuto (default): the registered Backend when the call's Work reaches the kernel's
//     BreakEven, with a recorded fallback to the CPU on any device error;
//   - ModeRequired: the Backend or an ErrDevice error, never a silent CPU run.
//
// The initial mode comes from the GATEJET_GPU environment variable ("off", "auto",
// "required"). Run reports the Path it took and keeps counters (Stats), so tests can prove a
// kernel really ran on the device.
//
// # Kernels and backends
//
// The default build is pure Go: it defines the seam and nothing that needs CUDA. The CUDA C
// source of every kernel is kernels/gatejet.cu (one text, float and double). The package
// cudaops/internal/emu compiles that same text for the host with a small emulation of the
// CUDA execution model and provides a Backend, so the kernels are tested by `go test ./...`
// without a GPU. Under the build tag `cuda` the package also compiles the source with NVRTC
// for the device's own architecture and registers a device Backend; see docs/gpu.md.
package cudaops

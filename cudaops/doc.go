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
// The CUDA C source of every kernel is kernels/gatejet.cu (package cudaops/kernels), one text
// for float and double, exposed here as KernelSource. The default build is pure Go and has no
// device backend. cudaops/internal/emu compiles the same source for the host with a small
// emulation of the CUDA execution model and provides a Backend, so `go test ./...` runs the
// kernels without a GPU. With the build tag cuda this package also has DeviceBackend, which
// compiles the source with NVRTC for the device's own architecture (ModuleCache, one module
// per family and element type) and is registered at initialisation when a device answers;
// cudaops/cudadoer adapts the kernels to Gorgonia's CUDADoer; cudaops/gpubench measures them.
// docs/gpu.md has the design, the commands and what still needs a GPU run.
package cudaops

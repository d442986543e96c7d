// Package cudaops runs gatejet's kernels on a GPU when one is available and worth it.
//
// # Dispatch
//
// Every kernel invocation is a Call: a Kernel (a typed identifier of gatejet's kernel table),
// its host operands of one element type (F64 or F32, inputs and outputs in the kernel's
// order), integer sizes and float scalars, as documented on Kernel. NewCall builds one. Run
// applies the process-wide residency Mode:
//
//   - ModeOff: always the kernel's CPU function (from the table);
//   - ModeAuto (default): the registered Backend when the call's Work reaches the kernel's
//     BreakEven, with a recorded fallback to the CPU on any device error;
//   - ModeRequired: the Backend or an ErrDevice error, never a silent CPU run.
//
// The initial mode comes from the GATEJET_GPU environment variable ("off", "auto",
// "required"). Run reports the Path it took and keeps counters (Stats), so tests can prove a
// kernel really ran on the device. A kernel without device entry points runs on the CPU in
// ModeAuto and is refused with ErrDevice in ModeRequired.
//
// # Kernels and backends
//
// The CUDA C source of every kernel is kernels/gatejet.cu (package cudaops/kernels), one text
// for float and double, exposed here as KernelSource. The default build is pure Go and has no
// device backend; the tests compile the same source for the host with a small emulation of
// the CUDA execution model, so `go test ./...` runs the kernels without a GPU. With gatejet's
// build tag gatejetcuda this package also has
// DeviceBackend, which compiles the source with NVRTC for the device's own architecture, or to
// PTX for the newest architecture NVRTC supports on a newer device (one compiled module per
// kernel module and element type), and is registered at initialisation when a device
// answers. It opens the CUDA driver and NVRTC with dlopen, so the build needs only cgo (a C
// compiler, CGO_ENABLED=1), and a binary without a driver or GPU runs on the CPU.
// cudaops/gpubench measures the kernels (same tag). Gorgonia's tag cuda is only for
// cudaops/cudadoer, which adapts the kernels to Gorgonia's CUDADoer (package ops's ops use it
// under that tag), and does not build DeviceBackend.
// docs/gpu.md has the design, the commands and what still needs a GPU run.
package cudaops

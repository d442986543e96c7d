// Package cudaops chooses where gatejet's kernels run: on a GPU when one is available and
// worth it, else on the CPU. The ops of package ops go through it; a program only sets the
// policy and reads what happened.
//
// # Mode
//
// The process-wide Mode (SetMode, CurrentMode) decides:
//
//   - ModeOff: always the CPU;
//   - ModeAuto (default): the GPU when a device backend is registered and the call is large
//     enough to gain from it, with a recorded fallback to the CPU on any device error
//     (LastFallbackError);
//   - ModeRequired: the GPU or an ErrDevice error, never a silent CPU run.
//
// The initial mode comes from the GATEJET_GPU environment variable (EnvVar: "off", "auto",
// "required"); EnvError reports an invalid value. Unavailable says why no device backend is
// registered; Prewarm compiles the device code before the first call. Stats counts where
// calls ran, and ops.LastPath gives the Path of one node's last computation.
//
// # Builds
//
// The default build is pure Go and has no device backend: ModeAuto runs the CPU and
// ModeRequired says why it cannot. With gatejet's build tag gatejetcuda this package also has
// DeviceBackend, which compiles the kernels' CUDA C source (cudaops/kernels) with NVRTC for
// the device's own architecture, or to PTX for the newest architecture NVRTC supports on a
// newer device, and is registered at initialisation when a device answers. It opens the CUDA
// driver and NVRTC with dlopen, so the build needs only cgo (a C compiler, CGO_ENABLED=1),
// and a binary without a driver or GPU runs on the CPU. cudaops/gpubench measures the
// kernels (same tag). Gorgonia's tag cuda is only for cudaops/cudadoer, which adapts the
// kernels to Gorgonia's CUDADoer (package ops's ops use it under that tag), and does not
// build DeviceBackend. docs/gpu.md has the design and the commands.
package cudaops

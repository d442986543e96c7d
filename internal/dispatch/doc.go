// Package dispatch runs the kernels of gatejet's kernel table on the CPU or on a registered
// device backend; package cudaops is its public face (the mode, the counters, availability).
//
// Every kernel invocation is a Call: a Kernel (a typed identifier of the table), its host
// operands of one element type (Float64 or Float32, inputs and outputs in the kernel's order),
// integer sizes and float scalars, as documented on Kernel. NewCall builds one. Run applies
// the process-wide residency Mode:
//
//   - ModeOff: always the kernel's CPU function (from the table);
//   - ModeAuto (default): the registered Backend when the call's Work reaches the kernel's
//     BreakEven, with a recorded fallback to the CPU on any device error;
//   - ModeRequired: the Backend or an ErrDevice error, never a silent CPU run.
//
// The initial mode comes from the GATEJET_GPU environment variable ("off", "auto",
// "required"). An op's call, whose kernel, sizes and scalars are fixed when the op is built,
// is bound and checked once (Bind) and run with its operands alone (RunBound), by the same
// rules. Run reports the Path it took and keeps counters (Stats), so tests can prove a
// kernel really ran on the device. A kernel without device entry points runs on the CPU in
// ModeAuto and is refused with ErrDevice in ModeRequired.
//
// The device backend (cudaops, build tag gatejetcuda) and the host emulator
// (cudaops/internal/emu) implement Backend and Register themselves; the error operations keep
// the names users see ("cudaops" for a kernel's run, which an op's run reaches).
package dispatch

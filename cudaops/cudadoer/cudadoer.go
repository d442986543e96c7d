//go:build cuda

// Package cudadoer lets a Gorgonia op run a cudaops kernel on device-resident values, through
// Gorgonia's CUDADoer interface: embed a Kernel in the op (build tag cuda) and set its fields.
//
// CUDADo loads the kernel's module into the machine's engine for the value's device on first
// use (compiled with NVRTC for that device's architecture, like the cudaops device backend,
// once per process: every engine loads the same image), then launches the kernel on the
// device pointers of the inputs and of prealloc, through the engine's batched context, and
// waits for it (see Launch). CopyToHost and CopyToDevice move a value between host and device
// through the same context, for an op that is staged through host; Sync waits for the
// machine's queued work. Every op of package ops uses this package under the tag.
//
// This package needs Gorgonia's cuda build (gorgonia v0.9.18), which gatejet builds with
// gorgonia.org/cu replaced by the module in cudacompat/: no CUDA header is needed to compile
// it, and the driver, NVRTC and cuBLAS are opened at run time (see docs/gpu.md, "Gorgonia's
// CUDA build").
package cudadoer

import (
	"fmt"
	"runtime"
	"slices"
	"sync"
	"unsafe"

	"gorgonia.org/cu"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/gorgonia/cuda"
	"gorgonia.org/tensor"

	"github.com/gatejet/gatejet"
	"github.com/gatejet/gatejet/cudaops/internal/launch"
	"github.com/gatejet/gatejet/cudaops/internal/modcache"
	"github.com/gatejet/gatejet/cudaops/internal/nvrtccomp"
	"github.com/gatejet/gatejet/internal/check"
	"github.com/gatejet/gatejet/internal/dispatch"
	"github.com/gatejet/gatejet/internal/kernel"
)

// Kernel describes one cudaops kernel invocation for an op to embed. Ints and Floats follow
// the kernel's conventions (see the cudaops Kernel constants); Output selects which of the
// kernel's outputs CUDADo returns in prealloc (the others are written to scratch device memory
// and dropped; use Launch to keep them).
type Kernel struct {
	Kernel dispatch.Kernel
	Ints   []int
	Floats []float64
	Output int
}

// CUDAFuncName returns the kernel's name (the module and entry point depend on the dtype and
// the device, which CUDADo resolves); "" for a nil *Kernel.
func (k *Kernel) CUDAFuncName() string {
	if k == nil {
		return ""
	}
	return k.Kernel.String()
}

func deviceErr(format string, args ...any) error {
	return check.Errorf(gatejet.ErrDevice, "cudadoer.CUDADo", "", format, args...)
}

func dtypeOf(v G.Value) (dispatch.DType, error) {
	switch v.Dtype() {
	case tensor.Float32:
		return dispatch.Float32, nil
	case tensor.Float64:
		return dispatch.Float64, nil
	}
	return dispatch.DTypeInvalid, check.Errorf(gatejet.ErrDType, "cudadoer.CUDADo", "", "want float32 or float64, got %v", v.Dtype())
}

// CUDADo implements gorgonia.CUDADoer: it runs the kernel with inputs (device values, in the
// kernel's In order) and writes output Output into prealloc, which must be a device value of
// the right size.
func (k *Kernel) CUDADo(extern G.External, dev G.Device, prealloc G.Value, inputs ...G.Value) (G.Value, error) {
	if k == nil {
		return nil, deviceErr("nil *Kernel")
	}
	if prealloc == nil {
		return nil, deviceErr("%s: CUDADo needs a preallocated output", k.Kernel)
	}
	if k.Output < 0 || k.Output >= k.Kernel.NumOut() {
		return nil, deviceErr("%s: output %d of %d", k.Kernel, k.Output, k.Kernel.NumOut())
	}
	outs := make([]G.Value, k.Kernel.NumOut())
	outs[k.Output] = prealloc
	if err := k.Launch(extern, dev, outs, inputs); err != nil {
		return nil, err
	}
	return prealloc, nil
}

// Launch runs the kernel with the given device inputs and outputs and returns when it has
// run. A nil output is written to scratch memory from the machine's arena and dropped. A nil
// *Kernel, an unknown kernel, a nil or host input, or a machine that is not a CUDA machine is
// an error.
func (k *Kernel) Launch(extern G.External, dev G.Device, outs, inputs []G.Value) error {
	if k == nil {
		return deviceErr("nil *Kernel")
	}
	if !k.Kernel.OnDevice() {
		return check.Errorf(gatejet.ErrParam, "cudadoer.CUDADo", "Kernel", "kernel %v has no device entry points", k.Kernel)
	}
	for i, v := range inputs {
		if v == nil {
			return check.Errorf(gatejet.ErrParam, "cudadoer.CUDADo", fmt.Sprintf("inputs[%d]", i), "nil value")
		}
	}
	machine, ok := extern.(G.CUDAMachine)
	if !ok {
		return deviceErr("%s: the machine (%T) is not a CUDA machine", k.Kernel, extern)
	}
	if len(inputs) != k.Kernel.NumIn() || len(outs) != k.Kernel.NumOut() {
		return deviceErr("%s: want %d inputs and %d outputs, got %d and %d", k.Kernel, k.Kernel.NumIn(), k.Kernel.NumOut(), len(inputs), len(outs))
	}
	dt, err := dtypeOf(inputs[0])
	if err != nil {
		return err
	}
	call := &dispatch.Call{Kernel: k.Kernel, Ints: k.Ints, Floats: k.Floats}
	inLens, outLens, err := call.Lengths()
	if err != nil {
		return err
	}
	// The floats are read on the device: their count and range as the table declares them.
	spec, err := kernel.ID(k.Kernel).Args("cudadoer.CUDADo", k.Ints, k.Floats)
	if err != nil {
		return err
	}
	if g := spec.Gate; g != nil {
		if err := g.Check("cudadoer.CUDADo", k.Ints[1], k.Floats); err != nil {
			return err
		}
	}
	for i, v := range inputs {
		if v.Size() != inLens[i] || v.Dtype() != inputs[0].Dtype() {
			return check.Errorf(gatejet.ErrSize, "cudadoer.CUDADo", fmt.Sprintf("inputs[%d]", i), "%s: want %d %v, got %d %v", k.Kernel, inLens[i], inputs[0].Dtype(), v.Size(), v.Dtype())
		}
	}
	for i, v := range outs {
		if v != nil && (v.Size() != outLens[i] || v.Dtype() != inputs[0].Dtype()) {
			return check.Errorf(gatejet.ErrSize, "cudadoer.CUDADo", fmt.Sprintf("outs[%d]", i), "%s: want %d %v, got %d %v", k.Kernel, outLens[i], inputs[0].Dtype(), v.Size(), v.Dtype())
		}
	}
	for i, v := range inputs {
		if err := onDevice(v, fmt.Sprintf("inputs[%d]", i)); err != nil {
			return err
		}
	}
	for i, v := range outs {
		if err := onDevice(v, fmt.Sprintf("outs[%d]", i)); err != nil {
			return err
		}
	}

	eng, err := engine(machine, dev)
	if err != nil {
		return err
	}
	info, err := deviceOf(dev)
	if err != nil {
		return err
	}
	suffix := "f64"
	if dt == dispatch.Float32 {
		suffix = "f32"
	}
	// The planner picks the entry point (the block-per-row or the warp-per-row variant) with
	// the grid, block and shared memory that go with it, for this device's limits.
	cfg, err := launch.Plan(kernel.ID(k.Kernel), k.Ints, suffix, info.lim, launch.Options{})
	if err != nil {
		return deviceErr("%s: %v", k.Kernel, err)
	}
	if cfg.Grid == 0 {
		return nil
	}
	fn, err := k.function(eng, info, dt, cfg.Func)
	if err != nil {
		return err
	}

	in := make([]uint64, len(inputs))
	for i, v := range inputs {
		in[i] = uint64(v.Uintptr())
	}
	out := make([]uint64, len(outs))
	size := int64(dt.Size())
	for i, v := range outs {
		if v != nil {
			out[i] = uint64(v.Uintptr())
			continue
		}
		bytes := max(size*int64(outLens[i]), 8)
		mem, err := machine.Get(dev, bytes)
		if err != nil {
			return deviceErr("%s: scratch output %d: %v", k.Kernel, i, err)
		}
		// Returned to the arena after the flush below, when the kernel has finished.
		defer machine.Put(dev, mem, bytes)
		out[i] = uint64(mem.Uintptr())
	}

	// Finish the work queued before this call (the launches and copies that made the inputs),
	// so that an error of that work is reported as such and the flush below reads this
	// call's results alone.
	if err := flush(eng); err != nil {
		return deviceErr("%s: device work queued before the launch failed: %v", k.Kernel, err)
	}
	ctx := eng.Context()
	var floats uint64
	var hostFloats []float64 // kept alive until the copy has run (the flush below)
	ds := kernel.ID(k.Kernel).Spec().Device
	if ds.Floats == kernel.FloatsArray {
		hostFloats = append([]float64(nil), k.Floats...)
		bytes := int64(8 * len(hostFloats))
		mem, err := machine.Get(dev, bytes)
		if err != nil {
			return deviceErr("%s: gate parameters: %v", k.Kernel, err)
		}
		defer machine.Put(dev, mem, bytes)
		floats = uint64(mem.Uintptr())
		ctx.MemcpyHtoD(cu.DevicePtr(floats), unsafe.Pointer(unsafe.SliceData(hostFloats)), bytes)
	}
	s := 0.0
	if ds.Floats == kernel.ScalarS {
		s = k.Floats[0]
	}
	p := launch.MakeParams(in, out, floats, k.Ints, cfg, s)
	args := make([]unsafe.Pointer, len(p))
	for i := range p {
		args[i] = unsafe.Pointer(&p[i])
	}
	// LaunchAndSync only queues the launch and a cuCtxSynchronize in the batched context: it
	// returns before either has run, so ctx.Errors() right after it reads the results of the
	// batch processed before (stale). flush processes the queue on this goroutine, as
	// Gorgonia's own flush instruction does, and reads the results of this batch: the launch,
	// and the synchronisation, which reports the kernel's own failures.
	ctx.LaunchAndSync(fn, cfg.Grid, 1, 1, cfg.Block, 1, 1, cfg.SharedBytes, cu.NoStream, args)
	err = flush(eng)
	runtime.KeepAlive(hostFloats)
	runtime.KeepAlive(p)
	if err != nil {
		return deviceErr("%s: %v", k.Kernel, err)
	}
	return nil
}

// engine returns the engine of device dev of the machine (the element of the machine's own
// slice: its batched context is the one the machine's other ops queue their work in).
func engine(machine G.CUDAMachine, dev G.Device) (*cuda.Engine, error) {
	engines := machine.Engines()
	if d := int(dev); d >= 0 && d < len(engines) {
		return &engines[d], nil
	}
	return nil, deviceErr("no engine for device %d (the machine has %d)", int(dev), len(engines))
}

// images holds the PTX of every module compiled so far, for every engine of the process:
// each new machine (GradCheck alone makes several) loads its modules from it rather than
// compiling them again with NVRTC. It guards itself with a lock.
var images = modcache.NewImages(nvrtccomp.Compiler{})

// deviceInfo is what a launch needs to know of a device: the architecture its modules are
// compiled for and its launch limits.
type deviceInfo struct {
	target modcache.Arch
	lim    launch.Limits
}

// devices caches deviceInfo by device ordinal (int), for every machine of the process.
var devices sync.Map

// deviceOf returns the deviceInfo of device dev: the target architecture (modcache.TargetArch
// of its compute capability and NVRTC's architectures) and the limits the planner respects,
// its shared memory per block and largest grid, as the standalone backend reads them.
func deviceOf(dev G.Device) (deviceInfo, error) {
	if v, ok := devices.Load(int(dev)); ok {
		return v.(deviceInfo), nil
	}
	cudev, err := cu.GetDevice(int(dev))
	if err != nil {
		return deviceInfo{}, deviceErr("device %d: %v", int(dev), err)
	}
	var attrs [4]int
	for i, a := range []cu.DeviceAttribute{cu.ComputeCapabilityMajor, cu.ComputeCapabilityMinor,
		cu.MaxSharedMemoryPerBlock, cu.MaxGridDimX} {
		if attrs[i], err = cudev.Attribute(a); err != nil {
			return deviceInfo{}, deviceErr("device %d attributes: %v", int(dev), err)
		}
	}
	supported, err := nvrtccomp.SupportedArchs()
	if err != nil {
		return deviceInfo{}, deviceErr("%v", err)
	}
	target, err := modcache.TargetArch(modcache.ArchOf(attrs[0], attrs[1]), supported)
	if err != nil {
		return deviceInfo{}, err
	}
	info := deviceInfo{target: target, lim: launch.Limits{MaxSharedBytes: attrs[2], MaxGridX: attrs[3]}}
	devices.Store(int(dev), info)
	return info, nil
}

// function returns the entry point entry (the plan's Config.Func) of the kernel's module of
// element type dt in the engine eng of a device of info, loading the module (compiled with
// NVRTC for info.target, once per process) into the engine at first use. The module holds
// every entry point modcache.EntryPoints lists: both variants of each kernel.
func (k *Kernel) function(eng *cuda.Engine, info deviceInfo, dt dispatch.DType, entry string) (cu.Function, error) {
	key := modcache.ModuleKey{Module: kernel.ID(k.Kernel).Spec().Device.Module, DType: dt, Arch: info.target}
	fqn := key.String() + "." + entry
	if !eng.HasFunc(fqn) {
		if !slices.Contains(modcache.EntryPoints(key), entry) {
			return cu.Function{}, deviceErr("module %s has no entry point %s", key, entry)
		}
		// Compiled once per process (images), loaded once per engine.
		ptx, err := images.Get(key)
		if err != nil {
			return cu.Function{}, deviceErr("%v", err)
		}
		// LoadCUDAFunc makes the engine's context current and then loads the module: both
		// on one OS thread.
		runtime.LockOSThread()
		err = eng.LoadCUDAFunc(key.String(), ptx, modcache.EntryPoints(key))
		runtime.UnlockOSThread()
		if err != nil {
			return cu.Function{}, deviceErr("loading %s: %v", key, err)
		}
	}
	fn, ok := eng.Functions()[fqn]
	if !ok {
		return cu.Function{}, deviceErr("module %s has no entry point %s", key, fqn)
	}
	return fn, nil
}

// flush processes the work queued in the engine's batched context on this goroutine and
// returns the errors of the batch it processed last, which holds the work queued last. It is
// what Gorgonia's tape machine does between instructions (its flush instruction calls the
// engines' DoWork on the machine's goroutine, the goroutine that calls CUDADo); the engine's
// own goroutine processes the queue only when a blocking call or a full queue signals it,
// which nothing here does.
func flush(eng *cuda.Engine) error { return eng.DoWork() }

// Sync waits for the work queued in every engine of the CUDA machine extern: it queues a
// context synchronisation behind that work and processes the queue on this goroutine (as
// Launch does), so that device memory then holds the results of every launch and copy queued
// before. The synchronisation keeps the queue non-empty, so the errors reported are this
// batch's, not a previous one's. An error is an ErrDevice error.
func Sync(extern G.External) error {
	machine, ok := extern.(G.CUDAMachine)
	if !ok {
		return check.Errorf(gatejet.ErrDevice, "cudadoer.Sync", "", "the machine (%T) is not a CUDA machine", extern)
	}
	engines := machine.Engines()
	for i := range engines {
		eng := &engines[i]
		eng.Context().Synchronize()
		if err := flush(eng); err != nil {
			return check.Errorf(gatejet.ErrDevice, "cudadoer.Sync", "", "device %d: %v", i, err)
		}
	}
	return nil
}

// onDevice reports an ErrDevice error for a value whose memory is Go's (a host tensor), which
// a kernel cannot address; device values of Gorgonia's CUDA machine are tensors over memory
// it manages. Its memory is never read here.
func onDevice(v G.Value, name string) error {
	if t, ok := v.(*tensor.Dense); ok && !t.IsManuallyManaged() {
		return check.Errorf(gatejet.ErrDevice, "cudadoer.CUDADo", name, "a host tensor, not a device value")
	}
	return nil
}

// hostPointer returns the address of the storage of a host tensor of dtype Float64 or Float32.
func hostPointer(t *tensor.Dense) unsafe.Pointer {
	if t.Dtype() == tensor.Float64 {
		return unsafe.Pointer(unsafe.SliceData(t.Float64s()))
	}
	return unsafe.Pointer(unsafe.SliceData(t.Float32s()))
}

// checkCopy checks a copy between the host tensor h and the device value v of device dev of
// the machine extern: a CUDA machine, one dtype (Float64 or Float32) and size, h a contiguous
// tensor in Go memory that is not a view, v a device value. It returns the engine and the
// byte count.
func checkCopy(op string, extern G.External, dev G.Device, h *tensor.Dense, v G.Value) (*cuda.Engine, int64, error) {
	if h == nil || v == nil {
		return nil, 0, check.Errorf(gatejet.ErrParam, op, "", "nil value")
	}
	machine, ok := extern.(G.CUDAMachine)
	if !ok {
		return nil, 0, check.Errorf(gatejet.ErrDevice, op, "", "the machine (%T) is not a CUDA machine", extern)
	}
	if h.Dtype() != v.Dtype() || (h.Dtype() != tensor.Float64 && h.Dtype() != tensor.Float32) {
		return nil, 0, check.Errorf(gatejet.ErrDType, op, "", "host %v and device %v: want one of float64 or float32", h.Dtype(), v.Dtype())
	}
	if h.IsManuallyManaged() || h.IsMaterializable() || h.RequiresIterator() || !h.DataOrder().IsRowMajor() {
		return nil, 0, check.Errorf(gatejet.ErrParam, op, "host", "want a contiguous row-major tensor in Go memory that is not a view")
	}
	if h.Shape().TotalSize() != v.Size() || h.DataSize() < v.Size() {
		return nil, 0, check.Errorf(gatejet.ErrSize, op, "", "host %v and device %v differ in size", h.Shape(), v.Shape())
	}
	if err := onDevice(v, "device"); err != nil {
		return nil, 0, err
	}
	eng, err := engine(machine, dev)
	if err != nil {
		return nil, 0, err
	}
	return eng, int64(v.Size()) * int64(h.Dtype().Size()), nil
}

// CopyToHost copies the device value src (device dev of the CUDA machine extern) into the
// host tensor dst, of the same dtype and size, through the engine's batched context, after
// the work queued before it (the work that made src); it returns when dst holds the values.
func CopyToHost(extern G.External, dev G.Device, dst *tensor.Dense, src G.Value) error {
	eng, bytes, err := checkCopy("cudadoer.CopyToHost", extern, dev, dst, src)
	if err != nil || bytes == 0 {
		return err
	}
	eng.Context().MemcpyDtoH(hostPointer(dst), cu.DevicePtr(src.Uintptr()), bytes)
	err = flush(eng)
	runtime.KeepAlive(dst)
	if err != nil {
		return check.Errorf(gatejet.ErrDevice, "cudadoer.CopyToHost", "", "%v", err)
	}
	return nil
}

// CopyToDevice copies the host tensor src into the device value dst (device dev of the CUDA
// machine extern), of the same dtype and size, through the engine's batched context; it
// returns when the copy has run, so src may be reused.
func CopyToDevice(extern G.External, dev G.Device, dst G.Value, src *tensor.Dense) error {
	eng, bytes, err := checkCopy("cudadoer.CopyToDevice", extern, dev, src, dst)
	if err != nil || bytes == 0 {
		return err
	}
	eng.Context().MemcpyHtoD(cu.DevicePtr(dst.Uintptr()), hostPointer(src), bytes)
	err = flush(eng)
	runtime.KeepAlive(src)
	if err != nil {
		return check.Errorf(gatejet.ErrDevice, "cudadoer.CopyToDevice", "", "%v", err)
	}
	return nil
}

var _ G.CUDADoer = (*Kernel)(nil)

//go:build cuda

// Package cudadoer lets a Gorgonia op run a cudaops kernel on device-resident values, through
// Gorgonia's CUDADoer interface: embed a Kernel in the op (build tag cuda) and set its fields.
//
// CUDADo loads the kernel's module into the machine's engine for the value's device on first
// use (compiled with NVRTC for that device's own architecture, like the cudaops device
// backend), then launches the kernel on the device pointers of the inputs and of prealloc,
// through the engine's batched context.
//
// This package needs Gorgonia's cuda build, which needs the cuDNN headers; it was written
// against gorgonia v0.9.18 and cu v0.9.6 but has not been compiled where it was written (see
// docs/gpu.md).
package cudadoer

import (
	"fmt"
	"unsafe"

	"gorgonia.org/cu"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/gatejet/gatejet"
	"github.com/gatejet/gatejet/cudaops"
	"github.com/gatejet/gatejet/cudaops/internal/launch"
	"github.com/gatejet/gatejet/cudaops/internal/modcache"
	"github.com/gatejet/gatejet/cudaops/internal/nvrtccomp"
	"github.com/gatejet/gatejet/internal/check"
	"github.com/gatejet/gatejet/internal/kernel"
)

// Kernel describes one cudaops kernel invocation for an op to embed. Ints and Floats follow
// the kernel's conventions (see the cudaops Kernel constants); Output selects which of the
// kernel's outputs CUDADo returns in prealloc (the others are written to scratch device memory
// and dropped; use Launch to keep them).
type Kernel struct {
	Kernel cudaops.Kernel
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

func dtypeOf(v G.Value) (cudaops.DType, error) {
	switch v.Dtype() {
	case tensor.Float32:
		return cudaops.Float32, nil
	case tensor.Float64:
		return cudaops.Float64, nil
	}
	return cudaops.DTypeInvalid, check.Errorf(gatejet.ErrDType, "cudadoer.CUDADo", "", "want float32 or float64, got %v", v.Dtype())
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

// Launch runs the kernel with the given device inputs and outputs. A nil output is written to
// scratch memory from the machine's arena and dropped. A nil *Kernel, an unknown kernel or a
// nil input is an error.
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
	call := &cudaops.Call{Kernel: k.Kernel, Ints: k.Ints, Floats: k.Floats}
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
	suffix := "f64"
	if dt == cudaops.Float32 {
		suffix = "f32"
	}
	cfg, err := launch.Plan(kernel.ID(k.Kernel), k.Ints, suffix, launch.DefaultLimits, launch.Options{})
	if err != nil {
		return deviceErr("%s: %v", k.Kernel, err)
	}

	d := int(dev)
	engines, ctxs := machine.Engines(), machine.Contexts()
	if d < 0 || d >= len(engines) || d >= len(ctxs) {
		return deviceErr("%s: no engine for device %d", k.Kernel, d)
	}
	eng, ctx := &engines[d], ctxs[d]
	cudev, err := cu.GetDevice(d)
	if err != nil {
		return deviceErr("device %d: %v", d, err)
	}
	major, minor, err := cudev.ComputeCapability()
	if err != nil {
		return deviceErr("device %d: %v", d, err)
	}
	ds := kernel.ID(k.Kernel).Spec().Device
	supported, err := nvrtccomp.SupportedArchs()
	if err != nil {
		return deviceErr("%v", err)
	}
	target, err := modcache.TargetArch(modcache.ArchOf(major, minor), supported)
	if err != nil {
		return err
	}
	key := modcache.ModuleKey{Module: ds.Module, DType: dt, Arch: target}
	entry := cudaops.EntryPoint(k.Kernel, dt)
	fqn := key.String() + "." + entry
	if !eng.HasFunc(fqn) {
		ptx, err := nvrtccomp.Compiler{}.Compile(cudaops.KernelSource, key.String()+".cu", modcache.CompileOptions(key))
		if err != nil {
			return deviceErr("%v", err)
		}
		if got, want := modcache.PTXTarget(ptx), modcache.RealArch(target); got != want {
			return deviceErr("refusing module %s: its PTX targets %q, not %s", key, string(got), want)
		}
		if err := eng.LoadCUDAFunc(key.String(), ptx, modcache.EntryPoints(key)); err != nil {
			return deviceErr("loading %s: %v", key, err)
		}
	}
	fn := eng.Functions()[fqn]
	if cfg.Grid == 0 {
		return nil
	}

	in := make([]uint64, len(inputs))
	for i, v := range inputs {
		in[i] = uint64(v.Uintptr())
	}
	out := make([]uint64, len(outs))
	size := int64(dt.Size())
	for i, v := range outs {
		if v != nil {
			if v.Size() != outLens[i] || v.Dtype() != inputs[0].Dtype() {
				return check.Errorf(gatejet.ErrSize, "cudadoer.CUDADo", fmt.Sprintf("outs[%d]", i), "%s: want %d %v, got %d %v", k.Kernel, outLens[i], inputs[0].Dtype(), v.Size(), v.Dtype())
			}
			out[i] = uint64(v.Uintptr())
			continue
		}
		bytes := max(size*int64(outLens[i]), 8)
		mem, err := machine.Get(dev, bytes)
		if err != nil {
			return deviceErr("%s: scratch output %d: %v", k.Kernel, i, err)
		}
		defer machine.Put(dev, mem, bytes)
		out[i] = uint64(mem.Uintptr())
	}
	var floats uint64
	if ds.Floats == kernel.FloatsArray {
		p, err := ctx.AllocAndCopy(unsafe.Pointer(&k.Floats[0]), int64(8*len(k.Floats)))
		if err != nil {
			return deviceErr("%s: gate parameters: %v", k.Kernel, err)
		}
		defer ctx.MemFree(p)
		floats = uint64(p)
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
	ctx.LaunchAndSync(fn, cfg.Grid, 1, 1, cfg.Block, 1, 1, cfg.SharedBytes, cu.NoStream, args)
	if err := ctx.Errors(); err != nil {
		return deviceErr("%s: %v", k.Kernel, err)
	}
	return nil
}

var _ G.CUDADoer = (*Kernel)(nil)

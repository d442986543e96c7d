//go:build gatejetcuda

package cudaops

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/gatejet/gatejet"
	"github.com/gatejet/gatejet/cudaops/internal/cudrv"
	"github.com/gatejet/gatejet/cudaops/internal/launch"
	"github.com/gatejet/gatejet/cudaops/internal/modcache"
	"github.com/gatejet/gatejet/cudaops/internal/nvrtccomp"
	"github.com/gatejet/gatejet/internal/check"
	"github.com/gatejet/gatejet/internal/dispatch"
	"github.com/gatejet/gatejet/internal/kernel"
)

// This file is the standalone device backend, built with gatejet's tag gatejetcuda. It calls
// the CUDA driver and NVRTC through cudaops/internal/cudrv, which opens libcuda.so.1 and
// libnvrtc with dlopen: building needs neither, and a binary built with the tag runs on a
// machine without a GPU or driver, where OpenDevice fails with an ErrDevice error saying why,
// no backend is registered, ModeAuto runs the CPU and ModeRequired returns that error.

var (
	device    *DeviceBackend
	deviceErr error
)

func init() {
	device, deviceErr = OpenDevice(0)
	if deviceErr == nil {
		dispatch.Register(device)
	} else {
		dispatch.SetUnavailable(deviceErr)
	}
}

// Device returns the backend opened on device 0 at initialisation (and registered with
// Register), or the ErrDevice error that prevented it (no driver library, no device...).
// Tests use it to call the device directly.
func Device() (*DeviceBackend, error) { return device, deviceErr }

// Prewarm compiles and loads every device module on device 0, for both element types, so that
// the first call does not pay for NVRTC. It returns an ErrDevice error when there is no device.
func Prewarm() error {
	if device == nil {
		return check.Errorf(gatejet.ErrDevice, "cudaops.Prewarm", "", "no CUDA device: %v", deviceErr)
	}
	return device.Prewarm()
}

// deviceError0 builds an ErrDevice error of a kernel's run (operation "cudaops", as the
// dispatcher's).
func deviceError0(format string, args ...any) error {
	return check.Errorf(gatejet.ErrDevice, "cudaops", "", format, args...)
}

// deviceErrorCause is an ErrDevice error that also wraps cause (a driver or NVRTC error), so that
// errors.Is / errors.As reach it.
func deviceErrorCause(cause error, format string, args ...any) error {
	e := deviceError0(format+": %v", append(args, cause)...).(*gatejet.Error)
	return &dispatch.LaunchError{Err: e, Cause: cause}
}

// DeviceBackend runs Calls on one CUDA device: it copies the host inputs to device memory,
// launches the kernel of the module compiled for the device's own architecture, and copies
// the outputs back. Launches are serialised; each runs with the device's primary context
// current on a locked OS thread.
type DeviceBackend struct {
	mu       sync.Mutex
	stream   cudrv.Stream           // the backend's stream (made on first use); guarded by mu
	hasStrm  bool                   // guarded by mu
	devMem   *pool[cudrv.DevicePtr] // device buffers of calls, reused
	hostMem  *pool[unsafe.Pointer]  // pinned staging buffers, reused
	dev      cudrv.Device
	ctx      cudrv.Context
	name     string
	arch     modcache.Arch
	lim      launch.Limits
	mods     *modcache.Cache[cudrv.Module]
	fns      map[string]cudrv.Function
	closed   bool
	launches atomic.Int64
}

// OpenDevice opens the device of the given ordinal: its primary context, its architecture
// and limits, and a module cache compiling with NVRTC for that architecture. It loads the
// CUDA driver and NVRTC first (once per process): without libcuda.so.1 or libnvrtc, or when
// cuInit fails, the error is an ErrDevice error wrapping cudrv's, which names the libraries
// or the CUresult.
func OpenDevice(ordinal int) (*DeviceBackend, error) {
	if err := cudrv.LoadDriver(); err != nil {
		return nil, deviceErrorCause(err, "loading the CUDA driver")
	}
	if err := cudrv.LoadNVRTC(); err != nil {
		return nil, deviceErrorCause(err, "loading NVRTC")
	}
	n, err := cudrv.DeviceCount()
	if err != nil {
		return nil, deviceErrorCause(err, "counting CUDA devices")
	}
	if ordinal < 0 || ordinal >= n {
		return nil, deviceError0("no CUDA device %d (%d present)", ordinal, n)
	}
	dev, err := cudrv.GetDevice(ordinal)
	if err != nil {
		return nil, deviceErrorCause(err, "device %d", ordinal)
	}
	var attrs [4]int
	for i, a := range []cudrv.Attribute{cudrv.AttrComputeCapabilityMajor, cudrv.AttrComputeCapabilityMinor,
		cudrv.AttrMaxSharedMemoryPerBlk, cudrv.AttrMaxGridDimX} {
		if attrs[i], err = dev.Attribute(a); err != nil {
			return nil, deviceErrorCause(err, "device %d attributes", ordinal)
		}
	}
	ctx, err := dev.RetainPrimaryCtx()
	if err != nil {
		return nil, deviceErrorCause(err, "device %d primary context", ordinal)
	}
	name, _ := dev.Name()
	b := &DeviceBackend{
		dev:  dev,
		ctx:  ctx,
		name: name,
		arch: modcache.ArchOf(attrs[0], attrs[1]),
		lim:  launch.Limits{MaxSharedBytes: attrs[2], MaxGridX: attrs[3]},
		fns:  map[string]cudrv.Function{},
	}
	b.devMem = &pool[cudrv.DevicePtr]{alloc: cudrv.MemAlloc, release: cudrv.MemFree, maxIdle: MaxIdleDeviceBytes}
	b.hostMem = &pool[unsafe.Pointer]{alloc: allocPinned, release: freePinned, maxIdle: MaxIdleDeviceBytes}
	b.mods = modcache.New(b.arch, modcache.Compiler(nvrtccomp.Compiler{}), loadModule,
		func(m cudrv.Module) error { return m.Unload() })
	return b, nil
}

// MaxIdleDeviceBytes bounds the device memory, and separately the pinned host memory, that a
// DeviceBackend keeps between calls for reuse (its pools); what a call returns beyond it is
// freed.
const MaxIdleDeviceBytes = 1 << 30

// errNilBackend is the error of the methods of a nil *DeviceBackend that return errors.
func errNilBackend() error { return deviceError0("nil *DeviceBackend") }

// loadModule loads a module image (CUBIN or PTX) into the current context; a driver older than
// the PTX is an ErrDevice error that says what to upgrade.
func loadModule(key modcache.ModuleKey, image string) (cudrv.Module, error) {
	m, err := cudrv.LoadModule(image)
	if code, ok := cudrv.Code(err); ok && int64(code) == nvrtccomp.CudaErrorUnsupportedPTXVersion {
		return m, modcache.DriverTooOld(key, cudrv.DriverVersion(), nvrtccomp.Version())
	}
	return m, err
}

// Name returns "cuda:<device name>:<arch>" ("cuda:<nil>" for a nil *DeviceBackend).
func (b *DeviceBackend) Name() string {
	if b == nil {
		return "cuda:<nil>"
	}
	return "cuda:" + b.name + ":" + string(b.arch)
}

// Arch is the device's architecture, e.g. "sm_90" ("" for a nil *DeviceBackend).
func (b *DeviceBackend) Arch() string {
	if b == nil {
		return ""
	}
	return string(b.arch)
}

// Target is the architecture the modules are compiled for: the device's own when NVRTC
// supports it, else the virtual architecture of the newest older one NVRTC supports, e.g.
// "compute_90" ("" for a nil *DeviceBackend).
func (b *DeviceBackend) Target() string {
	if b == nil {
		return ""
	}
	return string(b.mods.Target())
}

// Launches is the number of kernels this backend has launched (0 for a nil *DeviceBackend).
func (b *DeviceBackend) Launches() int64 {
	if b == nil {
		return 0
	}
	return b.launches.Load()
}

// Modules returns the names of the modules compiled and loaded so far, e.g.
// "gatejet_softmax_jet_float64_sm_90" (none for a nil *DeviceBackend).
func (b *DeviceBackend) Modules() []string {
	if b == nil {
		return nil
	}
	var out []string
	for _, k := range b.mods.Loaded() {
		out = append(out, k.String())
	}
	return out
}

// withContext runs f holding the backend's lock, on a locked OS thread with the primary
// context current. A nil *DeviceBackend gives an ErrDevice error, so that every method built
// on it (Prewarm, Close, TimeSource) does.
func (b *DeviceBackend) withContext(f func() error) error {
	if b == nil {
		return errNilBackend()
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return deviceError0("%s: backend closed", b.Name())
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := cudrv.SetCurrent(b.ctx); err != nil {
		return deviceErrorCause(err, "%s: setting the context", b.Name())
	}
	if !b.hasStrm {
		st, err := cudrv.NewStream()
		if err != nil {
			return deviceErrorCause(err, "%s: making a stream", b.Name())
		}
		b.stream, b.hasStrm = st, true
	}
	return f()
}

// Prewarm compiles and loads the modules of the given kernels (all when none is given).
func (b *DeviceBackend) Prewarm(kernels ...dispatch.Kernel) error {
	ids := make([]kernel.ID, len(kernels))
	for i, k := range kernels {
		ids[i] = kernel.ID(k)
	}
	return b.withContext(func() error { return b.mods.Prewarm(ids...) })
}

// function returns the entry point for kernel k and element type dt (with the lock held and
// the context current).
func (b *DeviceBackend) function(k dispatch.Kernel, dt dispatch.DType, entry string) (cudrv.Function, error) {
	if fn, ok := b.fns[entry]; ok {
		return fn, nil
	}
	mod, err := b.mods.Get(kernel.ID(k), dt)
	if err != nil {
		return cudrv.Function{}, err
	}
	fn, err := mod.Function(entry)
	if err != nil {
		return cudrv.Function{}, deviceErrorCause(err, "%s: function %s", b.Name(), entry)
	}
	b.fns[entry] = fn
	return fn, nil
}

func (b *DeviceBackend) plan(c *dispatch.Call) (launch.Config, error) {
	suffix := "f64"
	if c.DType == dispatch.Float32 {
		suffix = "f32"
	}
	cfg, err := launch.Plan(kernel.ID(c.Kernel), c.Ints, suffix, b.lim, launch.Options{})
	if err != nil {
		return cfg, deviceErrorCause(err, "%s", b.Name())
	}
	return cfg, nil
}

func makeParams(c *dispatch.Call, cfg launch.Config, in, out []cudrv.DevicePtr, floats cudrv.DevicePtr) launch.Params {
	addr := func(ps []cudrv.DevicePtr) []uint64 {
		out := make([]uint64, len(ps))
		for i, p := range ps {
			out[i] = uint64(p)
		}
		return out
	}
	s := 0.0
	if kernel.ID(c.Kernel).Spec().Device.Floats == kernel.ScalarS {
		s = c.Floats[0]
	}
	return launch.MakeParams(addr(in), addr(out), uint64(floats), c.Ints, cfg, s)
}

// hostBuf is one host operand: its address (nil when empty) and size in bytes.
type hostBuf struct {
	p unsafe.Pointer
	n int64
}

// hostBufs returns the call's inputs and outputs, in its kernel's order.
func hostBufs(c *dispatch.Call) (in, out []hostBuf) {
	if c.DType == dispatch.Float32 {
		return operandBufs(c, &c.F32)
	}
	return operandBufs(c, &c.F64)
}

func operandBufs[T gatejet.Float](c *dispatch.Call, o *dispatch.Operands[T]) (in, out []hostBuf) {
	sp := kernel.ID(c.Kernel).Spec()
	buf := func(s []T) hostBuf {
		if len(s) == 0 {
			return hostBuf{}
		}
		return hostBuf{unsafe.Pointer(&s[0]), int64(unsafe.Sizeof(s[0])) * int64(len(s))}
	}
	for i := range sp.In {
		in = append(in, buf(o.In[i]))
	}
	for i := range sp.Out {
		out = append(out, buf(o.Out[i]))
	}
	return in, out
}

// deviceCall is a Call's buffers in device memory, from the backend's pool, and the pinned
// staging buffers of its copies; free returns them all (after the stream is synchronised).
type deviceCall struct {
	b       *DeviceBackend
	in, out []cudrv.DevicePtr
	floats  cudrv.DevicePtr
	dev     []pooled[cudrv.DevicePtr]
	staging []pooled[unsafe.Pointer]
}

type pooled[B any] struct {
	b     B
	class int64
}

func (d *deviceCall) alloc(bytes int64) (cudrv.DevicePtr, error) {
	p, c, err := d.b.devMem.get(bytes) // an empty slice still gets a distinct valid pointer
	if err == nil {
		d.dev = append(d.dev, pooled[cudrv.DevicePtr]{p, c})
	}
	return p, err
}

// stage returns pinned host memory of n bytes for one copy of the call.
func (d *deviceCall) stage(n int64) (unsafe.Pointer, error) {
	p, c, err := d.b.hostMem.get(n)
	if err == nil {
		d.staging = append(d.staging, pooled[unsafe.Pointer]{p, c})
	}
	return p, err
}

// free gives the call's buffers back to the pools. The stream must be idle (synchronised).
func (d *deviceCall) free() {
	for _, x := range d.dev {
		_ = d.b.devMem.put(x.b, x.class)
	}
	for _, x := range d.staging {
		_ = d.b.hostMem.put(x.b, x.class)
	}
	d.dev, d.staging = nil, nil
}

// put allocates n bytes for d and, unless host is nil, copies n bytes from host to them through
// pinned staging memory, asynchronously on the backend's stream; what names the data in the
// error.
func (b *DeviceBackend) put(d *deviceCall, host unsafe.Pointer, n int64, what string) (cudrv.DevicePtr, error) {
	p, err := d.alloc(n)
	if err != nil {
		return p, deviceErrorCause(err, "%s: allocating %d bytes", b.Name(), n)
	}
	if host != nil && n > 0 {
		st, err := d.stage(n)
		if err != nil {
			return p, deviceErrorCause(err, "%s: pinned staging of %d bytes", b.Name(), n)
		}
		copy(unsafe.Slice((*byte)(st), n), unsafe.Slice((*byte)(host), n))
		if err := cudrv.MemcpyHtoDAsync(p, st, n, b.stream); err != nil {
			return p, deviceErrorCause(err, "%s: copying %s to the device", b.Name(), what)
		}
	}
	return p, nil
}

// upload allocates device buffers for c and copies its inputs (and logistic α, β) to them. On
// an error it frees what it allocated.
func (b *DeviceBackend) upload(c *dispatch.Call) (_ *deviceCall, err error) {
	d := &deviceCall{b: b}
	defer func() {
		if err != nil {
			_ = b.stream.Synchronize() // the copies already queued read the staging buffers
			d.free()
		}
	}()
	var p cudrv.DevicePtr
	ins, outs := hostBufs(c)
	for _, h := range ins {
		if p, err = b.put(d, h.p, h.n, "an input"); err != nil {
			return nil, err
		}
		d.in = append(d.in, p)
	}
	for _, h := range outs {
		if p, err = b.put(d, nil, h.n, "an output"); err != nil {
			return nil, err
		}
		d.out = append(d.out, p)
	}
	if kernel.ID(c.Kernel).Spec().Device.Floats == kernel.FloatsArray {
		if d.floats, err = b.put(d, unsafe.Pointer(&c.Floats[0]), int64(8*len(c.Floats)), "the gate parameters"); err != nil {
			return nil, err
		}
	}
	return d, nil
}

// download copies the call's outputs back: device to pinned staging on the stream, one
// synchronisation, then staging to the host slices.
func (b *DeviceBackend) download(c *dispatch.Call, d *deviceCall) error {
	_, outs := hostBufs(c)
	staged := make([]unsafe.Pointer, len(outs))
	for i, h := range outs {
		if h.n == 0 {
			continue
		}
		st, err := d.stage(h.n)
		if err != nil {
			return deviceErrorCause(err, "%s: pinned staging of %d bytes", b.Name(), h.n)
		}
		if err := cudrv.MemcpyDtoHAsync(st, d.out[i], h.n, b.stream); err != nil {
			return deviceErrorCause(err, "%s: copying an output to the host", b.Name())
		}
		staged[i] = st
	}
	if err := b.stream.Synchronize(); err != nil {
		return deviceErrorCause(err, "%s: copying the outputs to the host", b.Name())
	}
	for i, h := range outs {
		if staged[i] != nil {
			copy(unsafe.Slice((*byte)(h.p), h.n), unsafe.Slice((*byte)(staged[i]), h.n))
		}
	}
	return nil
}

// Launch runs c on the device and writes its outputs: host to device, kernel, synchronise, device to
// host. Every error is an ErrDevice error (a malformed Call gives its Check error; a nil
// *DeviceBackend an ErrDevice error).
func (b *DeviceBackend) Launch(c *dispatch.Call) error {
	if b == nil {
		return errNilBackend()
	}
	if err := c.Check(); err != nil {
		return err
	}
	cfg, err := b.plan(c)
	if err != nil || cfg.Grid == 0 {
		return err // Grid 0: every output is empty
	}
	return b.withContext(func() error {
		fn, err := b.function(c.Kernel, c.DType, cfg.Func)
		if err != nil {
			return err
		}
		return b.withUpload(c, fn, cfg, func(d *deviceCall, run func() error) error {
			if err := run(); err != nil {
				return deviceErrorCause(err, "%s: launching %s (grid %d, block %d, shared %d)", b.Name(), cfg.Func, cfg.Grid, cfg.Block, cfg.SharedBytes)
			}
			b.launches.Add(1)
			return b.download(c, d) // synchronises the stream: a kernel fault surfaces here
		})
	})
}

// withUpload uploads c's inputs (b.upload), calls f with the device copy and a function that
// launches fn on it under cfg (asynchronously, on the backend's stream, after the copies), and
// gives the buffers back when f returns, the stream synchronised. The caller holds the context
// (withContext).
func (b *DeviceBackend) withUpload(c *dispatch.Call, fn cudrv.Function, cfg launch.Config, f func(d *deviceCall, run func() error) error) error {
	d, err := b.upload(c)
	if err != nil {
		return err
	}
	defer func() {
		_ = b.stream.Synchronize()
		d.free()
	}()
	p := makeParams(c, cfg, d.in, d.out, d.floats)
	return f(d, func() error {
		return fn.Launch(cfg.Grid, cfg.Block, cfg.SharedBytes, b.stream, p[:])
	})
}

// Close unloads the modules and releases the primary context. Later launches fail.
func (b *DeviceBackend) Close() error {
	return b.withContext(func() error {
		b.closed = true
		err := b.mods.Close()
		b.fns = map[string]cudrv.Function{}
		for _, drain := range []func() error{b.devMem.drain, b.hostMem.drain} {
			if derr := drain(); derr != nil && err == nil {
				err = derr
			}
		}
		if b.hasStrm {
			if serr := b.stream.Destroy(); serr != nil && err == nil {
				err = serr
			}
			b.hasStrm = false
		}
		if rerr := b.dev.ReleasePrimaryCtx(); rerr != nil && err == nil {
			err = rerr
		}
		if err != nil {
			return deviceErrorCause(err, "%s: closing", b.Name())
		}
		return nil
	})
}

// Timing is what Time measured.
type Timing struct {
	Config  launch.Config // the launch
	Kernel  time.Duration // mean device time of one launch (CUDA events), inputs resident
	Copy    time.Duration // mean device time of one device-to-device copy of CopyBytes bytes
	Bytes   int64         // bytes the kernel must move at least: inputs read once, outputs written once
	CopyLen int64         // bytes copied by the reference copy
}

// Time uploads c once, launches its kernel reps times (after one warm-up launch) and reports
// the mean kernel time measured with CUDA events, the outputs then copied back to the call. With
// copyBytes > 0 it also times a device-to-device copy of that many bytes, the bandwidth
// reference of a benchmark.
func (b *DeviceBackend) Time(c *dispatch.Call, reps int, copyBytes int64) (Timing, error) {
	var t Timing
	if b == nil {
		return t, errNilBackend()
	}
	if err := c.Check(); err != nil {
		return t, err
	}
	cfg, err := b.plan(c)
	if err != nil {
		return t, err
	}
	t.Config = cfg
	ins, outs := hostBufs(c)
	for _, h := range append(ins, outs...) {
		t.Bytes += h.n
	}
	if reps < 1 {
		reps = 1
	}
	err = b.withContext(func() error {
		fn, err := b.function(c.Kernel, c.DType, cfg.Func)
		if err != nil {
			return err
		}
		return b.withUpload(c, fn, cfg, func(d *deviceCall, run func() error) error {
			var err error
			if t.Kernel, err = timeEvents(b.stream, reps, run); err != nil {
				return deviceErrorCause(err, "%s: timing %s", b.Name(), cfg.Func)
			}
			b.launches.Add(int64(reps + 1))
			if err := b.download(c, d); err != nil {
				return err
			}
			if copyBytes > 0 {
				src, err := d.alloc(copyBytes)
				if err != nil {
					return deviceErrorCause(err, "%s: allocating the copy reference", b.Name())
				}
				dst, err := d.alloc(copyBytes)
				if err != nil {
					return deviceErrorCause(err, "%s: allocating the copy reference", b.Name())
				}
				t.CopyLen = copyBytes
				if t.Copy, err = timeEvents(b.stream, reps, func() error { return cudrv.MemcpyDtoDAsync(dst, src, copyBytes, b.stream) }); err != nil {
					return deviceErrorCause(err, "%s: timing the copy", b.Name())
				}
			}
			return nil
		})
	})
	return t, err
}

// TimeSource compiles src (another CUDA source following gatejet.cu's parameter convention; its
// entry points may take only the first 13 parameters, the driver ignoring the last)
// for the device's architecture with the given extra NVRTC options, and times its entry point
// on c as Time does, with the given launch configuration. Benchmarks use it to run reference
// designs next to the kernels on the same context.
func (b *DeviceBackend) TimeSource(src, entry string, options []string, cfg launch.Config, c *dispatch.Call, reps int) (time.Duration, error) {
	if err := c.Check(); err != nil {
		return 0, err
	}
	var elapsed time.Duration
	err := b.withContext(func() error {
		target := b.mods.Target()
		opts := append([]string{"--gpu-architecture=" + string(target), "--fmad=false"}, options...)
		ptx, err := nvrtccomp.Compiler{}.Compile(src, entry+".cu", opts)
		if err != nil {
			return deviceErrorCause(err, "%s", b.Name())
		}
		if got := modcache.PTXTarget(ptx); got != modcache.RealArch(target) {
			return deviceError0("%s: refusing PTX for %q", b.Name(), string(got))
		}
		mod, err := cudrv.LoadModule(ptx)
		if err != nil {
			return deviceErrorCause(err, "%s: loading %s", b.Name(), entry)
		}
		defer mod.Unload()
		fn, err := mod.Function(entry)
		if err != nil {
			return deviceErrorCause(err, "%s: function %s", b.Name(), entry)
		}
		return b.withUpload(c, fn, cfg, func(d *deviceCall, run func() error) error {
			var err error
			if elapsed, err = timeEvents(b.stream, reps, run); err != nil {
				return deviceErrorCause(err, "%s: timing %s", b.Name(), entry)
			}
			return b.download(c, d)
		})
	})
	return elapsed, err
}

// timeEvents runs f (work queued on stream) once to warm up, then reps times between two CUDA
// events recorded on stream, and returns the mean time of one run.
func timeEvents(stream cudrv.Stream, reps int, f func() error) (time.Duration, error) {
	if err := f(); err != nil {
		return 0, err
	}
	if err := stream.Synchronize(); err != nil {
		return 0, err
	}
	start, err := cudrv.NewEvent()
	if err != nil {
		return 0, err
	}
	defer start.Destroy()
	stop, err := cudrv.NewEvent()
	if err != nil {
		return 0, err
	}
	defer stop.Destroy()
	if err := start.Record(stream); err != nil {
		return 0, err
	}
	for i := 0; i < reps; i++ {
		if err := f(); err != nil {
			return 0, err
		}
	}
	if err := stop.Record(stream); err != nil {
		return 0, err
	}
	if err := stop.Synchronize(); err != nil {
		return 0, err
	}
	ms, err := start.Elapsed(stop)
	if err != nil {
		return 0, err
	}
	return time.Duration(ms * 1e6 / float64(reps)), nil
}

// String describes the backend for logs.
func (b *DeviceBackend) String() string {
	if b == nil {
		return b.Name()
	}
	return fmt.Sprintf("%s (max shared %d B/block, max grid x %d)", b.Name(), b.lim.MaxSharedBytes, b.lim.MaxGridX)
}

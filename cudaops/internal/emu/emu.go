//go:build cgo

// Package emu runs the CUDA kernels of cudaops/kernels/gatejet.cu on the host.
//
// emu.cpp compiles the kernel source itself (kernels/gatejet.cu; kernelsrc_hash.go, which
// `go generate` writes and TestKernelSourceHashIsCurrent checks, makes a source change
// rebuild it) after cuda_emu.hpp, a small emulation of the CUDA execution model: every thread of a block is a
// fiber that runs until it reaches __syncthreads or __syncwarp, a barrier completes only when
// every thread of the block (of the warp, for __syncwarp) reached the same barrier by the same
// call path (divergence is an error), the order in which threads run between barriers is selectable
// (Schedule), and dynamic shared memory is poisoned with NaN before each block and
// bounds-checked. Launch runs a dispatch.Call through the same launch plans the
// device backend uses (cudaops/internal/launch), copying the inputs to C memory and the outputs
// back as a device backend copies to and from the device; outputs start as NaN, so an output
// element a kernel forgets to write shows up. Backend adapts it to dispatch.Backend, so tests
// can push Calls through dispatch.Run end to end without a GPU.
//
// The emulator is for correctness, not speed: blocks run one after another.
package emu

/*
#cgo CXXFLAGS: -std=c++17 -O2 -fno-omit-frame-pointer -Wall -Wno-unused-variable -Wno-unused-but-set-variable
#cgo LDFLAGS: -lpthread
#include <stdlib.h>
#include "gjemu.h"
*/
import "C"

import (
	"errors"
	"fmt"
	"math"
	"sync/atomic"
	"unsafe"

	"github.com/gatejet/gatejet"
	"github.com/gatejet/gatejet/cudaops/internal/launch"
	"github.com/gatejet/gatejet/internal/check"
	"github.com/gatejet/gatejet/internal/dispatch"
	"github.com/gatejet/gatejet/internal/kernel"
)

// Result describes one emulated launch.
type Result struct {
	Config    launch.Config
	HighWater int // shared memory bytes the kernel actually carved
}

// KernelNames returns the entry points compiled into the emulator (gj_<kernel>_f32/_f64, and
// the emulator's own gj_emu_selftest_* kernels).
func KernelNames() []string {
	n := int(C.gj_emu_kernel_count())
	out := make([]string, n)
	for i := range out {
		out[i] = C.GoString(C.gj_emu_kernel_name(C.int(i)))
	}
	return out
}

// Plan returns the launch configuration of c under options o, as the device backend would
// compute it with the default device limits.
func Plan(c *dispatch.Call, o launch.Options) (launch.Config, error) {
	if err := c.Check(); err != nil {
		return launch.Config{}, err
	}
	suffix := "f64"
	if c.DType == dispatch.Float32 {
		suffix = "f32"
	}
	return launch.Plan(kernel.ID(c.Kernel), c.Ints, suffix, launch.DefaultLimits, o)
}

// cbuf is a C allocation holding a copy of one slice.
type cbuf struct {
	p     unsafe.Pointer
	bytes int
}

func alloc(bytes int) cbuf {
	if bytes == 0 {
		bytes = 8 // a valid, distinct pointer for empty slices
	}
	return cbuf{C.malloc(C.size_t(bytes)), bytes}
}

func toC[T gatejet.Float](v []T) cbuf {
	var z T
	b := alloc(int(unsafe.Sizeof(z)) * len(v))
	copy(unsafe.Slice((*T)(b.p), len(v)), v)
	return b
}

// poisoned returns a C buffer the size of s filled with NaN, so that an element a kernel fails
// to write shows.
func poisoned[T gatejet.Float](v []T) cbuf {
	var z T
	b := alloc(int(unsafe.Sizeof(z)) * len(v))
	d := unsafe.Slice((*T)(b.p), len(v))
	nan := T(math.NaN())
	for i := range d {
		d[i] = nan
	}
	return b
}

func fromC[T gatejet.Float](dst []T, b cbuf) {
	copy(dst, unsafe.Slice((*T)(b.p), len(dst)))
}

// Schedule is the order in which the emulator runs a block's threads between two barriers.
// A kernel without races gives the same bits under every schedule.
type Schedule int

const (
	// Forward runs thread 0 first.
	Forward Schedule = 0
	// Reverse runs the last thread first.
	Reverse Schedule = 1
	// Shuffled (and any larger value, a seed) runs the threads in a pseudo-random order that
	// changes at every barrier.
	Shuffled Schedule = 2
)

// Launch runs c on the emulator under options o, threads in Forward order, and writes c.Out.
// Errors are ErrDevice *gatejet.Errors (a bad Call gives its Check error).
func Launch(c *dispatch.Call, o launch.Options) (Result, error) {
	return LaunchScheduled(c, o, Forward)
}

// LaunchScheduled is Launch with the given thread schedule.
func LaunchScheduled(c *dispatch.Call, o launch.Options, sched Schedule) (Result, error) {
	cfg, err := Plan(c, o)
	if err != nil {
		if errors.Is(err, gatejet.ErrDevice) || isGatejet(err) {
			return Result{}, err
		}
		return Result{}, check.Errorf(gatejet.ErrDevice, "emu.Launch", "", "%v: %v", c.Kernel, err)
	}
	return LaunchConfig(c, cfg, sched)
}

// LaunchConfig runs c under the launch configuration cfg instead of the planner's: its entry
// point, grid, block, tile and, as the kernel's allowance, cfg.SharedBytes of dynamic shared
// memory. Result.HighWater is what the kernel carved of it (a kernel that carves more fails
// with a shared memory overrun). The shared-memory layouts of the kernel table are measured
// this way (SharedLayoutsSource).
func LaunchConfig(c *dispatch.Call, cfg launch.Config, sched Schedule) (Result, error) {
	if err := c.Check(); err != nil {
		return Result{}, err
	}
	if !kernel.ID(c.Kernel).OnDevice() {
		return Result{}, check.Errorf(gatejet.ErrDevice, "emu.Launch", "", "%v has no device entry points", c.Kernel)
	}
	res := Result{Config: cfg}
	if cfg.Grid == 0 {
		return res, nil
	}
	var args C.GjArgsC
	var bufs []cbuf
	defer func() {
		for _, b := range bufs {
			C.free(b.p)
		}
	}()
	var copyBack func()
	if c.DType == dispatch.Float32 {
		copyBack = marshal(&args, &bufs, c, &c.F32)
	} else {
		copyBack = marshal(&args, &bufs, c, &c.F64)
	}
	switch kernel.ID(c.Kernel).Spec().Device.Floats {
	case kernel.FloatsArray:
		b := toC(c.Floats)
		bufs = append(bufs, b)
		args.floats = (*C.double)(b.p)
	case kernel.ScalarS:
		args.s = C.double(c.Floats[0])
	}
	ints := [3]int{}
	copy(ints[:], c.Ints)
	args.i0, args.i1, args.i2 = C.longlong(ints[0]), C.longlong(ints[1]), C.longlong(ints[2])
	args.tile = C.longlong(cfg.Tile)

	name := C.CString(cfg.Func)
	defer C.free(unsafe.Pointer(name))
	var errbuf [512]C.char
	var hw C.longlong
	rc := C.gj_emu_launch(name, C.longlong(cfg.Grid), C.int(cfg.Block), C.longlong(cfg.SharedBytes), &args,
		C.int(sched), &hw, &errbuf[0], C.int(len(errbuf)))
	res.HighWater = int(hw)
	if rc != 0 {
		return res, check.Errorf(gatejet.ErrDevice, "emu.Launch", "", "%s (grid %d, block %d, shared %d B, tile %d): %s",
			cfg.Func, cfg.Grid, cfg.Block, cfg.SharedBytes, cfg.Tile, C.GoString(&errbuf[0]))
	}
	copyBack()
	return res, nil
}

// marshal copies the call's inputs into C buffers and gives each output a poisoned one,
// appending them to bufs and setting args; copyBack copies the outputs back after the launch.
func marshal[T gatejet.Float](args *C.GjArgsC, bufs *[]cbuf, c *dispatch.Call, o *dispatch.Operands[T]) (copyBack func()) {
	sp := kernel.ID(c.Kernel).Spec()
	for i := range sp.In {
		b := toC(o.In[i])
		*bufs = append(*bufs, b)
		if i < len(args.in) {
			args.in[i] = b.p
		} else {
			args.in4 = b.p // the fifth input has its own field (GjArgs)
		}
	}
	outs := make([]cbuf, len(sp.Out))
	for i := range sp.Out {
		outs[i] = poisoned(o.Out[i])
		*bufs = append(*bufs, outs[i])
		args.out[i] = outs[i].p
	}
	return func() {
		for i := range outs {
			fromC(o.Out[i], outs[i])
		}
	}
}

// selfTest launches one of the emulator's own test kernels (gj_emu_selftest_*) with i0 as its
// integer argument and out (if any) as its output buffer.
func selfTest(name string, grid, block, smemBytes, i0 int, out []float64, sched Schedule) (int, error) {
	var args C.GjArgsC
	var ob cbuf
	if out != nil {
		ob = poisoned(out)
		defer C.free(ob.p)
		args.out[0] = ob.p
	}
	args.i0 = C.longlong(i0)
	cname := C.CString(name)
	defer C.free(unsafe.Pointer(cname))
	var errbuf [512]C.char
	var hw C.longlong
	rc := C.gj_emu_launch(cname, C.longlong(grid), C.int(block), C.longlong(smemBytes), &args, C.int(sched),
		&hw, &errbuf[0], C.int(len(errbuf)))
	if rc != 0 {
		return int(hw), errors.New(C.GoString(&errbuf[0]))
	}
	if out != nil {
		fromC(out, ob)
	}
	return int(hw), nil
}

func isGatejet(err error) bool {
	var ge *gatejet.Error
	return errors.As(err, &ge)
}

// Backend is a dispatch.Backend that runs every Call on the emulator.
type Backend struct {
	opts     launch.Options
	sched    Schedule
	launches atomic.Int64
	closed   atomic.Bool
}

// New returns an emulator backend whose launches use options o (zero: the device plans) and
// schedule sched.
func New(o launch.Options, sched Schedule) *Backend { return &Backend{opts: o, sched: sched} }

// Name returns "emu".
func (b *Backend) Name() string { return "emu" }

// Launch runs c on the emulator.
func (b *Backend) Launch(c *dispatch.Call) error {
	if b.closed.Load() {
		return fmt.Errorf("emu: backend closed")
	}
	b.launches.Add(1)
	_, err := LaunchScheduled(c, b.opts, b.sched)
	return err
}

// Close marks the backend closed; later launches fail.
func (b *Backend) Close() error {
	b.closed.Store(true)
	return nil
}

// Launches is the number of Launch calls so far.
func (b *Backend) Launches() int64 { return b.launches.Load() }

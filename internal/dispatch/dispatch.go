package dispatch

import (
	"errors"
	"reflect"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/gatejet/gatejet"
	"github.com/gatejet/gatejet/internal/check"
	"github.com/gatejet/gatejet/internal/kernel"
)

// Path says where Run computed a Call.
type Path int32

const (
	// PathCPU: the CPU function ran by policy (ModeOff, no backend, or below the break-even).
	PathCPU Path = iota
	// PathGPU: the backend ran the kernel.
	PathGPU
	// PathCPUFallback: the backend was tried and failed (ModeAuto); the CPU function ran.
	PathCPUFallback
)

// String returns "cpu", "gpu" or "cpu-fallback".
func (p Path) String() string {
	switch p {
	case PathCPU:
		return "cpu"
	case PathGPU:
		return "gpu"
	case PathCPUFallback:
		return "cpu-fallback"
	}
	return "Path(?)"
}

// Backend runs Calls on a device. Launch must either write every output completely and return
// nil, or return an error; it may be called concurrently, and must not keep the *Call (or its
// slices) after it returns: callers pool and reuse them. Close releases the device resources;
// Run never calls it.
type Backend interface {
	Name() string
	Launch(c *Call) error
	Close() error
}

type registration struct {
	b  Backend
	id uint64
}

var (
	// noDevice is why this build's own device backend is not registered (a gatejetcuda build
	// on a machine without the driver or a device), for ModeRequired's error; nil otherwise.
	noDevice atomic.Pointer[error]

	regMu    sync.Mutex
	regStack []registration          // guarded by regMu; the last entry is active
	regID    uint64                  // guarded by regMu
	active   atomic.Pointer[Backend] // snapshot of the top of regStack, read lock-free by Run
)

// Register makes b the active backend and returns a function that removes it again (calling
// it more than once is harmless). Registrations stack: removing the active backend
// reactivates the one registered before it, so a test can register a fake over a real backend
// and restore it. Register does not call Close. A nil b, or a nil pointer (map, func...) of a
// Backend type, is ignored: Run would call its methods on nil.
func Register(b Backend) (unregister func()) {
	if isNil(b) {
		return func() {}
	}
	regMu.Lock()
	regID++
	id := regID
	regStack = append(regStack, registration{b, id})
	publishLocked()
	regMu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			regMu.Lock()
			defer regMu.Unlock()
			for i, r := range regStack {
				if r.id == id {
					regStack = append(regStack[:i], regStack[i+1:]...)
					break
				}
			}
			publishLocked()
		})
	}
}

// isNil reports whether b is nil or holds a nil pointer, map, slice, func, chan or interface.
func isNil(b Backend) bool {
	if b == nil {
		return true
	}
	switch v := reflect.ValueOf(b); v.Kind() {
	case reflect.Pointer, reflect.Map, reflect.Slice, reflect.Func, reflect.Chan, reflect.Interface:
		return v.IsNil()
	}
	return false
}

func publishLocked() {
	if len(regStack) == 0 {
		active.Store(nil)
		return
	}
	b := regStack[len(regStack)-1].b
	active.Store(&b)
}

// SetUnavailable records why this build's own device backend is not registered (why != nil),
// for Unavailable's and ModeRequired's errors; the device backend calls it at initialisation.
func SetUnavailable(why error) { noDevice.Store(&why) }

// Active returns the active backend, or nil when none is registered.
func Active() Backend {
	if p := active.Load(); p != nil {
		return *p
	}
	return nil
}

// Unavailable returns nil when a backend is registered, and otherwise an ErrDevice error that
// says why none is: the build has no device backend (no gatejetcuda tag), or why the
// gatejetcuda backend did not open (no driver, no device, no NVRTC). A program that requires
// the GPU can report it before it starts work.
func Unavailable() error {
	if Active() != nil {
		return nil
	}
	if why := noDevice.Load(); why != nil {
		return check.Errorf(gatejet.ErrDevice, "cudaops.Unavailable", "", "no GPU backend is registered: %s", detail(*why))
	}
	return check.Errorf(gatejet.ErrDevice, "cudaops.Unavailable", "", "no GPU backend is registered")
}

// detail is what err says beyond its operation and kind, when it is a device *gatejet.Error.
func detail(err error) string {
	var ge *gatejet.Error
	if errors.As(err, &ge) && ge.Kind == gatejet.ErrDevice && ge.Detail != "" {
		return ge.Detail
	}
	return err.Error()
}

var breakEvens sync.Map // Kernel → int

// SetBreakEven sets the ModeAuto break-even of kernel k, in output elements: calls with
// Work < work run on the CPU. A negative work restores DefaultBreakEven(k), the model's; 0
// means always try the device.
func SetBreakEven(k Kernel, work int) {
	if work < 0 {
		breakEvens.Delete(k)
		return
	}
	breakEvens.Store(k, work)
}

// BreakEven returns kernel k's ModeAuto break-even in output elements: its SetBreakEven value,
// else DefaultBreakEven(k).
func BreakEven(k Kernel) int {
	if v, ok := breakEvens.Load(k); ok {
		return v.(int)
	}
	return DefaultBreakEven(k)
}

// Counts is a snapshot of Run's counters.
type Counts struct {
	CPU          uint64 // calls that ran on the CPU by policy
	GPU          uint64 // calls the backend ran
	CPUFallback  uint64 // ModeAuto calls whose device attempt failed and then ran on the CPU
	DeviceErrors uint64 // ModeRequired calls that returned an error instead of running
}

var (
	nCPU, nGPU, nFallback, nDevErr atomic.Uint64
	lastFallback                   atomic.Pointer[error]
)

// Stats returns the counters of every Run since start (or since ResetStats).
func Stats() Counts {
	return Counts{CPU: nCPU.Load(), GPU: nGPU.Load(), CPUFallback: nFallback.Load(), DeviceErrors: nDevErr.Load()}
}

// ResetStats zeroes the counters and forgets the last fallback error.
func ResetStats() {
	nCPU.Store(0)
	nGPU.Store(0)
	nFallback.Store(0)
	nDevErr.Store(0)
	lastFallback.Store(nil)
}

// LastFallbackError returns the device error behind the most recent PathCPUFallback, or nil.
func LastFallbackError() error {
	if p := lastFallback.Load(); p != nil {
		return *p
	}
	return nil
}

// runOp is the operation of the errors of a kernel's run: the package that decides where
// kernels run, cudaops (users call no function of it for a run; an op's run reaches it).
const runOp = "cudaops"

// deviceError0 builds an ErrDevice error of operation runOp.
func deviceError0(format string, args ...any) error {
	return check.Errorf(gatejet.ErrDevice, runOp, "", format, args...)
}

// LaunchError is the error Run returns (ModeRequired) or records (ModeAuto, see
// LastFallbackError) when a backend's Launch fails with an error that is not already an
// ErrDevice error: an ErrDevice *gatejet.Error that also wraps the backend's own error, so
// errors.Is and errors.As reach both (gatejet.ErrDevice, and an out-of-memory type, say).
type LaunchError struct {
	Err   *gatejet.Error // Op "cudaops", Kind gatejet.ErrDevice, the cause's text in Detail
	Cause error          // what Backend.Launch returned
}

// Error returns Err's message ("<nil>" for a nil *LaunchError or one without Err).
func (e *LaunchError) Error() string {
	if e == nil {
		return "<nil>"
	}
	return e.Err.Error() // a nil *gatejet.Error formats as "<nil>"
}

// Unwrap returns both Err (hence gatejet.ErrDevice) and Cause, leaving out those that are
// nil; a nil *LaunchError unwraps to nothing.
func (e *LaunchError) Unwrap() []error {
	if e == nil {
		return nil
	}
	var out []error
	if e.Err != nil {
		out = append(out, e.Err)
	}
	if e.Cause != nil {
		out = append(out, e.Cause)
	}
	return out
}

// deviceError wraps a launch error as a *LaunchError unless it already is an ErrDevice error.
func deviceError(b Backend, c *Call, err error) error {
	if errors.Is(err, gatejet.ErrDevice) {
		return err
	}
	return &LaunchError{
		Err:   &gatejet.Error{Op: runOp, Detail: b.Name() + ": " + c.Kernel.String() + ": " + err.Error(), Kind: gatejet.ErrDevice},
		Cause: err,
	}
}

// Run computes c under the current Mode, on the CPU with the kernel's CPU function from the
// kernel table or on the registered backend:
//
//   - ModeOff: the CPU → PathCPU.
//   - ModeAuto: when a backend is registered, the kernel has device entry points and
//     c.Work ≥ BreakEven(c.Kernel), the backend launches c → PathGPU. If c fails Check or the
//     launch fails, the error is recorded (LastFallbackError) and the CPU runs c →
//     PathCPUFallback. Otherwise the CPU → PathCPU.
//   - ModeRequired: the backend must run c whatever its Work → PathGPU. No backend, a kernel
//     without device entry points, or a launch error gives an ErrDevice error (a launch
//     error is wrapped, see LaunchError); a Call that fails Check gives that error. The CPU
//     never runs.
//
// An output the CPU function may skip (a VJP's, left nil) is given a scratch buffer for a
// device launch, since device kernels write every output; the call's slices are as they were
// when Run returns. A call is checked the same way on every path (Check, but for those
// outputs), so its outcome does not depend on the mode: the error returned with a CPU path is
// that check's or the CPU function's own; an error under ModeRequired comes with PathGPU, the
// path that was required.
func Run(c *Call) (Path, error) {
	m := CurrentMode()
	if m == ModeRequired {
		return runRequired(c)
	}
	if m == ModeAuto && c != nil {
		if b := autoBackend(c.Kernel.OnDevice(), c.Kernel, c.Work); b != nil {
			err := launchOn(b, c)
			if err == nil {
				nGPU.Add(1)
				return PathGPU, nil
			}
			lastFallback.Store(&err)
			nFallback.Add(1)
			return PathCPUFallback, runCPU(c)
		}
	}
	nCPU.Add(1)
	return PathCPU, runCPU(c)
}

// autoBackend is the backend ModeAuto sends a call of kernel k and work to: the active one,
// for a kernel with device code at or above its break-even; nil for the CPU.
func autoBackend(onDevice bool, k Kernel, work int) Backend {
	if !onDevice {
		return nil
	}
	if b := Active(); b != nil && work >= BreakEven(k) {
		return b
	}
	return nil
}

// runCPU runs c with its kernel's CPU function, after the checks a device launch would make
// (but for skippable outputs, which may be nil), so that a call's outcome does not depend on
// the mode. The checks allocate nothing for a valid call.
func runCPU(c *Call) error {
	if c == nil {
		return check.Errorf(gatejet.ErrParam, runOp, "", "nil call")
	}
	sp, err := c.check(runOp, true)
	if err != nil {
		return err
	}
	if c.DType == Float32 {
		return kernel.CPUOf[float32](sp)(&c.F32, c.Ints, c.Floats)
	}
	return kernel.CPUOf[float64](sp)(&c.F64, c.Ints, c.Floats)
}

// launchOn checks c and launches it on b, with scratch for the outputs the caller left nil;
// errors other than Check's are wrapped as device errors.
func launchOn(b Backend, c *Call) error {
	if _, err := c.check(runOp, true); err != nil {
		return err // before any scratch is allocated for a call that is refused anyway
	}
	if !c.Kernel.OnDevice() {
		return check.Errorf(gatejet.ErrDevice, runOp, "Kernel", "%v has no device kernel (it runs on the CPU only)", c.Kernel)
	}
	var filled uint8
	var err error
	switch c.DType {
	case Float64:
		filled, err = fillScratch(c, &c.F64)
	case Float32:
		filled, err = fillScratch(c, &c.F32)
	}
	if err == nil {
		err = c.Check()
	}
	if err == nil {
		if err = b.Launch(c); err != nil {
			err = deviceError(b, c, err)
		}
	}
	for i := range kernel.MaxOut {
		if filled&(1<<i) != 0 {
			c.F64.Out[i], c.F32.Out[i] = nil, nil
		}
	}
	return err
}

// fillScratch gives each nil output that the kernel lets the CPU skip a fresh buffer of its
// length, the call's scratch together within gatejet.MaxBytes, and returns the bits of the
// outputs it filled. c has passed check.
func fillScratch[T gatejet.Float](c *Call, o *Operands[T]) (filled uint8, err error) {
	sp := c.Kernel.id().Spec()
	var z T
	total := 0
	for i, d := range sp.Out {
		if o.Out[i] == nil && sp.Skippable&(1<<i) != 0 {
			n, ok := d.Len(c.Ints)
			if !ok || n > int(^uint(0)>>1)-total {
				return 0, check.Errorf(gatejet.ErrSize, runOp, "scratch", "%v: scratch sizes overflow int", c.Kernel)
			}
			total += n
		}
	}
	if _, err := check.Alloc(runOp, "scratch", int(unsafe.Sizeof(z)), total); err != nil {
		return 0, err
	}
	for i, d := range sp.Out {
		if o.Out[i] != nil || sp.Skippable&(1<<i) == 0 {
			continue
		}
		n, _ := d.Len(c.Ints)
		o.Out[i] = make([]T, n)
		filled |= 1 << i
	}
	return filled, nil
}

func runRequired(c *Call) (Path, error) {
	b := Active()
	if b == nil {
		nDevErr.Add(1)
		var k Kernel
		if c != nil {
			k = c.Kernel
		}
		if why := noDevice.Load(); why != nil {
			return PathGPU, check.Errorf(gatejet.ErrDevice, runOp, "",
				"mode required but no GPU backend is registered (kernel %v): %s", k, detail(*why))
		}
		return PathGPU, check.Errorf(gatejet.ErrDevice, runOp, "",
			"mode required but no GPU backend is registered (kernel %v)", k)
	}
	if c == nil {
		nDevErr.Add(1)
		return PathGPU, check.Errorf(gatejet.ErrParam, runOp, "", "nil call")
	}
	if err := launchOn(b, c); err != nil {
		nDevErr.Add(1)
		return PathGPU, err
	}
	nGPU.Add(1)
	return PathGPU, nil
}

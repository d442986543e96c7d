package dispatch

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/gatejet/gatejet"
	"github.com/stretchr/testify/require"
)

var errInjected = errors.New("injected launch failure")

// fakeBackend computes relu_forward on the host (marking its work with a sentinel so a test can
// tell who wrote the output), or fails every launch when fail is set.
type fakeBackend struct {
	name     string
	fail     atomic.Bool
	launches atomic.Int64
}

func (f *fakeBackend) Name() string { return f.name }
func (f *fakeBackend) Close() error { return nil }
func (f *fakeBackend) Launch(c *Call) error {
	f.launches.Add(1)
	if f.fail.Load() {
		return errInjected
	}
	if c.Kernel != KernelReLUForward {
		return fmt.Errorf("fake backend: unsupported kernel %s", c.Kernel)
	}
	x, y := c.F64.In[0], c.F64.Out[0]
	for i, v := range x {
		y[i] = max(v, 0) + 1000 // sentinel: device-written values are offset
	}
	return nil
}

func reluCall(x, y []float64) *Call {
	c := &Call{Kernel: KernelReLUForward, DType: Float64, Ints: []int{len(x)}, Work: len(y)}
	c.F64.In[0], c.F64.Out[0] = x, y
	return c
}

// runReLU runs relu_forward of x through Run and returns the path, the output and the error.
func runReLU(x ...float64) (Path, []float64, error) {
	y := make([]float64, len(x))
	p, err := Run(reluCall(x, y))
	return p, y, err
}

// registerFake registers a fake backend called name (failing every launch when fail is set)
// until the end of the test.
func registerFake(t *testing.T, name string, fail bool) *fakeBackend {
	f := &fakeBackend{name: name}
	f.fail.Store(fail)
	t.Cleanup(Register(f))
	return f
}

// isolate gives a test a clean mode, registry and counters, restored afterwards.
func isolate(t *testing.T, m Mode) {
	t.Helper()
	oldMode := SetMode(m)
	regMu.Lock()
	oldStack := regStack
	regStack = nil
	publishLocked()
	regMu.Unlock()
	oldBE := BreakEven(KernelReLUForward)
	SetBreakEven(KernelReLUForward, 0)
	ResetStats()
	t.Cleanup(func() {
		SetMode(oldMode)
		regMu.Lock()
		regStack = oldStack
		publishLocked()
		regMu.Unlock()
		SetBreakEven(KernelReLUForward, oldBE)
		ResetStats()
	})
}

func TestRunOff(t *testing.T) {
	isolate(t, ModeOff)
	f := registerFake(t, "fake", false)
	p, y, err := runReLU(-1, 2)
	require.NoError(t, err)
	require.Equal(t, PathCPU, p)
	require.Equal(t, []float64{0, 2}, y)
	require.Zero(t, f.launches.Load(), "ModeOff never calls the backend")
	require.Equal(t, Counts{CPU: 1}, Stats())
}

func TestRunAutoUsesBackend(t *testing.T) {
	isolate(t, ModeAuto)
	registerFake(t, "fake", false)
	p, y, err := runReLU(-1, 2)
	require.NoError(t, err)
	require.Equal(t, PathGPU, p)
	require.Equal(t, []float64{1000, 1002}, y)
	require.Equal(t, Counts{GPU: 1}, Stats())
}

func TestRunAutoNoBackend(t *testing.T) {
	isolate(t, ModeAuto)
	p, y, err := runReLU(-1, 2)
	require.NoError(t, err)
	require.Equal(t, PathCPU, p)
	require.Equal(t, []float64{0, 2}, y)
	require.Nil(t, LastFallbackError())
}

func TestRunAutoBelowBreakEven(t *testing.T) {
	isolate(t, ModeAuto)
	f := registerFake(t, "fake", false)
	SetBreakEven(KernelReLUForward, 3)
	require.Equal(t, 3, BreakEven(KernelReLUForward))
	p, _, err := runReLU(-1, 2)
	require.NoError(t, err)
	require.Equal(t, PathCPU, p)
	require.Zero(t, f.launches.Load())
	SetBreakEven(KernelReLUForward, 2) // Work == break-even: the device is tried
	p, _, err = runReLU(-1, 2)
	require.NoError(t, err)
	require.Equal(t, PathGPU, p)
	SetBreakEven(KernelReLUForward, -1)
	require.Equal(t, DefaultBreakEven(KernelReLUForward), BreakEven(KernelReLUForward))
}

func TestRunAutoFallbackOnInjectedFailure(t *testing.T) {
	isolate(t, ModeAuto)
	f := registerFake(t, "flaky", true)
	p, y, err := runReLU(-1, 2, -3)
	require.NoError(t, err)
	require.Equal(t, PathCPUFallback, p)
	require.Equal(t, []float64{0, 2, 0}, y, "the CPU result, not the device's")
	require.EqualValues(t, 1, f.launches.Load())
	fe := LastFallbackError()
	require.Error(t, fe)
	require.True(t, errors.Is(fe, gatejet.ErrDevice))
	require.Contains(t, fe.Error(), "injected launch failure")
	require.Contains(t, fe.Error(), "flaky")
	require.ErrorIs(t, fe, errInjected, "the backend's own error is reachable")
	require.Equal(t, Counts{CPUFallback: 1}, Stats())
}

func TestRunAutoFallbackOnBadCall(t *testing.T) {
	isolate(t, ModeAuto)
	f := registerFake(t, "fake", false)
	x, y := []float64{-1, 2}, make([]float64, 5) // wrong output length
	c := reluCall(x, y)
	c.Work = 5
	p, err := Run(c)
	require.ErrorIs(t, err, gatejet.ErrSize, "the call is refused on the CPU too: its outcome does not depend on the mode")
	require.Contains(t, err.Error(), "Out[0]")
	require.Equal(t, PathCPUFallback, p)
	SetMode(ModeOff)
	_, errOff := Run(reluCall(x, y))
	require.Equal(t, err.Error(), errOff.Error(), "ModeOff refuses it with the same error")
	SetMode(ModeAuto)
	require.True(t, errors.Is(LastFallbackError(), gatejet.ErrSize))
	require.Zero(t, f.launches.Load(), "a malformed call never reaches the backend")
}

func TestRunRequiredNoBackend(t *testing.T) {
	isolate(t, ModeRequired)
	p, _, err := runReLU(-1, 2)
	require.Error(t, err)
	require.True(t, errors.Is(err, gatejet.ErrDevice), "%v", err)
	require.Equal(t, PathGPU, p)
	require.Equal(t, Counts{DeviceErrors: 1}, Stats())
}

func TestRunRequiredBackendFailure(t *testing.T) {
	isolate(t, ModeRequired)
	registerFake(t, "flaky", true)
	_, _, err := runReLU(-1, 2)
	require.True(t, errors.Is(err, gatejet.ErrDevice), "%v", err)
	require.ErrorIs(t, err, errInjected, "the backend's own error is wrapped too")
	require.Contains(t, err.Error(), "injected launch failure")
	var ge *gatejet.Error
	require.ErrorAs(t, err, &ge)
	require.Equal(t, "cudaops", ge.Op)
	var le *LaunchError
	require.ErrorAs(t, err, &le)
	require.Equal(t, errInjected, le.Cause)
	require.Equal(t, "cudaops: device error: flaky: relu_forward: injected launch failure", err.Error())
}

func TestRunRequiredIgnoresBreakEvenAndRunsDevice(t *testing.T) {
	isolate(t, ModeRequired)
	SetBreakEven(KernelReLUForward, 1<<30)
	registerFake(t, "fake", false)
	p, y, err := runReLU(-1, 2)
	require.NoError(t, err)
	require.Equal(t, PathGPU, p)
	require.Equal(t, []float64{1000, 1002}, y)
}

func TestRunRequiredBadCall(t *testing.T) {
	isolate(t, ModeRequired)
	f := registerFake(t, "fake", false)
	_, err := Run(&Call{Kernel: Kernel(60000)})
	require.True(t, errors.Is(err, gatejet.ErrParam), "%v", err)
	require.Zero(t, f.launches.Load())
}

func TestRunUnknownKernelOnCPU(t *testing.T) {
	isolate(t, ModeOff)
	_, err := Run(&Call{Kernel: Kernel(60000), DType: Float64})
	require.True(t, errors.Is(err, gatejet.ErrParam))
	_, err = Run(nil)
	require.True(t, errors.Is(err, gatejet.ErrParam))
}

func TestRegisterStack(t *testing.T) {
	isolate(t, ModeAuto)
	require.Nil(t, Active())
	a, b := &fakeBackend{name: "a"}, &fakeBackend{name: "b"}
	ua := Register(a)
	require.Equal(t, "a", Active().Name())
	ub := Register(b)
	require.Equal(t, "b", Active().Name())
	ub()
	require.Equal(t, "a", Active().Name(), "removing the top restores the previous backend")
	ub() // idempotent
	require.Equal(t, "a", Active().Name())
	ub = Register(b)
	ua() // removing a non-top entry keeps the top active
	require.Equal(t, "b", Active().Name())
	ub()
	require.Nil(t, Active())
	Register(nil)()
	require.Nil(t, Active())
}

func TestPathString(t *testing.T) {
	require.Equal(t, "cpu", PathCPU.String())
	require.Equal(t, "gpu", PathGPU.String())
	require.Equal(t, "cpu-fallback", PathCPUFallback.String())
}

// TestRunConcurrent hammers Run from many goroutines while the mode, the backend's health and
// the registration change underneath; run it with -race. Every call must either produce the
// CPU result or the device result, with a Path that says which.
func TestRunConcurrent(t *testing.T) {
	isolate(t, ModeAuto)
	f := &fakeBackend{name: "fake"}
	var wg, mut sync.WaitGroup
	stop := make(chan struct{})
	var paths [3]atomic.Int64
	var bad atomic.Int64
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			x := []float64{-1, float64(g), -3, 4}
			for i := 0; i < 2000; i++ {
				y := make([]float64, len(x))
				p, err := Run(reluCall(x, y))
				if err != nil {
					if !errors.Is(err, gatejet.ErrDevice) {
						bad.Add(1)
					}
					continue
				}
				paths[p].Add(1)
				off := 0.0
				if p == PathGPU {
					off = 1000
				}
				for j, v := range x {
					if y[j] != max(v, 0)+off {
						bad.Add(1)
					}
				}
			}
		}(g)
	}
	mut.Add(1)
	go func() {
		defer mut.Done()
		modes := []Mode{ModeAuto, ModeOff, ModeAuto, ModeRequired}
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			SetMode(modes[i%len(modes)])
			f.fail.Store(i%3 == 0)
			u := Register(f)
			_ = LastFallbackError()
			_ = Stats()
			SetBreakEven(KernelReLUForward, i%2)
			u()
		}
	}()
	wg.Wait()
	close(stop)
	mut.Wait()
	require.Zero(t, bad.Load())
	s := Stats()
	require.Equal(t, uint64(8*2000), s.CPU+s.GPU+s.CPUFallback+s.DeviceErrors)
}

// TestEnvAtStartup starts this test binary again with GATEJET_GPU set and checks what the
// package read at initialisation.
func TestEnvAtStartup(t *testing.T) {
	if os.Getenv("CUDAOPS_ENV_CHILD") == "1" {
		e := "nil"
		if EnvError() != nil {
			e = EnvError().Error()
		}
		fmt.Printf("MODE=%s ERR=%s\n", CurrentMode(), e)
		return
	}
	for val, want := range map[string]string{
		"off":      "MODE=off ERR=nil",
		"Required": "MODE=required ERR=nil",
		"auto":     "MODE=auto ERR=nil",
		"turbo":    "MODE=auto ERR=cudaops: GATEJET_GPU: invalid parameter",
	} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestEnvAtStartup$", "-test.count=1")
		cmd.Env = append(os.Environ(), "CUDAOPS_ENV_CHILD=1", EnvVar+"="+val)
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "%s", out)
		require.Contains(t, string(out), want, "GATEJET_GPU=%s: %s", val, out)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestEnvAtStartup$", "-test.count=1")
	cmd.Env = append(withoutEnv(os.Environ(), EnvVar), "CUDAOPS_ENV_CHILD=1")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	require.Contains(t, string(out), "MODE=auto ERR=nil")
}

func withoutEnv(env []string, name string) []string {
	var out []string
	for _, e := range env {
		if !strings.HasPrefix(e, name+"=") {
			out = append(out, e)
		}
	}
	return out
}

// TestUnavailableSaysWhy: the reason a device backend recorded with SetUnavailable is what
// Unavailable and ModeRequired's error give; with a backend registered, Unavailable is nil.
func TestUnavailableSaysWhy(t *testing.T) {
	old := noDevice.Load()
	t.Cleanup(func() { noDevice.Store(old) })
	SetUnavailable(errors.New("no driver here"))
	err := Unavailable()
	require.ErrorIs(t, err, gatejet.ErrDevice)
	require.Contains(t, err.Error(), "no driver here")
	_, err = runRequired(&Call{Kernel: KernelReLUForward, DType: Float64})
	require.ErrorIs(t, err, gatejet.ErrDevice)
	require.Contains(t, err.Error(), "no driver here")

	registerFake(t, "fake", false)
	require.NoError(t, Unavailable())
}

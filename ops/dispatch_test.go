package ops

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/gatejet/gatejet"
	"github.com/gatejet/gatejet/cudaops"
	"github.com/gatejet/gatejet/internal/dispatch"
	"github.com/gatejet/gatejet/internal/kernel"
)

// fakeBackend stands in for a GPU: it validates every Call against its kernel's documented
// convention (dispatch.Call.Check) and writes a marker value into every output, or fails.
type fakeBackend struct {
	fail     atomic.Bool
	launches atomic.Int64
	mu       sync.Mutex
	bad      []error          // Calls that failed Check
	kernels  map[string]int64 // launches by kernel
}

const marker = 42

func (f *fakeBackend) Name() string { return "fake" }
func (f *fakeBackend) Close() error { return nil }
func (f *fakeBackend) Launch(c *dispatch.Call) error {
	f.launches.Add(1)
	f.mu.Lock()
	f.kernels[c.Kernel.String()]++
	f.mu.Unlock()
	if err := c.Check(); err != nil {
		f.mu.Lock()
		f.bad = append(f.bad, err)
		f.mu.Unlock()
		return err
	}
	if f.fail.Load() {
		return errors.New("injected device failure")
	}
	for i := range c.F64.Out {
		for j := range c.F64.Out[i] {
			c.F64.Out[i][j] = marker
		}
		for j := range c.F32.Out[i] {
			c.F32.Out[i][j] = marker
		}
	}
	return nil
}

// withFake registers a fake backend with every kernel's break-even at zero, in ModeAuto, and
// undoes it all when the test ends.
func withFake(t *testing.T) *fakeBackend {
	f := &fakeBackend{kernels: map[string]int64{}}
	unregister := dispatch.Register(f)
	old := dispatch.SetMode(dispatch.ModeAuto)
	for _, k := range dispatch.Kernels() {
		dispatch.SetBreakEven(k, 0)
	}
	t.Cleanup(func() {
		for _, k := range dispatch.Kernels() {
			dispatch.SetBreakEven(k, -1)
		}
		dispatch.SetMode(old)
		unregister()
	})
	return f
}

// everyOpCases is one graph per constructor of this package.
func everyOpCases() []graphCase {
	var cs []graphCase
	for _, jc := range allJetCases() {
		cs = append(cs, jc.graphCase)
	}
	cs = append(cs, allCoordCases()...)
	cs = append(cs, axisCase(false, 1), axisCase(true, 0))
	for a := actReLU; a < numActivations; a++ {
		cs = append(cs, activationCase(a, false), activationCase(a, true))
	}
	// Softmax-family forward (softmax.go).
	cs = append(cs, softmaxCase(false, tensor.Shape{3, 4}, 1, 1), softmaxCase(true, tensor.Shape{2, 3, 4}, 0, 2))
	return cs
}

// TestEveryOpRunsOnTheBackend: with a backend registered, every op — forward, the gradient
// ops that gorgonia.Grad inserts (TapeMachine) and DoDiff (LispMachine) — sends its kernel to
// the backend through dispatch.Run with a Call that passes the kernel's Check, takes the
// backend's output, and reports PathGPU; the ops of a CPU-only gate launch nothing, compute
// on the CPU and report PathCPU.
func TestEveryOpRunsOnTheBackend(t *testing.T) {
	f := withFake(t)
	for _, c := range everyOpCases() {
		for _, dt := range dtypes {
			for _, m := range machines {
				t.Run(fmt.Sprintf("%s/%v/%v", c.name, dt, m), func(t *testing.T) {
					g, nodes, out := buildCase(t, c, dt)
					cost, err := G.Sum(out)
					require.NoError(t, err)
					var vm G.VM
					if m == tape {
						_, err := G.Grad(cost, nodes...)
						require.NoError(t, err)
						vm = G.NewTapeMachine(g, G.TraceExec())
					} else {
						vm = G.NewLispMachine(g)
					}
					defer vm.Close()
					before := f.launches.Load()
					require.NoError(t, vm.RunAll())
					// An op runs on the device when the case's gate has device kernels and the
					// op's kernel has device entry points (a coordinate jet's gradient ops are
					// the gate's row jets); DoDiff runs where the gate's gradients do.
					want := func(op G.Op) dispatch.Path {
						if k, ok := op.(interface{ launchKernel() kernel.ID }); ok && (c.cpuOnly || !k.launchKernel().OnDevice()) {
							return dispatch.PathCPU
						}
						return dispatch.PathGPU
					}
					diffWant := dispatch.PathGPU
					if c.cpuOnly {
						diffWant = dispatch.PathCPU
						require.Equal(t, before, f.launches.Load(), "a CPU-only gate launches nothing")
					} else {
						require.Greater(t, f.launches.Load(), before)
					}
					for _, x := range floats(t, out.Value()) {
						if want(out.Op()) == dispatch.PathCPU {
							require.NotEqual(t, float64(marker), x, "the CPU, not the backend, wrote the output")
						} else {
							require.Equal(t, float64(marker), x, "the op's output is the backend's")
						}
					}
					ran, reporters := opsOf[dispatch.PathReporter](g)
					seen := len(ran)
					for i, n := range ran {
						r := reporters[i]
						p, ok := r.LastPath()
						require.True(t, ok, "%v ran", n)
						require.Equal(t, want(n.Op()), p, "%v", n)
						if m == lisp {
							if _, isDiff := n.Op().(G.ADOp); isDiff {
								p, ok := r.LastDiffPath()
								require.True(t, ok, "%v DoDiff ran", n)
								require.Equal(t, diffWant, p, "%v DoDiff", n)
							}
						}
					}
					if m == tape {
						require.Greater(t, seen, 1, "gradient ops are ops of this package too")
					}
				})
			}
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	require.Empty(t, f.bad, "every Call must satisfy its kernel's convention")
	for _, k := range dispatch.DeviceKernels() {
		require.Positive(t, f.kernels[k.String()], "kernel %s was never launched", k)
	}
}

// TestBackendFailureFallsBack: a failing backend makes cudaops fall back to the CPU kernel; the
// op reports PathCPUFallback and its result is the CPU result.
func TestBackendFailureFallsBack(t *testing.T) {
	c := newJetCase(kernel.SoftmaxGate, kernel.Second).graphCase
	want := forwardValue(t, c, tensor.Float64, tape)
	f := withFake(t)
	f.fail.Store(true)
	g, _, out := buildCase(t, c, tensor.Float64)
	vm := G.NewTapeMachine(g)
	defer vm.Close()
	require.NoError(t, vm.RunAll())
	require.Equal(t, want, floats(t, out.Value()))
	p, ok := LastPath(out)
	require.True(t, ok)
	require.Equal(t, cudaops.PathCPUFallback, p)
	require.Equal(t, uint64(1), out.Op().(dispatch.PathReporter).PathCounts().CPUFallback)
	require.ErrorIs(t, dispatch.LastFallbackError(), gatejet.ErrDevice)
}

// TestModeRequiredWithoutBackend: when the device is required and there is none, Do reports
// an ErrDevice error and does not compute on the CPU.
func TestModeRequiredWithoutBackend(t *testing.T) {
	if dispatch.Active() != nil {
		t.Skip("a backend is registered")
	}
	old := dispatch.SetMode(dispatch.ModeRequired)
	defer dispatch.SetMode(old)
	g := G.NewGraph()
	x := G.NewVector(g, tensor.Float32, G.WithShape(5), G.WithName("x"))
	n, err := GELU(x)
	require.NoError(t, err)
	_, err = n.Op().Do(tensor.New(tensor.WithShape(5), tensor.Of(tensor.Float32)))
	require.ErrorIs(t, err, gatejet.ErrDevice)
	_, ok := LastPath(n)
	require.False(t, ok, "a failed required run ran on no path")
	require.Equal(t, dispatch.PathCounts{}, n.Op().(dispatch.PathReporter).PathCounts())
}

// TestLastPathBeforeRun: nodes report no path before their op has run, and LastPath of a node
// from elsewhere (or nil) reports none.
func TestLastPathBeforeRun(t *testing.T) {
	g := G.NewGraph()
	x := G.NewVector(g, tensor.Float64, G.WithShape(3), G.WithName("x"))
	n, err := SiLU(x)
	require.NoError(t, err)
	_, ok := LastPath(n)
	require.False(t, ok)
	_, ok = LastPath(x)
	require.False(t, ok)
	_, ok = LastPath(nil)
	require.False(t, ok)
	_, ok = n.Op().(dispatch.PathReporter).LastDiffPath()
	require.False(t, ok)
}

// TestNoCUDADoer: in the default build no op implements gorgonia.CUDADoer, so Gorgonia keeps
// every node on the CPU and the device is reached through dispatch.Run only.
func TestNoCUDADoer(t *testing.T) {
	if G.CUDA {
		t.Skip("Gorgonia's cuda build: every op is a gorgonia.CUDADoer there (TestCUDADoerEveryOp)")
	}
	for _, c := range everyOpCases() {
		g, nodes, out := buildCase(t, c, tensor.Float64)
		_, err := G.Grad(G.Must(G.Sum(out)), nodes...)
		require.NoError(t, err)
		for _, n := range g.AllNodes() {
			if _, ours := n.Op().(dispatch.PathReporter); ours {
				_, isCUDA := n.Op().(G.CUDADoer)
				require.False(t, isCUDA, "%v", n)
				require.False(t, n.Op().CallsExtern())
			}
		}
	}
}

package conformance

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/gatejet/gatejet/internal/dispatch"
	"github.com/gatejet/gatejet/ops"
)

const goroutines = 8

// onWorkers runs f(0), …, f(goroutines-1), each on a goroutine of its own, and waits for them.
func onWorkers(f func(w int)) {
	var wg sync.WaitGroup
	for w := range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			f(w)
		}()
	}
	wg.Wait()
}

// raceGraph builds, in a fresh graph, logits [n,K], decoded [n,K,P] and v [n,K] with the
// values of seed, applies fwd (a shared op) to them and adds the gradient of Σ out² with
// respect to the inputs when grad is set. It returns the graph, the output and the gradient
// nodes.
type raceGraph struct {
	g     *G.ExprGraph
	in    []*G.Node
	out   *G.Node
	grads G.Nodes
}

const rn, rk, rp = 6, 5, 3

func raceInputs(seed uint64) [][]float64 {
	l, d, v := jetSeq(seed, rn, rk, rp, 2)
	return [][]float64{l, d, v}
}

func buildRaceGraph(t testing.TB, dt tensor.Dtype, op G.Op, seed uint64, grad bool) raceGraph {
	t.Helper()
	g := G.NewGraph()
	vals := raceInputs(seed)
	shapes := [][]int{{rn, rk}, {rn, rk, rp}, {rn, rk}}
	slots := []int{0, 1, 2} // logits, decoded, v
	if _, ok := op.(interface {
		InferShape(...G.DimSizer) (tensor.Shape, error)
	}); ok && op.Arity() == 2 {
		if _, err := op.InferShape(tensor.Shape{rn, rk}, tensor.Shape{rn, rk}); err == nil {
			slots = []int{0, 2} // an axis op: y [n,K], dy [n,K]
		}
	}
	in := make([]*G.Node, op.Arity())
	for i := range in {
		in[i] = input(g, dt, fmt.Sprintf("in%d", i), shapes[slots[i]], vals[slots[i]])
	}
	out, err := G.ApplyOp(op, in...)
	if err != nil {
		t.Errorf("ApplyOp(%v): %v", op, err)
		return raceGraph{}
	}
	rg := raceGraph{g: g, in: in, out: out}
	if grad {
		cost, err := G.Sum(G.Must(G.Square(out)))
		if err != nil {
			t.Errorf("cost: %v", err)
			return raceGraph{}
		}
		if rg.grads, err = G.Grad(cost, in...); err != nil {
			t.Errorf("Grad: %v", err)
			return raceGraph{}
		}
	}
	return rg
}

// runRace runs rg on a TapeMachine and returns the output followed by the gradients.
func runRace(rg raceGraph) ([][]float64, error) {
	return runTape(rg.g, append(G.Nodes{rg.out}, rg.grads...)...)
}

// sharedOps builds one op of each kind, for reuse in many graphs: a jet channel, the HVP, a
// logistic channel and the softmax backward over [n,K].
func sharedOps(t testing.TB, dt tensor.Dtype) map[string]G.Op {
	t.Helper()
	g := G.NewGraph()
	l := G.NewMatrix(g, dt, G.WithShape(rn, rk), G.WithName("l"))
	d := G.NewTensor(g, dt, 3, G.WithShape(rn, rk, rp), G.WithName("d"))
	v := G.NewMatrix(g, dt, G.WithShape(rn, rk), G.WithName("v"))
	alpha, beta := seq(5, rk, -2, 2), seq(6, rk, -1, 1)
	res := map[string]G.Op{}
	for name, b := range map[string]func() (*G.Node, error){
		"second":   func() (*G.Node, error) { return ops.SoftmaxJetSecond(l, d, 1.3) },
		"hvp":      func() (*G.Node, error) { return ops.SoftmaxJetHVP(l, d, v, 0.7) },
		"logistic": func() (*G.Node, error) { return ops.LogisticJetFirst(l, d, alpha, beta) },
		"softmaxB": func() (*G.Node, error) { return ops.SoftmaxBackward(l, v, -1) },
	} {
		n, err := b()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		res[name] = n.Op()
	}
	return res
}

// serialResults runs each shared op once, in a graph with gradients on inputs of seed, and
// returns the results by name: what the concurrent runs must reproduce.
func serialResults(t testing.TB, dt tensor.Dtype, shared map[string]G.Op, seed uint64) map[string][][]float64 {
	t.Helper()
	want := map[string][][]float64{}
	for name, op := range shared {
		res, err := runRace(buildRaceGraph(t, dt, op, seed, true))
		if err != nil {
			t.Fatalf("%s serial: %v", name, err)
		}
		want[name] = res
	}
	return want
}

// TestConcurrentMachinesSharedOps: 8 goroutines each build their own graphs around the same
// op values (one op reused in many graphs, with gorgonia.Grad adding its gradient ops), and
// run them on TapeMachines and LispMachines, while another goroutine reads the ops' path
// records. Every result is bit-identical to the serial one. Rows are split across goroutines
// inside the kernels too (par.SetMinWork(0)).
func TestConcurrentMachinesSharedOps(t *testing.T) {
	cpuOnly(t)
	setPar(t, 0, 0)
	for _, dt := range bothDtypes {
		shared := sharedOps(t, dt)
		// want: the serial results of the graph with gradients; wantFwd: the serial output of
		// a forward-only graph. (After a TapeMachine runs a graph with gradient nodes, the
		// forward output node may hold a value that Gorgonia's register allocator reused for a
		// gradient computation, 2·out here; this is Gorgonia's own behaviour, seen with
		// gorgonia.Tanh too. The forward value is read from a forward-only graph.)
		want, wantFwd := map[string][][]float64{}, map[string][]float64{}
		for name, op := range shared {
			rg := buildRaceGraph(t, dt, op, 1, true)
			fg := buildRaceGraph(t, dt, op, 1, false)
			if rg.g == nil || fg.g == nil {
				t.FailNow()
			}
			res, err := runRace(rg)
			if err != nil {
				t.Fatalf("%v %s serial: %v", dt, name, err)
			}
			want[name] = res
			fwd, err := runRace(fg)
			if err != nil {
				t.Fatalf("%v %s serial forward: %v", dt, name, err)
			}
			wantFwd[name] = fwd[0]
		}
		var stop atomic.Bool
		var reader sync.WaitGroup
		reader.Add(1)
		go func() { // documented safe while the op runs elsewhere
			defer reader.Done()
			for !stop.Load() {
				for _, op := range shared {
					r := op.(dispatch.PathReporter)
					r.LastPath()
					r.PathCounts()
					r.LastDiffPath()
					r.DiffPathCounts()
				}
				time.Sleep(10 * time.Microsecond)
			}
		}()
		onWorkers(func(w int) {
			for it := range 3 {
				for name, op := range shared {
					rg := buildRaceGraph(t, dt, op, 1, true)
					if rg.g == nil {
						return
					}
					got, err := runRace(rg)
					if err != nil {
						t.Errorf("%v %s worker %d iteration %d: %v", dt, name, w, it, err)
						return
					}
					if d := diffResults(want[name], got, "serial"); d != "" {
						t.Errorf("%v %s worker %d: %s", dt, name, w, d)
						return
					}
					// The same op on a LispMachine (DoDiff), forward and backward.
					lg := buildRaceGraph(t, dt, op, 1, false)
					cost, err := G.Sum(G.Must(G.Square(lg.out)))
					if err != nil {
						t.Errorf("lisp cost: %v", err)
						return
					}
					_ = cost
					m := G.NewLispMachine(lg.g)
					err = m.RunAll()
					m.Close()
					if err != nil {
						t.Errorf("%v %s worker %d lisp: %v", dt, name, w, err)
						return
					}
					lv, err := values(lg.out.Value())
					if err != nil || firstDiff(wantFwd[name], lv) >= 0 {
						t.Errorf("%v %s worker %d lisp: output differs from the serial one (%v)", dt, name, w, err)
						return
					}
					for i, n := range lg.in {
						gv, err := n.Grad()
						if err != nil {
							t.Errorf("%v %s lisp grad %d: %v", dt, name, i, err)
							return
						}
						gs, err := values(gv)
						if err != nil {
							t.Errorf("%v %s lisp grad %d: %v", dt, name, i, err)
							return
						}
						if j := firstDiff(want[name][1+i], gs); j >= 0 {
							t.Errorf("%v %s worker %d lisp grad %d element %d: %v, tape %v", dt, name, w, i, j, gs[j], want[name][1+i][j])
							return
						}
					}
				}
			}
		})
		stop.Store(true)
		reader.Wait()
		for name, op := range shared {
			c := op.(dispatch.PathReporter).PathCounts()
			if c.CPU == 0 || c.GPU != 0 || c.CPUFallback != 0 {
				t.Errorf("%v %s: path counts %+v, want CPU only", dt, name, c)
			}
		}
	}
}

// TestConcurrentModeSwitch: while one goroutine cycles the process-wide mode through off,
// auto and required and another registers and unregisters a second fake backend, 8 goroutines
// run the shared ops (forward and gradients) with a working fake device registered, and call
// dispatch.Run directly. The device computes with the same kernels, so every result must be
// bit-identical to the CPU one whatever path each call took; nothing may fail (a device is
// always registered, so ModeRequired always has one).
func TestConcurrentModeSwitch(t *testing.T) {
	cpuOnly(t)
	setPar(t, 0, 0)
	setBreakEven(t, 0)
	dev := &fakeBackend{name: "fake-device"}
	register(t, dev)
	dt := f64
	shared := sharedOps(t, dt)
	want := serialResults(t, dt, shared, 3)
	churn := &fakeBackend{name: "churn"}
	var stop atomic.Bool
	var bg sync.WaitGroup
	bg.Add(2)
	go func() {
		defer bg.Done()
		modes := []dispatch.Mode{dispatch.ModeOff, dispatch.ModeAuto, dispatch.ModeRequired}
		for i := 0; !stop.Load(); i++ {
			dispatch.SetMode(modes[i%3])
			time.Sleep(50 * time.Microsecond)
		}
	}()
	go func() {
		defer bg.Done()
		for !stop.Load() {
			un := dispatch.Register(churn)
			time.Sleep(30 * time.Microsecond)
			un()
			un() // harmless twice
			time.Sleep(30 * time.Microsecond)
		}
	}()
	onWorkers(func(w int) {
		for it := range 4 {
			for name, op := range shared {
				got, err := runRace(buildRaceGraph(t, dt, op, 3, true))
				if err != nil {
					t.Errorf("%s worker %d iteration %d: %v", name, w, it, err)
					return
				}
				if d := diffResults(want[name], got, "want"); d != "" {
					t.Errorf("%s worker %d: %s", name, w, d)
					return
				}
			}
			// dispatch.Run directly: a ReLU call; the CPU function and the device agree.
			x := seq(uint64(w), 64, -1, 1)
			out := make([]float64, 64)
			p, err := dispatch.Run(dispatch.NewCall(dispatch.KernelReLUForward, [][]float64{x}, [][]float64{out}, []int{64}, nil))
			if err != nil {
				t.Errorf("Run worker %d: path %v: %v", w, p, err)
				return
			}
			for i, v := range x {
				if out[i] != max(v, 0) {
					t.Errorf("Run worker %d path %v: out[%d] = %v for x = %v", w, p, i, out[i], v)
					return
				}
			}
		}
	})
	stop.Store(true)
	bg.Wait()
	t.Logf("launches: device %d, churn %d; cudaops stats %+v", dev.launches.Load(), churn.launches.Load(), dispatch.Stats())
	if dev.launches.Load()+churn.launches.Load() == 0 {
		t.Errorf("no device was launched: the mode switches never coincided with a run")
	}
}

// TestConcurrentFailingDevice: with a device whose every launch fails and the mode cycling
// between off and auto, concurrent runs of the shared ops take the CPU or the fallback path
// and give the CPU's bits.
func TestConcurrentFailingDevice(t *testing.T) {
	cpuOnly(t)
	setBreakEven(t, 0)
	dev := &fakeBackend{name: "broken", fail: true}
	register(t, dev)
	shared := sharedOps(t, f32)
	want := serialResults(t, f32, shared, 5)
	var stop atomic.Bool
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; !stop.Load(); i++ {
			dispatch.SetMode([]dispatch.Mode{dispatch.ModeOff, dispatch.ModeAuto}[i%2])
			time.Sleep(40 * time.Microsecond)
		}
	}()
	onWorkers(func(w int) {
		for range 3 {
			for name, op := range shared {
				got, err := runRace(buildRaceGraph(t, f32, op, 5, true))
				if err != nil {
					t.Errorf("%s worker %d: %v", name, w, err)
					return
				}
				if d := diffResults(want[name], got, "want"); d != "" {
					t.Errorf("%s worker %d: %s", name, w, d)
					return
				}
			}
		}
	})
	stop.Store(true)
	<-done
	for name, op := range shared {
		if c := op.(dispatch.PathReporter).PathCounts(); c.GPU != 0 {
			t.Errorf("%s: a failing device cannot have run a call: %+v", name, c)
		}
	}
}

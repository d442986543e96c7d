package ops

import (
	"fmt"
	"math"
	"math/rand"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// TestSecondUsePreallocDoAllocs measures the steady-state allocations of UsePreallocDo of the
// Second op with a preallocated output: none. The op allocates nothing (the dispatch.Call and
// its boxed slices are pooled and reused), nor does the kernel, split over the cores or not
// (its job and par.For's bookkeeping are pooled).
func TestSecondUsePreallocDoAllocs(t *testing.T) {
	if testing.CoverMode() != "" || raceEnabled {
		t.Skip("allocation counts are not meaningful under -cover or -race")
	}
	for _, dt := range dtypes {
		for _, sz := range [][3]int{{4, 3, 2}, {64, 8, 16}, {256, 16, 32}} {
			n, k, p := sz[0], sz[1], sz[2]
			t.Run(fmt.Sprintf("%v/n%d_K%d_P%d", dt, n, k, p), func(t *testing.T) {
				g := G.NewGraph()
				l := G.NewMatrix(g, dt, G.WithShape(n, k), G.WithName("l"))
				d := G.NewTensor(g, dt, 3, G.WithShape(n, k, p), G.WithName("d"))
				node, err := SoftmaxJetSecond(l, d, 1)
				require.NoError(t, err)
				op := node.Op().(G.UsePreallocDoer)
				args := []G.Value{
					tensor.New(tensor.WithShape(n, k), tensor.Of(dt)),
					tensor.New(tensor.WithShape(n, k, p), tensor.Of(dt)),
				}
				out := tensor.New(tensor.WithShape(n, k, k, p), tensor.Of(dt))
				_, err = op.UsePreallocDo(out, args...)
				require.NoError(t, err)
				allocs := testing.AllocsPerRun(50, func() {
					if _, err := op.UsePreallocDo(out, args...); err != nil {
						panic(err)
					}
				})
				t.Logf("UsePreallocDo of SoftmaxJetSecond %v n=%d K=%d P=%d: %.0f allocations per call", dt, n, k, p, allocs)
				require.Zero(t, allocs)
			})
		}
	}
}

// TestConcurrentDo runs one op from several goroutines at once (go test -race): the pooled
// calls and the path records must be race-free.
func TestConcurrentDo(t *testing.T) {
	const n, k, p = 8, 3, 4
	g := G.NewGraph()
	l := G.NewMatrix(g, tensor.Float64, G.WithShape(n, k), G.WithName("l"))
	d := G.NewTensor(g, tensor.Float64, 3, G.WithShape(n, k, p), G.WithName("d"))
	node, err := SoftmaxJetSecond(l, d, 1)
	require.NoError(t, err)
	op := node.Op().(*jetOp)
	ins := jetInputsFor(3, n, k, p)
	lv := toDense(tensor.Float64, ins[0].shape, ins[0].vals)
	dv := toDense(tensor.Float64, ins[1].shape, ins[1].vals)
	want, err := op.Do(lv, dv)
	require.NoError(t, err)
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out := tensor.New(tensor.WithShape(n, k, k, p), tensor.Of(tensor.Float64))
			for i := 0; i < 20; i++ {
				if _, err := op.UsePreallocDo(out, lv, dv); err != nil {
					errs <- err
					return
				}
				_, _ = op.LastPath()
			}
			if !out.Eq(want) {
				errs <- fmt.Errorf("concurrent result differs")
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	require.Equal(t, uint64(1+8*20), op.PathCounts().CPU+op.PathCounts().GPU+op.PathCounts().CPUFallback)
}

// Sentinels no computation produces: NaNs with a payload (arithmetic on finite inputs gives
// the default NaN, and NaN inputs propagate their own payload).
var (
	sentinel64 = math.Float64frombits(0x7ff8_dead_beef_0001)
	sentinel32 = math.Float32frombits(0x7fc0_beef)
)

// TestOutputsFullyWritten: every op's compute writes every element of its output, which is
// what lets Do allocate outputs without zeroing them (newOutput). Each op of a graph per
// constructor, its gradient ops included, computes into an output filled with a sentinel
// NaN, and no sentinel may be left.
func TestOutputsFullyWritten(t *testing.T) {
	cases := everyOpCases()
	rng := rand.New(rand.NewSource(17))
	cases = append(cases,
		graphCase{name: "SoftArgmin", inputs: []input{randInput(rng, "c", tensor.Shape{5, 7}, -2, 2)},
			build: func(_ *G.ExprGraph, in []*G.Node) (*G.Node, error) { return softArgmin(in[0], 1.5) }},
		graphCase{name: "LogDetPlusRidge", inputs: []input{randInput(rng, "H", tensor.Shape{3, 4, 4}, -1, 1)},
			build: func(_ *G.ExprGraph, in []*G.Node) (*G.Node, error) { return logDetPlusRidge(in[0], 8) }})
	for _, c := range cases {
		for _, dt := range dtypes {
			t.Run(fmt.Sprintf("%s/%v", c.name, dt), func(t *testing.T) {
				g, nodes, out := buildCase(t, c, dt)
				cost, err := costOf(g, out)
				require.NoError(t, err)
				_, err = G.Grad(cost, nodes...)
				require.NoError(t, err)
				vm := G.NewTapeMachine(g)
				defer vm.Close()
				require.NoError(t, vm.RunAll())
				ran, comps := opsOf[computer](g)
				require.NotEmpty(t, ran)
				for i, n := range ran {
					kids := childrenOf(n)
					vals := make([]G.Value, len(kids))
					for j, ch := range kids {
						vals[j] = ch.Value()
					}
					o := tensor.New(tensor.Of(n.Dtype()), tensor.WithShape(n.Shape().Clone()...))
					if n.Dtype() == tensor.Float64 {
						for k := range o.Float64s() {
							o.Float64s()[k] = sentinel64
						}
					} else {
						for k := range o.Float32s() {
							o.Float32s()[k] = sentinel32
						}
					}
					require.NoError(t, comps[i].compute(o, vals), "%v", n)
					if n.Dtype() == tensor.Float64 {
						for k, x := range o.Float64s() {
							require.NotEqual(t, math.Float64bits(sentinel64), math.Float64bits(x), "%v left element %d unwritten", n, k)
						}
					} else {
						for k, x := range o.Float32s() {
							require.NotEqual(t, math.Float32bits(sentinel32), math.Float32bits(x), "%v left element %d unwritten", n, k)
						}
					}
				}
			})
		}
	}
}

package ops

import (
	"fmt"
	"math/rand"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/gatejet/gatejet"
	"github.com/gatejet/gatejet/cudaops"
	"github.com/gatejet/gatejet/internal/dispatch"
	"github.com/gatejet/gatejet/internal/kernel"
)

// coordWith builds gate g's coordinate jet of channel c on the inputs in, called with floats
// as they are, through coordJet.
func coordWith(c channel, g *kernel.Gate, in []*G.Node, floats []float64, opts ...Option) (*G.Node, error) {
	return coordJet(c, g, in, fixedParams(floats), opts)
}

// newCoordCase is gate g's coordinate jet of channel c at [n,K,P] as a graphCase named
// <Title>Coord<Channel>[n K P], its inputs seeded by the channel and the gate's index.
func newCoordCase(g *kernel.Gate, c channel, n, k, p int) graphCase {
	ins := coordInputsFor(int64(100+10*int(c)+slices.Index(kernel.Gates(), g)), n, k, p)[:c.CoordIn()]
	floats := jetFloats(g)
	if len(floats) != g.NumFloats(k) {
		floats = sampleFloats(g, k)
	}
	// The gradient's ops are the gate's row jets; the case runs on the CPU only when they do.
	return graphCase{name: fmt.Sprintf("%sCoord%s%v", g.Title, c, []int{n, k, p}), inputs: ins, cpuOnly: !g.Kernel(c, false).OnDevice(),
		build: func(_ *G.ExprGraph, in []*G.Node) (*G.Node, error) { return coordWith(c, g, in, floats) }}
}

// allCoordCases returns every coordinate jet of every gate of the table at the jet cases'
// shape.
func allCoordCases() []graphCase {
	var cs []graphCase
	for _, g := range kernel.Gates() {
		for c := kernel.First; c < kernel.NumChannels; c++ {
			cs = append(cs, newCoordCase(g, c, tN, tK, tP))
		}
	}
	return cs
}

// TestCoordJetGradients: the gradient of every coordinate jet of every gate, in every input,
// agrees with central differences, on both machines (the TapeMachine differentiates the op's
// SymDiff, the LispMachine runs its DoDiff) and in both dtypes, at the jet cases' shape and at
// K = 1 and P = 1.
func TestCoordJetGradients(t *testing.T) {
	cs := allCoordCases()
	for _, g := range []*kernel.Gate{kernel.SoftmaxGate, kernel.LogisticGate} {
		for c := kernel.First; c < kernel.NumChannels; c++ {
			cs = append(cs, newCoordCase(g, c, 2, 1, 3), newCoordCase(g, c, 1, 4, 1))
		}
	}
	for _, c := range cs {
		t.Run(c.name, func(t *testing.T) { checkGradients(t, c) })
	}
}

// TestCoordJetDevice: every coordinate jet of both gates has device kernels. Under
// ModeRequired without a backend its Do fails with ErrDevice, computing nothing; with one it
// launches its own kernel there, once, and the output is the backend's. (The kernels' values
// are the emulator's and the device's tests: cudaops/internal/emu, cudaops.)
func TestCoordJetDevice(t *testing.T) {
	run := func(t *testing.T, c graphCase, dt tensor.Dtype) (G.Value, *G.Node, error) {
		old := dispatch.SetMode(dispatch.ModeRequired)
		defer dispatch.SetMode(old)
		_, nodes, out := buildCase(t, c, dt)
		vals := make([]G.Value, len(nodes))
		for i, n := range nodes {
			vals[i] = n.Value()
		}
		v, err := out.Op().Do(vals...)
		return v, out, err
	}
	type coordCase struct {
		c  graphCase
		id kernel.ID
	}
	var cs []coordCase
	for _, g := range []*kernel.Gate{kernel.SoftmaxGate, kernel.LogisticGate} {
		for ch := kernel.First; ch < kernel.NumChannels; ch++ {
			require.True(t, g.CoordKernel(ch).OnDevice(), "%v", g.CoordKernel(ch))
			cs = append(cs, coordCase{newCoordCase(g, ch, tN, tK, tP), g.CoordKernel(ch)})
		}
	}
	if dispatch.Active() == nil {
		for _, cc := range cs {
			_, out, err := run(t, cc.c, tensor.Float64)
			require.ErrorIs(t, err, gatejet.ErrDevice, cc.c.name)
			require.ErrorContains(t, err, "no GPU backend", cc.c.name)
			_, ok := LastPath(out)
			require.False(t, ok, "%s: a refused computation ran on no path", cc.c.name)
		}
	}
	f := withFake(t)
	for _, cc := range cs {
		for _, dt := range dtypes {
			before := f.kernels[cc.id.String()]
			v, out, err := run(t, cc.c, dt)
			require.NoError(t, err, cc.c.name)
			require.Equal(t, before+1, f.kernels[cc.id.String()], "%s %v: one launch of %v", cc.c.name, dt, cc.id)
			for _, x := range floats(t, v) {
				require.Equal(t, float64(marker), x, "%s %v: the backend wrote the output", cc.c.name, dt)
			}
			p, ok := LastPath(out)
			require.True(t, ok, cc.c.name)
			require.Equal(t, cudaops.PathGPU, p, cc.c.name)
		}
	}
	require.Empty(t, f.bad, "every launch passed the kernel's convention")
}

// TestCoordUsePreallocDoAllocs: UsePreallocDo of a coordinate jet with a preallocated output
// allocates nothing once warm, for both gates (the gate the kernel is called with is pooled).
func TestCoordUsePreallocDoAllocs(t *testing.T) {
	if testing.CoverMode() != "" || raceEnabled {
		t.Skip("allocation counts are not meaningful under -cover or -race")
	}
	const n, k, p = 64, 8, 16
	for _, dt := range dtypes {
		for _, g := range []*kernel.Gate{kernel.SoftmaxGate, kernel.LogisticGate} {
			for c := kernel.First; c < kernel.NumChannels; c++ {
				cc := newCoordCase(g, c, n, k, p)
				_, nodes, out := buildCase(t, cc, dt)
				vals := make([]G.Value, len(nodes))
				for i, nd := range nodes {
					vals[i] = nd.Value()
				}
				pre := tensor.New(tensor.WithShape(out.Shape()...), tensor.Of(dt))
				op := out.Op().(G.UsePreallocDoer)
				_, err := op.UsePreallocDo(pre, vals...)
				require.NoError(t, err)
				allocs := testing.AllocsPerRun(20, func() {
					if _, err := op.UsePreallocDo(pre, vals...); err != nil {
						panic(err)
					}
				})
				require.Zero(t, allocs, "%s %v", cc.name, dt)
			}
		}
	}
}

// rowCases are the row contractions of the coordinate jets' gradients as graph cases.
func rowCases() []graphCase {
	rng := rand.New(rand.NewSource(31))
	const n, k, p = 2, 3, 4
	x := randInput(rng, "x", tensor.Shape{n, k}, -1, 1)
	y := randInput(rng, "y", tensor.Shape{n, k, p}, -1, 1)
	z := randInput(rng, "z", tensor.Shape{n, k, p}, -1, 1)
	build := func(dot bool) func(g *G.ExprGraph, in []*G.Node) (*G.Node, error) {
		return func(g *G.ExprGraph, in []*G.Node) (*G.Node, error) {
			b := nodeBuilder{op: "test", dt: in[0].Dtype()}
			if dot {
				return b.rowDot(in[0], in[1]), b.err
			}
			return b.rowScale(in[0], in[1]), b.err
		}
	}
	return []graphCase{
		{name: "rowScale", inputs: []input{x, y}, build: build(false), cpuOnly: true},
		{name: "rowDot", inputs: []input{y, z}, build: build(true), cpuOnly: true},
	}
}

// TestRowOps: the row contractions agree with their definitions and their gradients with
// central differences on both machines (the LispMachine runs their DoDiff).
func TestRowOps(t *testing.T) {
	for _, c := range rowCases() {
		t.Run(c.name, func(t *testing.T) {
			got := forwardValue(t, c, tensor.Float64, tape)
			a, b := c.inputs[0].vals, c.inputs[1].vals
			const p = 4
			for i := range got {
				want := 0.0
				if c.name == "rowDot" {
					for j := range p {
						want += a[i*p+j] * b[i*p+j]
					}
				} else {
					want = a[i/p] * b[i]
				}
				require.InDelta(t, want, got[i], 1e-15, "element %d", i)
			}
			checkGradients(t, c)
		})
	}
}

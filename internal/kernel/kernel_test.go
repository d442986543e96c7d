package kernel

import (
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"math"
	"strings"
	"sync/atomic"
	"testing"
	"unicode"

	"github.com/stretchr/testify/require"

	"github.com/gatejet/gatejet"
)

// TestTable: every declaration is complete, names are unique and the built-in IDs follow the
// table's order (init checks the last, a table test the rest).
// rowWidths are the widths of a gate's row jets (forward kernels by channel, then VJPs) that
// JetWidth derives from their outputs: each forward kernel's output row per column tile, the
// decoded gradient's K·CT for every VJP.
var rowWidths = [2 * NumChannels]Width{
	Value: WidthCols, First: WidthKP, Second: WidthKKP, HVP: WidthKP, GaussNewton: WidthKK,
	NumChannels + Value: WidthKP, NumChannels + First: WidthKP, NumChannels + Second: WidthKP,
	NumChannels + HVP: WidthKP, NumChannels + GaussNewton: WidthKP,
}

func TestTable(t *testing.T) {
	ids := All()
	require.GreaterOrEqual(t, len(ids), int(numBuiltin)-1, "the built-ins, then any gate registered later")
	ids = ids[:numBuiltin-1]
	seen := map[string]bool{}
	for _, id := range ids {
		s := id.Spec()
		require.NotNil(t, s)
		require.False(t, seen[s.Name], "%s twice", s.Name)
		seen[s.Name] = true
		got, ok := ByName(s.Name)
		require.True(t, ok)
		require.Equal(t, id, got)
		require.NotNil(t, s.F64, s.Name)
		require.NotNil(t, s.F32, s.Name)
		// Every built-in kernel has device entry points but graphs' (the batch family), which
		// run on the CPU only.
		require.Equal(t, s.Family != Batch, s.Device != nil, "%s: device entry points", s.Name)
	}
	for _, g := range []*Gate{SoftmaxGate, LogisticGate} {
		for c := Value; c < NumChannels; c++ {
			for _, vjp := range []bool{false, true} {
				s := g.Kernel(c, vjp).Spec()
				require.Same(t, g, s.Gate)
				require.Equal(t, c, s.Channel)
				require.Equal(t, vjp, s.VJP)
				want := g.Name + "_" + channels[c].suffix
				if vjp {
					want += "_vjp"
					require.Equal(t, append(c.in(), c.Out()), s.In, "a VJP takes the forward's inputs and G")
					require.Equal(t, c.in(), s.Out, "and writes their gradients")
					require.Equal(t, uint8(1<<len(s.Out)-1), s.Skippable)
				}
				require.Equal(t, want, s.Name)
				// The device layout is the generated one (shared_layouts.go), the width its
				// outputs' (rowWidths).
				i := int(c)
				if vjp {
					i += int(NumChannels)
				}
				l, ok := sharedLayouts[s.Name]
				require.True(t, ok, "%s has no generated shared layout: run go generate ./cudaops/...", s.Name)
				require.Equal(t, &Device{Module: g.Device.Module, Shared: &l, Width: rowWidths[i], Floats: g.Device.Floats,
					Warp: g.Device.Warp[i]}, s.Device)
			}
		}
		require.Zero(t, g.CoordKernel(Value), "the value channel has no coordinate jet")
		for c := First; c < NumChannels; c++ {
			s := g.CoordKernel(c).Spec()
			require.Same(t, g, s.Gate)
			require.Equal(t, CoordJet, s.Family)
			require.Equal(t, c, s.Channel)
			require.False(t, s.VJP)
			require.Equal(t, g.Name+"_coord_"+channels[c].suffix, s.Name)
			require.Len(t, s.In, c.CoordIn())
			require.Equal(t, []Dim{c.CoordOut()}, s.Out)
			// In the gate's module, its floats passed as the gate's are, its generated shared
			// layout, its channel's forward width (its outputs' over 2K), no warp variant.
			l, ok := sharedLayouts[s.Name]
			require.True(t, ok, "%s has no generated shared layout: run go generate ./cudaops/...", s.Name)
			require.Equal(t, &Device{Module: g.Device.Module, Floats: g.Device.Floats, Shared: &l, Width: rowWidths[c]}, s.Device)
		}
	}
	require.Equal(t, []ID{JetCoordFirst, LogisticCoordGaussNewton}, []ID{SoftmaxGate.CoordKernel(First), LogisticGate.CoordKernel(GaussNewton)})
	require.Equal(t, []ID{JetValue, JetSecondVJP, LogisticHVP, SoftmaxForward, SiLUBackwardGrad},
		[]ID{SoftmaxGate.Kernel(Value, false), SoftmaxGate.Kernel(Second, true), LogisticGate.Kernel(HVP, false),
			mustByName(t, "softmax_forward"), Activations[2].Kernel(BackwardGrad)})
	require.Equal(t, []string{"SOFTMAX_JET", "LOGISTIC_JET", "AXIS", "ELEMENTWISE"}, Modules()[:4], "the built-in modules first")
	require.Nil(t, ID(0).Spec())
	require.Equal(t, NoFamily, ID(60000).Family())
	require.Equal(t, "kernel(60000)", ID(60000).String())
	require.Zero(t, ID(60000).NumIn())
}

func mustByName(t *testing.T, name string) ID {
	id, ok := ByName(name)
	require.True(t, ok, name)
	return id
}

func TestDims(t *testing.T) {
	ints := []int{2, 3, 5}
	for d, want := range map[Dim]int{NK: 6, NKP: 30, NP: 10, NKKP: 90, NKK: 18, Whole: 30, N2K: 12, N2KP: 60, N2K2KP: 360, N2K2K: 72} {
		n, ok := d.Len(ints)
		require.True(t, ok)
		require.Equal(t, want, n, "%d", d)
	}
	_, ok := NKKP.Len([]int{math.MaxInt / 4, 3, 5})
	require.False(t, ok)
	require.Equal(t, []int{2, 3, 3, 5}, NKKP.Shape(2, 3, 5))
	require.Equal(t, []int{2, 6, 6, 5}, N2K2KP.Shape(2, 3, 5))
	require.Equal(t, []int{2, 6, 6}, N2K2K.Shape(2, 3, 5))
	require.Equal(t, []int{2, 6, 5}, N2KP.Shape(2, 3, 5))
	require.Equal(t, []int{2, 6}, N2K.Shape(2, 3, 5))
	for _, d := range []Dim{N2K, N2KP, N2K2KP, N2K2K} {
		_, ok := d.Len([]int{math.MaxInt/2 + 1, 1, 1})
		require.False(t, ok, "%d: N·2K overflows", d)
	}
	require.Equal(t, 48, WidthKKP.Of(4, 3))
}

func TestArgs(t *testing.T) {
	for _, tc := range []struct {
		id     ID
		ints   []int
		floats []float64
		kind   error
	}{
		{60000, []int{1}, nil, gatejet.ErrParam},
		{JetValue, []int{1, 2}, []float64{1}, gatejet.ErrParam},
		{JetValue, []int{1, -2, 3}, []float64{1}, gatejet.ErrShape},
		{JetValue, []int{1, 2, 0}, []float64{1}, gatejet.ErrShape},
		{JetValue, []int{1, 2, 3}, nil, gatejet.ErrParam},
		{LogisticValue, []int{1, 2, 3}, []float64{1, 2, 3}, gatejet.ErrParam},
		{ReLUForward, []int{4}, []float64{1}, gatejet.ErrParam},
		{JetCoordSecond, []int{1, 0, 3}, []float64{1}, gatejet.ErrShape},
		{LogisticCoordHVP, []int{1, 2, 0}, []float64{1, 2, 3, 4}, gatejet.ErrShape},
		{LogisticCoordFirst, []int{1, 2, 3}, []float64{1, 2, 3}, gatejet.ErrParam},
	} {
		_, err := tc.id.Args("op", tc.ints, tc.floats)
		require.True(t, errors.Is(err, tc.kind), "%v %v %v: %v", tc.id, tc.ints, tc.floats, err)
	}
	_, err := LogisticValue.Args("op", []int{0, 2, 3}, []float64{1, 2, 3, 4})
	require.NoError(t, err, "N = 0 is an empty call")
	// Run refuses before the CPU function could index a missing float.
	var o Operands[float64]
	err = Run("op", LogisticValue, &o, []int{1, 2, 3}, []float64{1})
	require.ErrorIs(t, err, gatejet.ErrParam)
}

func TestRegisterRefusesIncompleteGates(t *testing.T) {
	require.Panics(t, func() { Register(&Gate{Name: "x", Title: "X"}) }, "no CPU functions")
	require.Panics(t, func() { Register(SoftmaxGate) }, "registered twice")
	require.Panics(t, func() {
		regMu.Lock()
		defer regMu.Unlock()
		registerLocked([]Spec{{Name: "jet_value", Family: Elementwise, In: []Dim{Whole}, Out: []Dim{Whole},
			F64: softmaxForward[float64], F32: softmaxForward[float32]}})
	}, "a name declared twice")
}

// TestBatchKernels: graphs' kernels are declared CPU-only with sizes [N, K] and one float, and
// run through Run like any other (the soft-argmin of two rows, the log-determinant of a
// diagonal matrix).
func TestBatchKernels(t *testing.T) {
	for _, id := range []ID{SoftArgmin, SoftArgminVJP, LogDetPlusRidge, LogDetPlusRidgeGrad} {
		s := id.Spec()
		require.Equal(t, Batch, s.Family, s.Name)
		require.False(t, id.OnDevice(), s.Name)
		require.Equal(t, 1, s.Floats, s.Name)
		_, err := id.Args("op", []int{2, 3}, nil)
		require.ErrorIs(t, err, gatejet.ErrParam, "%s takes one float", s.Name)
	}
	require.Equal(t, "batch", Batch.String())
	require.Equal(t, 2, Batch.NumInts())
	n, ok := N.Len([]int{4, 3})
	require.True(t, ok)
	require.Equal(t, 4, n)
	n, _ = NKK.Len([]int{4, 3})
	require.Equal(t, 36, n)

	var o Operands[float64]
	o.In[0], o.Out[0] = []float64{0, 0, math.Inf(1), 1, 1, 1}, make([]float64, 6)
	require.NoError(t, Run("op", SoftArgmin, &o, []int{2, 3}, []float64{1}))
	require.Equal(t, []float64{0.5, 0.5, 0}, o.Out[0][:3], "the two zero costs share the row's mass")
	require.InDelta(t, 1.0/3, o.Out[0][4], 1e-15)

	var d Operands[float32]
	d.In[0], d.Out[0] = []float32{2, 0, 0, 8}, make([]float32, 1)
	require.NoError(t, Run("op", LogDetPlusRidge, &d, []int{1, 2}, []float64{0}))
	require.InDelta(t, math.Log(16), float64(d.Out[0][0]), 1e-6)
	d.Out[0] = make([]float32, 2)
	require.ErrorIs(t, Run("op", LogDetPlusRidge, &d, []int{1, 2}, []float64{0}), gatejet.ErrSize, "operand lengths are checked")
}

// TestConstantsNameTheirKernels: every constant of table.go's ID block names the kernel of its
// value (JetSecondVJP is jet_second_vjp, ReLUForward relu_forward, …), so a declaration out of
// the constants' order fails here.
func TestConstantsNameTheirKernels(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "table.go", nil, 0)
	require.NoError(t, err)
	var names []string
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, s := range g.Specs {
			for _, n := range s.(*ast.ValueSpec).Names {
				names = append(names, n.Name)
			}
		}
		if len(names) > 0 && names[0] == "JetValue" {
			break
		}
		names = nil
	}
	require.Equal(t, "numBuiltin", names[len(names)-1])
	names = names[:len(names)-1]
	require.Len(t, names, int(numBuiltin)-1)
	acronyms := strings.NewReplacer("ReLU", "Relu", "GELU", "Gelu", "SiLU", "Silu", "HVP", "Hvp", "VJP", "Vjp")
	for i, n := range names {
		var b strings.Builder
		for j, r := range acronyms.Replace(n) {
			if unicode.IsUpper(r) && j > 0 {
				b.WriteByte('_')
			}
			b.WriteRune(unicode.ToLower(r))
		}
		require.Equal(t, b.String(), ID(i+1).String(), "constant %s", n)
	}
}

// TestRegisterRefusesSameTitle: two gates with one Title or Name would share op names and
// Gorgonia's merged nodes.
func TestRegisterRefusesSameTitle(t *testing.T) {
	g := *SoftmaxGate
	g.first, g.Name = 0, "other_jet"
	require.Panics(t, func() { Register(&g) }, "the softmax gate's Title")
	g.Name, g.Title = "jet", "OtherJet"
	require.Panics(t, func() { Register(&g) }, "the softmax gate's Name")
}

// TestGates: Gates lists each registered gate once, the built-in ones first, and every row-jet
// and coordinate-jet kernel of the table belongs to one of them as its gate's kernel of its
// channel.
func TestGates(t *testing.T) {
	gs := Gates()
	require.GreaterOrEqual(t, len(gs), 2)
	require.Same(t, SoftmaxGate, gs[0])
	require.Same(t, LogisticGate, gs[1])
	n := 0
	for _, id := range All() {
		s := id.Spec()
		if s.Gate == nil {
			continue
		}
		n++
		require.Contains(t, gs, s.Gate, "%v", id)
		if s.Family == CoordJet {
			require.Equal(t, id, s.Gate.CoordKernel(s.Channel), "%v", id)
			continue
		}
		require.Equal(t, id, s.Gate.Kernel(s.Channel, s.VJP), "%v", id)
	}
	require.Equal(t, (2*int(NumChannels)+NumCoord)*len(gs), n)
}

var concurrentGates atomic.Int32

// TestGatesWhileRegistering: a gate that Gates lists while Register runs on another goroutine
// already knows its kernels (Kernel reads what Register wrote before publishing them; -race
// checks that the read is ordered after the write).
func TestGatesWhileRegistering(t *testing.T) {
	n := concurrentGates.Add(1) // a fresh name for each run (-count)
	g := *SoftmaxGate
	g.first, g.Name, g.Title, g.Device = 0, fmt.Sprintf("concurrent%d_jet", n), fmt.Sprintf("Concurrent%dJet", n), nil
	got := make(chan ID)
	go func() {
		for {
			if gs := Gates(); gs[len(gs)-1] == &g {
				got <- g.Kernel(Value, false)
				return
			}
		}
	}()
	Register(&g)
	id := <-got
	require.NotNil(t, id.Spec(), "%v", id)
	require.Same(t, &g, id.Spec().Gate)
	require.Equal(t, Value, id.Spec().Channel)
}

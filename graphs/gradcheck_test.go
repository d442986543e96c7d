package graphs

import (
	"errors"
	"fmt"
	"hash"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/chewxy/hm"
	"github.com/gatejet/gatejet"
	"github.com/gatejet/gatejet/internal/testkit"
	"github.com/stretchr/testify/require"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// randDense returns a Dense of the given dtype with entries uniform in [lo, hi).
func randDense(dt tensor.Dtype, rng *rand.Rand, lo, hi float64, shape ...int) *tensor.Dense {
	return testkit.Dense(dt, func() float64 { return lo + (hi-lo)*rng.Float64() }, shape...)
}

// eachDtypeMachine runs f as the subtest "dtype/machine" for each of Float64 and Float32
// on each of the Tape and Lisp machines.
func eachDtypeMachine(t *testing.T, f func(t *testing.T, dt tensor.Dtype, m Machine)) {
	t.Helper()
	for _, dt := range []tensor.Dtype{tensor.Float64, tensor.Float32} {
		for _, m := range []Machine{Tape, Lisp} {
			t.Run(fmt.Sprintf("%v/%v", dt, m), func(t *testing.T) { f(t, dt, m) })
		}
	}
}

// mlpGraph builds cost = Σ tanh(W·x + b)² + mean(sigmoid(W)) · c with Gorgonia built-ins.
func mlpGraph(t testing.TB, dt tensor.Dtype, seed uint64) (*gorgonia.Node, gorgonia.Nodes) {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 1))
	g := gorgonia.NewGraph()
	W := gorgonia.NewMatrix(g, dt, gorgonia.WithShape(3, 4), gorgonia.WithName("W"),
		gorgonia.WithValue(randDense(dt, rng, -1, 1, 3, 4)))
	x := gorgonia.NewVector(g, dt, gorgonia.WithShape(4), gorgonia.WithName("x"),
		gorgonia.WithValue(randDense(dt, rng, -1, 1, 4)))
	b := gorgonia.NewVector(g, dt, gorgonia.WithShape(3), gorgonia.WithName("b"),
		gorgonia.WithValue(randDense(dt, rng, -1, 1, 3)))
	var cv gorgonia.Value = gorgonia.NewF64(0.7)
	if dt == tensor.Float32 {
		cv = gorgonia.NewF32(0.7)
	}
	c := gorgonia.NewScalar(g, dt, gorgonia.WithName("c"), gorgonia.WithValue(cv))
	h := gorgonia.Must(gorgonia.Tanh(gorgonia.Must(gorgonia.Add(gorgonia.Must(gorgonia.Mul(W, x)), b))))
	sq := gorgonia.Must(gorgonia.Sum(gorgonia.Must(gorgonia.Square(h))))
	reg := gorgonia.Must(gorgonia.Mean(gorgonia.Must(gorgonia.Sigmoid(W))))
	cost := gorgonia.Must(gorgonia.Add(sq, gorgonia.Must(gorgonia.Mul(reg, c))))
	return cost, gorgonia.Nodes{W, x, b, c}
}

func TestGradCheckBuiltins(t *testing.T) {
	eachDtypeMachine(t, func(t *testing.T, dt tensor.Dtype, m Machine) {
		cost, wrt := mlpGraph(t, dt, 7)
		rep, err := GradCheck(cost, wrt, WithMachine(m))
		require.NoError(t, err)
		require.True(t, rep.OK(), "%s", rep)
		require.Equal(t, m, rep.Machine)
		require.Equal(t, dt, rep.Dtype)
		require.Len(t, rep.Nodes, 4)
		for i, want := range []int{12, 4, 3, 1} {
			require.Equal(t, want, rep.Nodes[i].Size)
			require.Equal(t, want, rep.Nodes[i].Checked)
			require.Zero(t, rep.Nodes[i].Failed)
		}
		require.Equal(t, "W", rep.Nodes[0].Name)
		if dt == tensor.Float64 {
			// central differences at h = 1e-6 are far better than the tolerance
			for _, n := range rep.Nodes {
				require.Less(t, n.MaxAbsErr, 1e-8, "%s", rep)
			}
		}
		require.False(t, math.IsNaN(rep.Cost))
	})
}

// TestGradCheckTapeAndLispAgree checks that both machines report the same cost and
// gradients on the same graph, so the Lisp path really reads the reverse pass.
func TestGradCheckTapeAndLispAgree(t *testing.T) {
	costT, wrtT := mlpGraph(t, tensor.Float64, 3)
	costL, wrtL := mlpGraph(t, tensor.Float64, 3)
	repT, err := GradCheck(costT, wrtT)
	require.NoError(t, err)
	repL, err := GradCheck(costL, wrtL, WithMachine(Lisp))
	require.NoError(t, err)
	require.InDelta(t, repT.Cost, repL.Cost, 1e-14)
	for i := range repT.Nodes {
		require.InDelta(t, repT.Nodes[i].Worst.Numeric, repL.Nodes[i].Worst.Numeric, 1e-7)
	}
}

// TestGradCheckLispRepeat checks that a second Lisp check on the same graph does not see
// the gradient of the first one accumulated into the inputs.
func TestGradCheckLispRepeat(t *testing.T) {
	cost, wrt := mlpGraph(t, tensor.Float64, 5)
	for i := 0; i < 3; i++ {
		_, err := GradCheck(cost, wrt, WithMachine(Lisp))
		require.NoError(t, err, "run %d", i)
	}
	// and a Tape check after Lisp runs on the same graph
	_, err := GradCheck(cost, wrt)
	require.NoError(t, err)
}

func TestGradCheckAlreadyDifferentiated(t *testing.T) {
	cost, wrt := mlpGraph(t, tensor.Float64, 11)
	grads, err := gorgonia.Grad(cost, wrt...)
	require.NoError(t, err)
	before := len(cost.Graph().AllNodes())
	_, err = GradCheck(cost, wrt)
	require.NoError(t, err)
	require.Equal(t, before, len(cost.Graph().AllNodes()), "GradCheck must reuse the existing gradient nodes")
	for i, n := range wrt {
		require.Same(t, grads[i], n.Deriv())
	}
	// A check on a fresh graph adds the gradient nodes once, and a second check adds none.
	cost2, wrt2 := mlpGraph(t, tensor.Float64, 11)
	n0 := len(cost2.Graph().AllNodes())
	_, err = GradCheck(cost2, wrt2)
	require.NoError(t, err)
	n1 := len(cost2.Graph().AllNodes())
	require.Greater(t, n1, n0)
	_, err = GradCheck(cost2, wrt2)
	require.NoError(t, err)
	require.Equal(t, n1, len(cost2.Graph().AllNodes()))
	// The Lisp machine adds nothing.
	cost3, wrt3 := mlpGraph(t, tensor.Float64, 11)
	n3 := len(cost3.Graph().AllNodes())
	_, err = GradCheck(cost3, wrt3, WithMachine(Lisp))
	require.NoError(t, err)
	require.Equal(t, n3, len(cost3.Graph().AllNodes()))
}

func TestGradCheckRestoresInputs(t *testing.T) {
	for _, m := range []Machine{Tape, Lisp} {
		cost, wrt := mlpGraph(t, tensor.Float64, 13)
		var saved [][]float64
		for _, n := range wrt {
			v, ok := floatsOf(n.Value())
			require.True(t, ok)
			saved = append(saved, v)
		}
		_, err := GradCheck(cost, wrt, WithMachine(m))
		require.NoError(t, err)
		for i, n := range wrt {
			v, _ := floatsOf(n.Value())
			require.Equal(t, saved[i], v, "%v: input %s changed", m, n.Name())
		}
	}
}

func TestGradCheckUnrelatedUnboundNodes(t *testing.T) {
	cost, wrt := mlpGraph(t, tensor.Float64, 17)
	g := cost.Graph()
	// A second, unbound branch: compiling the whole graph would fail to run.
	u := gorgonia.NewVector(g, tensor.Float64, gorgonia.WithShape(5), gorgonia.WithName("unbound"))
	_ = gorgonia.Must(gorgonia.Neg(u))
	for _, m := range []Machine{Tape, Lisp} {
		_, err := GradCheck(cost, wrt, WithMachine(m))
		require.NoError(t, err, "%v", m)
	}
}

func TestGradCheckMaxElements(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	g := gorgonia.NewGraph()
	x := gorgonia.NewMatrix(g, tensor.Float64, gorgonia.WithShape(40, 50), gorgonia.WithName("x"),
		gorgonia.WithValue(randDense(tensor.Float64, rng, -1, 1, 40, 50)))
	cost := gorgonia.Must(gorgonia.Sum(gorgonia.Must(gorgonia.Cube(x))))
	rep, err := GradCheck(cost, gorgonia.Nodes{x}, WithMaxElements(25, 9))
	require.NoError(t, err)
	require.Equal(t, 2000, rep.Nodes[0].Size)
	require.Equal(t, 25, rep.Nodes[0].Checked)

	a := sampleIndices(2000, 25, 9, 0)
	b := sampleIndices(2000, 25, 9, 0)
	c := sampleIndices(2000, 25, 10, 0)
	require.Equal(t, a, b)
	require.NotEqual(t, a, c)
	for i := 1; i < len(a); i++ {
		require.Less(t, a[i-1], a[i], "indices sorted and distinct")
	}
	require.Len(t, sampleIndices(10, 0, 1, 0), 10)
	require.Len(t, sampleIndices(10, 20, 1, 0), 10)
	require.Equal(t, []int{1, 2, 3}, coords(1*20+2*5+3, []int{4, 4, 5}))
}

// scaleOp computes y = k·x elementwise. Its SymDiff and DoDiff multiply the incoming
// gradient by k·wrong: wrong = 1 is the correct gradient, anything else is a bug that
// GradCheck must catch.
type scaleOp struct {
	k, wrong float64
}

func (op scaleOp) Arity() int { return 1 }
func (op scaleOp) Type() hm.Type {
	a := hm.TypeVariable('a')
	return hm.NewFnType(a, a)
}
func (op scaleOp) InferShape(in ...gorgonia.DimSizer) (tensor.Shape, error) {
	return in[0].(tensor.Shape).Clone(), nil
}
func (op scaleOp) Do(in ...gorgonia.Value) (gorgonia.Value, error) {
	return scaleValue(in[0], op.k)
}
func (op scaleOp) ReturnsPtr() bool     { return false }
func (op scaleOp) CallsExtern() bool    { return false }
func (op scaleOp) OverwritesInput() int { return -1 }
func (op scaleOp) WriteHash(h hash.Hash) {
	fmt.Fprintf(h, "scale{%v,%v}", op.k, op.wrong)
}
func (op scaleOp) Hashcode() uint32 {
	h := fnv.New32a()
	op.WriteHash(h)
	return h.Sum32()
}
func (op scaleOp) String() string     { return fmt.Sprintf("scale{%v,%v}", op.k, op.wrong) }
func (op scaleOp) DiffWRT(int) []bool { return []bool{true} }
func (op scaleOp) SymDiff(in gorgonia.Nodes, out, grad *gorgonia.Node) (gorgonia.Nodes, error) {
	dx, err := gorgonia.ApplyOp(scaleOp{k: op.k * op.wrong, wrong: 1}, grad)
	return gorgonia.Nodes{dx}, err
}
func (op scaleOp) DoDiff(ctx gorgonia.ExecutionContext, in gorgonia.Nodes, out *gorgonia.Node) error {
	dy, err := out.Grad()
	if err != nil {
		return err
	}
	dx, err := in[0].Grad()
	if err != nil {
		return err
	}
	s, err := scaleValue(dy, op.k*op.wrong)
	if err != nil {
		return err
	}
	_, err = tensor.Add(dx, s, tensor.UseUnsafe())
	return err
}

func scaleValue(v gorgonia.Value, k float64) (gorgonia.Value, error) {
	t, ok := v.(*tensor.Dense)
	if !ok {
		return nil, fmt.Errorf("scaleOp wants a *tensor.Dense, got %T", v)
	}
	out := t.Clone().(*tensor.Dense)
	switch out.Dtype() {
	case tensor.Float64:
		for i := range out.Float64s() {
			out.Float64s()[i] *= k
		}
	case tensor.Float32:
		for i := range out.Float32s() {
			out.Float32s()[i] *= float32(k)
		}
	}
	return out, nil
}

func scaleGraph(t testing.TB, dt tensor.Dtype, wrong float64) (*gorgonia.Node, gorgonia.Nodes) {
	t.Helper()
	rng := rand.New(rand.NewPCG(21, 1))
	g := gorgonia.NewGraph()
	x := gorgonia.NewMatrix(g, dt, gorgonia.WithShape(2, 3), gorgonia.WithName("x"),
		gorgonia.WithValue(randDense(dt, rng, -1, 1, 2, 3)))
	w := gorgonia.NewMatrix(g, dt, gorgonia.WithShape(2, 3), gorgonia.WithName("w"),
		gorgonia.WithValue(randDense(dt, rng, 0.5, 1.5, 2, 3)))
	y, err := gorgonia.ApplyOp(scaleOp{k: 2, wrong: wrong}, x)
	require.NoError(t, err)
	cost := gorgonia.Must(gorgonia.Sum(gorgonia.Must(gorgonia.HadamardProd(gorgonia.Must(gorgonia.Sin(y)), w))))
	return cost, gorgonia.Nodes{w, x}
}

func TestGradCheckCatchesWrongGradient(t *testing.T) {
	eachDtypeMachine(t, func(t *testing.T, dt tensor.Dtype, m Machine) {
		// the correct op passes ...
		cost, wrt := scaleGraph(t, dt, 1)
		_, err := GradCheck(cost, wrt, WithMachine(m))
		require.NoError(t, err)

		// ... and the same op with a gradient 1.5 times too large fails.
		cost, wrt = scaleGraph(t, dt, 1.5)
		rep, err := GradCheck(cost, wrt, WithMachine(m))
		require.Error(t, err)
		require.True(t, errors.Is(err, ErrGradient), "%v", err)
		var ge *gatejet.Error
		require.True(t, errors.As(err, &ge))
		require.Equal(t, "x", ge.Arg)
		require.Contains(t, err.Error(), "analytic")
		require.Contains(t, err.Error(), "numeric")
		require.NotNil(t, rep)
		require.False(t, rep.OK())
		require.Zero(t, rep.Nodes[0].Failed, "w's gradient does not go through scaleOp")
		x := rep.Nodes[1]
		require.Equal(t, 6, x.Failed, "%s", rep)
		// The analytic gradient is 1.5 times the numeric one.
		require.InEpsilon(t, 1.5, x.Worst.Analytic/x.Worst.Numeric, 1e-2)
		require.InDelta(t, 1.0/3, x.Worst.RelErr, 1e-2)
		require.Greater(t, x.Worst.Ratio, 1.0)
		require.Len(t, x.Worst.Coord, 2)
		require.Contains(t, rep.String(), "FAIL x")
	})
}

func TestGradCheckSmallErrorNeedsTightTolerance(t *testing.T) {
	// A 1e-3 relative error passes a loose tolerance and fails the float64 default.
	cost, wrt := scaleGraph(t, tensor.Float64, 1+1e-3)
	_, err := GradCheck(cost, wrt, WithTolerance(1e-2, 1e-2))
	require.NoError(t, err)
	cost, wrt = scaleGraph(t, tensor.Float64, 1+1e-3)
	_, err = GradCheck(cost, wrt)
	require.ErrorIs(t, err, ErrGradient)
}

func TestGradCheckArgErrors(t *testing.T) {
	cost, wrt := mlpGraph(t, tensor.Float64, 1)
	g := cost.Graph()
	vec := wrt[1]
	inner := gorgonia.Must(gorgonia.Neg(vec))
	other := gorgonia.NewVector(gorgonia.NewGraph(), tensor.Float64, gorgonia.WithShape(2),
		gorgonia.WithValue(tensor.New(tensor.WithBacking([]float64{1, 2}))))
	f32 := gorgonia.NewVector(g, tensor.Float32, gorgonia.WithShape(2), gorgonia.WithName("f32"),
		gorgonia.WithValue(tensor.New(tensor.WithBacking([]float32{1, 2}))))
	unbound := gorgonia.NewVector(g, tensor.Float64, gorgonia.WithShape(2), gorgonia.WithName("nv"))
	for _, tc := range []struct {
		name string
		cost *gorgonia.Node
		wrt  gorgonia.Nodes
		opts []CheckOption
		kind error
	}{
		{"nil cost", nil, wrt, nil, gatejet.ErrParam},
		{"vector cost", gorgonia.Must(gorgonia.Tanh(vec)), wrt, nil, gatejet.ErrRank},
		{"no wrt", cost, nil, nil, gatejet.ErrParam},
		{"nil wrt", cost, gorgonia.Nodes{nil}, nil, gatejet.ErrParam},
		{"non-input", cost, gorgonia.Nodes{inner}, nil, gatejet.ErrParam},
		{"other graph", cost, gorgonia.Nodes{other}, nil, gatejet.ErrParam},
		{"dtype", cost, gorgonia.Nodes{f32}, nil, gatejet.ErrDType},
		{"unbound", cost, gorgonia.Nodes{unbound}, nil, gatejet.ErrParam},
		{"duplicate", cost, gorgonia.Nodes{vec, vec}, nil, gatejet.ErrParam},
		{"step", cost, wrt, []CheckOption{WithStep(0)}, gatejet.ErrParam},
		{"tol", cost, wrt, []CheckOption{WithTolerance(-1, 0)}, gatejet.ErrParam},
		{"machine", cost, wrt, []CheckOption{WithMachine(Machine(9))}, gatejet.ErrParam},
	} {
		rep, err := GradCheck(tc.cost, tc.wrt, tc.opts...)
		require.ErrorIs(t, err, tc.kind, tc.name)
		require.Nil(t, rep, tc.name)
	}
	// A wrt node the cost does not depend on: Grad refuses it, naming it.
	lone := gorgonia.NewVector(g, tensor.Float64, gorgonia.WithShape(2), gorgonia.WithName("lone"),
		gorgonia.WithValue(tensor.New(tensor.WithBacking([]float64{1, 2}))))
	_, err := GradCheck(cost, gorgonia.Nodes{lone})
	require.ErrorIs(t, err, gatejet.ErrParam)
	require.Contains(t, err.Error(), "the cost does not depend on node 0 (lone)")
}

type fakeTB struct {
	failed bool
	msg    string
}

func (f *fakeTB) Helper() {}
func (f *fakeTB) Fatalf(format string, args ...any) {
	f.failed = true
	f.msg = fmt.Sprintf(format, args...)
}

func TestRequireGradients(t *testing.T) {
	cost, wrt := scaleGraph(t, tensor.Float64, 1)
	rep := RequireGradients(t, cost, wrt)
	require.True(t, rep.OK())

	var f fakeTB
	cost, wrt = scaleGraph(t, tensor.Float64, 2)
	rep = RequireGradients(&f, cost, wrt)
	require.True(t, f.failed)
	require.NotNil(t, rep)
	require.True(t, strings.Contains(f.msg, "FAIL x"), f.msg)

	var f2 fakeTB
	require.Nil(t, RequireGradients(&f2, nil, wrt))
	require.True(t, f2.failed)
}

func TestCompareSpecialValues(t *testing.T) {
	el := compare(0, math.NaN(), 1, 1e-6, 1e-6)
	require.True(t, math.IsInf(el.Ratio, 1))
	el = compare(0, math.Inf(1), math.Inf(1), 1e-6, 1e-6)
	require.True(t, math.IsInf(el.Ratio, 1), "infinite gradients never pass")
	el = compare(0, 0, 0, 0, 0)
	require.Zero(t, el.Ratio)
	el = compare(0, 1, 1+1e-12, 0, 0)
	require.True(t, math.IsInf(el.Ratio, 1))
	el = compare(0, 2, 1, 0.1, 0)
	require.InDelta(t, 5.0, el.Ratio, 1e-12)
	require.InDelta(t, 0.5, el.RelErr, 1e-12)
}

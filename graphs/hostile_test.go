package graphs

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"

	"github.com/gatejet/gatejet"
	"github.com/gatejet/gatejet/internal/check"
	"github.com/stretchr/testify/require"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// childEnv names the scenario a re-executed test binary runs (see inChild).
const childEnv = "GATEJET_GRAPHS_CHILD"

// inChild runs scenario in a fresh copy of the test binary, because what it guards
// against (a nil-pointer panic in a goroutine Gorgonia starts) kills the whole process,
// which no recover can catch. In the child it runs scenario directly.
func inChild(t *testing.T, scenario func(t *testing.T)) {
	t.Helper()
	if name := os.Getenv(childEnv); name != "" {
		// in a child: run only its own scenario, never start another child
		if name != t.Name() {
			t.Skip("another scenario's child")
		}
		scenario(t)
		return
	}
	run := "^" + strings.Join(strings.Split(t.Name(), "/"), "$/^") + "$"
	cmd := exec.Command(os.Args[0], "-test.run="+run, "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), childEnv+"="+t.Name())
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "the scenario failed or killed the process:\n%s", out)
	require.Contains(t, string(out), "--- PASS: "+t.Name(), "%s", out)
}

// constGraph builds cost = Σ w ⊙ C (or Σ SoftArgmin(w ⊙ C) ⊙ C2 with soft) where C, C2
// are tensor constants (gorgonia.NewConstant).
func constGraph(t *testing.T, soft bool) (*gorgonia.Node, *gorgonia.Node, *tensor.Dense) {
	g := gorgonia.NewGraph()
	w := gorgonia.NewMatrix(g, tensor.Float64, gorgonia.WithShape(2, 3), gorgonia.WithName("w"),
		gorgonia.WithValue(tensor.New(tensor.WithShape(2, 3), tensor.WithBacking([]float64{0.1, -0.2, 0.3, 0.4, 0.5, -0.6}))))
	cv := tensor.New(tensor.WithShape(2, 3), tensor.WithBacking([]float64{0.5, -1, 2, 3, 1, -2}))
	C := gorgonia.NewConstant(cv)
	x := gorgonia.Must(gorgonia.HadamardProd(w, C))
	if soft {
		p, err := SoftArgmin(x, 1.5)
		require.NoError(t, err)
		C2 := gorgonia.NewConstant(tensor.New(tensor.WithShape(2, 3), tensor.WithBacking([]float64{1, 2, 3, -1, 0.5, 4})))
		x = gorgonia.Must(gorgonia.HadamardProd(p, C2))
	}
	return gorgonia.Must(gorgonia.Sum(x)), w, cv
}

// TestGradCheckLispConstant: a tensor constant in the graph used to kill the process on
// the Lisp machine, because unbinding it after a run handed its tensor to tensor's pool.
func TestGradCheckLispConstant(t *testing.T) {
	for _, soft := range []bool{false, true} {
		t.Run(fmt.Sprintf("softargmin=%v", soft), func(t *testing.T) {
			inChild(t, func(t *testing.T) {
				cost, w, cv := constGraph(t, soft)
				want := append([]float64(nil), cv.Float64s()...)
				for i := 0; i < 2; i++ {
					rep, err := GradCheck(cost, gorgonia.Nodes{w}, WithMachine(Lisp))
					require.NoError(t, err, "run %d", i)
					require.True(t, rep.OK())
					require.Equal(t, 6, rep.Nodes[0].Checked)
				}
				require.Equal(t, want, cv.Float64s(), "the constant's value is intact")
				if !soft {
					// ∂/∂w Σ w ⊙ C = C, exactly as the numeric check sees it
					g, err := w.Grad()
					require.NoError(t, err)
					got, ok := floatsOf(g)
					require.True(t, ok)
					require.Equal(t, want, got)
				}
				rep, err := GradCheck(cost, gorgonia.Nodes{w})
				require.NoError(t, err, "and the Tape machine after the Lisp runs")
				require.True(t, rep.OK())
			})
		})
	}
}

// selfJoin is an error whose Unwrap() []error contains itself (and, with ge, an
// *gatejet.Error after it).
type selfJoin struct {
	ge    error
	twice bool
}

func (e *selfJoin) Error() string { return "self" }
func (e *selfJoin) Unwrap() []error {
	errs := []error{e}
	if e.twice {
		errs = append(errs, fmt.Errorf("wrapped: %w", e))
	}
	if e.ge != nil {
		errs = append(errs, e.ge)
	}
	return errs
}

func TestOpErrorCycles(t *testing.T) {
	ge := check.Errorf(ErrNotSPD, "graphs.LogDetPlusRidge", "H", "row 0")
	require.Nil(t, OpError(&selfJoin{}))
	require.Nil(t, OpError(&selfJoin{twice: true}), "2^depth paths: the step budget bounds them")
	require.Same(t, ge, OpError(&selfJoin{ge: ge}))
	require.Nil(t, OpError(fmt.Errorf("outer: %w", &selfJoin{twice: true})))
}

// fortran returns a column-major Dense whose logical (row-major) elements are x.
func fortran(t *testing.T, dt tensor.Dtype, shape []int, x []float64) *tensor.Dense {
	t.Helper()
	var d *tensor.Dense
	if dt == tensor.Float32 {
		b := make([]float32, len(x))
		for i, v := range x {
			b[i] = float32(v)
		}
		d = tensor.New(tensor.WithShape(shape...), tensor.AsFortran(b))
	} else {
		d = tensor.New(tensor.WithShape(shape...), tensor.AsFortran(append([]float64(nil), x...)))
	}
	require.False(t, d.DataOrder().IsRowMajor())
	for i, v := range x {
		e, err := d.At(coords(i, shape)...)
		require.NoError(t, err)
		if dt == tensor.Float32 {
			require.Equal(t, float32(v), e, "element %d", i)
		} else {
			require.Equal(t, v, e, "element %d", i)
		}
	}
	// the backing order differs from the logical one (else the test proves nothing)
	require.NotEqual(t, fmt.Sprint(x), fmt.Sprint(d.Data()))
	return d
}

// runTape evaluates out on a TapeMachine and returns its value as float64.
func runTape(t *testing.T, out *gorgonia.Node) ([]float64, error) {
	t.Helper()
	m := gorgonia.NewTapeMachine(out.Graph())
	defer m.Close()
	if err := m.RunAll(); err != nil {
		return nil, err
	}
	v, ok := floatsOf(out.Value())
	require.True(t, ok)
	return v, nil
}

// TestColumnMajorValues: values stored column-major are read in their logical order by
// every graphs op and by GradCheck.
func TestColumnMajorValues(t *testing.T) {
	costs := []float64{1, 2, 3, 10, 20, 30}
	for _, dt := range []tensor.Dtype{tensor.Float64, tensor.Float32} {
		t.Run("SoftArgmin/"+dt.String(), func(t *testing.T) {
			var ps [2][]float64
			for i, v := range []*tensor.Dense{denseOf(dt, []int{2, 3}, costs), fortran(t, dt, []int{2, 3}, costs)} {
				g := gorgonia.NewGraph()
				c := gorgonia.NewMatrix(g, dt, gorgonia.WithShape(2, 3), gorgonia.WithValue(v))
				p, err := SoftArgmin(c, 1)
				require.NoError(t, err)
				ps[i], err = runTape(t, p)
				require.NoError(t, err)
			}
			require.Equal(t, ps[0], ps[1])
			require.InDelta(t, 0.6652409557748219, ps[1][0], 1e-6)
		})
		t.Run("LogDet/"+dt.String(), func(t *testing.T) {
			h := spdBatch(rand.New(rand.NewPCG(3, 4)), 2, 3)
			var lds [2][]float64
			for i, v := range []*tensor.Dense{denseOf(dt, []int{2, 3, 3}, h), fortran(t, dt, []int{2, 3, 3}, h)} {
				g := gorgonia.NewGraph()
				H := gorgonia.NewTensor(g, dt, 3, gorgonia.WithShape(2, 3, 3), gorgonia.WithValue(v))
				ld, err := LogDetPlusRidge(H, 0)
				require.NoError(t, err)
				lds[i], err = runTape(t, ld)
				require.NoError(t, err, "column-major SPD matrices are SPD")
			}
			require.Equal(t, lds[0], lds[1])
		})
		for _, m := range []Machine{Tape, Lisp} {
			t.Run(fmt.Sprintf("GradCheck/%v/%v", dt, m), func(t *testing.T) {
				// Column-major inputs through both ops: GradCheck perturbs, and the Lisp
				// reverse pass accumulates into, the element the analytic gradient names.
				g := gorgonia.NewGraph()
				c := gorgonia.NewMatrix(g, dt, gorgonia.WithShape(2, 3), gorgonia.WithName("c"),
					gorgonia.WithValue(fortran(t, dt, []int{2, 3}, []float64{0.1, 0.7, -0.4, 0.9, -1.2, 0.3})))
				w := gorgonia.NewMatrix(g, dt, gorgonia.WithShape(2, 3), gorgonia.WithName("w"),
					gorgonia.WithValue(denseOf(dt, []int{2, 3}, []float64{1, -2, 3, 0.5, 2, -1})))
				H := gorgonia.NewTensor(g, dt, 3, gorgonia.WithShape(2, 3, 3), gorgonia.WithName("H"),
					gorgonia.WithValue(fortran(t, dt, []int{2, 3, 3}, spdBatch(rand.New(rand.NewPCG(5, 6)), 2, 3))))
				p := gorgonia.Must(SoftArgmin(c, 2))
				ld := gorgonia.Must(LogDetPlusRidge(H, 0.1))
				cost := gorgonia.Must(gorgonia.Add(
					gorgonia.Must(gorgonia.Sum(gorgonia.Must(gorgonia.HadamardProd(p, w)))),
					gorgonia.Must(gorgonia.Sum(ld))))
				rep, err := GradCheck(cost, gorgonia.Nodes{c, H}, WithMachine(m))
				require.NoError(t, err, "%s", rep)
				require.True(t, rep.OK())
			})
		}
	}
}

func TestSoftArgminExtremeFiniteInputs(t *testing.T) {
	mx := math.MaxFloat64
	tiny := math.SmallestNonzeroFloat64
	cases := []struct {
		costs  []float64
		invTau float64
		want   []float64
	}{
		{[]float64{1e308, -1e308}, 10, []float64{0, 1}},
		{[]float64{mx, -mx}, gatejet.MaxInvTau, []float64{0, 1}},
		{[]float64{-mx, mx, -mx}, 1, []float64{0.5, 0, 0.5}},
		// s·(c_0 − c_1) = 2·tiny·mx ≈ 1.8e-15, which overflows only as c_0 − c_1
		{[]float64{mx, -mx}, tiny, []float64{1 / (1 + math.Exp(tiny*mx*2)), 1 / (1 + math.Exp(-tiny*mx*2))}},
		{[]float64{1, 2}, gatejet.MaxInvTau, []float64{1, 0}},
		{[]float64{math.Inf(1), -mx}, gatejet.MaxInvTau, []float64{0, 1}},
	}
	for _, c := range cases {
		p, err := SoftArgminProbs(c.costs, c.invTau)
		require.NoError(t, err)
		require.InDeltaSlice(t, c.want, p, 1e-16, "costs %v invTau %v", c.costs, c.invTau)

		// the graph op computes the same rows
		g := gorgonia.NewGraph()
		x := gorgonia.NewVector(g, tensor.Float64, gorgonia.WithShape(len(c.costs)),
			gorgonia.WithValue(tensor.New(tensor.WithShape(len(c.costs)), tensor.WithBacking(append([]float64(nil), c.costs...)))))
		pn, err := SoftArgmin(x, c.invTau)
		require.NoError(t, err)
		got, err := runTape(t, pn)
		require.NoError(t, err)
		require.Equal(t, p, got)
	}

	// Float32 costs: a temperature beyond the largest float32 would make the gradient's
	// float32 scale −Inf, so it is refused.
	g := gorgonia.NewGraph()
	x32 := gorgonia.NewVector(g, tensor.Float32, gorgonia.WithShape(2))
	_, err := SoftArgmin(x32, 1e39)
	require.ErrorIs(t, err, gatejet.ErrTemperature)
	_, err = SoftArgmin(x32, math.MaxFloat32)
	require.NoError(t, err)
}

func TestSoftArgminVJPExtremeFiniteInputs(t *testing.T) {
	// v_0 − ⟨p, v⟩ overflows although the result does not
	probs := []float64{0.01, 0.99}
	v := []float64{1.7e308, -1.7e308}
	invTau := 1e-3
	out, err := SoftArgminVJP(probs, v, invTau)
	require.NoError(t, err)
	dot := 0.01*1.7e308 - 0.99*1.7e308
	for i := range out {
		a := invTau * probs[i]
		want := -(a*v[i] - a*dot)
		require.False(t, math.IsInf(out[i], 0) || math.IsNaN(out[i]), "out %v", out)
		require.InEpsilon(t, want, out[i], 1e-14)
	}
}

func TestNilSafety(t *testing.T) {
	cost, wrt := mlpGraph(t, tensor.Float64, 9)
	rep, err := GradCheck(cost, wrt, nil)
	require.Nil(t, rep)
	require.ErrorIs(t, err, gatejet.ErrParam)
	var ge *gatejet.Error
	require.True(t, errors.As(err, &ge))
	require.Equal(t, "opts", ge.Arg)
	rep, err = GradCheck(cost, wrt, WithMachine(Lisp), nil)
	require.Nil(t, rep)
	require.ErrorIs(t, err, gatejet.ErrParam)

	var nilRep *Report
	require.False(t, nilRep.OK())
	require.Equal(t, "gradient check: no report", nilRep.String())
	require.Equal(t, "gradient check: no report", fmt.Sprint(nilRep))

	// a nil TB, and a nil *testing.T in one, cannot be failed: the report says it all
	rep = RequireGradients(nil, cost, wrt)
	require.True(t, rep.OK())
	var nilT *testing.T
	require.True(t, RequireGradients(nilT, cost, wrt).OK())
	require.False(t, RequireGradients(nil, nil, wrt).OK())
	bad, bwrt := scaleGraph(t, tensor.Float64, 2)
	rep = RequireGradients(nilT, bad, bwrt)
	require.NotNil(t, rep)
	require.False(t, rep.OK())
}

// TestGradConcurrent runs GradCheck and Grad (which differentiate under one lock) on
// separate graphs from several goroutines. gorgonia.Grad races with itself on
// (*Node).Hashcode; under -race an unserialised call fails this test.
func TestGradConcurrent(t *testing.T) {
	const workers, rounds = 6, 4
	var wg sync.WaitGroup
	errs := make(chan error, workers*rounds*2)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for r := 0; r < rounds; r++ {
				cost, wrt := mlpGraph(t, tensor.Float64, uint64(100*w+r))
				if rep, err := GradCheck(cost, wrt, WithMaxElements(2, 1)); err != nil || !rep.OK() {
					errs <- fmt.Errorf("worker %d round %d: %v", w, r, err)
				}
				cost2, wrt2 := mlpGraph(t, tensor.Float64, uint64(100*w+r+50))
				if _, err := Grad(cost2, wrt2...); err != nil {
					errs <- fmt.Errorf("worker %d round %d: Grad: %v", w, r, err)
				}
			}
		}(w)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// TestGradConcurrentFreshProcess differentiates from several goroutines at once in a
// fresh process, where gorgonia.Grad has not yet hashed its shared seed constants (1.0 of
// each dtype): the first hashing is the write that races. Under -race the child exits
// non-zero on an unserialised call; a plain run exercises the same calls.
func TestGradConcurrentFreshProcess(t *testing.T) {
	inChild(t, func(t *testing.T) {
		const workers = 8
		type job struct {
			cost *gorgonia.Node
			wrt  gorgonia.Nodes
		}
		jobs := make([]job, workers)
		for w := range jobs {
			dt := tensor.Float64
			if w%2 == 1 {
				dt = tensor.Float32
			}
			jobs[w].cost, jobs[w].wrt = mlpGraph(t, dt, uint64(w))
		}
		start := make(chan struct{})
		var wg sync.WaitGroup
		errs := make([]error, workers)
		for w := range jobs {
			wg.Add(1)
			go func(w int) {
				defer wg.Done()
				<-start
				if w%4 < 2 {
					_, errs[w] = GradCheck(jobs[w].cost, jobs[w].wrt, WithMaxElements(2, 1))
				} else {
					_, errs[w] = Grad(jobs[w].cost, jobs[w].wrt...)
				}
			}(w)
		}
		close(start)
		wg.Wait()
		for w, err := range errs {
			require.NoError(t, err, "worker %d", w)
		}
	})
}

// TestLogDetExtremeFiniteInputs: sym(H) + λI used to overflow to +Inf for entries near
// the largest float64, giving a log-determinant of +Inf for a finite SPD matrix.
func TestLogDetExtremeFiniteInputs(t *testing.T) {
	mx := math.MaxFloat64
	cases := []struct {
		diag, lambda float64
	}{
		{1.7e308, 0},   // a + b overflows in sym(H)
		{mx, mx},       // and so does the ridge
		{1e308, 1e308}, // the ridge alone
	}
	for _, c := range cases {
		g := gorgonia.NewGraph()
		H := gorgonia.NewTensor(g, tensor.Float64, 3, gorgonia.WithShape(1, 2, 2), gorgonia.WithName("H"),
			gorgonia.WithValue(denseOf(tensor.Float64, []int{1, 2, 2}, []float64{c.diag, 0, 0, c.diag})))
		ld, err := LogDetPlusRidge(H, c.lambda)
		require.NoError(t, err)
		grads, err := Grad(gorgonia.Must(gorgonia.Sum(ld)), H)
		require.NoError(t, err)
		m := gorgonia.NewTapeMachine(g)
		require.NoError(t, m.RunAll())
		m.Close()
		got, ok := floatsOf(ld.Value())
		require.True(t, ok)
		// log det diag(d+λ, d+λ) = 2·log(d+λ), with d+λ = 2·(d/2+λ/2)
		want := 2 * (math.Log(c.diag/2+c.lambda/2) + math.Ln2)
		require.InEpsilon(t, want, got[0], 1e-15, "diag %v lambda %v", c.diag, c.lambda)
		dh, ok := floatsOf(grads[0].Value())
		require.True(t, ok)
		inv := 0.5 / (c.diag/2 + c.lambda/2) // 1/(d+λ)
		require.InEpsilon(t, inv, dh[0], 1e-12, "diag %v lambda %v: %v", c.diag, c.lambda, dh)
		require.InEpsilon(t, inv, dh[3], 1e-12)
		require.Zero(t, dh[1])
	}
}

// TestDoDiffBadNodes: the DoDiff of each op of this package, called directly with a wrong
// number of inputs, nil nodes or nodes that hold no gradient, returns an ErrParam error
// naming the op instead of panicking.
func TestDoDiffBadNodes(t *testing.T) {
	g := gorgonia.NewGraph()
	c := gorgonia.NewMatrix(g, tensor.Float64, gorgonia.WithShape(2, 2), gorgonia.WithName("c"),
		gorgonia.WithValue(denseOf(tensor.Float64, []int{2, 2}, []float64{2, 0, 0, 3})))
	H := gorgonia.NewTensor(g, tensor.Float64, 3, gorgonia.WithShape(1, 2, 2), gorgonia.WithName("H"),
		gorgonia.WithValue(denseOf(tensor.Float64, []int{1, 2, 2}, []float64{2, 0, 0, 3})))
	p := gorgonia.Must(SoftArgmin(c, 1))
	ld := gorgonia.Must(LogDetPlusRidge(H, 0))
	for _, tc := range []struct {
		op  gorgonia.ADOp
		in  *gorgonia.Node
		out *gorgonia.Node
	}{
		{p.Op().(gorgonia.ADOp), c, p},
		{ld.Op().(gorgonia.ADOp), H, ld},
	} {
		name := fmt.Sprint(tc.op)
		for _, call := range []struct {
			in  gorgonia.Nodes
			out *gorgonia.Node
		}{
			{nil, tc.out},                          // no input
			{gorgonia.Nodes{tc.in, tc.in}, tc.out}, // two inputs
			{gorgonia.Nodes{nil}, tc.out},          // nil input
			{gorgonia.Nodes{tc.in}, nil},           // nil output
			{gorgonia.Nodes{tc.in}, tc.out},        // no gradients bound (no machine ran)
		} {
			err := tc.op.DoDiff(gorgonia.ExecutionContext{}, call.in, call.out)
			require.ErrorIs(t, err, gatejet.ErrParam, name)
			var ge *gatejet.Error
			require.True(t, errors.As(err, &ge), name)
			require.Contains(t, ge.Op, "graphs.", name)
		}
	}
}

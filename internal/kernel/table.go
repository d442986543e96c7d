package kernel

import (
	"github.com/gatejet/gatejet"
	"github.com/gatejet/gatejet/backward"
	"github.com/gatejet/gatejet/internal/check"
	"github.com/gatejet/gatejet/internal/graphmath"
	"github.com/gatejet/gatejet/softmaxjet"
)

// The built-in kernels. A gate's fourteen kernels follow its Gate.Kernel order: the five
// channels' forward kernels, then their VJPs, then (Gate.CoordKernel) its coordinate jets.
const (
	JetValue ID = iota + 1 // the softmax gate's kernels (SoftmaxGate)
	JetFirst
	JetSecond
	JetHVP
	JetGaussNewton
	JetValueVJP
	JetFirstVJP
	JetSecondVJP
	JetHVPVJP
	JetGaussNewtonVJP
	JetCoordFirst // the softmax gate's coordinate jets
	JetCoordSecond
	JetCoordHVP
	JetCoordGaussNewton
	LogisticValue // the logistic gate's kernels (LogisticGate)
	LogisticFirst
	LogisticSecond
	LogisticHVP
	LogisticGaussNewton
	LogisticValueVJP
	LogisticFirstVJP
	LogisticSecondVJP
	LogisticHVPVJP
	LogisticGaussNewtonVJP
	LogisticCoordFirst
	LogisticCoordSecond
	LogisticCoordHVP
	LogisticCoordGaussNewton
	SoftmaxBackward // axis kernels, declared in axisKernels
	LogSoftmaxBackward
	SoftmaxBackwardGrad
	LogSoftmaxBackwardGrad
	SoftmaxForward
	LogSoftmaxForward
	ReLUForward // activations, declared in activationKernels
	ReLUBackward
	ReLUBackwardGrad
	GELUForward
	GELUBackward
	GELUBackwardGrad
	SiLUForward
	SiLUBackward
	SiLUBackwardGrad
	SoftArgmin // graphs' ops, declared in batchKernels; CPU only
	SoftArgminVJP
	LogDetPlusRidge
	LogDetPlusRidgeGrad
	RowScale // the coordinate jets' gradients' row contractions, declared in rowKernels; CPU only
	RowDot
	numBuiltin
)

// SoftmaxGate is ζ = softmax(invTau·l), max subtracted; floats = [invTau].
var SoftmaxGate = &Gate{
	Name:   "jet",
	Title:  "SoftmaxJet",
	Params: []Param{{Name: "invTau"}},
	Check:  func(op string, _ int, f []float64) error { return check.InvTau(op, f[0]) },
	CPU:    GateCPU(newSoftmax[float64], newSoftmax[float32]),
	Sample: func(_ int, u, _ func() float64) []float64 { return []float64{0.5 + 1.5*u()} },
	Device: &GateDevice{Module: "SOFTMAX_JET", Floats: ScalarS, Warp: smallRowKernels},
}

// LogisticGate is ζ_k = σ(α_k·l_k + β_k); floats = [α_0 … α_{K-1}, β_0 … β_{K-1}].
var LogisticGate = &Gate{
	Name:   "logistic",
	Title:  "LogisticJet",
	Params: []Param{{Name: "alpha", PerAtom: true}, {Name: "beta", PerAtom: true}},
	Check: func(op string, K int, f []float64) error {
		return check.LogisticGate(op, K, f[:K], f[K:])
	},
	CPU: GateCPU(newLogistic[float64], newLogistic[float32]),
	// α ∈ ±[0.5, 2], β ~ N(0, 1).
	Sample: func(K int, u, z func() float64) []float64 {
		f := make([]float64, 2*K)
		for i := range K {
			a := 0.5 + 1.5*u()
			if u() < 0.5 {
				a = -a
			}
			f[i], f[K+i] = a, z()
		}
		return f
	},
	Device: &GateDevice{Module: "LOGISTIC_JET", Floats: FloatsArray, Warp: smallRowKernels},
}

// smallRowKernels are the row jets with a warp-per-row variant (GateDevice.Warp): value,
// first and HVP, whose rows are O(K·P), and every VJP; not the second channel and the
// Gauss-Newton slab, whose rows are K² wide.
var smallRowKernels = [2 * NumChannels]bool{
	Value: true, First: true, HVP: true,
	NumChannels + Value: true, NumChannels + First: true, NumChannels + Second: true,
	NumChannels + HVP: true, NumChannels + GaussNewton: true,
}

func newSoftmax[T gatejet.Float](f []float64, _ int) softmaxjet.Softmax[T] {
	return softmaxjet.Softmax[T]{InvTau: f[0]}
}

func newLogistic[T gatejet.Float](f []float64, K int) softmaxjet.Logistic[T] {
	return softmaxjet.Logistic[T]{Alpha: f[:K:K], Beta: f[K:]}
}

// axis returns the spec of an axis kernel; axis kernels reduce along the middle size.
// A grad kernel (two outputs, the gradients of its two differentiable inputs) lets the CPU
// skip either output.
func axis(name string, nIn, nOut int, f64 CPU[float64], f32 CPU[float32]) Spec {
	return Spec{Name: name, Family: Axis, In: alls(nIn), Out: alls(nOut), Skippable: skippable(nOut),
		F64: f64, F32: f32, Device: &Device{Module: "AXIS"}}
}

func elementwise(name string, nIn, nOut int, f64 CPU[float64], f32 CPU[float32]) Spec {
	return Spec{Name: name, Family: Elementwise, In: alls(nIn), Out: alls(nOut), Skippable: skippable(nOut),
		F64: f64, F32: f32, Device: &Device{Module: "ELEMENTWISE"}}
}

func skippable(nOut int) uint8 {
	if nOut > 1 {
		return 1<<nOut - 1
	}
	return 0
}

func alls(n int) []Dim {
	d := make([]Dim, n)
	for i := range d {
		d[i] = Whole
	}
	return d
}

// An axis kernel runs along axis 1 of its [outer, n, inner] sizes.
func axisKernels() []Spec {
	return []Spec{
		axis("softmax_backward", 2, 1, softmaxBackward[float64], softmaxBackward[float32]),
		axis("log_softmax_backward", 2, 1, logSoftmaxBackward[float64], logSoftmaxBackward[float32]),
		axis("softmax_backward_grad", 3, 2, softmaxBackwardGrad[float64], softmaxBackwardGrad[float32]),
		axis("log_softmax_backward_grad", 3, 2, logSoftmaxBackwardGrad[float64], logSoftmaxBackwardGrad[float32]),
		axis("softmax_forward", 1, 1, softmaxForward[float64], softmaxForward[float32]),
		axis("log_softmax_forward", 1, 1, logSoftmaxForward[float64], logSoftmaxForward[float32]),
	}
}

func softmaxBackward[T gatejet.Float](o *Operands[T], n []int, _ []float64) error {
	return backward.SoftmaxBackward(o.Out[0], o.In[0], o.In[1], n, 1)
}
func logSoftmaxBackward[T gatejet.Float](o *Operands[T], n []int, _ []float64) error {
	return backward.LogSoftmaxBackward(o.Out[0], o.In[0], o.In[1], n, 1)
}
func softmaxBackwardGrad[T gatejet.Float](o *Operands[T], n []int, _ []float64) error {
	return backward.SoftmaxBackwardGrad(o.Out[0], o.Out[1], o.In[0], o.In[1], o.In[2], n, 1)
}
func logSoftmaxBackwardGrad[T gatejet.Float](o *Operands[T], n []int, _ []float64) error {
	return backward.LogSoftmaxBackwardGrad(o.Out[0], o.Out[1], o.In[0], o.In[1], o.In[2], n, 1)
}
func softmaxForward[T gatejet.Float](o *Operands[T], n []int, _ []float64) error {
	return backward.Softmax(o.Out[0], o.In[0], n, 1)
}
func logSoftmaxForward[T gatejet.Float](o *Operands[T], n []int, _ []float64) error {
	return backward.LogSoftmax(o.Out[0], o.In[0], n, 1)
}

// Activations are one generic triple (forward, backward, backward grad) per function.
type activation[T gatejet.Float] struct {
	f   func(y, x []T) error
	df  func(dx, x, dy []T) error
	ddf func(gx, gdy, x, dy, g []T) error
}

func (a activation[T]) kernels() [3]CPU[T] {
	return [3]CPU[T]{
		func(o *Operands[T], _ []int, _ []float64) error { return a.f(o.Out[0], o.In[0]) },
		func(o *Operands[T], _ []int, _ []float64) error { return a.df(o.Out[0], o.In[0], o.In[1]) },
		func(o *Operands[T], _ []int, _ []float64) error {
			return a.ddf(o.Out[0], o.Out[1], o.In[0], o.In[1], o.In[2])
		},
	}
}

func activations[T gatejet.Float]() [][3]CPU[T] {
	return [][3]CPU[T]{
		activation[T]{backward.ReLU[T], backward.ReLUBackward[T], backward.ReLUBackwardGrad[T]}.kernels(),
		activation[T]{backward.GELU[T], backward.GELUBackward[T], backward.GELUBackwardGrad[T]}.kernels(),
		activation[T]{backward.SiLU[T], backward.SiLUBackward[T], backward.SiLUBackwardGrad[T]}.kernels(),
	}
}

// Activation is one activation function's three elementwise kernels: forward, backward and
// backward grad (Stage).
type Activation struct {
	Name  string // kernel name stem: relu, gelu, silu
	first ID
}

// Stage is one of an activation's kernels.
type Stage uint8

const (
	Forward      Stage = iota // [x] → [y = f(x)]
	Backward                  // [x, dy] → [dx = dy·f'(x)]
	BackwardGrad              // [x, dy, G] → [dX = G·dy·f''(x), dDY = G·f'(x)]
)

// Kernel returns the ID of the activation's kernel of stage s.
func (a *Activation) Kernel(s Stage) ID { return a.first + ID(s) }

// Activations are the activation functions, in the order of activations().
var Activations = []*Activation{{Name: "relu"}, {Name: "gelu"}, {Name: "silu"}}

func activationKernels() []Spec {
	f64, f32 := activations[float64](), activations[float32]()
	var ss []Spec
	for i, a := range Activations {
		ss = append(ss,
			elementwise(a.Name+"_forward", 1, 1, f64[i][0], f32[i][0]),
			elementwise(a.Name+"_backward", 2, 1, f64[i][1], f32[i][1]),
			elementwise(a.Name+"_backward_grad", 3, 2, f64[i][2], f32[i][2]))
	}
	return ss
}

// The kernels of graphs' own ops (internal/graphmath), CPU only, with sizes [N, K] and one
// float: the soft-argmin along rows of K costs ([costs] → [p], floats [invTau]) and its VJP
// ([p, dp] → [dcosts]); the log-determinant of N matrices K×K ([H] → [logdet], floats
// [lambda]) and its gradient ([H, g] → [dH]). The log-determinant computes in float64
// whatever the element type.
func batchKernels() []Spec {
	batch := func(name string, in, out []Dim, f64 CPU[float64], f32 CPU[float32]) Spec {
		return Spec{Name: name, Family: Batch, In: in, Out: out, Floats: 1, F64: f64, F32: f32}
	}
	return []Spec{
		batch("soft_argmin", []Dim{Whole}, []Dim{Whole}, softArgmin[float64], softArgmin[float32]),
		batch("soft_argmin_vjp", []Dim{Whole, Whole}, []Dim{Whole}, softArgminVJP[float64], softArgminVJP[float32]),
		batch("log_det_plus_ridge", []Dim{NKK}, []Dim{N}, logDet[float64], logDet[float32]),
		batch("log_det_plus_ridge_grad", []Dim{NKK, N}, []Dim{NKK}, logDetGrad[float64], logDetGrad[float32]),
	}
}

func softArgmin[T gatejet.Float](o *Operands[T], n []int, f []float64) error {
	return graphmath.SoftArgminRows(graphmath.OpSoftArgmin, o.Out[0], o.In[0], n[1], f[0])
}
func softArgminVJP[T gatejet.Float](o *Operands[T], n []int, f []float64) error {
	return graphmath.SoftArgminVJP(o.Out[0], o.In[0], o.In[1], n[1], f[0])
}
func logDet[T gatejet.Float](o *Operands[T], n []int, f []float64) error {
	out := wide(o.Out[0])
	if err := graphmath.LogDet(out, float64s(o.In[0]), n[0], n[1], f[0]); err != nil {
		return err
	}
	narrow(o.Out[0], out)
	return nil
}
func logDetGrad[T gatejet.Float](o *Operands[T], n []int, f []float64) error {
	dh := wide(o.Out[0])
	if err := graphmath.LogDetGrad(dh, float64s(o.In[0]), float64s(o.In[1]), n[0], n[1], f[0]); err != nil {
		return err
	}
	narrow(o.Out[0], dh)
	return nil
}

// The row contractions the gradients of the coordinate jets are built from (package ops),
// CPU only, with sizes [rows, P]: row_scale takes [x (one value per row), Y] and writes
// Z[r][c] = x[r]·Y[r][c]; row_dot takes [Y, Z] and writes [Σ_c Y[r][c]·Z[r][c]]. Each is the
// other's gradient, so a graph of them is differentiable to any order.
func rowKernels() []Spec {
	return []Spec{
		{Name: "row_scale", Family: Batch, In: []Dim{N, Whole}, Out: []Dim{Whole}, F64: rowScale[float64], F32: rowScale[float32]},
		{Name: "row_dot", Family: Batch, In: []Dim{Whole, Whole}, Out: []Dim{N}, F64: rowDot[float64], F32: rowDot[float32]},
	}
}

// rowLens checks the lengths of a row contraction's operands: rows·P for the wide ones
// (Whole), rows for the narrow ones (N).
func rowLens[T gatejet.Float](op string, n []int, wide, narrow [][]T) error {
	rows, P := n[0], n[1]
	size, ok := mul(rows, P)
	if !ok {
		return check.Errorf(gatejet.ErrSize, op, "Ints", "sizes %v overflow int", n)
	}
	for _, x := range wide {
		if len(x) != size {
			return check.Errorf(gatejet.ErrSize, op, "", "want %d elements, got %d", size, len(x))
		}
	}
	for _, x := range narrow {
		if len(x) != rows {
			return check.Errorf(gatejet.ErrSize, op, "", "want %d elements, got %d", rows, len(x))
		}
	}
	return nil
}

func rowScale[T gatejet.Float](o *Operands[T], n []int, _ []float64) error {
	x, y, z := o.In[0], o.In[1], o.Out[0]
	if err := rowLens("kernel.row_scale", n, [][]T{y, z}, [][]T{x}); err != nil {
		return err
	}
	P := n[1]
	for r, s := range x {
		yr, zr := y[r*P:(r+1)*P], z[r*P:(r+1)*P]
		for c := range zr {
			zr[c] = s * yr[c]
		}
	}
	return nil
}

func rowDot[T gatejet.Float](o *Operands[T], n []int, _ []float64) error {
	y, z, out := o.In[0], o.In[1], o.Out[0]
	if err := rowLens("kernel.row_dot", n, [][]T{y, z}, [][]T{out}); err != nil {
		return err
	}
	P := n[1]
	for r := range out {
		yr, zr := y[r*P:(r+1)*P], z[r*P:(r+1)*P]
		var acc T
		for c := range yr {
			acc += yr[c] * zr[c]
		}
		out[r] = acc
	}
	return nil
}

// float64s returns x as []float64: x itself when it is one, a converted copy otherwise.
func float64s[T gatejet.Float](x []T) []float64 {
	if d, ok := any(x).([]float64); ok {
		return d
	}
	d := make([]float64, len(x))
	for i, v := range x {
		d[i] = float64(v)
	}
	return d
}

// wide returns float64 room for the output dst: dst itself when it is []float64.
func wide[T gatejet.Float](dst []T) []float64 {
	if d, ok := any(dst).([]float64); ok {
		return d
	}
	return make([]float64, len(dst))
}

// narrow writes the float64 results x (from wide) into dst, rounding them to T.
func narrow[T gatejet.Float](dst []T, x []float64) {
	if _, ok := any(dst).([]float64); ok {
		return
	}
	for i, v := range x {
		dst[i] = T(v)
	}
}

func init() {
	registerBuiltins()
	// A new built-in gate registers here, after the kernels that have constants: it is
	// reached through its Gate value (Gate.Kernel), not through constants.
}

// registerBuiltins registers the kernels that have constants, in the constants' order
// (TestConstantsNameTheirKernels checks every one).
func registerBuiltins() {
	specs.Store(&[]*Spec{nil})
	Register(SoftmaxGate)
	Register(LogisticGate)
	regMu.Lock()
	defer regMu.Unlock()
	registerLocked(axisKernels())
	first := registerLocked(activationKernels())
	for i, a := range Activations {
		a.first = first + ID(3*i)
	}
	registerLocked(batchKernels())
	registerLocked(rowKernels())
	if SoftmaxGate.first != JetValue || LogisticGate.first != LogisticValue || len(*specs.Load()) != int(numBuiltin) {
		panic("kernel: the built-in IDs do not follow the table's order")
	}
}

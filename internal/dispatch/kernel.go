package dispatch

import (
	"strconv"

	"github.com/gatejet/gatejet"
	"github.com/gatejet/gatejet/internal/check"
	"github.com/gatejet/gatejet/internal/kernel"
)

// DType is the element type of a Call's slices: Float32 (Call.F32) or Float64 (Call.F64).
type DType = kernel.DType

// The element types.
const (
	DTypeInvalid = kernel.DTypeInvalid
	Float32      = kernel.Float32
	Float64      = kernel.Float64
)

// Kernel identifies one kernel of gatejet's kernel table. Its String is the kernel's name;
// its device entry points are gj_<name>_f32 and gj_<name>_f64 (EntryPoint). The zero Kernel
// is none.
//
// Sizes (a Call's Ints) by family:
//
//   - Row jets ([N, K, P]: N rows ≥ 0, K atoms ≥ 1, P columns ≥ 1): logits [N,K], decoded
//     [N,K,P], value [N,P], first and hvp [N,K,P], second [N,K,K,P], a direction v [N,K], a
//     Gauss-Newton slab [N,K,K]. A forward kernel takes [logits, decoded] (HVP: and v) and
//     writes its channel; its VJP takes the same inputs and the upstream gradient G (the
//     channel's shape) and writes [dLogits, dDecoded] (HVP: and dV), completely. Softmax-gate
//     kernels (Jet*) take Floats = [invTau]; logistic-gate kernels (Logistic*) take
//     Floats = [α_0 … α_{K-1}, β_0 … β_{K-1}], the gate ζ_k = σ(α_k·l_k + β_k).
//   - Coordinate jets ([N, K, P] as row jets), the jets over a row's 2K primaries (logits and
//     latent coordinates): they take [logits, d0, d1] (second and HVP: and d2; HVP: and v
//     [N,2K]), each d [N,K,P], and write first or HVP [N,2K,P], second [N,2K,2K,P] or a
//     Gauss-Newton slab [N,2K,2K]; the gate's Floats.
//   - Axis kernels ([outer, n, inner], every tensor [outer,n,inner], reducing along n):
//     SoftmaxForward and LogSoftmaxForward take [x] and write [y]; SoftmaxBackward and
//     LogSoftmaxBackward take [y, dy] and write [dx]; their Grad kernels take [y, dy, G] and
//     write [dY, dDY]. No Floats.
//   - Elementwise activations ([len]): forward [x] → [y]; backward [x, dy] → [dx];
//     backward grad [x, dy, G] → [dX, dDY]. No Floats.
//   - Batch kernels ([N, K], CPU only: no device entry points), the ops of package graphs:
//     soft_argmin takes [costs] and writes [p] along rows of K, soft_argmin_vjp takes
//     [p, dp] and writes [dcosts], Floats = [invTau]; log_det_plus_ridge takes N matrices
//     K×K [H] and writes [logdet] (N), log_det_plus_ridge_grad takes [H, g] and writes [dH],
//     Floats = [lambda]; row_scale takes [x (N), Y] and writes [x_r·Y[r]], row_dot takes
//     [Y, Z] and writes [⟨Y[r], Z[r]⟩] (N), no Floats (the coordinate jets' gradients, over
//     N = n·K rows of P).
//
// The formulas are in docs/math.md.
type Kernel kernel.ID

// String returns the kernel's name, "kernel(N)" for one not in the table.
func (k Kernel) String() string { return kernel.ID(k).String() }

// Family returns the kernel's argument convention (FamilyUnknown for one not in the table).
func (k Kernel) Family() Family { return kernel.ID(k).Family() }

// NumIn is the number of inputs the kernel takes (0 for one not in the table).
func (k Kernel) NumIn() int { return kernel.ID(k).NumIn() }

// NumOut is the number of outputs the kernel writes (0 for one not in the table).
func (k Kernel) NumOut() int { return kernel.ID(k).NumOut() }

// OnDevice reports whether the kernel has device entry points.
func (k Kernel) OnDevice() bool { return kernel.ID(k).OnDevice() }

// id is the kernel's entry in the table.
func (k Kernel) id() kernel.ID { return kernel.ID(k) }

// The kernels.
const (
	KernelJetValue               = Kernel(kernel.JetValue)
	KernelJetFirst               = Kernel(kernel.JetFirst)
	KernelJetSecond              = Kernel(kernel.JetSecond)
	KernelJetHVP                 = Kernel(kernel.JetHVP)
	KernelJetGaussNewton         = Kernel(kernel.JetGaussNewton)
	KernelJetValueVJP            = Kernel(kernel.JetValueVJP)
	KernelJetFirstVJP            = Kernel(kernel.JetFirstVJP)
	KernelJetSecondVJP           = Kernel(kernel.JetSecondVJP)
	KernelJetHVPVJP              = Kernel(kernel.JetHVPVJP)
	KernelJetGaussNewtonVJP      = Kernel(kernel.JetGaussNewtonVJP)
	KernelLogisticValue          = Kernel(kernel.LogisticValue)
	KernelLogisticFirst          = Kernel(kernel.LogisticFirst)
	KernelLogisticSecond         = Kernel(kernel.LogisticSecond)
	KernelLogisticHVP            = Kernel(kernel.LogisticHVP)
	KernelLogisticGaussNewton    = Kernel(kernel.LogisticGaussNewton)
	KernelLogisticValueVJP       = Kernel(kernel.LogisticValueVJP)
	KernelLogisticFirstVJP       = Kernel(kernel.LogisticFirstVJP)
	KernelLogisticSecondVJP      = Kernel(kernel.LogisticSecondVJP)
	KernelLogisticHVPVJP         = Kernel(kernel.LogisticHVPVJP)
	KernelLogisticGaussNewtonVJP = Kernel(kernel.LogisticGaussNewtonVJP)
	KernelSoftmaxBackward        = Kernel(kernel.SoftmaxBackward)
	KernelLogSoftmaxBackward     = Kernel(kernel.LogSoftmaxBackward)
	KernelSoftmaxBackwardGrad    = Kernel(kernel.SoftmaxBackwardGrad)
	KernelLogSoftmaxBackwardGrad = Kernel(kernel.LogSoftmaxBackwardGrad)
	KernelSoftmaxForward         = Kernel(kernel.SoftmaxForward)
	KernelLogSoftmaxForward      = Kernel(kernel.LogSoftmaxForward)
	KernelReLUForward            = Kernel(kernel.ReLUForward)
	KernelReLUBackward           = Kernel(kernel.ReLUBackward)
	KernelReLUBackwardGrad       = Kernel(kernel.ReLUBackwardGrad)
	KernelGELUForward            = Kernel(kernel.GELUForward)
	KernelGELUBackward           = Kernel(kernel.GELUBackward)
	KernelGELUBackwardGrad       = Kernel(kernel.GELUBackwardGrad)
	KernelSiLUForward            = Kernel(kernel.SiLUForward)
	KernelSiLUBackward           = Kernel(kernel.SiLUBackward)
	KernelSiLUBackwardGrad       = Kernel(kernel.SiLUBackwardGrad)
)

// Family is the argument convention of a kernel: what its Ints mean.
type Family = kernel.Family

// The families.
const (
	FamilyUnknown     = kernel.NoFamily
	FamilyRowJet      = kernel.RowJet
	FamilyAxis        = kernel.Axis
	FamilyElementwise = kernel.Elementwise
	FamilyBatch       = kernel.Batch
	FamilyCoordJet    = kernel.CoordJet
)

// Modules returns the names of the device modules of KernelSource (the GJ_FAMILY_<name>
// macros that select them), in order.
func Modules() []string { return kernel.Modules() }

// Kernels returns every kernel of the table, in order.
func Kernels() []Kernel {
	var out []Kernel
	for _, k := range kernel.All() {
		out = append(out, Kernel(k))
	}
	return out
}

// DeviceKernels returns every kernel that has device entry points, in order.
func DeviceKernels() []Kernel {
	var out []Kernel
	for _, k := range kernel.All() {
		if k.OnDevice() {
			out = append(out, Kernel(k))
		}
	}
	return out
}

// Operands are a call's slices in its kernel's order: In[:n] inputs, Out[:m] outputs.
type Operands[T gatejet.Float] = kernel.Operands[T]

// Call is one kernel invocation on host memory: the operands of its element type (F64 or
// F32; the other is left empty), the sizes and the scalars in the kernel's order (see
// Kernel). Run passes it to the backend unchanged.
type Call struct {
	Kernel Kernel
	DType  DType
	F64    Operands[float64] // operands of a Float64 call
	F32    Operands[float32] // operands of a Float32 call
	Ints   []int             // sizes: [N,K,P], [outer,n,inner] or [len]
	Floats []float64         // scalars: [invTau], [α…, β…], or none
	Work   int               // output elements (OutputElements), compared with BreakEven in ModeAuto
}

// Ops returns the call's operands of element type T (c.F64 or c.F32).
func Ops[T gatejet.Float](c *Call) *Operands[T] {
	if p, ok := any(&c.F64).(*Operands[T]); ok {
		return p
	}
	return any(&c.F32).(*Operands[T])
}

// DTypeOf is the DType of element type T.
func DTypeOf[T gatejet.Float]() DType { return kernel.DTypeOf[T]() }

// NewCall returns a Call of kernel k on the given slices (in and out in the kernel's order),
// sizes and scalars, with Work set to the output element count.
func NewCall[T gatejet.Float](k Kernel, in, out [][]T, ints []int, floats []float64) *Call {
	c := &Call{Kernel: k, DType: DTypeOf[T](), Ints: ints, Floats: floats}
	o := Ops[T](c)
	copy(o.In[:], in)
	copy(o.Out[:], out)
	c.Work = c.OutputElements()
	return c
}

// spec returns the kernel's declaration after checking the sizes and the count of floats
// against it (kernel.ID.Args).
func (c *Call) spec(op string) (*kernel.Spec, error) {
	if c == nil {
		return nil, check.Errorf(gatejet.ErrParam, op, "", "nil call")
	}
	return c.Kernel.id().Args(op, c.Ints, c.Floats)
}

func lengths(c *Call, dims []kernel.Dim) ([]int, error) {
	out := make([]int, len(dims))
	for i, d := range dims {
		n, ok := d.Len(c.Ints)
		if !ok {
			return nil, check.Errorf(gatejet.ErrSize, "cudaops.Call", "Ints", "%v: sizes %v overflow int", c.Kernel, c.Ints)
		}
		out[i] = n
	}
	return out, nil
}

// OutputElements is the total number of output elements the call writes: a natural Work
// value. It is 0 for a nil *Call and for a call whose Ints do not fit the kernel.
func (c *Call) OutputElements() int {
	if c == nil {
		return 0
	}
	sp, err := c.Kernel.id().Sizes("", c.Ints)
	if err != nil {
		return 0
	}
	total := 0
	for _, d := range sp.Out {
		n, ok := d.Len(c.Ints)
		if !ok || n > int(^uint(0)>>1)-total {
			return 0
		}
		total += n
	}
	return total
}

// Lengths returns the element count each input and output of the call must have, from its
// Kernel and Ints alone (the slices are not looked at): for callers whose data is not in Go
// slices, such as device-resident Gorgonia values. Errors are as Check's.
func (c *Call) Lengths() (in, out []int, err error) {
	if c == nil {
		return nil, nil, check.Errorf(gatejet.ErrParam, "cudaops.Call", "", "nil call")
	}
	sp, err := c.Kernel.id().Sizes("cudaops.Call", c.Ints)
	if err != nil {
		return nil, nil, err
	}
	if in, err = lengths(c, sp.In); err != nil {
		return nil, nil, err
	}
	out, err = lengths(c, sp.Out)
	return in, out, err
}

// Check validates the call against its kernel's declaration: a known kernel (ErrParam), the
// count of Ints (ErrParam; a nil *Call too), non-negative sizes and, for row jets, K ≥ 1 and
// P ≥ 1 (ErrShape), a DType with no slice of the other element type (ErrDType), each
// operand's length, sizes whose products overflow int and no operand beyond the kernel's
// counts (ErrSize), and the count and
// range of Floats (ErrParam, ErrTemperature, ErrNonFinite, as the gate's own check). Backends
// call it before launching.
func (c *Call) Check() error {
	_, err := c.check("cudaops.Call", false)
	return err
}

// check is Check, and returns the kernel's declaration; with skipNil, an output the kernel
// lets the CPU skip may be nil (Run's CPU path, and its device path before it gives such
// outputs scratch). It allocates nothing when the call is valid.
func (c *Call) check(op string, skipNil bool) (*kernel.Spec, error) {
	sp, err := c.spec(op)
	if err != nil {
		return nil, err
	}
	switch c.DType {
	case Float64:
		if !empty(&c.F32) {
			return nil, check.Errorf(gatejet.ErrDType, op, "F32", "%v: a Float64 call with float32 operands", c.Kernel)
		}
		err = checkLens(op, c, sp, &c.F64, skipNil)
	case Float32:
		if !empty(&c.F64) {
			return nil, check.Errorf(gatejet.ErrDType, op, "F64", "%v: a Float32 call with float64 operands", c.Kernel)
		}
		err = checkLens(op, c, sp, &c.F32, skipNil)
	default:
		return nil, check.Errorf(gatejet.ErrDType, op, "DType", "%v: want Float64 or Float32, got %v", c.Kernel, c.DType)
	}
	if err != nil {
		return nil, err
	}
	if g := sp.Gate; g != nil {
		if err := g.Check(op, c.Ints[1], c.Floats); err != nil {
			return nil, err
		}
	}
	return sp, nil
}

func empty[T gatejet.Float](o *Operands[T]) bool {
	for _, s := range o.In {
		if s != nil {
			return false
		}
	}
	for _, s := range o.Out {
		if s != nil {
			return false
		}
	}
	return true
}

// checkLens checks each operand's length against the kernel's declaration, and that none is
// given beyond its counts; with skipNil a skippable output may be nil.
func checkLens[T gatejet.Float](op string, c *Call, sp *kernel.Spec, o *Operands[T], skipNil bool) error {
	for i, s := range o.In {
		if err := checkLen(op, c, sp.In, "In", i, s, false); err != nil {
			return err
		}
	}
	for i, s := range o.Out {
		if err := checkLen(op, c, sp.Out, "Out", i, s, skipNil && sp.Skippable&(1<<i) != 0); err != nil {
			return err
		}
	}
	return nil
}

func checkLen[T gatejet.Float](op string, c *Call, dims []kernel.Dim, side string, i int, s []T, nilOK bool) error {
	if i >= len(dims) {
		if s != nil {
			return check.Errorf(gatejet.ErrSize, op, side+"["+strconv.Itoa(i)+"]", "%v takes %d %s operands", c.Kernel, len(dims), side)
		}
		return nil
	}
	if s == nil && nilOK {
		return nil
	}
	n, ok := dims[i].Len(c.Ints)
	if !ok {
		return check.Errorf(gatejet.ErrSize, op, "Ints", "%v: sizes %v overflow int", c.Kernel, c.Ints)
	}
	if len(s) != n {
		return check.Errorf(gatejet.ErrSize, op, side+"["+strconv.Itoa(i)+"]", "%v with Ints %v: want length %d, got %d", c.Kernel, c.Ints, n, len(s))
	}
	return nil
}

// EntryPoint returns the name of the device function that runs kernel k on element type dt
// (gj_<kernel>_f32 or gj_<kernel>_f64 in cudaops/kernels/gatejet.cu).
func EntryPoint(k Kernel, dt DType) string { return k.id().Entry(dt) }

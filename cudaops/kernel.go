package cudaops

import (
	"math"
	"sort"
	"strconv"

	"github.com/gatejet/gatejet"
)

// DType is the element type of a Call's slices.
type DType int8

const (
	// DTypeInvalid is the zero DType: no slices, or slices of an unsupported or mixed type.
	DTypeInvalid DType = iota
	// Float32 marks []float32 slices.
	Float32
	// Float64 marks []float64 slices.
	Float64
)

// String returns "float32", "float64" or "invalid".
func (d DType) String() string {
	switch d {
	case Float32:
		return "float32"
	case Float64:
		return "float64"
	}
	return "invalid"
}

// Size is the size of one element in bytes (0 for DTypeInvalid).
func (d DType) Size() int {
	switch d {
	case Float32:
		return 4
	case Float64:
		return 8
	}
	return 0
}

// Kernel names one device kernel. The doc comment of each constant gives the exact order of
// the Call's In, Out, Ints and Floats. Shapes are written in row-major element counts:
//
//   - Row-jet kernels (Jet*, Logistic*): Ints = [N, K, P] (N rows ≥ 0, K atoms ≥ 1, P output
//     columns ≥ 1, as softmaxjet.Shape). logits is [N,K], decoded is [N,K,P] (decoded[(r*K+k)*P+c]), value is
//     [N,P], first is [N,K,P] (first[(r*K+a)*P+c]), second is [N,K,K,P]
//     (second[((r*K+a)*K+b)*P+c]), a direction v is [N,K] (one per row), a Gauss-Newton slab
//     is [N,K,K]. An upstream gradient G has the shape of the channel it is the gradient of.
//     Softmax-gate kernels (Jet*) take Floats = [invTau] (positive, finite). Logistic-gate
//     kernels take Floats = [α_0 … α_{K-1}, β_0 … β_{K-1}] (length 2K, finite): the gate is
//     ζ_k = σ(α_k·l_k + β_k), and α, β are constants (no gradient is produced for them).
//   - Axis kernels (softmax family, forward and backward): Ints = [outer, n, inner], every
//     tensor is [outer, n, inner] and the reduction runs along n (element (o,j,i) at
//     (o*n+j)*inner+i). Floats is empty.
//   - Elementwise kernels (activations): Ints = [len], every tensor has len elements. Floats is
//     empty.
//
// VJP kernels write every output completely (they do not accumulate into it).
type Kernel string

// Softmax-gate row-jet kernels. ζ = softmax(invTau·l) per row (max subtracted), m_c = Σ_k ζ_k
// decoded[k][c]; formulas in docs/math.md.
const (
	// KernelJetValue: In = [logits [N,K], decoded [N,K,P]]; Out = [value [N,P]];
	// Ints = [N,K,P]; Floats = [invTau].
	KernelJetValue Kernel = "jet_value"
	// KernelJetFirst: In = [logits, decoded]; Out = [first [N,K,P]]; Ints = [N,K,P];
	// Floats = [invTau].
	KernelJetFirst Kernel = "jet_first"
	// KernelJetSecond: In = [logits, decoded]; Out = [second [N,K,K,P]]; Ints = [N,K,P];
	// Floats = [invTau].
	KernelJetSecond Kernel = "jet_second"
	// KernelJetHVP: In = [logits, decoded, v [N,K]]; Out = [hvp [N,K,P]] with
	// hvp[a][c] = Σ_b second[a][b][c]·v_b; Ints = [N,K,P]; Floats = [invTau].
	KernelJetHVP Kernel = "jet_hvp"
	// KernelJetGaussNewton: In = [logits, decoded]; Out = [gn [N,K,K]] with
	// gn[a][b] = Σ_c first[a][c]·first[b][c]; Ints = [N,K,P]; Floats = [invTau].
	KernelJetGaussNewton Kernel = "jet_gauss_newton"
	// KernelJetValueVJP: In = [logits, decoded, G [N,P]]; Out = [dLogits [N,K],
	// dDecoded [N,K,P]]; Ints = [N,K,P]; Floats = [invTau].
	KernelJetValueVJP Kernel = "jet_value_vjp"
	// KernelJetFirstVJP: In = [logits, decoded, G [N,K,P]]; Out = [dLogits [N,K],
	// dDecoded [N,K,P]]; Ints = [N,K,P]; Floats = [invTau].
	KernelJetFirstVJP Kernel = "jet_first_vjp"
	// KernelJetSecondVJP: In = [logits, decoded, G [N,K,K,P]]; Out = [dLogits [N,K],
	// dDecoded [N,K,P]]; Ints = [N,K,P]; Floats = [invTau].
	KernelJetSecondVJP Kernel = "jet_second_vjp"
	// KernelJetHVPVJP: In = [logits, decoded, v [N,K], G [N,K,P]]; Out = [dLogits [N,K],
	// dDecoded [N,K,P], dV [N,K]]; Ints = [N,K,P]; Floats = [invTau].
	KernelJetHVPVJP Kernel = "jet_hvp_vjp"
	// KernelJetGaussNewtonVJP: In = [logits, decoded, G [N,K,K]]; Out = [dLogits [N,K],
	// dDecoded [N,K,P]]; Ints = [N,K,P]; Floats = [invTau].
	KernelJetGaussNewtonVJP Kernel = "jet_gauss_newton_vjp"
)

// Logistic-gate row-jet kernels: ζ_k = σ(α_k·l_k + β_k), value m_c = Σ_k ζ_k decoded[k][c],
// first[a][c] = α_a σ'_a decoded[a][c], second[a][b][c] = δ_ab α_a² σ”_a decoded[a][c].
// Same In/Out/Ints as the softmax-gate kernel of the same name; Floats = [α (K), β (K)].
const (
	// KernelLogisticValue: In = [logits, decoded]; Out = [value [N,P]]; Ints = [N,K,P];
	// Floats = [α_0…α_{K-1}, β_0…β_{K-1}].
	KernelLogisticValue Kernel = "logistic_value"
	// KernelLogisticFirst: In = [logits, decoded]; Out = [first [N,K,P]]; Ints = [N,K,P];
	// Floats = [α, β].
	KernelLogisticFirst Kernel = "logistic_first"
	// KernelLogisticSecond: In = [logits, decoded]; Out = [second [N,K,K,P]] (zero off the
	// a = b diagonal); Ints = [N,K,P]; Floats = [α, β].
	KernelLogisticSecond Kernel = "logistic_second"
	// KernelLogisticHVP: In = [logits, decoded, v [N,K]]; Out = [hvp [N,K,P]];
	// Ints = [N,K,P]; Floats = [α, β].
	KernelLogisticHVP Kernel = "logistic_hvp"
	// KernelLogisticGaussNewton: In = [logits, decoded]; Out = [gn [N,K,K]]; Ints = [N,K,P];
	// Floats = [α, β].
	KernelLogisticGaussNewton Kernel = "logistic_gauss_newton"
	// KernelLogisticValueVJP: In = [logits, decoded, G [N,P]]; Out = [dLogits [N,K],
	// dDecoded [N,K,P]]; Ints = [N,K,P]; Floats = [α, β].
	KernelLogisticValueVJP Kernel = "logistic_value_vjp"
	// KernelLogisticFirstVJP: In = [logits, decoded, G [N,K,P]]; Out = [dLogits [N,K],
	// dDecoded [N,K,P]]; Ints = [N,K,P]; Floats = [α, β].
	KernelLogisticFirstVJP Kernel = "logistic_first_vjp"
	// KernelLogisticSecondVJP: In = [logits, decoded, G [N,K,K,P]]; Out = [dLogits [N,K],
	// dDecoded [N,K,P]]; Ints = [N,K,P]; Floats = [α, β].
	KernelLogisticSecondVJP Kernel = "logistic_second_vjp"
	// KernelLogisticHVPVJP: In = [logits, decoded, v [N,K], G [N,K,P]]; Out = [dLogits [N,K],
	// dDecoded [N,K,P], dV [N,K]]; Ints = [N,K,P]; Floats = [α, β].
	KernelLogisticHVPVJP Kernel = "logistic_hvp_vjp"
	// KernelLogisticGaussNewtonVJP: In = [logits, decoded, G [N,K,K]]; Out = [dLogits [N,K],
	// dDecoded [N,K,P]]; Ints = [N,K,P]; Floats = [α, β].
	KernelLogisticGaussNewtonVJP Kernel = "logistic_gauss_newton_vjp"
)

// Softmax-family backward along an axis. y is the saved forward output (for log-softmax, the
// log-softmax output). Ints = [outer, n, inner]; Floats empty; all tensors [outer,n,inner].
const (
	// KernelSoftmaxBackward: In = [y, dy]; Out = [dx]; dx = y⊙(dy − ⟨y,dy⟩).
	KernelSoftmaxBackward Kernel = "softmax_backward"
	// KernelLogSoftmaxBackward: In = [y, dy]; Out = [dx]; dx = dy − exp(y)·Σ dy.
	KernelLogSoftmaxBackward Kernel = "log_softmax_backward"
	// KernelSoftmaxBackwardGrad (double backward of softmax backward, upstream G on dx):
	// In = [y, dy, G]; Out = [dY, dDY] with dY_j = G_j(dy_j − ⟨y,dy⟩) − dy_j⟨y,G⟩ and
	// dDY = y⊙(G − ⟨y,G⟩).
	KernelSoftmaxBackwardGrad Kernel = "softmax_backward_grad"
	// KernelLogSoftmaxBackwardGrad: In = [y, dy, G]; Out = [dY, dDY] with
	// dY_k = −G_k e^{y_k} Σ_j dy_j and dDY_j = G_j − Σ_k G_k e^{y_k}.
	KernelLogSoftmaxBackwardGrad Kernel = "log_softmax_backward_grad"
)

// Elementwise activation kernels. Ints = [len]; Floats empty; every slice has len elements.
// Forward: In = [x]; Out = [y]. Backward: In = [x, dy]; Out = [dx = dy·f'(x)].
// BackwardGrad (upstream G on dx): In = [x, dy, G]; Out = [dX = G·dy·f”(x), dDY = G·f'(x)].
const (
	// KernelReLUForward: y = x for x > 0, else 0 (NaN propagates).
	KernelReLUForward Kernel = "relu_forward"
	// KernelReLUBackward: dx = dy where x > 0, else 0.
	KernelReLUBackward Kernel = "relu_backward"
	// KernelReLUBackwardGrad: dX = 0, dDY = G where x > 0, else 0.
	KernelReLUBackwardGrad Kernel = "relu_backward_grad"
	// KernelGELUForward: tanh form, y = ½x(1 + tanh u), u = √(2/π)(x + 0.044715x³).
	KernelGELUForward Kernel = "gelu_forward"
	// KernelGELUBackward: dx = dy·gelu'(x) (tanh form, docs/math.md).
	KernelGELUBackward Kernel = "gelu_backward"
	// KernelGELUBackwardGrad: dX = G·dy·gelu''(x), dDY = G·gelu'(x).
	KernelGELUBackwardGrad Kernel = "gelu_backward_grad"
	// KernelSiLUForward: y = x·σ(x).
	KernelSiLUForward Kernel = "silu_forward"
	// KernelSiLUBackward: dx = dy·σ(x)(1 + x(1 − σ(x))).
	KernelSiLUBackward Kernel = "silu_backward"
	// KernelSiLUBackwardGrad: dX = G·dy·silu''(x), silu'' = σ'(x)(2 + x(1 − 2σ(x))),
	// dDY = G·silu'(x).
	KernelSiLUBackwardGrad Kernel = "silu_backward_grad"
)

// Family groups kernels that share an argument convention.
type Family int8

const (
	// FamilyUnknown is the family of a Kernel this package does not define.
	FamilyUnknown Family = iota
	// FamilySoftmaxJet: Jet* kernels, Ints [N,K,P], Floats [invTau].
	FamilySoftmaxJet
	// FamilyLogisticJet: Logistic* kernels, Ints [N,K,P], Floats [α, β].
	FamilyLogisticJet
	// FamilyAxis: softmax family along an axis (forward and backward), Ints [outer,n,inner].
	FamilyAxis
	// FamilyElementwise: activations, Ints [len].
	FamilyElementwise
)

// dim is a symbolic tensor size, evaluated from a Call's Ints.
type dim int8

const (
	dimNK   dim = iota // N*K (logits, v, dLogits)
	dimNKP             // N*K*P (decoded, first, hvp)
	dimNP              // N*P (value)
	dimNKKP            // N*K*K*P (second)
	dimNKK             // N*K*K (Gauss-Newton slab)
	dimAll             // outer*n*inner or len
)

type kernelSpec struct {
	family Family
	in     []dim
	out    []dim
}

var (
	jetIn    = []dim{dimNK, dimNKP}
	jetInV   = []dim{dimNK, dimNKP, dimNK}
	vjpOut   = []dim{dimNK, dimNKP}
	vjpOutV  = []dim{dimNK, dimNKP, dimNK}
	jetSpecs = map[string]kernelSpec{
		"value":            {in: jetIn, out: []dim{dimNP}},
		"first":            {in: jetIn, out: []dim{dimNKP}},
		"second":           {in: jetIn, out: []dim{dimNKKP}},
		"hvp":              {in: jetInV, out: []dim{dimNKP}},
		"gauss_newton":     {in: jetIn, out: []dim{dimNKK}},
		"value_vjp":        {in: []dim{dimNK, dimNKP, dimNP}, out: vjpOut},
		"first_vjp":        {in: []dim{dimNK, dimNKP, dimNKP}, out: vjpOut},
		"second_vjp":       {in: []dim{dimNK, dimNKP, dimNKKP}, out: vjpOut},
		"hvp_vjp":          {in: []dim{dimNK, dimNKP, dimNK, dimNKP}, out: vjpOutV},
		"gauss_newton_vjp": {in: []dim{dimNK, dimNKP, dimNKK}, out: vjpOut},
	}
	specs = buildSpecs()
)

func buildSpecs() map[Kernel]kernelSpec {
	m := map[Kernel]kernelSpec{}
	for suffix, s := range jetSpecs {
		m[Kernel("jet_"+suffix)] = kernelSpec{FamilySoftmaxJet, s.in, s.out}
		m[Kernel("logistic_"+suffix)] = kernelSpec{FamilyLogisticJet, s.in, s.out}
	}
	all1, all2, all3 := []dim{dimAll}, []dim{dimAll, dimAll}, []dim{dimAll, dimAll, dimAll}
	m[KernelSoftmaxBackward] = kernelSpec{FamilyAxis, all2, all1}
	m[KernelLogSoftmaxBackward] = kernelSpec{FamilyAxis, all2, all1}
	m[KernelSoftmaxBackwardGrad] = kernelSpec{FamilyAxis, all3, all2}
	m[KernelLogSoftmaxBackwardGrad] = kernelSpec{FamilyAxis, all3, all2}
	// The softmax-family forward (kernel_forward.go).
	m[KernelSoftmaxForward] = kernelSpec{FamilyAxis, all1, all1}
	m[KernelLogSoftmaxForward] = kernelSpec{FamilyAxis, all1, all1}
	for _, act := range []string{"relu", "gelu", "silu"} {
		m[Kernel(act+"_forward")] = kernelSpec{FamilyElementwise, all1, all1}
		m[Kernel(act+"_backward")] = kernelSpec{FamilyElementwise, all2, all1}
		m[Kernel(act+"_backward_grad")] = kernelSpec{FamilyElementwise, all3, all2}
	}
	return m
}

// Kernels returns every kernel this package defines, sorted by name.
func Kernels() []Kernel {
	out := make([]Kernel, 0, len(specs))
	for k := range specs {
		out = append(out, k)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// Family returns the argument convention the kernel follows (FamilyUnknown if undefined).
func (k Kernel) Family() Family { return specs[k].family }

// NumIn and NumOut are the numbers of input and output slices the kernel takes (0 if
// undefined).
func (k Kernel) NumIn() int { return len(specs[k].in) }

// NumOut is the number of output slices the kernel writes (0 if undefined).
func (k Kernel) NumOut() int { return len(specs[k].out) }

// Call is one kernel invocation on host memory. Run passes it to the backend unchanged.
type Call struct {
	Kernel Kernel
	In     []any     // host slices, all []float64 or all []float32 (see the Kernel's doc)
	Out    []any     // host slices of the same dtype, written completely
	Ints   []int     // sizes: [N,K,P] jet kernels; [outer,n,inner] axis kernels; [len] elementwise
	Floats []float64 // scalars: [invTau] softmax-gate jets; [α…, β…] logistic jets; else empty
	Work   int       // output elements (see OutputElements), compared with BreakEven in ModeAuto
}

// DType returns the element type shared by every In and Out slice, or DTypeInvalid when there
// are none (a nil *Call has none), a slice is neither []float32 nor []float64, or the types
// are mixed.
func (c *Call) DType() DType {
	d := DTypeInvalid
	if c == nil {
		return d
	}
	for _, list := range [][]any{c.In, c.Out} {
		for _, s := range list {
			var e DType
			switch s.(type) {
			case []float32:
				e = Float32
			case []float64:
				e = Float64
			default:
				return DTypeInvalid
			}
			if d != DTypeInvalid && d != e {
				return DTypeInvalid
			}
			d = e
		}
	}
	return d
}

// size evaluates a symbolic dimension; ok is false on int overflow.
func (c *Call) size(d dim) (int, bool) {
	mul := func(xs ...int) (int, bool) {
		p := 1
		for _, x := range xs {
			if x != 0 && p > math.MaxInt/x {
				return 0, false
			}
			p *= x
		}
		return p, true
	}
	in := c.Ints
	switch d {
	case dimNK:
		return mul(in[0], in[1])
	case dimNKP:
		return mul(in[0], in[1], in[2])
	case dimNP:
		return mul(in[0], in[2])
	case dimNKKP:
		return mul(in[0], in[1], in[1], in[2])
	case dimNKK:
		return mul(in[0], in[1], in[1])
	default: // dimAll
		return mul(in...)
	}
}

// OutputElements is the total number of output elements the call writes: a natural Work
// value. It is 0 for a nil *Call and for a call whose Ints do not fit the kernel.
func (c *Call) OutputElements() int {
	if c == nil {
		return 0
	}
	sp, ok := specs[c.Kernel]
	if !ok || len(c.Ints) != intsLen(sp.family) || anyNegative(c.Ints) {
		return 0
	}
	total := 0
	for _, d := range sp.out {
		n, ok := c.size(d)
		if !ok {
			return 0
		}
		total += n
	}
	return total
}

// Lengths returns the element count each input and output of the call must have, from its
// Kernel and Ints alone (the slices are not looked at): for callers whose data is not in Go
// slices, such as device-resident Gorgonia values. Errors are as Check's (a nil *Call is an
// ErrParam error).
func (c *Call) Lengths() (in, out []int, err error) {
	const op = "cudaops.Call"
	if c == nil {
		return nil, nil, gatejet.Errorf(gatejet.ErrParam, op, "", "nil call")
	}
	sp, ok := specs[c.Kernel]
	if !ok {
		return nil, nil, gatejet.Errorf(gatejet.ErrParam, op, "Kernel", "unknown kernel %q", string(c.Kernel))
	}
	if want := intsLen(sp.family); len(c.Ints) != want {
		return nil, nil, gatejet.Errorf(gatejet.ErrParam, op, "Ints", "%s wants %d sizes, got %d", c.Kernel, want, len(c.Ints))
	}
	if anyNegative(c.Ints) {
		return nil, nil, gatejet.Errorf(gatejet.ErrShape, op, "Ints", "%s: negative size in %v", c.Kernel, c.Ints)
	}
	for _, list := range []struct {
		dims []dim
		dst  *[]int
	}{{sp.in, &in}, {sp.out, &out}} {
		for _, d := range list.dims {
			n, ok := c.size(d)
			if !ok {
				return nil, nil, gatejet.Errorf(gatejet.ErrShape, op, "Ints", "%s: sizes %v overflow int", c.Kernel, c.Ints)
			}
			*list.dst = append(*list.dst, n)
		}
	}
	return in, out, nil
}

func intsLen(f Family) int {
	if f == FamilyElementwise {
		return 1
	}
	return 3
}

func anyNegative(xs []int) bool {
	for _, x := range xs {
		if x < 0 {
			return true
		}
	}
	return false
}

func sliceLen(s any) int {
	switch v := s.(type) {
	case []float32:
		return len(v)
	case []float64:
		return len(v)
	}
	return -1
}

// Check validates the call against its kernel's convention: a known kernel (ErrParam), the
// counts of In, Out, Ints and Floats (ErrParam; a nil *Call too), non-negative sizes and, for row jets, K ≥ 1
// and P ≥ 1 (ErrShape), one
// dtype for every slice (ErrDType), each slice's length (ErrSize), a positive finite invTau
// (ErrTemperature) and finite logistic α, β (ErrNonFinite). Backends call it before launching.
func (c *Call) Check() error {
	const op = "cudaops.Call"
	if c == nil {
		return gatejet.Errorf(gatejet.ErrParam, op, "", "nil call")
	}
	sp, ok := specs[c.Kernel]
	if !ok {
		return gatejet.Errorf(gatejet.ErrParam, op, "Kernel", "unknown kernel %q", string(c.Kernel))
	}
	if want := intsLen(sp.family); len(c.Ints) != want {
		return gatejet.Errorf(gatejet.ErrParam, op, "Ints", "%s wants %d sizes, got %d", c.Kernel, want, len(c.Ints))
	}
	if anyNegative(c.Ints) {
		return gatejet.Errorf(gatejet.ErrShape, op, "Ints", "%s: negative size in %v", c.Kernel, c.Ints)
	}
	if (sp.family == FamilySoftmaxJet || sp.family == FamilyLogisticJet) && (c.Ints[1] < 1 || c.Ints[2] < 1) {
		return gatejet.Errorf(gatejet.ErrShape, op, "Ints", "%s: want K ≥ 1 and P ≥ 1, got K=%d P=%d", c.Kernel, c.Ints[1], c.Ints[2])
	}
	if len(c.In) != len(sp.in) {
		return gatejet.Errorf(gatejet.ErrParam, op, "In", "%s wants %d inputs, got %d", c.Kernel, len(sp.in), len(c.In))
	}
	if len(c.Out) != len(sp.out) {
		return gatejet.Errorf(gatejet.ErrParam, op, "Out", "%s wants %d outputs, got %d", c.Kernel, len(sp.out), len(c.Out))
	}
	if c.DType() == DTypeInvalid {
		return gatejet.Errorf(gatejet.ErrDType, op, "", "%s: want every slice []float64 or every slice []float32", c.Kernel)
	}
	for i, d := range sp.in {
		if err := c.checkLen(op, "In["+strconv.Itoa(i)+"]", c.In[i], d); err != nil {
			return err
		}
	}
	for i, d := range sp.out {
		if err := c.checkLen(op, "Out["+strconv.Itoa(i)+"]", c.Out[i], d); err != nil {
			return err
		}
	}
	switch sp.family {
	case FamilySoftmaxJet:
		if len(c.Floats) != 1 {
			return gatejet.Errorf(gatejet.ErrParam, op, "Floats", "%s wants [invTau], got %d values", c.Kernel, len(c.Floats))
		}
		if err := gatejet.CheckInvTau(op, c.Floats[0]); err != nil {
			return err
		}
	case FamilyLogisticJet:
		if len(c.Floats) != 2*c.Ints[1] {
			return gatejet.Errorf(gatejet.ErrParam, op, "Floats", "%s wants α and β (2K = %d values), got %d", c.Kernel, 2*c.Ints[1], len(c.Floats))
		}
		for i, f := range c.Floats {
			if math.IsNaN(f) || math.IsInf(f, 0) {
				return gatejet.Errorf(gatejet.ErrNonFinite, op, "Floats", "%s: gate parameter %d is %v", c.Kernel, i, f)
			}
			if i < c.Ints[1] && math.Abs(f) > gatejet.MaxLogisticAlpha {
				return gatejet.Errorf(gatejet.ErrParam, op, "Floats", "%s: want |α_%d| ≤ gatejet.MaxLogisticAlpha = %g, got %v", c.Kernel, i, gatejet.MaxLogisticAlpha, f)
			}
		}
	default:
		if len(c.Floats) != 0 {
			return gatejet.Errorf(gatejet.ErrParam, op, "Floats", "%s takes no scalars, got %d", c.Kernel, len(c.Floats))
		}
	}
	return nil
}

func (c *Call) checkLen(op, arg string, s any, d dim) error {
	want, ok := c.size(d)
	if !ok {
		return gatejet.Errorf(gatejet.ErrShape, op, "Ints", "%s: sizes %v overflow int", c.Kernel, c.Ints)
	}
	if got := sliceLen(s); got != want {
		return gatejet.Errorf(gatejet.ErrSize, op, arg, "%s with Ints %v: want length %d, got %d", c.Kernel, c.Ints, want, got)
	}
	return nil
}

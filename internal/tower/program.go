package tower

import (
	"math"
	"slices"
	"sync"
	"unsafe"

	"github.com/gatejet/gatejet"
	"github.com/gatejet/gatejet/internal/check"
	"github.com/gatejet/gatejet/internal/par"
)

// This file holds the row program: the reconstruction of one row,
//
//	ẑ_c = Σ_k ζ_k(l) · decoded[k][c],   decoded[k][c] = Σ_b Φ_b(t_k)·B[b][c],
//
// evaluated entirely with order-2 jets (tower.go), so that its value, first and second
// channels come out of the jet arithmetic with no hand-written chain rule. It is the general
// path (any basis, latent coordinates as primaries) and the oracle the closed forms are
// tested against. It costs O(K·m²·P) per row for m primaries, O(K³·P) when the primaries are
// the K logits — a factor K more than the closed forms.

// Basis is a set of nb scalar functions Φ_b(t) of a latent coordinate t ∈ R^d, with their
// first and second derivatives. Implementations must be safe for concurrent calls of Eval if
// one Basis is shared by programs used from several goroutines.
type Basis interface {
	// Len returns the number of functions nb (at least 1).
	Len() int
	// Dim returns the dimension d of the latent coordinates (at least 0).
	Dim() int
	// Eval writes, for t of length d, Φ_b(t) to phi[b] (length nb), ∂Φ_b/∂t_i to
	// dphi[b*d+i] (length nb·d) and ∂²Φ_b/∂t_i∂t_j to d2phi[(b*d+i)*d+j] (length nb·d·d).
	// dphi and d2phi are nil when those derivatives are not needed.
	Eval(t []float64, phi, dphi, d2phi []float64)
}

// ProgramSpec describes a row program: the numbers of atoms and output columns, the gate, and
// optionally a basis and decoder that turn latent coordinates into decoded values.
type ProgramSpec struct {
	K int // number of atoms (gate logits), at least 1
	P int // number of output columns, at least 1

	// Gate is the gate, as a function of its jets: Softmax(invTau), Logistic(alpha, beta) or
	// any other (JetGate). The zero Gate is refused (ErrParam).
	Gate Gate

	// Basis, when not nil, maps each atom's latent coordinate t_k ∈ R^d to decoded values
	// decoded[k][c] = Σ_b Φ_b(t_k)·Decoder[b*P+c] (Program.RowLatent). When nil, decoded
	// values are given directly (Program.RowDecoded).
	Basis Basis
	// Decoder is the decoder matrix B [nb×P], row-major; required with Basis, nil without.
	Decoder []float64
	// LatentPrimaries makes the K·d latent coordinates primaries too (requires Basis): the
	// primaries are then the K logits followed by t_0, …, t_{K-1}, m = K + K·d of them.
	// Otherwise the primaries are the K logits, m = K.
	LatentPrimaries bool
}

// Gate is a row program's gate: the function of its jets in each element type and the check
// of its parameters.
type Gate struct {
	f64   GateJets[float64]
	f32   GateJets[float32]
	check func(op string, K, size int) error
}

// JetGate is the gate computed by f64 and f32 (its jets in float64 and in float32; a program
// of an element type whose function is nil is refused with ErrParam), whose parameters are
// the caller's to check.
func JetGate(f64 GateJets[float64], f32 GateJets[float32]) Gate {
	return Gate{f64: f64, f32: f32}
}

// Softmax is the softmax gate ζ = softmax(invTau·l) (SoftmaxJets): 0 < invTau ≤
// gatejet.MaxInvTau, and ≤ 1e18 for float32 jets, whose Hessians hold invTau²
// (ErrTemperature otherwise).
func Softmax(invTau float64) Gate {
	return Gate{f64: SoftmaxJets[float64](invTau), f32: SoftmaxJets[float32](invTau), check: func(op string, _, size int) error {
		if err := check.InvTau(op, invTau); err != nil {
			return err
		}
		if size == 4 && invTau > maxJet32Param {
			return check.Errorf(gatejet.ErrTemperature, op, "invTau", "want invTau ≤ %g for float32 jets (their Hessians hold invTau²), got %v", maxJet32Param, invTau)
		}
		return nil
	}}
}

// Logistic is the per-atom logistic gate ζ_k = σ(alpha[k]·l_k + beta[k]) (LogisticJets), of
// alpha and beta copied: length K, finite, |alpha[k]| ≤ gatejet.MaxLogisticAlpha (ErrParam,
// ErrNonFinite otherwise); for float32 jets |alpha[k]| ≤ 1e18 and |beta[k]| within float32's
// range, as beyond it, rounded to ±Inf, beta would meet alpha·l overflowed to ∓Inf and give
// ∞ − ∞ = NaN where the gate is exactly 0 or 1.
func Logistic(alpha, beta []float64) Gate {
	alpha, beta = slices.Clone(alpha), slices.Clone(beta)
	return Gate{f64: LogisticJets[float64](alpha, beta), f32: LogisticJets[float32](alpha, beta), check: func(op string, K, size int) error {
		if err := check.LogisticGate(op, K, alpha, beta); err != nil {
			return err
		}
		if size != 4 {
			return nil
		}
		for k, a := range alpha {
			if math.Abs(a) > maxJet32Param {
				return check.Errorf(gatejet.ErrParam, op, "alpha", "want |alpha[%d]| ≤ %g for float32 jets (their Hessians hold alpha²), got %v", k, maxJet32Param, a)
			}
		}
		for k, b := range beta {
			if math.Abs(b) > math.MaxFloat32 {
				return check.Errorf(gatejet.ErrParam, op, "beta", "want |beta[%d]| ≤ %g for float32 jets, got %v", k, math.MaxFloat32, b)
			}
		}
		return nil
	}}
}

// checkGate validates the gate of a program of K atoms in elements of size bytes.
func checkGate(op string, g Gate, K, size int) error {
	if (size == 4 && g.f32 == nil) || (size == 8 && g.f64 == nil) {
		return check.Errorf(gatejet.ErrParam, op, "Gate", "no gate for %d-byte elements", size)
	}
	if g.check != nil {
		return g.check(op, K, size)
	}
	return nil
}

// Program evaluates the order-2 jet of one row's reconstruction ẑ [P] with respect to m
// primaries: value[c] = ẑ_c, first[a*P+c] = ∂ẑ_c/∂x_a and second[(a*m+b)*P+c] =
// ∂²ẑ_c/∂x_a∂x_b. It owns a jet workspace, so that evaluating row after row allocates nothing;
// it is therefore not safe for concurrent use (use one Program per goroutine).
//
// Non-finite data propagate within the row, never beyond it. With the softmax gate, a NaN or
// +Inf logit, or a row whose logits are all −Inf, makes the row's channels NaN, as a softmax
// does; −Inf logits alongside finite ones give those atoms ζ = 0 and finite channels. With the
// logistic gate, a NaN logit makes the row NaN and ±Inf logits saturate their atom's gate
// (ζ = 0 or 1, zero derivatives). A non-finite decoded value makes the channels of its output
// column non-finite.
type Program[T gatejet.Float] struct {
	k, p, d, nb, m int
	gate           GateJets[T]
	basis          Basis
	decoder        []T // [nb×P]
	latent         bool

	tw       *Tower[T]
	gates    []*Jet[T] // ζ_k; the exponentials before the reciprocal is applied
	phis     []*Jet[T] // Φ_b(t_k) as jets (latent primaries only)
	dj, prod *Jet[T]   // decoded[k][c] as a jet, and ζ_k·decoded[k][c]
	outs     []*Jet[T] // ẑ_c as jets (latent primaries only)

	phi, dphi, d2phi, t []float64
	dec                 []T // decoded values [K×P] computed from the basis
}

// NewProgram validates spec and returns a Program for element type T. Errors: ErrShape for
// K < 1, P < 1 or sizes that overflow; ErrTemperature for an invalid InvTau (softmax, see
// check.InvTau; for float32, whose jets hold InvTau², also InvTau > 1e18); ErrParam
// for Alpha or Beta of the wrong length or |Alpha[k]| beyond gatejet.MaxLogisticAlpha (1e18
// for float32, where |Beta[k]| must also be within float32's range) (logistic), a Basis with Len() < 1 or Dim() < 0, LatentPrimaries
// without a Basis or a Decoder without one; ErrNonFinite for a non-finite Alpha or Beta;
// ErrSize for a Decoder whose length is not Len()·P, and for a program whose workspace would
// exceed gatejet.MaxBytes. The workspace is checked before anything is allocated: it holds
// K + 3 jets (K + nb + P + 5 with latent primaries) of m + m² elements each, so it grows as
// K³ with the logits as primaries (K = 2048 takes 64 GiB in float64).
//
// The Basis's Len() and Dim() are read once, here; a Basis whose Len() or Dim() later differ
// makes RowLatent return ErrParam.
func NewProgram[T gatejet.Float](spec ProgramSpec) (*Program[T], error) {
	var zero T
	pl, err := progCheckSpec("tower.NewProgram", spec, int(unsafe.Sizeof(zero)))
	if err != nil {
		return nil, err
	}
	pr := new(Program[T])
	pr.progConfigure(spec, pl)
	return pr, nil
}

// progPlan is what progCheckSpec found: the Basis's sizes, read once, and the number of
// primaries.
type progPlan struct{ nb, d, m int }

// progCheckSpec validates a ProgramSpec for elements of size bytes, the sizes of every buffer
// the program allocates included (against gatejet.MaxBytes).
func progCheckSpec(op string, spec ProgramSpec, size int) (progPlan, error) {
	var pl progPlan
	if err := (Shape{N: 0, K: spec.K, P: spec.P}).Check(op); err != nil {
		return pl, err
	}
	if err := checkGate(op, spec.Gate, spec.K, size); err != nil {
		return pl, err
	}
	pl.m = spec.K
	jets := []int{3, spec.K} // x, den, rcp; the gates
	if spec.Basis == nil {
		if spec.LatentPrimaries {
			return pl, check.Errorf(gatejet.ErrParam, op, "LatentPrimaries", "latent primaries need a Basis")
		}
		if spec.Decoder != nil {
			return pl, check.Errorf(gatejet.ErrParam, op, "Decoder", "a Decoder needs a Basis")
		}
	} else {
		pl.nb, pl.d = spec.Basis.Len(), spec.Basis.Dim()
		nb, d := pl.nb, pl.d
		if nb < 1 || d < 0 {
			return pl, check.Errorf(gatejet.ErrParam, op, "Basis", "want Len() ≥ 1 and Dim() ≥ 0, got Len() = %d, Dim() = %d", nb, d)
		}
		if want, ok := check.Elems(nb, spec.P); !ok || len(spec.Decoder) != want {
			return pl, check.Errorf(gatejet.ErrSize, op, "Decoder", "want Basis.Len()·P = %d·%d values, got %d", nb, spec.P, len(spec.Decoder))
		}
		if spec.LatentPrimaries {
			kd, ok := check.Elems(spec.K, d)
			if !ok || kd > math.MaxInt-spec.K {
				return pl, check.Errorf(gatejet.ErrSize, op, "Basis", "K + K·d overflows int (K=%d d=%d)", spec.K, d)
			}
			pl.m += kd
			jets = append(jets, nb, 2, spec.P) // Φ_b(t_k); dj, prod; ẑ_c
		}
		if _, ok := check.Elems(pl.m, pl.m, spec.P); !ok {
			return pl, check.Errorf(gatejet.ErrSize, op, "", "m·m·P overflows int (m=%d P=%d)", pl.m, spec.P)
		}
		// The basis's buffers in float64 (∂²Φ and ∂Φ; t and Φ are smaller), the decoder in T
		// and the decoded values in T.
		for _, b := range [...]struct {
			arg           string
			size, x, y, z int
		}{{"Basis", 8, nb, d, d}, {"Basis", 8, nb, d, 1}, {"Decoder", size, nb, spec.P, 1}, {"shape", size, spec.K, spec.P, 1}} {
			if _, err := check.Alloc(op, b.arg, b.size, b.x, b.y, b.z); err != nil {
				return pl, err
			}
		}
	}
	nj, ok := addInts(jets...)
	if !ok {
		return pl, check.Errorf(gatejet.ErrSize, op, "shape", "the number of jets overflows int")
	}
	// The jets: m + m² elements each, in one arena (Tower).
	if _, err := check.Alloc(op, "shape", size, nj, pl.m, pl.m+1); err != nil {
		return pl, err
	}
	return pl, nil
}

// maxJet32Param bounds the gate parameter (invTau, |alpha[k]|) of a program in float32: its
// jets hold the parameter squared in their Hessians, a few of them added, and float32 ends at
// 3.4e38, where gatejet.MaxInvTau and gatejet.MaxLogisticAlpha are set for float64.
const maxJet32Param = 1e18

// progConfigure sets pr up for a spec that progCheckSpec validated into pl, reusing pr's
// memory where it can.
func (pr *Program[T]) progConfigure(spec ProgramSpec, pl progPlan) {
	K, P := spec.K, spec.P
	pr.k, pr.p = K, P
	switch g := any(&pr.gate).(type) {
	case *GateJets[float64]:
		*g = spec.Gate.f64
	case *GateJets[float32]:
		*g = spec.Gate.f32
	}
	pr.basis, pr.latent = spec.Basis, spec.LatentPrimaries
	pr.nb, pr.d, pr.m = pl.nb, pl.d, pl.m
	pr.decoder = pr.decoder[:0]
	for _, v := range spec.Decoder {
		pr.decoder = append(pr.decoder, T(v))
	}

	if pr.tw == nil {
		pr.tw = NewTower[T](pr.m)
	}
	tw := pr.tw
	tw.Reset(pr.m)
	pr.gates = pr.gates[:0]
	for k := 0; k < K; k++ {
		pr.gates = append(pr.gates, tw.Jet())
	}
	pr.phis, pr.outs = pr.phis[:0], pr.outs[:0]
	pr.dj, pr.prod = nil, nil
	if pr.latent {
		for b := 0; b < pr.nb; b++ {
			pr.phis = append(pr.phis, tw.Jet())
		}
		pr.dj, pr.prod = tw.Jet(), tw.Jet()
		for c := 0; c < P; c++ {
			pr.outs = append(pr.outs, tw.Jet())
		}
	}
	if spec.Basis != nil {
		pr.t = progResize(pr.t, pr.d)
		pr.phi = progResize(pr.phi, pr.nb)
		pr.dphi = progResize(pr.dphi, pr.nb*pr.d)
		pr.d2phi = progResize(pr.d2phi, pr.nb*pr.d*pr.d)
		pr.dec = progResize(pr.dec, K*P)
	}
}

func progResize[E any](s []E, n int) []E {
	if cap(s) < n {
		return make([]E, n)
	}
	return s[:n]
}

// Primaries returns the number m of primaries: K, or K + K·d with latent primaries.
func (pr *Program[T]) Primaries() int { return pr.m }

// RowDecoded evaluates one row from decoded values given directly: logits [K], decoded [K×P].
// It writes value [P], first [K×P] and second [K×K×P] (m = K, the primaries are the logits);
// any output may be nil to skip it. A program with LatentPrimaries cannot be used this way
// (ErrParam); the program's Basis, if any, is not used. Wrong lengths are ErrSize; an output
// that overlaps another argument is ErrParam.
func (pr *Program[T]) RowDecoded(value, first, second, logits, decoded []T) error {
	const op = "tower.Program.RowDecoded"
	if pr.latent {
		return check.Errorf(gatejet.ErrParam, op, "", "the program's primaries include latent coordinates; use RowLatent")
	}
	K, P := pr.k, pr.p
	if err := progCheckLens(op, K, P, K, value, first, second, logits); err != nil {
		return err
	}
	if len(decoded) != K*P {
		return check.Errorf(gatejet.ErrSize, op, "decoded", "want K·P = %d values, got %d", K*P, len(decoded))
	}
	if err := progCheckOverlap(op, value, first, second, logits, "decoded", decoded); err != nil {
		return err
	}
	pr.progRowDecoded(value, first, second, logits, decoded)
	return nil
}

// RowLatent evaluates one row from latent coordinates: logits [K], latent [K×d] (t_k at
// latent[k*d : k*d+d]). It writes value [P], first [m×P] and second [m×m×P] for the
// program's m primaries; any output may be nil to skip it. It needs a program with a Basis
// whose Len() and Dim() are still those NewProgram read (ErrParam otherwise). Wrong lengths
// are ErrSize; an output that overlaps another argument is ErrParam.
func (pr *Program[T]) RowLatent(value, first, second, logits, latent []T) error {
	const op = "tower.Program.RowLatent"
	if pr.basis == nil {
		return check.Errorf(gatejet.ErrParam, op, "", "the program has no Basis; use RowDecoded")
	}
	K, P := pr.k, pr.p
	if err := progCheckLens(op, K, P, pr.m, value, first, second, logits); err != nil {
		return err
	}
	if len(latent) != K*pr.d {
		return check.Errorf(gatejet.ErrSize, op, "latent", "want K·d = %d values, got %d", K*pr.d, len(latent))
	}
	if err := progCheckOverlap(op, value, first, second, logits, "latent", latent); err != nil {
		return err
	}
	// The buffers Eval fills were sized from Len() and Dim() at NewProgram.
	if nb, d := pr.basis.Len(), pr.basis.Dim(); nb != pr.nb || d != pr.d {
		return check.Errorf(gatejet.ErrParam, op, "Basis", "Len() = %d and Dim() = %d, but %d and %d at NewProgram: a Basis must keep its sizes", nb, d, pr.nb, pr.d)
	}
	pr.progGates(logits)
	if !pr.latent {
		pr.progDecode(latent)
		pr.progContract(value, first, second, pr.dec)
		return nil
	}
	pr.progRowLatent(value, first, second, latent)
	return nil
}

// progCheckLens checks the lengths of one row's outputs (nil allowed) and logits.
func progCheckLens[T gatejet.Float](op string, K, P, m int, value, first, second, logits []T) error {
	for _, b := range []struct {
		name string
		s    []T
		want int
		opt  bool
	}{{"value", value, P, true}, {"first", first, m * P, true}, {"second", second, m * m * P, true}, {"logits", logits, K, false}} {
		if b.opt && b.s == nil {
			continue
		}
		if len(b.s) != b.want {
			return check.Errorf(gatejet.ErrSize, op, b.name, "want %d values, got %d", b.want, len(b.s))
		}
	}
	return nil
}

// progCheckOverlap reports an ErrParam error if an output (nil allowed) overlaps an input or
// another output; lengths are already checked.
func progCheckOverlap[T gatejet.Float](op string, value, first, second, logits []T, inName string, x []T) error {
	return check.Disjoint(op, check.OptOut("value", value, 0), check.OptOut("first", first, 0), check.OptOut("second", second, 0),
		check.In("logits", logits, 0), check.In(inName, x, 0))
}

// progRowDecoded evaluates one row from decoded values; lengths are the caller's business.
func (pr *Program[T]) progRowDecoded(value, first, second, logits, decoded []T) {
	pr.progGates(logits)
	pr.progContract(value, first, second, decoded)
}

// progGates fills pr.gates[k] with the jet of ζ_k over the program's primaries; the gate's
// temporaries are released after.
func (pr *Program[T]) progGates(l []T) {
	mark := pr.tw.Len()
	pr.gate(pr.gates, l[:pr.k], pr.tw)
	pr.tw.ReleaseTo(mark)
}

// GateJets is a gate as a function of its jets: it sets z[k], for each of the K atoms, to the
// jet of ζ_k(l) over the tower's primaries, of which the first K are the logits l (the jet of
// logit k is tw.Variable(k, l[k])). It takes its temporaries from tw. The tower computes every
// channel of any gate so given, with no chain rule written by hand: SoftmaxJets and
// LogisticJets are the closed forms' two gates, and GateChannels the oracle for any other.
type GateJets[T gatejet.Float] func(z []*Jet[T], l []T, tw *Tower[T])

// SoftmaxJets is the softmax gate ζ = softmax(invTau·l), computed with the maximum logit
// subtracted, a shared denominator and a single reciprocal jet. A NaN logit never becomes the
// maximum, but then v − mx is NaN and so is the denominator; a row of all −Inf logits has
// mx = −Inf and v − mx = NaN.
func SoftmaxJets[T gatejet.Float](invTau float64) GateJets[T] {
	return func(z []*Jet[T], l []T, tw *Tower[T]) {
		mx := T(math.Inf(-1))
		for _, v := range l {
			if v > mx {
				mx = v
			}
		}
		s := T(invTau)
		x, den := tw.Jet(), tw.Jet()
		for k, v := range l {
			x.SetVar(k, v-mx) // l_k − max l, as a jet in l_k
			x.Scale(x, s)
			den.Add(den, z[k].Exp(x))
		}
		r := tw.Jet().Recip(den)
		for _, g := range z {
			g.Mul(g, r)
		}
	}
}

// LogisticJets is the per-atom logistic gate ζ_k = σ(alpha[k]·l_k + beta[k]) (alpha and beta
// of length K, read when the gate runs).
func LogisticJets[T gatejet.Float](alpha, beta []float64) GateJets[T] {
	return func(z []*Jet[T], l []T, tw *Tower[T]) {
		x := tw.Jet()
		for k, v := range l {
			x.SetVar(k, v)
			x.Scale(x, T(alpha[k]))
			x.V += T(beta[k])
			z[k].Logistic(x)
		}
	}
}

// progContract writes the channels of ẑ_c = Σ_k ζ_k·dec[k][c] for constant decoded values:
// each output entry is the sum over k, in order, of the gate jet's entry times dec[k][c],
// exactly what accumulating the column jets ẑ_c.AddScaled(ẑ_c, dec[k][c], ζ_k) gives. The
// second channel is computed for a ≤ b and mirrored.
func (pr *Program[T]) progContract(value, first, second, dec []T) {
	K, P := pr.k, pr.p
	if value != nil {
		o := value[:P]
		clear(o)
		for k, g := range pr.gates {
			progAxpy(o, g.V, dec[k*P:k*P+P])
		}
	}
	if first != nil {
		for a := 0; a < K; a++ {
			o := first[a*P : a*P+P]
			clear(o)
			for k, g := range pr.gates {
				progAxpy(o, g.G[a], dec[k*P:k*P+P])
			}
		}
	}
	if second != nil {
		for a := 0; a < K; a++ {
			for b := a; b < K; b++ {
				o := second[(a*K+b)*P : (a*K+b)*P+P]
				clear(o)
				for k, g := range pr.gates {
					progAxpy(o, g.H[a*K+b], dec[k*P:k*P+P])
				}
			}
			for b := 0; b < a; b++ {
				copy(second[(a*K+b)*P:(a*K+b)*P+P], second[(b*K+a)*P:(b*K+a)*P+P])
			}
		}
	}
}

// progAxpy sets o[c] += h·d[c].
func progAxpy[T gatejet.Float](o []T, h T, d []T) {
	d = d[:len(o)]
	for c := range o {
		o[c] += h * d[c]
	}
}

// progDecode fills pr.dec[k][c] = Σ_b Φ_b(t_k)·B[b][c], accumulated in T.
func (pr *Program[T]) progDecode(latent []T) {
	K, P, d := pr.k, pr.p, pr.d
	for k := 0; k < K; k++ {
		for i := range pr.t {
			pr.t[i] = float64(latent[k*d+i])
		}
		pr.basis.Eval(pr.t, pr.phi, nil, nil)
		o := pr.dec[k*P : k*P+P]
		clear(o)
		for b, f := range pr.phi {
			bf := pr.decoder[b*P : b*P+P]
			bf = bf[:len(o)]
			fb := T(f)
			for c := range o {
				o[c] += bf[c] * fb
			}
		}
	}
}

// progRowLatent evaluates a row whose primaries include the latent coordinates, entirely with
// jets: Φ_b(t_k) enters as a jet over t_k's slots (its derivatives come from the basis), the
// decoded value as the jet Σ_b B[b][c]·Φ_b(t_k), and ẑ_c = Σ_k ζ_k·decoded[k][c] by Mul and Add.
func (pr *Program[T]) progRowLatent(value, first, second, latent []T) {
	K, P, d, m := pr.k, pr.p, pr.d, pr.m
	for _, o := range pr.outs {
		o.SetConst(0)
	}
	for k := 0; k < K; k++ {
		for i := range pr.t {
			pr.t[i] = float64(latent[k*d+i])
		}
		pr.basis.Eval(pr.t, pr.phi, pr.dphi, pr.d2phi)
		base := K + k*d // the slot of t_k's first coordinate
		for b, J := range pr.phis {
			J.SetConst(T(pr.phi[b]))
			for i := 0; i < d; i++ {
				J.G[base+i] = T(pr.dphi[b*d+i])
				for j := i; j < d; j++ {
					h := T(pr.d2phi[(b*d+i)*d+j])
					J.H[(base+i)*m+base+j] = h
					J.H[(base+j)*m+base+i] = h
				}
			}
		}
		g := pr.gates[k]
		for c, o := range pr.outs {
			dj := pr.dj.SetConst(0)
			for b, J := range pr.phis {
				dj.AddScaled(dj, pr.decoder[b*P+c], J)
			}
			o.Add(o, pr.prod.Mul(g, dj))
		}
	}
	for c, o := range pr.outs {
		if value != nil {
			value[c] = o.V
		}
		if first != nil {
			for a, v := range o.G {
				first[a*P+c] = v
			}
		}
		if second != nil {
			for ab, v := range o.H {
				second[ab*P+c] = v
			}
		}
	}
}

// TowerChannels is the oracle for the softmax-gate closed forms: it writes, for a batch of
// sh.N rows with gate ζ = softmax(invTau·l), the value channel value [N,P], the first channel
// first [N,K,P] and the second channel second [N,K,K,P] of ẑ_c = Σ_k ζ_k·decoded[k][c], from
// logits [N,K] and decoded [N,K,P], by order-2 jet arithmetic (O(K³·P) per row). Any output
// may be nil to skip it; an output that overlaps an input or another output is refused
// (ErrParam). The jet arithmetic is done in T:
// a float32 tower is a float32 computation, where the closed forms compute in float64 and
// round once. Rows are spread over the cores; each row is computed by one goroutine with the
// same code, so the result does not depend on the number of cores.
//
// Errors: ErrShape unless N ≥ 0, K ≥ 1, P ≥ 1 with sizes that fit in an int; ErrSize for a
// buffer of the wrong length, or for a row program's workspace (see NewProgram) beyond
// gatejet.MaxBytes, checked before it is allocated; ErrTemperature unless
// 0 < invTau ≤ gatejet.MaxInvTau (≤ 1e18 for float32, whose jets hold invTau²). Non-finite
// data propagate within their row (see Program).
func TowerChannels[T gatejet.Float](value, first, second []T, logits, decoded []T, sh Shape, invTau float64) error {
	const op = "tower.TowerChannels"
	if err := towerCheckBatch(op, value, first, second, logits, decoded, sh); err != nil {
		return err
	}
	if err := check.InvTau(op, invTau); err != nil {
		return err
	}
	return towerRun(op, value, first, second, logits, decoded, sh, ProgramSpec{K: sh.K, P: sh.P, Gate: Softmax(invTau)})
}

// TowerLogisticChannels is the oracle for the logistic-gate closed forms: as TowerChannels,
// with the per-atom gate ζ_k = σ(alpha[k]·l_k + beta[k]); alpha and beta have length K
// (ErrParam otherwise) and must be finite (ErrNonFinite otherwise), with |alpha[k]| ≤
// gatejet.MaxLogisticAlpha, 1e18 for float32, and for float32 |beta[k]| within float32's
// range (ErrParam otherwise).
func TowerLogisticChannels[T gatejet.Float](value, first, second []T, logits, decoded []T, sh Shape, alpha, beta []float64) error {
	const op = "tower.TowerLogisticChannels"
	if err := towerCheckBatch(op, value, first, second, logits, decoded, sh); err != nil {
		return err
	}
	if err := check.LogisticGate(op, sh.K, alpha, beta); err != nil {
		return err
	}
	if err := check.GateDisjoint(op, alpha, beta, check.OptOut("value", value, 0), check.OptOut("first", first, 0), check.OptOut("second", second, 0)); err != nil {
		return err
	}
	return towerRun(op, value, first, second, logits, decoded, sh, ProgramSpec{K: sh.K, P: sh.P, Gate: Logistic(alpha, beta)})
}

// GateChannels is the oracle for any gate given as its jets: as TowerChannels, with the gate
// ζ(l) computed by gate (nil: ErrParam), whose parameters are the caller's to check. The
// workspace checked before it is allocated is K + 3 jets; the jets gate takes from the tower
// beyond three are the caller's to bound.
func GateChannels[T gatejet.Float](value, first, second []T, logits, decoded []T, sh Shape, gate GateJets[T]) error {
	const op = "tower.GateChannels"
	if err := towerCheckBatch(op, value, first, second, logits, decoded, sh); err != nil {
		return err
	}
	if gate == nil {
		return check.Errorf(gatejet.ErrParam, op, "gate", "want a gate, got nil")
	}
	var g Gate
	switch f := any(gate).(type) {
	case GateJets[float64]:
		g.f64 = f
	case GateJets[float32]:
		g.f32 = f
	}
	return towerRun(op, value, first, second, logits, decoded, sh, ProgramSpec{K: sh.K, P: sh.P, Gate: g})
}

// towerRun checks that no output overlaps another argument and, for a batch with rows, the
// size of a row program's workspace, then runs towerBatch.
func towerRun[T gatejet.Float](op string, value, first, second, logits, decoded []T, sh Shape, spec ProgramSpec) error {
	if err := check.Disjoint(op, check.OptOut("value", value, 0), check.OptOut("first", first, 0), check.OptOut("second", second, 0),
		check.In("logits", logits, 0), check.In("decoded", decoded, 0)); err != nil {
		return err
	}
	var zero T
	size := int(unsafe.Sizeof(zero))
	if err := checkGate(op, spec.Gate, spec.K, size); err != nil {
		return err
	}
	if sh.N == 0 {
		return nil
	}
	pl, err := progCheckSpec(op, spec, size)
	if err != nil {
		return err
	}
	towerBatch(value, first, second, logits, decoded, sh, spec, pl)
	return nil
}

// towerProgPool holds idle *Program[T] workspaces of any element type.
var towerProgPool sync.Pool

// towerBatch runs the decoded-mode program over every row, spreading rows over the cores.
// Every row is computed by one goroutine with the same code, so the result does not depend on
// the number of cores.
func towerBatch[T gatejet.Float](value, first, second, logits, decoded []T, sh Shape, spec ProgramSpec, pl progPlan) {
	K, P := sh.K, sh.P
	rowWork, ok := check.Elems(K, K, K, P)
	if !ok {
		rowWork = math.MaxInt
	}
	par.For(sh.N, rowWork, func(lo, hi int) {
		pr, _ := towerProgPool.Get().(*Program[T])
		if pr == nil {
			pr = new(Program[T])
		}
		pr.progConfigure(spec, pl)
		defer towerProgPool.Put(pr)
		for n := lo; n < hi; n++ {
			var v, f, s []T
			if value != nil {
				v = value[n*P : n*P+P]
			}
			if first != nil {
				f = first[n*K*P : (n+1)*K*P]
			}
			if second != nil {
				s = second[n*K*K*P : (n+1)*K*K*P]
			}
			pr.progRowDecoded(v, f, s, logits[n*K:n*K+K], decoded[n*K*P:(n+1)*K*P])
		}
	})
}

// towerCheckBatch validates a batch's shape and buffer lengths (outputs may be nil) with the
// same rules, and errors, as the closed forms.
func towerCheckBatch[T gatejet.Float](op string, value, first, second, logits, decoded []T, sh Shape) error {
	if err := sh.Check(op); err != nil {
		return err
	}
	N, K, P := sh.N, sh.K, sh.P
	return check.Lengths(op, N, K, P, check.OptOut("value", value, N*P), check.OptOut("first", first, N*K*P), check.OptOut("second", second, N*K*K*P),
		check.In("logits", logits, N*K), check.In("decoded", decoded, N*K*P))
}

package tower

import (
	"fmt"
	"math"
	"unsafe"

	"github.com/gatejet/gatejet"
	"github.com/gatejet/gatejet/internal/check"
)

// This file holds the order-2 jet ("Taylor tower") over a run-time number m of primaries. It is
// the general, slow and obviously-correct way to get first and second derivatives: every
// quantity carries its value, its gradient and its Hessian with respect to all m primaries,
// and every operation propagates all three by the truncated chain and product rules. The
// closed forms of package softmaxjet are checked against it.
//
// All arithmetic is done in the element type T, in a fixed order, so that a float32 tower is
// the float32 algorithm and a float64 tower the float64 one.

// Jet is an order-2 jet of a scalar with respect to m primaries x_0 … x_{m-1}:
// V = f, G[i] = ∂f/∂x_i (length m) and H[i*m+j] = ∂²f/∂x_i∂x_j (length m·m, row-major,
// symmetric).
//
// The operations are methods that overwrite their receiver with the result and return it, as
// in z.Mul(a, b); the receiver may be one of the operands. All jets of one expression must
// have the same m; an operation on jets of different widths panics, as a mismatched slice
// index would. H is treated as symmetric: operations read the upper triangle (i ≤ j) of their
// operands' Hessians and write both triangles of the result, which is therefore exactly
// symmetric.
type Jet[T gatejet.Float] struct {
	V T   // value
	G []T // gradient, length m
	H []T // Hessian, length m·m, row-major
}

// NewJet returns a zero jet (V = 0, G = 0, H = 0) over m primaries. It panics if m < 0, and,
// before allocating, if the jet's m + m² elements would exceed gatejet.MaxBytes (the panic
// value is then an ErrSize *gatejet.Error): an allocation that large would end the process.
func NewJet[T gatejet.Float](m int) *Jet[T] {
	towerCheckWidth[T]("tower.NewJet", m)
	buf := make([]T, m+m*m)
	return &Jet[T]{G: buf[:m:m], H: buf[m:]}
}

// Constant returns the jet of the constant c over m primaries: V = c, G = 0, H = 0.
// It panics as NewJet does.
func Constant[T gatejet.Float](m int, c T) *Jet[T] {
	return NewJet[T](m).SetConst(c)
}

// Variable returns the jet of primary i at value v over m primaries: V = v, G = e_i, H = 0.
// It panics unless 0 ≤ i < m, and as NewJet does.
func Variable[T gatejet.Float](m, i int, v T) *Jet[T] {
	return NewJet[T](m).SetVar(i, v)
}

// M returns the number of primaries of z.
func (z *Jet[T]) M() int { return len(z.G) }

// SetConst sets z to the constant c and returns z.
func (z *Jet[T]) SetConst(c T) *Jet[T] {
	towerWidth1(z)
	z.V = c
	clear(z.G)
	clear(z.H)
	return z
}

// SetVar sets z to primary i at value v (G = e_i, H = 0) and returns z. It panics unless
// 0 ≤ i < m.
func (z *Jet[T]) SetVar(i int, v T) *Jet[T] {
	m := towerWidth1(z)
	if i < 0 || i >= m {
		panic(fmt.Sprintf("tower: Jet.SetVar: primary %d out of range [0, %d)", i, m))
	}
	z.SetConst(v)
	z.G[i] = 1
	return z
}

// Set copies a into z and returns z.
func (z *Jet[T]) Set(a *Jet[T]) *Jet[T] {
	towerWidth2(z, a)
	z.V = a.V
	copy(z.G, a.G)
	copy(z.H, a.H)
	return z
}

// Add sets z = a + b and returns z.
func (z *Jet[T]) Add(a, b *Jet[T]) *Jet[T] {
	towerWidth3(z, a, b)
	z.V = a.V + b.V
	towerAxpby(z.G, a.G, 1, b.G)
	towerAxpby(z.H, a.H, 1, b.H)
	return z
}

// Sub sets z = a − b and returns z.
func (z *Jet[T]) Sub(a, b *Jet[T]) *Jet[T] {
	towerWidth3(z, a, b)
	z.V = a.V - b.V
	zg, ag, bg := z.G, a.G[:len(z.G)], b.G[:len(z.G)]
	for i := range zg {
		zg[i] = ag[i] - bg[i]
	}
	zh, ah, bh := z.H, a.H[:len(z.H)], b.H[:len(z.H)]
	for i := range zh {
		zh[i] = ah[i] - bh[i]
	}
	return z
}

// Scale sets z = s·a and returns z.
func (z *Jet[T]) Scale(a *Jet[T], s T) *Jet[T] {
	towerWidth2(z, a)
	z.V = a.V * s
	zg, ag := z.G, a.G[:len(z.G)]
	for i := range zg {
		zg[i] = ag[i] * s
	}
	zh, ah := z.H, a.H[:len(z.H)]
	for i := range zh {
		zh[i] = ah[i] * s
	}
	return z
}

// AddScaled sets z = a + s·b and returns z.
func (z *Jet[T]) AddScaled(a *Jet[T], s T, b *Jet[T]) *Jet[T] {
	towerWidth3(z, a, b)
	z.V = a.V + s*b.V
	towerAxpby(z.G, a.G, s, b.G)
	towerAxpby(z.H, a.H, s, b.H)
	return z
}

// towerAxpby sets z[i] = x[i] + s·y[i].
func towerAxpby[T gatejet.Float](z, x []T, s T, y []T) {
	x, y = x[:len(z)], y[:len(z)]
	for i := range z {
		z[i] = x[i] + s*y[i]
	}
}

// Mul sets z = a·b by the order-2 (truncated) Leibniz rule and returns z:
//
//	V = a·b,  G = a·G_b + G_a·b,  H = a·H_b + G_a G_bᵀ + G_b G_aᵀ + H_a·b.
func (z *Jet[T]) Mul(a, b *Jet[T]) *Jet[T] {
	m := towerWidth3(z, a, b)
	av, bv := a.V, b.V
	ag, bg := a.G[:m], b.G[:m]
	// Hessian first, then gradient, then value: each output entry is written after the
	// operand entries it needs have been read, so z may alias a or b.
	for i := 0; i < m; i++ {
		agi, bgi := ag[i], bg[i]
		zh := z.H[i*m+i : i*m+m]
		ah := a.H[i*m+i : i*m+m]
		bh := b.H[i*m+i : i*m+m]
		agj, bgj := ag[i:], bg[i:]
		ah, bh, agj, bgj = ah[:len(zh)], bh[:len(zh)], agj[:len(zh)], bgj[:len(zh)]
		for j := range zh {
			zh[j] = av*bh[j] + agi*bgj[j] + agj[j]*bgi + ah[j]*bv
		}
	}
	towerMirror(z.H, m)
	zg := z.G[:m]
	for i := range zg {
		zg[i] = av*bg[i] + ag[i]*bv
	}
	z.V = av * bv
	return z
}

// Compose sets z = f∘a by the order-2 chain rule (Faà di Bruno) and returns z, where
// f, f1, f2 are f(a.V), f'(a.V), f”(a.V):
//
//	V = f,  G = f1·G_a,  H = f1·H_a + f2·G_a G_aᵀ.
func (z *Jet[T]) Compose(a *Jet[T], f, f1, f2 T) *Jet[T] {
	m := towerWidth2(z, a)
	ag := a.G[:m]
	for i := 0; i < m; i++ {
		gi := f2 * ag[i]
		zh := z.H[i*m+i : i*m+m]
		ah := a.H[i*m+i : i*m+m]
		agj := ag[i:]
		ah, agj = ah[:len(zh)], agj[:len(zh)]
		for j := range zh {
			zh[j] = f1*ah[j] + gi*agj[j]
		}
	}
	towerMirror(z.H, m)
	zg := z.G[:m]
	for i := range zg {
		zg[i] = f1 * ag[i]
	}
	z.V = f
	return z
}

// Exp sets z = exp(a) and returns z (the stack exp, exp, exp at a.V).
func (z *Jet[T]) Exp(a *Jet[T]) *Jet[T] {
	e := T(math.Exp(float64(a.V)))
	return z.Compose(a, e, e, e)
}

// Recip sets z = 1/a and returns z (the stack 1/u, −1/u², 2/u³ at u = a.V).
func (z *Jet[T]) Recip(a *Jet[T]) *Jet[T] {
	u := a.V
	u2 := u * u
	u3 := u2 * u
	return z.Compose(a, 1/u, -1/u2, 2/u3)
}

// Logistic sets z = σ(a) = 1/(1+exp(−a)) and returns z (the stack σ, σ' = σ(1−σ),
// σ” = σ'(1−2σ) at a.V, with 1−σ computed as σ(−a.V) so that it does not cancel).
func (z *Jet[T]) Logistic(a *Jet[T]) *Jet[T] {
	s0, s1, s2 := towerLogistic(float64(a.V))
	return z.Compose(a, T(s0), T(s1), T(s2))
}

// towerLogistic returns σ(x), σ'(x) and σ”(x).
func towerLogistic(x float64) (s0, s1, s2 float64) {
	var q float64 // q = σ(−x) = 1 − σ(x)
	if x >= 0 {
		e := math.Exp(-x)
		s0, q = 1/(1+e), e/(1+e)
	} else {
		e := math.Exp(x) // NaN stays NaN
		s0, q = e/(1+e), 1/(1+e)
	}
	s1 = s0 * q
	s2 = s1 * (q - s0)
	return s0, s1, s2
}

// towerMirror copies the upper triangle of the m×m matrix h onto its lower triangle.
func towerMirror[T gatejet.Float](h []T, m int) {
	for i := 1; i < m; i++ {
		row := h[i*m : i*m+i]
		for j := range row {
			row[j] = h[j*m+i]
		}
	}
}

// towerCheckWidth panics unless m ≥ 0 and a jet's m + m² elements of T are within
// gatejet.MaxBytes.
func towerCheckWidth[T gatejet.Float](op string, m int) {
	if m < 0 {
		panic(fmt.Sprintf("tower: jet width m = %d is negative", m))
	}
	var zero T
	if _, err := check.Alloc(op, "m", int(unsafe.Sizeof(zero)), m, m+1); err != nil {
		panic(err)
	}
}

// towerWidth1 returns the width of z after checking that its slices are consistent.
func towerWidth1[T gatejet.Float](z *Jet[T]) int {
	m := len(z.G)
	if len(z.H) != m*m {
		panic(fmt.Sprintf("tower: malformed jet: len(G) = %d but len(H) = %d, want %d", m, len(z.H), m*m))
	}
	return m
}

func towerWidth2[T gatejet.Float](z, a *Jet[T]) int {
	m := towerWidth1(z)
	if len(a.G) != m || len(a.H) != m*m {
		panic(fmt.Sprintf("tower: jet width mismatch: %d and %d (len(H) = %d)", m, len(a.G), len(a.H)))
	}
	return m
}

func towerWidth3[T gatejet.Float](z, a, b *Jet[T]) int {
	m := towerWidth2(z, a)
	towerWidth2(z, b)
	return m
}

// Tower is an arena of jets over a fixed number m of primaries. It hands out jets and takes
// them all back at once (Reset) or back to a mark (ReleaseTo), keeping their memory, so that
// evaluating the same expression again, row after row, allocates nothing once the arena has
// grown to the size the expression needs.
//
// The jets a Tower hands out stay valid until they are released; after that the Tower may hand
// the same memory out again. A Tower is not safe for concurrent use; use one per goroutine.
type Tower[T gatejet.Float] struct {
	m     int
	slots []*towerSlot[T]
	used  int
}

type towerSlot[T gatejet.Float] struct {
	j   Jet[T]
	buf []T
}

// NewTower returns an empty arena of jets over m primaries. It panics, as NewJet does, if
// m < 0 or if one jet's m + m² elements would exceed gatejet.MaxBytes; the number of jets
// handed out is the caller's to bound.
func NewTower[T gatejet.Float](m int) *Tower[T] {
	towerCheckWidth[T]("tower.NewTower", m)
	return &Tower[T]{m: m}
}

// M returns the number of primaries of the jets tw hands out.
func (tw *Tower[T]) M() int { return tw.m }

// Len returns the number of jets handed out and not yet released.
func (tw *Tower[T]) Len() int { return tw.used }

// Reset releases every jet handed out and sets the width of the jets handed out from now on
// to m. Memory is kept and reused. It panics as NewTower does.
func (tw *Tower[T]) Reset(m int) {
	towerCheckWidth[T]("tower.Tower.Reset", m)
	tw.m = m
	tw.used = 0
}

// ReleaseTo releases the jets handed out after the first n (a stack discipline: n is a value
// Len returned earlier). It does nothing if n ≥ Len() and releases everything if n ≤ 0.
func (tw *Tower[T]) ReleaseTo(n int) {
	if n < tw.used {
		tw.used = max(n, 0)
	}
}

// Jet hands out a zero jet (V = 0, G = 0, H = 0) of width M().
func (tw *Tower[T]) Jet() *Jet[T] {
	if tw.used == len(tw.slots) {
		tw.slots = append(tw.slots, new(towerSlot[T]))
	}
	s := tw.slots[tw.used]
	tw.used++
	m := tw.m
	n := m + m*m
	if cap(s.buf) < n {
		s.buf = make([]T, n)
	}
	s.buf = s.buf[:n]
	clear(s.buf)
	s.j = Jet[T]{G: s.buf[:m:m], H: s.buf[m:n:n]}
	return &s.j
}

// Constant hands out the jet of the constant c.
func (tw *Tower[T]) Constant(c T) *Jet[T] {
	z := tw.Jet()
	z.V = c
	return z
}

// Variable hands out the jet of primary i at value v. It panics unless 0 ≤ i < M().
func (tw *Tower[T]) Variable(i int, v T) *Jet[T] {
	return tw.Jet().SetVar(i, v)
}

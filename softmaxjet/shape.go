package softmaxjet

import "github.com/gatejet/gatejet/internal/check"

// Shape is a batch of N rows, each gating K atoms whose decoded values have P output columns.
// N = 0 is a valid (empty) batch; K and P must be at least 1.
//
// Layouts, row-major with rows stacked:
//
//	logits  [N,K]     decoded [N,K,P]   value [N,P]
//	first   [N,K,P]   second  [N,K,K,P] hvp   [N,K,P]   gaussNewton [N,K,K]
//
// The length methods multiply without checking: they are meaningful for a shape that passes
// Check (the kernels check it first).
type Shape struct{ N, K, P int }

// Check reports an ErrShape error unless N ≥ 0, K ≥ 1 and P ≥ 1, and an ErrSize error unless
// every buffer size the shape implies (N·K·K·P at most) fits in an int.
func (sh Shape) Check(op string) error { return check.BatchShape(op, sh.N, sh.K, sh.P) }

// LogitsLen is the length of logits (and of a direction v): N·K.
func (sh Shape) LogitsLen() int { return sh.N * sh.K }

// DecodedLen is the length of decoded values: N·K·P.
func (sh Shape) DecodedLen() int { return sh.N * sh.K * sh.P }

// ValueLen is the length of the value channel: N·P.
func (sh Shape) ValueLen() int { return sh.N * sh.P }

// FirstLen is the length of the first channel and of a Hessian-vector product: N·K·P.
func (sh Shape) FirstLen() int { return sh.N * sh.K * sh.P }

// SecondLen is the length of the second channel: N·K·K·P.
func (sh Shape) SecondLen() int { return sh.N * sh.K * sh.K * sh.P }

// GNLen is the length of the Gauss-Newton slabs: N·K·K.
func (sh Shape) GNLen() int { return sh.N * sh.K * sh.K }

// validate checks a kernel call: the shape and every argument's length, the gate's parameters
// (g.check), then that no output overlaps an input, another output or a vector parameter of the
// gate: the kernels read their inputs while they write, row by row and from several
// goroutines, so an overlap would give a wrong result, not an in-place one.
func validate(op string, sh Shape, g *gate, args ...check.Arg) error {
	if err := sh.Check(op); err != nil {
		return err
	}
	if err := check.Lengths(op, sh.N, sh.K, sh.P, args...); err != nil {
		return err
	}
	if err := g.check(op, sh.K, g.s, g.vecs[0], g.vecs[1]); err != nil {
		return err
	}
	if err := check.Disjoint(op, args...); err != nil {
		return err
	}
	return check.ParamsDisjoint(op, g.vecNames[:], g.vecs[:], args...)
}

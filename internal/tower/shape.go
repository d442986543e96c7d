package tower

import (
	"math"

	"github.com/gatejet/gatejet/internal/check"
)

// Shape is a batch of N rows, each gating K atoms whose decoded values have P output columns,
// with softmaxjet.Shape's fields and layouts (convert one with tower.Shape(sh)):
//
//	logits [N,K]   decoded [N,K,P]   value [N,P]   first [N,K,P]   second [N,K,K,P]
//
// N = 0 is a valid (empty) batch; K and P must be at least 1.
type Shape struct{ N, K, P int }

// Check reports an ErrShape error unless N ≥ 0, K ≥ 1, P ≥ 1 and N·K·K·P fits in an int.
func (sh Shape) Check(op string) error { return check.BatchShape(op, sh.N, sh.K, sh.P) }

// addInts returns the sum of non-negative sizes, and false if it overflows int.
func addInts(xs ...int) (int, bool) {
	s := 0
	for _, x := range xs {
		if x < 0 || s > math.MaxInt-x {
			return 0, false
		}
		s += x
	}
	return s, true
}

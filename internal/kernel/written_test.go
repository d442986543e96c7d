package kernel

import (
	"math"
	"math/rand"
	"testing"

	"github.com/gatejet/gatejet"
)

// TestCPUWritesEveryOutput: every kernel's CPU function writes every element of every output
// it is given, at many sizes (odd and power-of-two K and P, vector tails, rows past the
// unrolled loops) and with each combination of skippable outputs left nil. An op's Do
// allocates its output without zeroing it (ops.newOutput), so an element left unwritten would
// be garbage; each output starts filled with a NaN whose payload no computation produces.
func TestCPUWritesEveryOutput(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	for _, id := range All() {
		sp := id.Spec()
		for _, ints := range writtenShapes(sp.Family) {
			for skip := uint8(0); skip < 1<<len(sp.Out); skip++ {
				if skip&^sp.Skippable != 0 || skip == 1<<len(sp.Out)-1 {
					continue // not skippable, or no output left
				}
				writesEvery(t, id, ints, skip, math.Float64frombits(0x7ff8_dead_beef_0001), rng)
				writesEvery(t, id, ints, skip, math.Float32frombits(0x7fc0_beef), rng)
			}
		}
	}
}

func writtenShapes(f Family) [][]int {
	var shapes [][]int
	switch f {
	case RowJet, CoordJet:
		for _, N := range []int{1, 5} {
			for _, K := range []int{1, 2, 3, 5, 8, 17, 33} {
				for _, P := range []int{1, 2, 3, 7, 8, 9, 33} {
					shapes = append(shapes, []int{N, K, P})
				}
			}
		}
	case Axis:
		for _, outer := range []int{1, 3, 9} {
			for _, n := range []int{1, 2, 5, 17, 65} {
				for _, inner := range []int{1, 3, 8, 33} {
					shapes = append(shapes, []int{outer, n, inner})
				}
			}
		}
	case Elementwise:
		for n := 1; n < 72; n++ {
			shapes = append(shapes, []int{n})
		}
		shapes = append(shapes, []int{4097})
	case Batch:
		for _, N := range []int{1, 3} {
			for _, K := range []int{1, 2, 3, 5, 8, 17} {
				shapes = append(shapes, []int{N, K})
			}
		}
	}
	return shapes
}

// writesEvery runs kernel id on random inputs of sizes ints (probabilities where the kernel
// reads them, positive definite matrices for the log-determinant), its outputs but those of
// skip filled with sentinel, and fails on any sentinel left.
func writesEvery[T gatejet.Float](t *testing.T, id ID, ints []int, skip uint8, sentinel T, rng *rand.Rand) {
	t.Helper()
	sp := id.Spec()
	var floats []float64
	if sp.Gate != nil {
		floats = sp.Gate.Sample(ints[1], rng.Float64, rng.NormFloat64)
	} else {
		for range sp.Floats {
			floats = append(floats, 0.7)
		}
	}
	var o Operands[T]
	for i, d := range sp.In {
		n, _ := d.Len(ints)
		o.In[i] = make([]T, n)
		for j := range o.In[i] {
			o.In[i][j] = T(0.3 * rng.NormFloat64())
		}
		switch {
		case i == 0 && sp.Family == Axis && (id == SoftmaxBackward || id == SoftmaxBackwardGrad):
			for j := range o.In[i] {
				o.In[i][j] = T(0.05 + 0.5*rng.Float64()) // y, a probability
			}
		case i == 0 && (id == LogDetPlusRidge || id == LogDetPlusRidgeGrad):
			K := ints[1]
			for j := range o.In[i] {
				o.In[i][j] = T(0.01 * rng.NormFloat64()) // I plus small off-diagonal terms
				if j%(K*K)%(K+1) == 0 {
					o.In[i][j] = 1
				}
			}
		case i == 0 && id == SoftArgminVJP:
			for j := range o.In[i] {
				o.In[i][j] = T(rng.Float64())
			}
		}
	}
	bits := func(x T) uint64 {
		if v, ok := any(x).(float64); ok {
			return math.Float64bits(v)
		}
		return uint64(math.Float32bits(float32(x)))
	}
	for i, d := range sp.Out {
		if skip&(1<<i) != 0 {
			continue
		}
		n, _ := d.Len(ints)
		o.Out[i] = make([]T, n)
		for j := range o.Out[i] {
			o.Out[i][j] = sentinel
		}
	}
	if err := Run("TestCPUWritesEveryOutput", id, &o, ints, floats); err != nil {
		t.Fatalf("%s %v: %v", sp.Name, ints, err)
	}
	for i := range sp.Out {
		for j, x := range o.Out[i] {
			if bits(x) == bits(sentinel) {
				t.Fatalf("%s %T ints %v (skipped outputs %b): output %d element %d of %d not written",
					sp.Name, x, ints, skip, i, j, len(o.Out[i]))
			}
		}
	}
}

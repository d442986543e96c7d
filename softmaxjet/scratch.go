package softmaxjet

import "sync"

// scratch holds the float64 per-row workspace of one goroutine. Buffers come from a pool so
// that steady-state calls allocate nothing.
type scratch struct{ buf []float64 }

var scratchPool = sync.Pool{New: func() any { return new(scratch) }}

func getScratch(n int) *scratch {
	s := scratchPool.Get().(*scratch)
	if cap(s.buf) < n {
		s.buf = make([]float64, n)
	}
	s.buf = s.buf[:n]
	return s
}

func (s *scratch) release() { scratchPool.Put(s) }

// carve splits the front of *b into a slice of length n.
func carve(b *[]float64, n int) []float64 {
	s := (*b)[:n:n]
	*b = (*b)[n:]
	return s
}

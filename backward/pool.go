package backward

import "sync"

// scratchPool holds float64 accumulator vectors, one per running chunk of work, so that
// steady-state calls allocate nothing.
var scratchPool = sync.Pool{New: func() any { return new([]float64) }}

// getScratch returns a pooled vector of length n (its contents are undefined).
func getScratch(n int) *[]float64 {
	p := scratchPool.Get().(*[]float64)
	if cap(*p) < n {
		*p = make([]float64, n)
	}
	*p = (*p)[:n]
	return p
}

func putScratch(p *[]float64) { scratchPool.Put(p) }

// Jobs carry a kernel's arguments to par.For through a method value bound once, when the job
// is made: a closure built per call would escape to the heap and cost an allocation per call.
// Jobs of float32 and float64 are pooled; those of other types defined on them are made afresh.
var (
	axisPool32, axisPool64 sync.Pool
	actPool32, actPool64   sync.Pool
)

// poolFor returns the pool of a float32 or a float64 job, nil for other element types.
func poolFor[T Float](p32, p64 *sync.Pool) *sync.Pool {
	switch any((*T)(nil)).(type) {
	case *float32:
		return p32
	case *float64:
		return p64
	}
	return nil
}

func getAxisJob[T Float]() *axisJob[T] {
	if p := poolFor[T](&axisPool32, &axisPool64); p != nil {
		if j, ok := p.Get().(*axisJob[T]); ok {
			return j
		}
	}
	j := new(axisJob[T])
	j.run = j.do
	return j
}

func putAxisJob[T Float](j *axisJob[T]) {
	run := j.run
	*j = axisJob[T]{run: run} // drop references to the caller's buffers
	if p := poolFor[T](&axisPool32, &axisPool64); p != nil {
		p.Put(j)
	}
}

func getActJob[T Float]() *actJob[T] {
	if p := poolFor[T](&actPool32, &actPool64); p != nil {
		if j, ok := p.Get().(*actJob[T]); ok {
			return j
		}
	}
	j := new(actJob[T])
	j.run = j.do
	return j
}

func putActJob[T Float](j *actJob[T]) {
	run := j.run
	*j = actJob[T]{run: run}
	if p := poolFor[T](&actPool32, &actPool64); p != nil {
		p.Put(j)
	}
}

package backward

import (
	"sync"

	"github.com/gatejet/gatejet"
)

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
type jobPools struct{ f32, f64 sync.Pool }

var axisJobs, actJobs, fwdJobs jobPools

// poolFor returns the pool of a float32 or a float64 job, nil for other element types.
func poolFor[T gatejet.Float](jp *jobPools) *sync.Pool {
	switch any((*T)(nil)).(type) {
	case *float32:
		return &jp.f32
	case *float64:
		return &jp.f64
	}
	return nil
}

// pooledJob is a job *J: bind sets its run to its do method (once, when it is made), reset
// drops the references to the caller's buffers (keeping run) before it goes back to its pool.
type pooledJob[J any] interface {
	*J
	bind()
	reset()
}

// getJob returns a job of type J, of element type T, from its pools or made afresh.
func getJob[T gatejet.Float, J any, P pooledJob[J]](jp *jobPools) P {
	if p := poolFor[T](jp); p != nil {
		if j, ok := p.Get().(P); ok {
			return j
		}
	}
	j := P(new(J))
	j.bind()
	return j
}

// putJob resets j and returns it to its pools.
func putJob[T gatejet.Float, P interface{ reset() }](jp *jobPools, j P) {
	j.reset()
	if p := poolFor[T](jp); p != nil {
		p.Put(j)
	}
}

func (j *axisJob[T]) bind()  { j.run = j.do }
func (j *axisJob[T]) reset() { *j = axisJob[T]{run: j.run} }
func (j *actJob[T]) bind()   { j.run = j.do }
func (j *actJob[T]) reset()  { *j = actJob[T]{run: j.run} }
func (j *fwdJob[T]) bind()   { j.run = j.do }
func (j *fwdJob[T]) reset()  { *j = fwdJob[T]{run: j.run} }

package cudaops

import (
	"sync"

	"github.com/gatejet/gatejet"
	"github.com/gatejet/gatejet/internal/check"
)

// pool keeps freed buffers by size class for reuse, so that a backend's steady-state calls
// allocate nothing: each buffer of a call comes from it and goes back to it. Classes are
// powers of two from minClass bytes, so a buffer serves any request of its class; at most
// maxIdle bytes stay idle in the pool, and a buffer returned beyond that is released. It is
// safe for concurrent use. B is the buffer handle (a device pointer, a pinned host pointer).
type pool[B any] struct {
	alloc   func(bytes int64) (B, error)
	release func(B) error
	maxIdle int64

	mu      sync.Mutex
	free    map[int64][]B
	idle    int64
	allocs  int // buffers allocated so far
	reuses  int // requests served from the pool
	dropped int // buffers released because the pool was full
}

// minClass and maxClass are the smallest and largest size classes: past 2⁶² the next power
// of two overflows int64.
const (
	minClass = 256
	maxClass = 1 << 62
)

// class is the size class of a request of n ≤ maxClass bytes: the next power of two, at least
// minClass.
func class(n int64) int64 {
	c := int64(minClass)
	for c < n {
		c <<= 1
	}
	return c
}

// get returns a buffer of at least n bytes and its class, to be given back with put; more
// than maxClass bytes is an ErrSize error.
func (p *pool[B]) get(n int64) (B, int64, error) {
	if n > maxClass {
		var none B
		return none, 0, check.Errorf(gatejet.ErrSize, "cudaops.pool", "bytes", "%d bytes: more than the largest buffer class, %d", n, int64(maxClass))
	}
	c := class(n)
	p.mu.Lock()
	if bs := p.free[c]; len(bs) > 0 {
		b := bs[len(bs)-1]
		p.free[c] = bs[:len(bs)-1]
		p.idle -= c
		p.reuses++
		p.mu.Unlock()
		return b, c, nil
	}
	p.allocs++
	p.mu.Unlock()
	b, err := p.alloc(c)
	if err != nil {
		p.mu.Lock()
		p.allocs--
		p.mu.Unlock()
	}
	return b, c, err
}

// put gives back a buffer of class c; beyond maxIdle idle bytes it is released at once.
func (p *pool[B]) put(b B, c int64) error {
	p.mu.Lock()
	if p.idle+c > p.maxIdle {
		p.dropped++
		p.mu.Unlock()
		return p.release(b)
	}
	if p.free == nil {
		p.free = map[int64][]B{}
	}
	p.free[c] = append(p.free[c], b)
	p.idle += c
	p.mu.Unlock()
	return nil
}

// drain releases every idle buffer and returns the first error.
func (p *pool[B]) drain() error {
	p.mu.Lock()
	free := p.free
	p.free, p.idle = nil, 0
	p.mu.Unlock()
	var first error
	for _, bs := range free {
		for _, b := range bs {
			if err := p.release(b); err != nil && first == nil {
				first = err
			}
		}
	}
	return first
}

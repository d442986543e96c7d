package ops

import (
	"sync"

	"gorgonia.org/tensor"

	"github.com/gatejet/gatejet"
)

// An Option configures an op when its node is built. Every constructor of this package
// takes options after its other arguments.
type Option func(*options)

type options struct {
	reuse bool
}

// ReuseOutput makes the op's Do write every result into one output buffer that the op owns,
// allocated at its first run, instead of into a new tensor each run. The gradient ops that
// gorgonia.Grad builds from the op (SymDiff) inherit the option, each with its own buffer.
//
// Why: a Gorgonia v0.9.18 TapeMachine forgets its registers on Reset, so without this option
// every run of a machine calls Do, which allocates and zeroes a new output. For the second
// channel, [n,K,K,P], that allocation costs more than the computation (see
// docs/performance.md). With ReuseOutput the run writes the same memory every time.
//
// The cost is aliasing, as with any output buffer: the op's value from one run is
// overwritten by its next run, on whichever machine that run happens. Read or copy what you
// keep (gorgonia.Read, or a copy of node.Value()) before running again. Each Do returns a
// new *tensor.Dense header over the buffer, so Gorgonia may pool the header without affecting
// the buffer. Two Do calls of one op never write the buffer at once: a Do that starts while
// another is running writes a new tensor instead. The buffer lives as long as the op.
// UsePreallocDo, which writes the machine's own register, is unchanged.
func ReuseOutput() Option { return func(o *options) { o.reuse = true } }

// applyOptions collects the options of a constructor; a nil Option is an ErrParam error.
func applyOptions(op string, opts []Option) (options, error) {
	var o options
	for _, f := range opts {
		if f == nil {
			return o, gatejet.Errorf(gatejet.ErrParam, op, "opts", "nil Option")
		}
		f(&o)
	}
	return o, nil
}

// configure sets up the seam of a newly built op from its options.
func (s *seam) configure(o options) {
	if o.reuse {
		s.out = new(outputBuf)
	}
}

// reuses reports whether the op was built with ReuseOutput.
func (s *seam) reuses() bool { return s.out != nil }

// inherited returns the options a gradient op built from this op inherits.
func (s *seam) inherited() options { return options{reuse: s.reuses()} }

// outBuf returns the op's output buffer, nil without ReuseOutput.
func (s *seam) outBuf() *outputBuf { return s.out }

// reuseHash is what an op adds to its hash for its options, so that Gorgonia, which merges
// nodes with equal ops and children, keeps a ReuseOutput node apart from a plain one.
func (s *seam) reuseHash() string {
	if s.reuses() {
		return " reuse"
	}
	return ""
}

// outputBuf is the output buffer of an op built with ReuseOutput.
type outputBuf struct {
	mu      sync.Mutex
	busy    bool // a Do is writing the buffer
	backing any  // the []float64 or []float32, allocated at the first take
}

// take returns a new tensor header over the buffer, allocating the buffer at the first call
// (an op's output dtype and shape never change), and marks it busy; ok is false if another Do
// holds it.
func (b *outputBuf) take(op string, dt tensor.Dtype, shape tensor.Shape) (t *tensor.Dense, ok bool, err error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.busy {
		return nil, false, nil
	}
	if b.backing == nil {
		d, err := newDense(op, dt, shape)
		if err != nil {
			return nil, false, err
		}
		b.backing = d.Data()
	}
	b.busy = true
	return tensor.New(tensor.WithShape(shape.Clone()...), tensor.WithBacking(b.backing)), true, nil
}

// give releases the buffer taken by take.
func (b *outputBuf) give() {
	b.mu.Lock()
	b.busy = false
	b.mu.Unlock()
}

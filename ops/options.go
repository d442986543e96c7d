package ops

import (
	"sync"
	"sync/atomic"

	"gorgonia.org/tensor"

	"github.com/gatejet/gatejet"
	"github.com/gatejet/gatejet/internal/check"
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
// every run of a machine calls Do, which allocates a new output (not zeroed: the op writes
// every element) and leaves the old one to the garbage collector. With ReuseOutput the run
// writes the same memory every time (see docs/performance.md for what each costs).
//
// The buffer belongs to the one node the op makes. Gorgonia's Do is not told which node it
// computes, so an op serving two nodes would give both the same memory, and the later run
// would overwrite the earlier's value (in one graph, or in two graphs run at once). So an op
// built with ReuseOutput makes one node: applying it again, gorgonia.ApplyOp(n.Op(), ...) in
// this graph or any other, is an ErrParam error; build each node with the constructor, which
// gives it its own op and buffer. Gorgonia's Node.Clone, Node.CloneTo and ExprGraph.Clone copy
// a node with its op without applying it, which the op cannot see: a clone of a graph with
// ReuseOutput nodes shares their buffers with the original, so build such a graph again
// rather than cloning it.
//
// The cost is aliasing, as with any output buffer: the node's value from one run is
// overwritten by its next run. Read or copy what you keep (gorgonia.Read, or a copy of
// node.Value()) before running again; a direct call of the op's Do returns the same memory.
// Each Do returns a new *tensor.Dense header over the buffer, so Gorgonia may pool the header
// without affecting the buffer. Two Do calls of one op never write the buffer at once: a Do
// that starts while another is running writes a new tensor instead. The buffer lives as long
// as the op. UsePreallocDo, which writes the machine's own register, is unchanged.
func ReuseOutput() Option { return func(o *options) { o.reuse = true } }

// applyOptions collects the options of a constructor; a nil Option is an ErrParam error.
func applyOptions(op string, opts []Option) (options, error) {
	var o options
	for _, f := range opts {
		if f == nil {
			return o, check.Errorf(gatejet.ErrParam, op, "opts", "nil Option")
		}
		f(&o)
	}
	return o, nil
}

// claim passes on the result of the op's InferShape, which gorgonia.ApplyOp calls exactly once
// each time it applies the op to make a node (gorgonia v0.9.18; nothing else in Gorgonia calls
// it). An op built with ReuseOutput serves the one node it was built for: a second
// application is an ErrParam error, since that node's value would be the same memory as the
// first's (see ReuseOutput). A failed inference claims nothing.
func (s *seam) claim(name string, shape tensor.Shape, err error) (tensor.Shape, error) {
	if err != nil || s.out == nil || s.out.applied.CompareAndSwap(false, true) {
		return shape, err
	}
	return nil, check.Errorf(gatejet.ErrParam, name, "",
		"the op was built with ReuseOutput and already makes a node: its output buffer belongs to that node, so the op cannot make another (build the other node with the constructor)")
}

// reuses reports whether the op was built with ReuseOutput.
func (s *seam) reuses() bool { return s.out != nil }

// inherited returns the options a gradient op built from this op inherits.
func (s *seam) inherited() options { return options{reuse: s.reuses()} }

// inheritedOptions are the inherited options as Options, for a gradient built by a
// constructor.
func (s *seam) inheritedOptions() []Option {
	if s.reuses() {
		return []Option{ReuseOutput()}
	}
	return nil
}

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
	applied atomic.Bool // the op has made its node (see claim)
	mu      sync.Mutex
	busy    bool // a Do is writing the buffer
	backing any  // the []float64 or []float32, allocated at the first take
}

// take returns a new tensor header over the buffer, allocating the buffer at the first call
// (an op's output dtype and shape never change), and marks it busy; ok is false if another Do
// holds it. Allocating a buffer over gatejet.MaxBytes is newDense's ErrSize error.
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

// Package backward holds the backward (vector-Jacobian product) kernels of the softmax family
// and of the common activations, together with their double-backward kernels, on plain
// row-major slices of float32 or float64. It does not import Gorgonia: package ops wraps these
// kernels as Gorgonia Ops.
//
// # Softmax and log-softmax along an axis
//
// Along one axis of a tensor, with x the input and dy the gradient of a loss with respect to
// the output, the forward maps and their backward are
//
//	softmax:      y_k = exp(x_k)/Σ_j exp(x_j),   dx_k = y_k·(dy_k − Σ_j y_j·dy_j),
//	log-softmax:  y_k = x_k − log Σ_j exp(x_j),  dx_k = dy_k − exp(y_k)·Σ_j dy_j.
//
// Softmax and LogSoftmax compute the forward maps with the max along the axis subtracted:
// softmax is finite for any finite x, log-softmax wherever x_k − max x is. SoftmaxBackward and
// LogSoftmaxBackward compute their backward, written in terms of the saved forward output y,
// not the input x. The Jacobian of softmax is diag(y) − y·yᵀ and that of log-softmax is
// I − 1·softmax(x)ᵀ with softmax(x) = exp(y): each depends on x only through y. Using y avoids recomputing the
// exponentials and the normalising sum, needs no max-subtraction for stability (y already
// carries it), and lets the forward pass free x. The backward is then one reduction along the
// axis and one elementwise pass.
//
// # Double backward
//
// Second-order methods (Hessian-vector products, gradient penalties) differentiate the
// backward pass itself. With g the upstream gradient on dx, the gradients of the scalar
// ⟨g, dx(y, dy)⟩ are, with inner products along the axis,
//
//	softmax backward:      ∂/∂dy_j = y_j·(g_j − ⟨y,g⟩)                 (SoftmaxBackward of g)
//	                       ∂/∂y_j  = g_j·(dy_j − ⟨y,dy⟩) − dy_j·⟨y,g⟩
//	log-softmax backward:  ∂/∂dy_j = g_j − Σ_k g_k·exp(y_k)
//	                       ∂/∂y_k  = −g_k·exp(y_k)·Σ_j dy_j
//
// Here y is an independent input of the backward kernel, so these are the gradients with
// respect to y as a free variable; a graph that computed y from x chains them through the
// forward's own backward.
//
// # Activations
//
// ReLU, GELU (tanh form) and SiLU act elementwise, and their backward is dx = dy·f'(x). Unlike
// softmax, these need the forward input x: SiLU is not monotone, so x cannot be recovered from
// y, and f' of GELU and SiLU is not a function of y alone. The double backward of dx = dy·f'(x)
// with upstream g is gx = g·dy·f″(x) and gdy = g·f'(x); GELUDeriv and SiLUDeriv return f' and
// f″. ReLU″ is zero almost everywhere.
//
// # Layout, speed and determinism
//
// A shape of rank 1 to 8 with an axis splits into outer·n·inner: n
// elements along the axis, inner contiguous elements after it. When the axis is the last one
// (inner = 1) each row of n is contiguous and is reduced and then written in two passes. For
// any other axis the kernels do not walk the axis with a stride per element: each outer index
// owns an [n × inner] slab whose rows are accumulated, contiguously, into a vector of inner
// sums (in blocks of at most 1024 columns), and a second contiguous pass writes the output, so
// a strided axis runs at nearly the speed of the last one. A long axis is cut into chunks of
// rows that reduce into partial sums, added up in chunk order, so that one long row, or the
// first axis of a matrix, is spread over the cores too.
//
// Sums are accumulated in float64 for float32 data too, in an order fixed by the shape alone,
// and the work is spread over the cores: results are bit-for-bit the same whatever the number
// of cores. Accumulators come from pools, so calls on float32
// and float64 data allocate nothing in the steady state. Exponentials use a table-driven exp
// within 3 ulp of math.Exp and about twice as fast.
//
// Outputs may be the same slices as inputs (in-place use); two outputs may share no memory,
// and an output may not partly overlap an input: such calls are refused with an ErrParam
// error naming the output (a few address comparisons a call).
//
// # Errors and special values
//
// Structural problems are reported as *gatejet.Error values wrapping the gatejet sentinels:
// ErrRank for a rank outside 1 to 8, ErrShape for a negative dim, ErrAxis for an axis outside
// [-rank, rank), ErrSize for an element count that overflows int and for a buffer whose
// length does not match (the error names the buffer), and ErrParam for an output that overlaps
// another buffer where that is not allowed (see above). Tensors with a zero dim are valid and
// do nothing. No input makes a kernel panic; NaN and ±Inf are data, and propagate along their
// row (elementwise for the activations).
package backward

package backward

import "github.com/gatejet/gatejet"

// SoftmaxBackward computes the gradient with respect to the input of a softmax taken along
// axis of a tensor of the given shape,
//
//	dx_k = y_k·(dy_k − Σ_j y_j·dy_j),
//
// where the sums run along the axis, y is the saved softmax output and dy the gradient with
// respect to it. All three buffers are row-major with length prod(shape); dx is overwritten,
// never accumulated into, and may be the same slice as y or dy; any other overlap of dx with
// y or dy is refused (gatejet.ErrParam, naming dx).
//
// The shape must have rank 1 to 8 and no negative dim, and axis must lie in [-rank, rank);
// a tensor with a zero dim is valid and leaves dx alone. The error, when not nil, is a
// *gatejet.Error wrapping gatejet.ErrRank, gatejet.ErrShape, gatejet.ErrAxis,
// gatejet.ErrSize (naming the buffer of the wrong length) or gatejet.ErrParam (an overlap).
// Non-finite values are not errors; they propagate along their own row.
//
// The sums are accumulated in float64 in a fixed order, so the result is bit-for-bit the same
// whatever the number of cores used.
func SoftmaxBackward[T gatejet.Float](dx, y, dy []T, shape []int, axis int) error {
	return axisBackward("backward.SoftmaxBackward", kindSoftmax, dx, y, dy, shape, axis)
}

// LogSoftmaxBackward computes the gradient with respect to the input of a log-softmax taken
// along axis of a tensor of the given shape,
//
//	dx_k = dy_k − exp(y_k)·Σ_j dy_j,
//
// where the sum runs along the axis, y is the saved log-softmax output and dy the gradient
// with respect to it. Buffers, aliasing, shape validation, errors and determinism are as for
// SoftmaxBackward.
func LogSoftmaxBackward[T gatejet.Float](dx, y, dy []T, shape []int, axis int) error {
	return axisBackward("backward.LogSoftmaxBackward", kindLogSoftmax, dx, y, dy, shape, axis)
}

// SoftmaxBackwardGrad is the double backward of SoftmaxBackward: given the upstream gradient
// g on dx, it computes the gradients of the scalar ⟨g, dx(y, dy)⟩ with respect to y and dy,
//
//	gy_j  = g_j·(dy_j − ⟨y,dy⟩) − dy_j·⟨y,g⟩,
//	gdy_j = y_j·(g_j − ⟨y,g⟩),
//
// the inner products running along the axis; gdy is SoftmaxBackward applied to g. y is treated
// as a free variable, not as a point of the simplex. Either output may be nil to skip it; a
// non-nil output must have length prod(shape). The outputs may each be the same slice as one
// of the inputs, but must share no memory with each other, nor partly overlap an input
// (gatejet.ErrParam, naming the output). Shape validation, errors and determinism are as for
// SoftmaxBackward.
func SoftmaxBackwardGrad[T gatejet.Float](gy, gdy, y, dy, g []T, shape []int, axis int) error {
	return axisBackwardGrad("backward.SoftmaxBackwardGrad", kindSoftmaxGrad, gy, gdy, y, dy, g, shape, axis)
}

// LogSoftmaxBackwardGrad is the double backward of LogSoftmaxBackward: given the upstream
// gradient g on dx, it computes the gradients of the scalar ⟨g, dx(y, dy)⟩ with respect to y
// and dy,
//
//	gy_k  = −g_k·exp(y_k)·Σ_j dy_j,
//	gdy_j = g_j − Σ_k g_k·exp(y_k),
//
// the sums running along the axis. Outputs, aliasing, shape validation, errors and
// determinism are as for SoftmaxBackwardGrad.
func LogSoftmaxBackwardGrad[T gatejet.Float](gy, gdy, y, dy, g []T, shape []int, axis int) error {
	return axisBackwardGrad("backward.LogSoftmaxBackwardGrad", kindLogSoftmaxGrad, gy, gdy, y, dy, g, shape, axis)
}

// axisBackward checks the arguments of a backward along an axis (kind kindSoftmax or
// kindLogSoftmax) and runs it.
func axisBackward[T gatejet.Float](op string, kind axisKind, dx, y, dy []T, shape []int, axis int) error {
	l, err := layoutFor(op, shape, axis, need("dx", dx), need("y", y), need("dy", dy))
	if err != nil {
		return err
	}
	if err := checkAlias(op, "dx", dx, "y", y); err != nil {
		return err
	}
	if err := checkAlias(op, "dx", dx, "dy", dy); err != nil {
		return err
	}
	if err := checkParts(op, l, kind); err != nil {
		return err
	}
	runAxis(kind, l, dx, nil, y, dy, nil)
	return nil
}

// axisBackwardGrad checks the arguments of a double backward along an axis (kind
// kindSoftmaxGrad or kindLogSoftmaxGrad) and runs it, unless both outputs are nil.
func axisBackwardGrad[T gatejet.Float](op string, kind axisKind, gy, gdy, y, dy, g []T, shape []int, axis int) error {
	l, err := layoutFor(op, shape, axis, opt("gy", gy), opt("gdy", gdy), need("y", y), need("dy", dy), need("g", g))
	if err != nil {
		return err
	}
	if err := checkOutputs(op, "gy", gy, "gdy", gdy, "y", y, dy, g); err != nil {
		return err
	}
	if err := checkParts(op, l, kind); err != nil || (gy == nil && gdy == nil) {
		return err
	}
	runAxis(kind, l, gy, gdy, y, dy, g)
	return nil
}

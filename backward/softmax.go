package backward

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
func SoftmaxBackward[T Float](dx, y, dy []T, shape []int, axis int) error {
	const op = "backward.SoftmaxBackward"
	l, err := checkAxisArgs(op, kindSoftmax, shape, axis, dx, y, dy)
	if err != nil {
		return err
	}
	runAxis(kindSoftmax, l, dx, nil, y, dy, nil)
	return nil
}

// LogSoftmaxBackward computes the gradient with respect to the input of a log-softmax taken
// along axis of a tensor of the given shape,
//
//	dx_k = dy_k − exp(y_k)·Σ_j dy_j,
//
// where the sum runs along the axis, y is the saved log-softmax output and dy the gradient
// with respect to it. Buffers, aliasing, shape validation, errors and determinism are as for
// SoftmaxBackward.
func LogSoftmaxBackward[T Float](dx, y, dy []T, shape []int, axis int) error {
	const op = "backward.LogSoftmaxBackward"
	l, err := checkAxisArgs(op, kindLogSoftmax, shape, axis, dx, y, dy)
	if err != nil {
		return err
	}
	runAxis(kindLogSoftmax, l, dx, nil, y, dy, nil)
	return nil
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
func SoftmaxBackwardGrad[T Float](gy, gdy, y, dy, g []T, shape []int, axis int) error {
	const op = "backward.SoftmaxBackwardGrad"
	l, err := checkGradArgs(op, kindSoftmaxGrad, shape, axis, gy, gdy, y, dy, g)
	if err != nil || (gy == nil && gdy == nil) {
		return err
	}
	runAxis(kindSoftmaxGrad, l, gy, gdy, y, dy, g)
	return nil
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
func LogSoftmaxBackwardGrad[T Float](gy, gdy, y, dy, g []T, shape []int, axis int) error {
	const op = "backward.LogSoftmaxBackwardGrad"
	l, err := checkGradArgs(op, kindLogSoftmaxGrad, shape, axis, gy, gdy, y, dy, g)
	if err != nil || (gy == nil && gdy == nil) {
		return err
	}
	runAxis(kindLogSoftmaxGrad, l, gy, gdy, y, dy, g)
	return nil
}

func checkAxisArgs[T Float](op string, kind axisKind, shape []int, axis int, dx, y, dy []T) (layout, error) {
	l, err := newLayout(op, shape, axis)
	if err != nil {
		return l, err
	}
	if err := checkLen(op, "dx", len(dx), l.total); err != nil {
		return l, err
	}
	if err := checkLen(op, "y", len(y), l.total); err != nil {
		return l, err
	}
	if err := checkLen(op, "dy", len(dy), l.total); err != nil {
		return l, err
	}
	if err := checkAlias(op, "dx", dx, "y", y); err != nil {
		return l, err
	}
	if err := checkAlias(op, "dx", dx, "dy", dy); err != nil {
		return l, err
	}
	return l, checkParts(op, l, kind)
}

func checkGradArgs[T Float](op string, kind axisKind, shape []int, axis int, gy, gdy, y, dy, g []T) (layout, error) {
	l, err := newLayout(op, shape, axis)
	if err != nil {
		return l, err
	}
	if err := checkOpt(op, "gy", gy, l.total); err != nil {
		return l, err
	}
	if err := checkOpt(op, "gdy", gdy, l.total); err != nil {
		return l, err
	}
	if err := checkLen(op, "y", len(y), l.total); err != nil {
		return l, err
	}
	if err := checkLen(op, "dy", len(dy), l.total); err != nil {
		return l, err
	}
	if err := checkLen(op, "g", len(g), l.total); err != nil {
		return l, err
	}
	if err := checkOutputs(op, "gy", gy, "gdy", gdy, "y", y, dy, g); err != nil {
		return l, err
	}
	return l, checkParts(op, l, kind)
}

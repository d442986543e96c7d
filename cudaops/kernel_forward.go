package cudaops

// Softmax-family forward along an axis. Ints = [outer, n, inner]; Floats empty; x and y are
// [outer,n,inner] and the maps run along n. The max along the axis is subtracted: y is finite
// for finite x (log-softmax: wherever x − max is). A NaN, a +Inf or a slice of all −Inf makes
// its slice NaN; a −Inf beside finite values gives 0 (log-softmax: −Inf).
const (
	// KernelSoftmaxForward: In = [x]; Out = [y]; y = exp(x − M)/Σ exp(x − M), M = max x.
	KernelSoftmaxForward Kernel = "softmax_forward"
	// KernelLogSoftmaxForward: In = [x]; Out = [y]; y = (x − M) − log Σ exp(x − M).
	KernelLogSoftmaxForward Kernel = "log_softmax_forward"
)

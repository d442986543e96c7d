package gatejet

import "sync/atomic"

// DefaultMaxBytes is the initial value of MaxBytes: 16 GiB.
const DefaultMaxBytes int64 = 16 << 30

var maxBytes atomic.Int64

func init() { maxBytes.Store(DefaultMaxBytes) }

// MaxBytes is the largest single buffer, in bytes, that gatejet allocates or accepts as an
// output it must fill: an op whose output would be larger is refused when its node is built,
// and a slice-level helper refuses before it allocates, with an ErrSize *Error naming the
// size. Without this limit such a request would end the process (the Go runtime's
// out-of-memory error cannot be recovered). Raise it with SetMaxBytes on machines with the
// memory to match.
func MaxBytes() int64 { return maxBytes.Load() }

// SetMaxBytes sets MaxBytes and returns its previous value; n ≤ 0 restores DefaultMaxBytes.
// It is safe for concurrent use; it applies to nodes built and buffers allocated after it
// returns.
func SetMaxBytes(n int64) (prev int64) {
	if n <= 0 {
		n = DefaultMaxBytes
	}
	return maxBytes.Swap(n)
}

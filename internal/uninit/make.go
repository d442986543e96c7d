//go:build purego

package uninit

// Zeroed reports whether Float64s and Float32s return zeroed memory (a plain make).
const Zeroed = true

// Float64s returns n float64s whose values are unspecified. n must be positive and n·8 must
// fit in an int (the caller checks sizes before allocating).
func Float64s(n int) []float64 { return make([]float64, n) }

// Float32s returns n float32s whose values are unspecified, like Float64s.
func Float32s(n int) []float32 { return make([]float32, n) }

package gatejet

// Float is the element type of every kernel and op: float32 or float64, or a type defined on
// them. Whatever the element type, per-row scalars and reductions are computed in float64.
type Float interface{ ~float32 | ~float64 }

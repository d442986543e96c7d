package softmaxjet

// AVX is the switch of the AVX loops for the gate suite (internal/gatetest).
var AVX = struct {
	Available bool
	Set       func(on bool) (old bool)
}{hasAVX, func(on bool) (old bool) { old, useAVX = useAVX, on && hasAVX; return old }}

// Package launch turns a kernel invocation into a launch configuration for the kernels of
// cudaops/kernels/gatejet.cu: entry point, grid, block, dynamic shared memory and the column
// tile. It is pure Go and shared by the device backend (build tag cuda) and the host
// emulator, so the emulator tests the very plans the GPU runs.
//
// Shared memory is counted in doubles, in the order each kernel carves it; the emulator
// checks every launch against that count.
package launch

import (
	"errors"
	"fmt"
	"math"
)

// Limits are the device limits a plan respects.
type Limits struct {
	MaxSharedBytes int // dynamic shared memory per block; the plan uses at most 48 KiB of it
	MaxGridX       int // largest grid x dimension
}

// DefaultLimits are those of every device of compute capability ≥ 3.0 without opt-in.
var DefaultLimits = Limits{MaxSharedBytes: 48 << 10, MaxGridX: math.MaxInt32}

// MaxBlock is the largest block: the kernels are compiled with __launch_bounds__(256).
const MaxBlock = 256

// Options override a plan's choices (tests use them to exercise tiling, grid-stride loops and
// block-size independence). Zero fields keep the plan's choice.
type Options struct {
	Block int // threads per block
	Tile  int // row jets: columns per tile; axis kernels: slab width (a power of two)
	Grid  int // cap on the number of blocks (grid-stride loops cover the rest)
}

// Config is one launch.
type Config struct {
	Func        string // entry point, gj_<kernel>_f32 or gj_<kernel>_f64
	Grid        int    // blocks (0: nothing to do, do not launch)
	Block       int    // threads per block
	SharedBytes int    // dynamic shared memory
	Tile        int    // GjArgs.tile
}

// Family of a kernel, as far as launching goes.
type Family int

// The kernel families.
const (
	FamilyNone Family = iota
	FamilySoftmaxJet
	FamilyLogisticJet
	FamilyAxis
	FamilyElementwise
)

// layout is the dynamic shared memory of a row-jet kernel, in doubles:
// cK·K + cKp·pow2(K) + cT·K·stride(CT) + cC·CT + c1.
type layout struct {
	fam                 Family
	cK, cKp, cT, cC, c1 int
	width               func(K, CT int) int // parallel work of one row, for the block size
}

func kp(K, CT int) int   { return K * CT }
func kk(K, CT int) int   { return K * K }
func kkp(K, CT int) int  { return K * K * CT }
func cols(K, CT int) int { return CT }

var layouts = map[string]layout{
	"jet_value":            {FamilySoftmaxJet, 1, 1, 0, 0, 0, cols},
	"jet_first":            {FamilySoftmaxJet, 1, 1, 0, 1, 0, kp},
	"jet_second":           {FamilySoftmaxJet, 1, 1, 1, 0, 0, kkp},
	"jet_hvp":              {FamilySoftmaxJet, 2, 1, 0, 2, 0, kp},
	"jet_gauss_newton":     {FamilySoftmaxJet, 1, 1, 1, 0, 0, kk},
	"jet_value_vjp":        {FamilySoftmaxJet, 2, 1, 1, 1, 0, kp},
	"jet_first_vjp":        {FamilySoftmaxJet, 2, 1, 2, 2, 1, kp},
	"jet_second_vjp":       {FamilySoftmaxJet, 2, 1, 3, 1, 0, kp},
	"jet_hvp_vjp":          {FamilySoftmaxJet, 4, 1, 2, 5, 2, kp},
	"jet_gauss_newton_vjp": {FamilySoftmaxJet, 2, 1, 2, 2, 1, kp},

	"logistic_value":            {FamilyLogisticJet, 4, 0, 0, 0, 0, cols},
	"logistic_first":            {FamilyLogisticJet, 4, 0, 0, 0, 0, kp},
	"logistic_second":           {FamilyLogisticJet, 4, 0, 0, 0, 0, kkp},
	"logistic_hvp":              {FamilyLogisticJet, 4, 0, 0, 0, 0, kp},
	"logistic_gauss_newton":     {FamilyLogisticJet, 4, 0, 1, 0, 0, kk},
	"logistic_value_vjp":        {FamilyLogisticJet, 5, 0, 1, 1, 0, kp},
	"logistic_first_vjp":        {FamilyLogisticJet, 5, 0, 2, 0, 0, kp},
	"logistic_second_vjp":       {FamilyLogisticJet, 5, 0, 2, 0, 0, kp},
	"logistic_hvp_vjp":          {FamilyLogisticJet, 5, 0, 2, 0, 0, kp},
	"logistic_gauss_newton_vjp": {FamilyLogisticJet, 5, 0, 2, 0, 0, kp},

	"softmax_backward":          {fam: FamilyAxis},
	"log_softmax_backward":      {fam: FamilyAxis},
	"softmax_backward_grad":     {fam: FamilyAxis},
	"log_softmax_backward_grad": {fam: FamilyAxis},
	// softmax-family forward
	"softmax_forward":     {fam: FamilyAxis},
	"log_softmax_forward": {fam: FamilyAxis},

	"relu_forward": {fam: FamilyElementwise}, "relu_backward": {fam: FamilyElementwise},
	"relu_backward_grad": {fam: FamilyElementwise}, "gelu_forward": {fam: FamilyElementwise},
	"gelu_backward": {fam: FamilyElementwise}, "gelu_backward_grad": {fam: FamilyElementwise},
	"silu_forward": {fam: FamilyElementwise}, "silu_backward": {fam: FamilyElementwise},
	"silu_backward_grad": {fam: FamilyElementwise},
}

// Kernels returns the names of every kernel with a plan (unordered).
func Kernels() []string {
	out := make([]string, 0, len(layouts))
	for k := range layouts {
		out = append(out, k)
	}
	return out
}

// FamilyOf returns the family of the named kernel (FamilyNone if unknown).
func FamilyOf(kernel string) Family { return layouts[kernel].fam }

func pow2(k int) int {
	p := 1
	for p < k {
		p <<= 1
	}
	return p
}

// stride is the odd row stride of a K×CT shared tile (matches gj_stride).
func stride(ct int) int { return ct | 1 }

// SharedDoubles is the dynamic shared memory, in doubles, of a row-jet kernel with K atoms and
// column tile CT, or of an axis kernel with the given block size.
func SharedDoubles(kernel string, K, CT, block int) int {
	l := layouts[kernel]
	switch l.fam {
	case FamilyAxis:
		return 2 * block
	case FamilySoftmaxJet, FamilyLogisticJet:
		p := 0
		if l.cKp > 0 {
			p = pow2(K)
		}
		return l.cK*K + l.cKp*p + l.cT*K*stride(CT) + l.cC*CT + l.c1
	}
	return 0
}

// ErrTooLarge means the problem does not fit the kernels' design (K too large for a row's
// shared memory, for example); a backend reports it as a device error and ModeAuto falls back
// to the CPU.
var ErrTooLarge = errors.New("launch: problem too large for the device kernels")

func roundUp(x, m int) int { return (x + m - 1) / m * m }

// Plan returns the launch configuration for kernel with the given Ints ([N,K,P],
// [outer,n,inner] or [len]) and element type suffix "f32" or "f64".
func Plan(kernel string, ints []int, suffix string, lim Limits, o Options) (Config, error) {
	l, ok := layouts[kernel]
	if !ok {
		return Config{}, fmt.Errorf("launch: unknown kernel %q", kernel)
	}
	if suffix != "f32" && suffix != "f64" {
		return Config{}, fmt.Errorf("launch: unknown dtype suffix %q", suffix)
	}
	if lim.MaxGridX <= 0 {
		lim.MaxGridX = DefaultLimits.MaxGridX
	}
	if lim.MaxSharedBytes <= 0 {
		lim.MaxSharedBytes = DefaultLimits.MaxSharedBytes
	}
	if o.Block < 0 || o.Block > MaxBlock || o.Tile < 0 || o.Grid < 0 {
		return Config{}, fmt.Errorf("launch: invalid options %+v", o)
	}
	cfg := Config{Func: "gj_" + kernel + "_" + suffix}
	gridCap := lim.MaxGridX
	if o.Grid > 0 && o.Grid < gridCap {
		gridCap = o.Grid
	}
	switch l.fam {
	case FamilySoftmaxJet, FamilyLogisticJet:
		if len(ints) != 3 {
			return Config{}, fmt.Errorf("launch: %s wants [N,K,P], got %v", kernel, ints)
		}
		N, K, P := ints[0], ints[1], ints[2]
		if K < 1 || P < 1 || N < 0 {
			return Config{}, fmt.Errorf("launch: %s: bad sizes %v", kernel, ints)
		}
		budget := min(lim.MaxSharedBytes, 48<<10) / 8
		// Flattened in-tile indices are 32-bit: K·K·CT must stay below 2^31.
		ctMax := min(P, (math.MaxInt32-1)/(K*K))
		if ctMax < 1 {
			return Config{}, fmt.Errorf("%w: %s with K=%d", ErrTooLarge, kernel, K)
		}
		fits := func(ct int) bool { return SharedDoubles(kernel, K, ct, 0) <= budget }
		if !fits(1) {
			return Config{}, fmt.Errorf("%w: %s with K=%d needs %d bytes of shared memory, the limit is %d",
				ErrTooLarge, kernel, K, 8*SharedDoubles(kernel, K, 1, 0), 8*budget)
		}
		ct := ctMax
		if !fits(ct) { // largest fitting tile, by bisection (the size grows with CT)
			lo, hi := 1, ct
			for lo < hi {
				mid := (lo + hi + 1) / 2
				if fits(mid) {
					lo = mid
				} else {
					hi = mid - 1
				}
			}
			ct = lo
		}
		if o.Tile > 0 {
			if o.Tile > ctMax || !fits(o.Tile) {
				return Config{}, fmt.Errorf("launch: tile %d does not fit %s with K=%d, P=%d", o.Tile, kernel, K, P)
			}
			ct = o.Tile
		}
		cfg.Tile = ct
		cfg.Block = min(max(roundUp(l.width(K, ct), 32), 32), MaxBlock)
		if o.Block > 0 {
			cfg.Block = o.Block
		}
		cfg.SharedBytes = 8 * SharedDoubles(kernel, K, ct, cfg.Block)
		cfg.Grid = min(N, gridCap)
	case FamilyAxis:
		if len(ints) != 3 {
			return Config{}, fmt.Errorf("launch: %s wants [outer,n,inner], got %v", kernel, ints)
		}
		outer, n, inner := ints[0], ints[1], ints[2]
		if outer < 0 || n < 0 || inner < 0 {
			return Config{}, fmt.Errorf("launch: %s: bad sizes %v", kernel, ints)
		}
		w := min(pow2(max(inner, 1)), 32)
		if o.Tile > 0 {
			if o.Tile != pow2(o.Tile) || o.Tile > MaxBlock {
				return Config{}, fmt.Errorf("launch: slab width %d is not a power of two ≤ %d", o.Tile, MaxBlock)
			}
			w = o.Tile
		}
		r := min(pow2(max(n, 1)), MaxBlock/w)
		b := w * max(r, 1)
		if o.Block > 0 {
			if o.Block%w != 0 || o.Block/w != pow2(o.Block/w) {
				return Config{}, fmt.Errorf("launch: block %d is not a power-of-two multiple of the slab width %d", o.Block, w)
			}
			b = o.Block
		}
		cfg.Tile, cfg.Block = w, b
		cfg.SharedBytes = 8 * SharedDoubles(kernel, 0, 0, b)
		if outer == 0 || n == 0 || inner == 0 {
			return cfg, nil
		}
		slabs := (inner + w - 1) / w
		if outer > math.MaxInt/slabs {
			return Config{}, fmt.Errorf("%w: %s with %v", ErrTooLarge, kernel, ints)
		}
		cfg.Grid = min(outer*slabs, gridCap)
	case FamilyElementwise:
		if len(ints) != 1 || ints[0] < 0 {
			return Config{}, fmt.Errorf("launch: %s wants [len], got %v", kernel, ints)
		}
		n := ints[0]
		cfg.Block = min(max(roundUp(n, 32), 32), MaxBlock)
		if o.Block > 0 {
			cfg.Block = o.Block
		}
		cfg.Grid = min((n+cfg.Block-1)/cfg.Block, gridCap, 1<<20)
	}
	return cfg, nil
}

// Params are the 13 parameters of every entry point of gatejet.cu, each one 64-bit value, in
// order: in0..in3, out0..out2 (device addresses, 0 when unused), floats (device address of the
// logistic α then β as float64, or 0), the three Ints, the tile, and s (float64 bits).
type Params [13]uint64

// MakeParams builds the parameters of a launch: device addresses of the inputs and outputs
// (at most 4 and 3), of the float64 gate parameters (or 0), the call's Ints, the
// configuration's tile and the inverse temperature s (0 when unused).
func MakeParams(in, out []uint64, floats uint64, ints []int, cfg Config, s float64) Params {
	var p Params
	copy(p[0:4], in)
	copy(p[4:7], out)
	p[7] = floats
	for i, v := range ints {
		if i < 3 {
			p[8+i] = uint64(int64(v))
		}
	}
	p[11] = uint64(int64(cfg.Tile))
	p[12] = math.Float64bits(s)
	return p
}

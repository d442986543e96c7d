// Package launch turns a kernel invocation into a launch configuration for the kernels of
// cudaops/kernels/gatejet.cu: entry point, grid, block, dynamic shared memory and the column
// tile. It is pure Go and shared by the device backend (build tag gatejetcuda) and the host
// emulator, so the emulator tests the very plans the GPU runs.
//
// Shared memory is counted in doubles, in the order each kernel carves it. A row or coordinate jet's layout
// (kernel.Shared) is measured from the kernel on the host emulator by `go generate
// ./cudaops/...`; the emulator checks every launch against it.
package launch

import (
	"errors"
	"fmt"
	"math"

	"github.com/gatejet/gatejet/internal/kernel"
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
	// Warp chooses a row jet's variant: 0 the planner's choice (WarpRows), > 0 the
	// warp-per-row variant (an error for a kernel without one), < 0 the block-per-row one.
	Warp int
}

// Config is one launch.
type Config struct {
	Func        string // entry point, gj_<kernel>[_warp]_f32 or gj_<kernel>[_warp]_f64
	Grid        int    // blocks (0: nothing to do, do not launch)
	Block       int    // threads per block
	SharedBytes int    // dynamic shared memory
	Tile        int    // GjArgs.tile
}

// layout returns the kernel's device layout, or an error for a kernel without device entry
// points.
func layout(k kernel.ID) (*kernel.Spec, error) {
	sp := k.Spec()
	if sp == nil || sp.Device == nil {
		return nil, fmt.Errorf("launch: no device kernel %v", k)
	}
	return sp, nil
}

func pow2(k int) int {
	p := 1
	for p < k {
		p <<= 1
	}
	return p
}

// SharedDoubles is the dynamic shared memory, in doubles, of a row or coordinate jet with K
// atoms and column tile CT, or of an axis kernel with the given block size (0 for any other
// kernel).
func SharedDoubles(k kernel.ID, K, CT, block int) int {
	sp := k.Spec()
	if sp == nil || sp.Device == nil {
		return 0
	}
	switch sp.Family {
	case kernel.Axis:
		return 2 * block
	case kernel.RowJet, kernel.CoordJet:
		if l := sp.Device.Shared; l != nil {
			return l.Doubles(K, CT)
		}
	}
	return 0
}

// WarpRowMax bounds the rows the warp-per-row variants are chosen for (WarpRows): K ≤ 32 and
// K·P ≤ WarpRowMax.
const WarpRowMax = 1024

// WarpRows reports whether Plan launches kernel k with K atoms and P columns in its
// warp-per-row variant (when it has one): when K ≤ 32, K·P ≤ WarpRowMax and the rows of a
// block of 8 warps fit the shared memory untiled. The block-per-row variant meets at 13 to 15
// block barriers a row, and at each most of its threads idle when K and P are small (16 of
// 256 busy at K = P = 16): with K ≤ 32 a warp does each pass over the atoms, and the gate's
// tree over pow2(K) ≤ 32, in one step, the flattened K·P passes in at most 32, and the VJPs'
// loops over K atoms per element (K·K) stay short; eight rows then share a block with no
// block barrier. Beyond that a row's passes take many warp steps, and a block a row spreads
// them over 256 threads instead.
func WarpRows(k kernel.ID, K, P int) bool {
	sp := k.Spec()
	if sp == nil || sp.Device == nil || sp.Device.Shared == nil || !sp.Device.Warp || K > 32 || K*P > WarpRowMax {
		return false
	}
	return MaxBlock/32*SharedDoubles(k, K, P, 0) <= (48<<10)/8
}

// ErrTooLarge means the problem does not fit the kernels' design (K too large for a row's
// shared memory, for example); a backend reports it as a device error and ModeAuto falls back
// to the CPU.
var ErrTooLarge = errors.New("launch: problem too large for the device kernels")

func roundUp(x, m int) int { return (x + m - 1) / m * m }

// Plan returns the launch configuration for kernel with the given Ints ([N,K,P],
// [outer,n,inner] or [len]) and element type suffix "f32" or "f64".
func Plan(k kernel.ID, ints []int, suffix string, lim Limits, o Options) (Config, error) {
	sp, err := layout(k)
	if err != nil {
		return Config{}, err
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
	cfg := Config{Func: "gj_" + k.String() + "_" + suffix}
	gridCap := lim.MaxGridX
	if o.Grid > 0 && o.Grid < gridCap {
		gridCap = o.Grid
	}
	switch sp.Family {
	case kernel.RowJet, kernel.CoordJet:
		if err := checkSizes(k, ints, "[N,K,P]", 0, 1, 1); err != nil {
			return Config{}, err
		}
		if sp.Device.Shared == nil {
			return Config{}, fmt.Errorf("launch: %s has no measured shared-memory layout: run go generate ./cudaops/...", k)
		}
		N, K, P := ints[0], ints[1], ints[2]
		budget := min(lim.MaxSharedBytes, 48<<10) / 8
		// Flattened in-tile indices are 32-bit: K·K·CT must stay below 2^31 (and K·K must not
		// overflow first).
		if K > 46340 {
			return Config{}, fmt.Errorf("%w: %s with K=%d", ErrTooLarge, k, K)
		}
		ctMax := min(P, (math.MaxInt32-1)/(K*K))
		if ctMax < 1 {
			return Config{}, fmt.Errorf("%w: %s with K=%d", ErrTooLarge, k, K)
		}
		// WarpRows assumes 48 KiB; a smaller device limit keeps the block variant when eight
		// untiled rows do not fit it.
		warp := o.Warp > 0 || (o.Warp == 0 && o.Block%32 == 0 && WarpRows(k, K, P) &&
			MaxBlock/32*SharedDoubles(k, K, P, 0) <= budget)
		if warp && !sp.Device.Warp {
			return Config{}, fmt.Errorf("launch: %s has no warp-per-row variant", k)
		}
		if warp && (o.Block%32 != 0 || o.Block < 0) {
			return Config{}, fmt.Errorf("launch: the warp-per-row variant wants a block of whole warps, not %d", o.Block)
		}
		rows := 1 // rows a block runs at once: its warps in the warp-per-row variant
		if warp {
			rows = MaxBlock / 32
			if o.Block > 0 {
				rows = o.Block / 32
			}
		}
		fits := func(ct int) bool { return rows*SharedDoubles(k, K, ct, 0) <= budget }
		if !fits(1) {
			return Config{}, fmt.Errorf("%w: %s with K=%d needs %d bytes of shared memory, the limit is %d",
				ErrTooLarge, k, K, 8*SharedDoubles(k, K, 1, 0), 8*budget)
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
				return Config{}, fmt.Errorf("launch: tile %d does not fit %s with K=%d, P=%d", o.Tile, k, K, P)
			}
			ct = o.Tile
		}
		cfg.Tile = ct
		if warp {
			cfg.Func = "gj_" + k.String() + kernel.WarpSuffix + "_" + suffix
			cfg.Block = 32 * rows
			cfg.SharedBytes = 8 * rows * SharedDoubles(k, K, ct, 0)
			cfg.Grid = min((N+rows-1)/rows, gridCap)
			break
		}
		cfg.Block = min(max(roundUp(sp.Device.Width.Of(K, ct), 32), 32), MaxBlock)
		if o.Block > 0 {
			cfg.Block = o.Block
		}
		cfg.SharedBytes = 8 * SharedDoubles(k, K, ct, cfg.Block)
		cfg.Grid = min(N, gridCap)
	case kernel.Axis:
		if err := checkSizes(k, ints, "[outer,n,inner]", 0, 0, 0); err != nil {
			return Config{}, err
		}
		outer, n, inner := ints[0], ints[1], ints[2]
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
		cfg.SharedBytes = 8 * SharedDoubles(k, 0, 0, b)
		if outer == 0 || n == 0 || inner == 0 {
			return cfg, nil
		}
		slabs := (inner + w - 1) / w
		if outer > math.MaxInt/slabs {
			return Config{}, fmt.Errorf("%w: %s with %v", ErrTooLarge, k, ints)
		}
		cfg.Grid = min(outer*slabs, gridCap)
	case kernel.Elementwise:
		if len(ints) != 1 || ints[0] < 0 {
			return Config{}, fmt.Errorf("launch: %s wants [len], got %v", k, ints)
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

// Params are the 14 parameters of every entry point of gatejet.cu, each one 64-bit value, in
// order: in0..in3, out0..out2 (device addresses, 0 when unused), floats (device address of the
// logistic α then β as float64, or 0), the three Ints, the tile, s (float64 bits) and in4 (the
// fifth input's address, or 0; last, so that the others keep their places).
type Params [14]uint64

// MakeParams builds the parameters of a launch: device addresses of the inputs and outputs
// (at most 5 and 3), of the float64 gate parameters (or 0), the call's Ints, the
// configuration's tile and the inverse temperature s (0 when unused).
func MakeParams(in, out []uint64, floats uint64, ints []int, cfg Config, s float64) Params {
	var p Params
	copy(p[0:4], in)
	if len(in) > 4 {
		p[13] = in[4]
	}
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

// checkSizes refuses sizes ints of kernel k unless there are as many as mins, each at least
// its minimum; names spells the sizes for the message.
func checkSizes(k kernel.ID, ints []int, names string, mins ...int) error {
	if len(ints) != len(mins) {
		return fmt.Errorf("launch: %s wants %s, got %v", k, names, ints)
	}
	for i, m := range mins {
		if ints[i] < m {
			return fmt.Errorf("launch: %s: bad sizes %v", k, ints)
		}
	}
	return nil
}

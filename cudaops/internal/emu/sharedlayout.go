//go:build cgo

package emu

import (
	"fmt"
	"go/format"
	"math"
	"strings"

	"github.com/gatejet/gatejet"
	"github.com/gatejet/gatejet/cudaops/internal/launch"
	"github.com/gatejet/gatejet/internal/dispatch"
	"github.com/gatejet/gatejet/internal/kernel"
)

// The shared-memory layout of a row or coordinate jet is not written by hand: the kernel carves it
// (GJ_TAKE in cudaops/kernels/gatejet.cu), the emulator measures what one row carves, and
// MeasureSharedLayout solves for the coefficients of kernel.Shared. `go generate
// ./cudaops/...` writes them into internal/kernel (SharedLayoutsSource), where the table's
// Register reads them; TestSharedLayoutsAreCurrent fails while the file is stale.

// layoutKs and layoutTiles are the atom counts and column tiles a layout is measured at: K
// spans pow2(K) ≠ K (3, 5) and CT spans odd strides CT|1 ≠ CT (2, 4), so the five terms of
// kernel.Shared are independent over them.
var (
	layoutKs    = []int{1, 2, 3, 5}
	layoutTiles = []int{1, 2, 4}
)

// layoutAllowance is the shared memory (bytes) a measuring launch gives the kernel; a kernel
// carving more at the measured sizes fails with an overrun.
const layoutAllowance = 48 << 10

// layoutTerms are kernel.Shared's terms at (K, CT), in the order of its fields K, Kp, Tile,
// Cols, One.
func layoutTerms(K, CT int) [5]float64 {
	p := 1
	for p < K {
		p <<= 1
	}
	return [5]float64{float64(K), float64(p), float64(K * (CT | 1)), float64(CT), 1}
}

// measureRow returns the doubles one row of kernel k carves at (K, CT) in element type dt,
// in its block-per-row variant with the given block, or its warp-per-row variant with one
// warp.
func measureRow(k kernel.ID, dt dispatch.DType, K, CT, block int, warp bool) (int, error) {
	sp := k.Spec()
	ints := []int{1, K, CT}
	var floats []float64
	if sp.Gate != nil {
		floats = sp.Gate.Sample(K, func() float64 { return 0.5 }, func() float64 { return 0.25 })
	}
	c := &dispatch.Call{Kernel: dispatch.Kernel(k), DType: dt, Ints: ints, Floats: floats}
	in, out, err := c.Lengths()
	if err != nil {
		return 0, err
	}
	if dt == dispatch.Float32 {
		fill(&c.F32, in, out)
	} else {
		fill(&c.F64, in, out)
	}
	cfg := launch.Config{Func: "gj_" + sp.Name, Grid: 1, Block: block, SharedBytes: layoutAllowance, Tile: CT}
	if warp {
		cfg.Func += kernel.WarpSuffix
		cfg.Block = 32
	}
	cfg.Func += "_" + map[dispatch.DType]string{dispatch.Float32: "f32", dispatch.Float64: "f64"}[dt]
	res, err := LaunchConfig(c, cfg, Forward)
	if err != nil {
		return 0, err
	}
	if res.HighWater%8 != 0 {
		return 0, fmt.Errorf("%s carves %d bytes, not whole doubles", cfg.Func, res.HighWater)
	}
	return res.HighWater / 8, nil
}

func fill[T gatejet.Float](o *dispatch.Operands[T], in, out []int) {
	for i, n := range in {
		o.In[i] = make([]T, n)
		for j := range o.In[i] {
			o.In[i][j] = T(0.125 * float64(j%7+1))
		}
	}
	for i, n := range out {
		o.Out[i] = make([]T, n)
	}
}

// MeasureSharedLayout measures what one row of row or coordinate jet k carves at every (K, CT) of
// layoutKs × layoutTiles, in both element types, in its block-per-row variant with blocks of
// 32 and 64 threads and in its warp-per-row variant (when it has one), and returns the
// kernel.Shared that gives each of those counts. It fails when the variants, block sizes or
// element types carve differently, or when the counts are not of kernel.Shared's form.
func MeasureSharedLayout(k kernel.ID) (kernel.Shared, error) {
	sp := k.Spec()
	if sp == nil || sp.Device == nil || (sp.Family != kernel.RowJet && sp.Family != kernel.CoordJet) {
		return kernel.Shared{}, fmt.Errorf("%v is not a device row or coordinate jet", k)
	}
	var pts []layoutPoint
	for _, K := range layoutKs {
		for _, CT := range layoutTiles {
			n := -1
			for _, dt := range []dispatch.DType{dispatch.Float64, dispatch.Float32} {
				for _, v := range []struct {
					block int
					warp  bool
				}{{32, false}, {64, false}, {32, true}} {
					if v.warp && !sp.Device.Warp {
						continue
					}
					m, err := measureRow(k, dt, K, CT, v.block, v.warp)
					if err != nil {
						return kernel.Shared{}, fmt.Errorf("%v: %w", k, err)
					}
					if n >= 0 && m != n {
						return kernel.Shared{}, fmt.Errorf("%v at K=%d CT=%d carves %d doubles in one variant and %d in another "+
							"(%s, block %d, warp %v): kernel.Shared has one layout for both element types, every block "+
							"size and both variants", k, K, CT, n, m, dt, v.block, v.warp)
					}
					n = m
				}
			}
			pts = append(pts, layoutPoint{K, CT, n})
		}
	}
	l, err := fitLayout(pts)
	if err != nil {
		return kernel.Shared{}, fmt.Errorf("%v: %w", k, err)
	}
	return l, nil
}

// layoutPoint is the shared memory n (doubles) one row carves with K atoms and tile CT.
type layoutPoint struct{ K, CT, n int }

// fitLayout returns the kernel.Shared that gives every point, or an error when none does.
func fitLayout(pts []layoutPoint) (kernel.Shared, error) {
	// Least squares over the points (normal equations), then integer coefficients that must
	// give every point exactly.
	var a [5][6]float64
	for _, p := range pts {
		t := layoutTerms(p.K, p.CT)
		for i := range 5 {
			for j := range 5 {
				a[i][j] += t[i] * t[j]
			}
			a[i][5] += t[i] * float64(p.n)
		}
	}
	for col := range 5 {
		piv := col
		for r := col + 1; r < 5; r++ {
			if math.Abs(a[r][col]) > math.Abs(a[piv][col]) {
				piv = r
			}
		}
		a[col], a[piv] = a[piv], a[col]
		for r := range 5 {
			if r != col {
				f := a[r][col] / a[col][col]
				for j := col; j < 6; j++ {
					a[r][j] -= f * a[col][j]
				}
			}
		}
	}
	var x [5]int
	for i := range 5 {
		v := a[i][5] / a[i][i]
		x[i] = int(math.Round(v))
		if math.Abs(v-float64(x[i])) > 1e-6 || x[i] < 0 {
			return kernel.Shared{}, fmt.Errorf("carves shared memory not of the form "+
				"K·K + Kp·pow2(K) + Tile·K·(CT|1) + Cols·CT + One with whole coefficients ≥ 0 (%s fits %g)",
				[...]string{"K", "Kp", "Tile", "Cols", "One"}[i], v)
		}
	}
	l := kernel.Shared{K: x[0], Kp: x[1], Tile: x[2], Cols: x[3], One: x[4]}
	for _, p := range pts {
		if got := l.Doubles(p.K, p.CT); got != p.n {
			return kernel.Shared{}, fmt.Errorf("carves %d doubles at K=%d CT=%d, the fitted layout %+v gives %d: "+
				"its shared memory is not of kernel.Shared's form", p.n, p.K, p.CT, l, got)
		}
	}
	return l, nil
}

// SharedLayoutsSource returns the text of internal/kernel/shared_layouts.go: the measured
// layout (MeasureSharedLayout) of every device row and coordinate jet of the table, by kernel name.
func SharedLayoutsSource() (string, error) {
	var b strings.Builder
	b.WriteString(`// Code generated by layouts_gen.go (go generate ./cudaops/...) from the kernels' shared-memory use; DO NOT EDIT.

package kernel

// sharedLayouts is the dynamic shared memory one row of each device row and coordinate jet
// carves (cudaops/kernels/gatejet.cu), by kernel name, as the host emulator measures it
// (cudaops/internal/emu.MeasureSharedLayout). Register gives each kernel its layout.
var sharedLayouts = map[string]Shared{
`)
	for _, id := range kernel.All() {
		sp := id.Spec()
		if sp.Device == nil || (sp.Family != kernel.RowJet && sp.Family != kernel.CoordJet) {
			continue
		}
		l, err := MeasureSharedLayout(id)
		if err != nil {
			return "", err
		}
		var fs []string
		for _, f := range []struct {
			name string
			v    int
		}{{"K", l.K}, {"Kp", l.Kp}, {"Tile", l.Tile}, {"Cols", l.Cols}, {"One", l.One}} {
			if f.v != 0 {
				fs = append(fs, fmt.Sprintf("%s: %d", f.name, f.v))
			}
		}
		fmt.Fprintf(&b, "\t%q: {%s},\n", sp.Name, strings.Join(fs, ", "))
	}
	b.WriteString("}\n")
	src, err := format.Source([]byte(b.String()))
	return string(src), err
}

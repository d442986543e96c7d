package conformance

import (
	"errors"
	"fmt"
	"math"
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/gatejet/gatejet"
	"github.com/gatejet/gatejet/backward"
	"github.com/gatejet/gatejet/internal/floats"
	"github.com/gatejet/gatejet/internal/tower"
	"github.com/gatejet/gatejet/ops"
	"github.com/gatejet/gatejet/softmaxjet"
)

// jetOut holds the five channels of the softmax-gated jet for a batch, as float64.
type jetOut struct {
	value, first, second, hvp, gn []float64
}

func (j jetOut) channels() map[string][]float64 {
	return map[string][]float64{"value": j.value, "first": j.first, "second": j.second, "hvp": j.hvp, "gn": j.gn}
}

// opsJet builds every channel of ops.SoftmaxJet* over one graph and runs it on a TapeMachine.
func opsJet(t testing.TB, dt tensor.Dtype, n, k, p int, l, d, v []float64, invTau float64) jetOut {
	t.Helper()
	g := G.NewGraph()
	ln := input(g, dt, "logits", []int{n, k}, l)
	dn := input(g, dt, "decoded", []int{n, k, p}, d)
	vn := input(g, dt, "v", []int{n, k}, v)
	var outs []*G.Node
	for _, b := range []func() (*G.Node, error){
		func() (*G.Node, error) { return ops.SoftmaxJetValue(ln, dn, invTau) },
		func() (*G.Node, error) { return ops.SoftmaxJetFirst(ln, dn, invTau) },
		func() (*G.Node, error) { return ops.SoftmaxJetSecond(ln, dn, invTau) },
		func() (*G.Node, error) { return ops.SoftmaxJetHVP(ln, dn, vn, invTau) },
		func() (*G.Node, error) { return ops.SoftmaxJetGaussNewton(ln, dn, invTau) },
	} {
		o, err := b()
		if err != nil {
			t.Fatalf("building: %v", err)
		}
		outs = append(outs, o)
	}
	res, err := runTape(g, outs...)
	if err != nil {
		t.Fatalf("running: %v", err)
	}
	return jetOut{res[0], res[1], res[2], res[3], res[4]}
}

// refJet is an independent float64 evaluation of the documented closed forms (softmaxjet
// package doc), row by row, with the maximum subtracted.
func refJet(n, k, p int, l, d, v []float64, s float64) jetOut {
	o := jetOut{
		value: make([]float64, n*p), first: make([]float64, n*k*p), second: make([]float64, n*k*k*p),
		hvp: make([]float64, n*k*p), gn: make([]float64, n*k*k),
	}
	for r := range n {
		lr, dr, vr := l[r*k:(r+1)*k], d[r*k*p:(r+1)*k*p], v[r*k:(r+1)*k]
		mx := math.Inf(-1)
		for _, x := range lr {
			mx = math.Max(mx, s*x)
		}
		z := make([]float64, k)
		sum := 0.0
		for a, x := range lr {
			z[a] = math.Exp(s*x - mx)
			sum += z[a]
		}
		for a := range z {
			z[a] /= sum
		}
		zh := make([]float64, p)
		for a := range k {
			for c := range p {
				zh[c] += z[a] * dr[a*p+c]
			}
		}
		copy(o.value[r*p:], zh)
		e := func(a, c int) float64 { return dr[a*p+c] - zh[c] }
		vbar := 0.0
		for b := range k {
			vbar += z[b] * vr[b]
		}
		w := make([]float64, p)
		for b := range k {
			for c := range p {
				w[c] += z[b] * (vr[b] - vbar) * e(b, c)
			}
		}
		for a := range k {
			for c := range p {
				o.first[(r*k+a)*p+c] = s * z[a] * e(a, c)
				o.hvp[(r*k+a)*p+c] = s * s * z[a] * (e(a, c)*(vr[a]-vbar) - w[c])
			}
			for b := range k {
				dot := 0.0
				for c := range p {
					delta := 0.0
					if a == b {
						delta = z[a] * e(a, c)
					}
					o.second[((r*k+a)*k+b)*p+c] = s * s * (delta - z[a]*z[b]*(e(a, c)+e(b, c)))
					dot += e(a, c) * e(b, c)
				}
				o.gn[(r*k+a)*k+b] = s * s * z[a] * z[b] * dot
			}
		}
	}
	return o
}

// requireNear checks |got − want| ≤ tol·scale elementwise, scale = max|want| but at least
// 1e-30 for float32 tolerances (float32 flushes what is far below that to subnormals or zero)
// and 1e-300 otherwise.
func requireNear(t testing.TB, what string, want, got []float64, tol float64) {
	t.Helper()
	if len(want) != len(got) {
		t.Fatalf("%s: length %d, want %d", what, len(got), len(want))
	}
	scale := 1e-300
	if tol >= tolFor(f32) {
		scale = 1e-30
	}
	for _, w := range want {
		scale = math.Max(scale, math.Abs(w))
	}
	for i := range want {
		if !(math.Abs(got[i]-want[i]) <= tol*scale) {
			t.Fatalf("%s: element %d: got %.17g, want %.17g (tol %g × scale %g)", what, i, got[i], want[i], tol, scale)
		}
	}
}

func tolFor(dt tensor.Dtype) float64 {
	if dt == f32 {
		return 2e-6
	}
	return 1e-11
}

var bothDtypes = []tensor.Dtype{f64, f32}

// round32 rounds values to float32 when dt is Float32, so that the reference sees what the
// tensors hold.
func round32(dt tensor.Dtype, xs []float64) []float64 {
	if dt != f32 {
		return xs
	}
	out := make([]float64, len(xs))
	for i, x := range xs {
		out[i] = float64(float32(x))
	}
	return out
}

// TestExtremeLogitOffsets: logits offset by ±1e4 give the channels of the unshifted logits
// (the gate is shift-invariant and the kernels subtract the maximum), finite, for both dtypes.
// The offsets keep the logits exact (multiples of 1/8 near 1e4 are representable in float32).
func TestExtremeLogitOffsets(t *testing.T) {
	cpuOnly(t)
	const n, k, p = 3, 5, 2
	l := make([]float64, n*k)
	for i := range l {
		l[i] = float64((i*7)%13-6) / 8
	}
	d := seq(11, n*k*p, -2, 2)
	v := seq(12, n*k, -1, 1)
	for _, dt := range bothDtypes {
		for _, s := range []float64{1, 2} {
			base := opsJet(t, dt, n, k, p, l, d, v, s)
			for _, off := range []float64{1e4, -1e4} {
				ls := make([]float64, len(l))
				for i, x := range l {
					ls[i] = x + off
				}
				got := opsJet(t, dt, n, k, p, ls, d, v, s)
				for name, want := range base.channels() {
					g := got.channels()[name]
					if !allFinite(g) {
						t.Fatalf("%v s=%v offset %v: %s not finite: %v", dt, s, off, name, g)
					}
					requireNear(t, fmt.Sprintf("%v s=%v offset %v: %s", dt, s, off, name), want, g, tolFor(dt))
				}
			}
		}
	}
	// Logits spread over ±1e4: a one-hot gate, finite channels, the reference's values.
	for _, dt := range bothDtypes {
		ls := []float64{1e4, -1e4, 0, 5e3, -5e3, -1e4, 1e4 - 1, 3, 2, 1, 0.5, 1e4, 1e4, -1e4, 0}
		got := opsJet(t, dt, n, k, p, ls, d, v, 1)
		want := refJet(n, k, p, round32(dt, ls), round32(dt, d), round32(dt, v), 1)
		for name, w := range want.channels() {
			g := got.channels()[name]
			if !allFinite(g) {
				t.Fatalf("%v spread ±1e4: %s not finite: %v", dt, name, g)
			}
			requireNear(t, fmt.Sprintf("%v spread ±1e4: %s", dt, name), w, g, tolFor(dt))
		}
	}
}

// TestExtremeTemperatures: 1/τ from 1e-3 to 1e3 gives finite channels equal to the reference,
// exactly symmetric second channels, and rows of first, second and hvp that sum to zero over a.
func TestExtremeTemperatures(t *testing.T) {
	cpuOnly(t)
	const n, k, p = 4, 6, 3
	l, d, v := jetSeq(21, n, k, p, 3)
	for _, dt := range bothDtypes {
		for e := -3; e <= 3; e++ {
			s := math.Pow(10, float64(e))
			what := fmt.Sprintf("%v invTau=%g", dt, s)
			got := opsJet(t, dt, n, k, p, l, d, v, s)
			want := refJet(n, k, p, round32(dt, l), round32(dt, d), round32(dt, v), s)
			for name, w := range want.channels() {
				g := got.channels()[name]
				if !allFinite(g) {
					t.Fatalf("%s: %s not finite", what, name)
				}
				requireNear(t, what+": "+name, w, g, tolFor(dt))
			}
			checkSecondSymmetric(t, what, got.second, n, k, p)
			checkZeroSums(t, what, got, n, k, p, tolFor(dt), s, d, v)
		}
	}
}

func checkSecondSymmetric(t testing.TB, what string, second []float64, n, k, p int) {
	t.Helper()
	for r := range n {
		for a := range k {
			for b := range a {
				for c := range p {
					x, y := second[((r*k+a)*k+b)*p+c], second[((r*k+b)*k+a)*p+c]
					if math.Float64bits(x) != math.Float64bits(y) {
						t.Fatalf("%s: row %d: second[%d][%d][%d] = %v, second[%d][%d][%d] = %v", what, r, a, b, c, x, b, a, c, y)
					}
				}
			}
		}
	}
}

// checkZeroSums: Σ_a first[a][c], Σ_a second[a][b][c] and Σ_a hvp[a][c] vanish (the gate is
// invariant under a common shift of the logits), to tol relative to the scale of the terms:
// s·max|D| for first, s²·max|D| for second and s²·max|D|·max|v| for hvp (d and v are the
// inputs, s the inverse temperature).
func checkZeroSums(t testing.TB, what string, j jetOut, n, k, p int, tol, s float64, d, v []float64) {
	t.Helper()
	maxD, maxV := 0.0, 0.0
	for _, x := range d {
		maxD = math.Max(maxD, math.Abs(x))
	}
	for _, x := range v {
		maxV = math.Max(maxV, math.Abs(x))
	}
	check := func(name string, scale float64, at func(a int) float64) {
		sum, abs := 0.0, 0.0
		for a := range k {
			sum += at(a)
			abs += math.Abs(at(a))
		}
		if !(math.Abs(sum) <= tol*math.Max(abs, scale)+1e-300) {
			t.Fatalf("%s: %s sums to %v over a (Σ|·| = %v, scale %v)", what, name, sum, abs, scale)
		}
	}
	for r := range n {
		for c := range p {
			check(fmt.Sprintf("row %d first[·][%d]", r, c), s*maxD, func(a int) float64 { return j.first[(r*k+a)*p+c] })
			check(fmt.Sprintf("row %d hvp[·][%d]", r, c), s*s*maxD*maxV, func(a int) float64 { return j.hvp[(r*k+a)*p+c] })
			for b := range k {
				check(fmt.Sprintf("row %d second[·][%d][%d]", r, b, c), s*s*maxD, func(a int) float64 { return j.second[((r*k+a)*k+b)*p+c] })
			}
		}
	}
}

// TestNaNRowIsolation: a NaN in one row (a logit, or a decoded value) leaves every other
// row's output bit-identical to a clean run, through every softmax-gate channel, the logistic
// gate, the softmax-family backward and the activations, for both dtypes. A NaN logit makes
// its whole row NaN (softmax gate), as documented.
func TestNaNRowIsolation(t *testing.T) {
	cpuOnly(t)
	const n, k, p = 5, 4, 3
	l, d, v := jetSeq(31, n, k, p, 2)
	const bad = 2 // the row that gets the NaN
	for _, dt := range bothDtypes {
		clean := opsJet(t, dt, n, k, p, l, d, v, 1.5)
		for _, where := range []string{"logit", "decoded"} {
			l2, d2 := append([]float64(nil), l...), append([]float64(nil), d...)
			if where == "logit" {
				l2[bad*k+1] = math.NaN()
			} else {
				d2[(bad*k+2)*p+1] = math.NaN()
			}
			dirty := opsJet(t, dt, n, k, p, l2, d2, v, 1.5)
			perRow := map[string]int{"value": p, "first": k * p, "second": k * k * p, "hvp": k * p, "gn": k * k}
			for name, c := range clean.channels() {
				g := dirty.channels()[name]
				w := perRow[name]
				for r := range n {
					row, crow := g[r*w:(r+1)*w], c[r*w:(r+1)*w]
					if r == bad {
						if where == "logit" {
							for i, x := range row {
								if !math.IsNaN(x) {
									t.Fatalf("%v NaN logit: %s row %d element %d = %v, want NaN", dt, name, r, i, x)
								}
							}
						}
						continue
					}
					if i := firstDiff(crow, row); i >= 0 {
						t.Fatalf("%v NaN %s in row %d: %s row %d element %d changed: %v → %v", dt, where, bad, name, r, i, crow[i], row[i])
					}
				}
			}
		}
	}

	// The other ops: one graph each, clean and with a NaN in row `bad`.
	type rowOp struct {
		name   string
		shape  []int // rows along dim 0
		inputs int
		build  func(in []*G.Node) (*G.Node, error)
	}
	alpha, beta := []float64{1, -2, 0.5, 3}, []float64{0, 0.25, -1, 0.5}
	for _, o := range []rowOp{
		{"LogisticJetSecond", nil, 2, func(in []*G.Node) (*G.Node, error) { return ops.LogisticJetSecond(in[0], in[1], alpha, beta) }},
		{"LogisticJetHVP", nil, 3, func(in []*G.Node) (*G.Node, error) {
			return ops.LogisticJetHVP(in[0], in[1], in[2], alpha, beta)
		}},
		{"SoftmaxBackward axis -1", []int{n, 6}, 2, func(in []*G.Node) (*G.Node, error) { return ops.SoftmaxBackward(in[0], in[1], -1) }},
		{"LogSoftmaxBackward axis 2", []int{n, 2, 3}, 2, func(in []*G.Node) (*G.Node, error) { return ops.LogSoftmaxBackward(in[0], in[1], 2) }},
		{"GELU", []int{n, 3}, 1, func(in []*G.Node) (*G.Node, error) { return ops.GELU(in[0]) }},
		{"SiLUBackward", []int{n, 3}, 2, func(in []*G.Node) (*G.Node, error) { return ops.SiLUBackward(in[0], in[1]) }},
	} {
		shapes := [][]int{o.shape, o.shape, o.shape}
		if o.shape == nil {
			shapes = [][]int{{n, k}, {n, k, p}, {n, k}}
		}
		for _, dt := range bothDtypes {
			run := func(nanAt int) []float64 {
				g := G.NewGraph()
				in := make([]*G.Node, o.inputs)
				for i := range in {
					vals := seq(uint64(40+i), prod(shapes[i]), -2, 2)
					if i == 0 && nanAt >= 0 {
						vals[nanAt] = math.NaN()
					}
					in[i] = input(g, dt, fmt.Sprintf("in%d", i), shapes[i], vals)
				}
				out, err := o.build(in)
				if err != nil {
					t.Fatalf("%s: %v", o.name, err)
				}
				res, err := runTape(g, out)
				if err != nil {
					t.Fatalf("%s: %v", o.name, err)
				}
				return res[0]
			}
			rowIn := prod(shapes[0]) / n
			c, dirty := run(-1), run(bad*rowIn+1)
			w := len(c) / n
			for r := range n {
				if r == bad {
					continue
				}
				if i := firstDiff(c[r*w:(r+1)*w], dirty[r*w:(r+1)*w]); i >= 0 {
					t.Fatalf("%s %v: NaN in row %d changed row %d element %d", o.name, dt, bad, r, i)
				}
			}
		}
	}
}

// TestMaskedAtoms: −Inf logits beside finite ones mask their atoms: the channels equal those
// of the batch without the masked atoms (zero gate: their rows and columns of first, second,
// hvp and gn are zero) and are finite. A row of all −Inf logits is a NaN row, as documented.
func TestMaskedAtoms(t *testing.T) {
	cpuOnly(t)
	const n, k, p = 2, 5, 2
	ninf := math.Inf(-1)
	l := []float64{ninf, 0.3, ninf, 1.2, -0.4, 0.1, ninf, ninf, ninf, 2}
	keep := [][]int{{1, 3, 4}, {0, 4}}
	d := seq(51, n*k*p, -2, 2)
	v := seq(52, n*k, -1, 1)
	for _, dt := range bothDtypes {
		got := opsJet(t, dt, n, k, p, l, d, v, 1.7)
		for name, g := range got.channels() {
			if !allFinite(g) {
				t.Fatalf("%v: %s not finite with masked atoms: %v", dt, name, g)
			}
		}
		for r := range n {
			kk := len(keep[r])
			// The row without its masked atoms.
			lr, dr, vr := make([]float64, kk), make([]float64, kk*p), make([]float64, kk)
			for i, a := range keep[r] {
				lr[i], vr[i] = l[r*k+a], v[r*k+a]
				copy(dr[i*p:(i+1)*p], d[(r*k+a)*p:(r*k+a+1)*p])
			}
			sub := opsJet(t, dt, 1, kk, p, lr, dr, vr, 1.7)
			what := fmt.Sprintf("%v row %d", dt, r)
			requireNear(t, what+" value", sub.value, got.value[r*p:(r+1)*p], tolFor(dt))
			kept := map[int]int{}
			for i, a := range keep[r] {
				kept[a] = i
			}
			for a := range k {
				ia, okA := kept[a]
				for c := range p {
					f, h := got.first[(r*k+a)*p+c], got.hvp[(r*k+a)*p+c]
					if !okA {
						if f != 0 || h != 0 {
							t.Fatalf("%s: masked atom %d: first %v, hvp %v, want 0", what, a, f, h)
						}
						continue
					}
					requireNear(t, what+" first", []float64{sub.first[ia*p+c]}, []float64{f}, tolFor(dt))
					requireNear(t, what+" hvp", []float64{sub.hvp[ia*p+c]}, []float64{h}, tolFor(dt))
				}
				for b := range k {
					ib, okB := kept[b]
					gn := got.gn[(r*k+a)*k+b]
					if !okA || !okB {
						if gn != 0 {
							t.Fatalf("%s: gn[%d][%d] = %v with a masked atom, want 0", what, a, b, gn)
						}
					} else {
						requireNear(t, what+" gn", []float64{sub.gn[ia*kk+ib]}, []float64{gn}, tolFor(dt))
					}
					for c := range p {
						s := got.second[((r*k+a)*k+b)*p+c]
						if !okA || !okB {
							if s != 0 {
								t.Fatalf("%s: second[%d][%d][%d] = %v with a masked atom, want 0", what, a, b, c, s)
							}
							continue
						}
						requireNear(t, what+" second", []float64{sub.second[(ia*kk+ib)*p+c]}, []float64{s}, tolFor(dt))
					}
				}
			}
		}
		// All −Inf: a NaN row, and the other row untouched.
		l2 := append([]float64(nil), l...)
		for a := range k {
			l2[a] = ninf
		}
		all := opsJet(t, dt, n, k, p, l2, d, v, 1.7)
		for i, x := range all.value[:p] {
			if !math.IsNaN(x) {
				t.Fatalf("%v: all −Inf row: value[%d] = %v, want NaN", dt, i, x)
			}
		}
		if !floats.BitsEqual(all.value[p:], got.value[p:]) || !floats.BitsEqual(all.second[k*k*p:], got.second[k*k*p:]) {
			t.Fatalf("%v: an all −Inf row changed the other row", dt)
		}
	}
}

// TestExtremeSizes: K = 1 (the gate is 1: value = decoded, every derivative 0), P = 1, n = 1,
// and K = 512 (against the reference, with zero sums), for both dtypes.
func TestExtremeSizes(t *testing.T) {
	cpuOnly(t)
	for _, dt := range bothDtypes {
		for _, sz := range []struct{ n, k, p int }{{1, 1, 1}, {3, 1, 2}, {1, 4, 1}, {1, 1, 5}, {2, 512, 2}} {
			n, k, p := sz.n, sz.k, sz.p
			what := fmt.Sprintf("%v n=%d K=%d P=%d", dt, n, k, p)
			l, d, v := jetSeq(61, n, k, p, 3)
			got := opsJet(t, dt, n, k, p, l, d, v, 0.8)
			want := refJet(n, k, p, round32(dt, l), round32(dt, d), round32(dt, v), 0.8)
			for name, w := range want.channels() {
				g := got.channels()[name]
				if !allFinite(g) {
					t.Fatalf("%s: %s not finite", what, name)
				}
				requireNear(t, what+": "+name, w, g, tolFor(dt))
			}
			if k == 1 {
				if !floats.BitsEqual(got.value, round32(dt, d)) {
					t.Fatalf("%s: value %v, want decoded %v", what, got.value, d)
				}
				for name, ch := range map[string][]float64{"first": got.first, "second": got.second, "hvp": got.hvp, "gn": got.gn} {
					for i, x := range ch {
						if x != 0 {
							t.Fatalf("%s: %s[%d] = %v, want 0", what, name, i, x)
						}
					}
				}
			}
			tol := tolFor(dt)
			if k == 512 {
				tol *= 10
			}
			checkSecondSymmetric(t, what, got.second, n, k, p)
			checkZeroSums(t, what, got, n, k, p, tol, 0.8, d, v)
		}
	}
}

// TestEmptyBatch: n = 0.
//
// Gorgonia can declare a node with a zero dim, but it cannot compute on one: in Gorgonia
// v0.9.18 with tensor v0.9.24, a TapeMachine running gorgonia.Square on a [0,3] tensor panics
// with "index out of range [0] with length 0" in tensor's internal/execution.SquareIterF64, on
// the machine's own goroutine (so no caller can recover it). The ops therefore document that
// they reject zero dims when the node is built (ErrShape, "Gorgonia holds no empty
// tensors"); that is checked here. The empty batch itself is checked at the kernel level:
// every softmaxjet channel and VJP and every backward kernel accepts N = 0 (or a zero dim)
// with empty buffers and does nothing.
func TestEmptyBatch(t *testing.T) {
	cpuOnly(t)
	g := G.NewGraph()
	l0 := G.NewTensor(g, f64, 2, G.WithShape(0, 3), G.WithName("l0"))
	d0 := G.NewTensor(g, f64, 3, G.WithShape(0, 3, 2), G.WithName("d0"))
	v0 := G.NewTensor(g, f64, 2, G.WithShape(0, 3), G.WithName("v0"))
	y0 := G.NewTensor(g, f64, 2, G.WithShape(0, 3), G.WithName("y0"))
	for name, b := range map[string]func() (*G.Node, error){
		"SoftmaxJetValue":  func() (*G.Node, error) { return ops.SoftmaxJetValue(l0, d0, 1) },
		"SoftmaxJetHVP":    func() (*G.Node, error) { return ops.SoftmaxJetHVP(l0, d0, v0, 1) },
		"LogisticJetFirst": func() (*G.Node, error) { return ops.LogisticJetFirst(l0, d0, []float64{1, 1, 1}, []float64{0, 0, 0}) },
		"SoftmaxBackward":  func() (*G.Node, error) { return ops.SoftmaxBackward(y0, y0, 1) },
		"SiLU":             func() (*G.Node, error) { return ops.SiLU(y0) },
	} {
		n, err := b()
		if n != nil || !errors.Is(err, gatejet.ErrShape) {
			t.Errorf("%s with n = 0: got node %v, error %v; want ErrShape", name, n, err)
		}
	}

	sh := softmaxjet.Shape{N: 0, K: 3, P: 2}
	for _, bufs := range [][]float64{nil, {}} {
		e := bufs
		calls := map[string]func() error{
			"Value":       func() error { return softmaxjet.Softmax[float64]{InvTau: 1}.Value(e, e, e, sh) },
			"First":       func() error { return softmaxjet.Softmax[float64]{InvTau: 1}.First(e, e, e, sh) },
			"Second":      func() error { return softmaxjet.Softmax[float64]{InvTau: 1}.Second(e, e, e, sh) },
			"HVP":         func() error { return softmaxjet.Softmax[float64]{InvTau: 1}.HVP(e, e, e, e, sh) },
			"GaussNewton": func() error { return softmaxjet.Softmax[float64]{InvTau: 1}.GaussNewton(e, e, e, sh) },
			"SecondVJP":   func() error { return softmaxjet.Softmax[float64]{InvTau: 1}.SecondVJP(e, e, e, e, e, sh) },
			"HVPVJP":      func() error { return softmaxjet.Softmax[float64]{InvTau: 1}.HVPVJP(e, e, e, e, e, e, e, sh) },
			"LogisticSecond": func() error {
				return softmaxjet.Logistic[float64]{Alpha: []float64{1, 2, 3}, Beta: []float64{0, 0, 0}}.Second(e, e, e, sh)
			},
			"TowerChannels": func() error { return tower.TowerChannels(e, e, e, e, e, tower.Shape(sh), 1) },
			"SoftmaxBackward [0,3]": func() error {
				return backward.SoftmaxBackward(e, e, e, []int{0, 3}, 1)
			},
			"LogSoftmaxBackwardGrad [2,0,4]": func() error {
				return backward.LogSoftmaxBackwardGrad(e, e, e, e, e, []int{2, 0, 4}, 0)
			},
			"GELUBackward": func() error { return backward.GELUBackward(e, e, e) },
		}
		for name, f := range calls {
			if err, panicked := catch(f); err != nil {
				t.Errorf("kernel %s, N = 0 (buffers %v): panicked=%v: %v", name, bufs == nil, panicked, err)
			}
		}
	}
	// Float32 too, and wrong non-empty buffers are still an ErrSize with N = 0.
	if err := (softmaxjet.Softmax[float32]{InvTau: 1}).Second(nil, nil, nil, sh); err != nil {
		t.Errorf("float32 Second N = 0: %v", err)
	}
	if err := (softmaxjet.Softmax[float64]{InvTau: 1}).Second(make([]float64, 1), nil, nil, sh); !errors.Is(err, gatejet.ErrSize) {
		t.Errorf("Second N = 0 with a 1-element dst: %v, want ErrSize", err)
	}
}

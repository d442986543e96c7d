// Package golden reads the PyTorch golden files of testdata/golden, written by
// testdata/golden/make_golden.py with torch's autograd in float64 (see the script's docstring
// for the fields and for how to regenerate them), and turns them into dispatch.Calls with the
// expected outputs. The tests of internal/conformance (softmaxjet, backward and the Gorgonia
// ops) and of cudaops/internal/emu (the emulated device kernels) compare against them at Tol.
// The coordinate-jet files (CoordJets), written by make_coord_golden.py beside it and
// gzipped, are read by the tests of softmaxjet, ops, graphs and cudaops/internal/emu.
//
// A missing directory, no files, an unknown field or an array of the wrong length is an
// error, so a test that reads the files fails rather than passing on nothing.
package golden

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/gatejet/gatejet/internal/dispatch"
)

// Tol is the normwise relative error (RelErr) a float64 kernel must reach against the files.
const Tol = 1e-12

// Header is what every file says about itself, and the name it was read from.
type Header struct {
	File      string `json:"-"` // base name, for messages
	Generator string `json:"generator"`
	Torch     string `json:"torch"` // torch.__version__ of the run that wrote the file
}

func (h *Header) header() *Header { return h }

// VJP is the upstream gradient G on a channel and the gradients of Σ G⊙channel that torch
// found for the logits, the decoded values and (HVP only) the direction v.
type VJP struct {
	G        []float64 `json:"g"`
	DLogits  []float64 `json:"d_logits"`
	DDecoded []float64 `json:"d_decoded"`
	DV       []float64 `json:"d_v,omitempty"`
}

// Jet is one softmax_jet_*.json file: a batch of N rows of the softmax-gate row jet with
// every channel and its VJP, in the layouts of softmaxjet.Shape.
type Jet struct {
	Header
	N      int     `json:"N"`
	K      int     `json:"K"`
	P      int     `json:"P"`
	InvTau float64 `json:"inv_tau"`

	Logits      []float64 `json:"logits"`
	Decoded     []float64 `json:"decoded"`
	V           []float64 `json:"v"`
	Value       []float64 `json:"value"`
	First       []float64 `json:"first"`
	Second      []float64 `json:"second"`
	HVP         []float64 `json:"hvp"`
	GaussNewton []float64 `json:"gauss_newton"`

	ValueVJP       VJP `json:"value_vjp"`
	FirstVJP       VJP `json:"first_vjp"`
	SecondVJP      VJP `json:"second_vjp"`
	HVPVJP         VJP `json:"hvp_vjp"`
	GaussNewtonVJP VJP `json:"gauss_newton_vjp"`
}

// AxisFamily is softmax or log-softmax along one axis: the forward output y, the input
// gradient dx for the file's dy, and the double backward: the gradients of Σ g⊙dx(y, dy) with
// y and dy free variables.
type AxisFamily struct {
	Y      []float64 `json:"y"`
	DX     []float64 `json:"dx"`
	GradY  []float64 `json:"grad_y"`
	GradDY []float64 `json:"grad_dy"`
}

// Axis is one softmax_axis_*.json file: a row-major tensor of Shape reduced along Axis.
type Axis struct {
	Header
	Shape      []int      `json:"shape"`
	Axis       int        `json:"axis"`
	X          []float64  `json:"x"`
	DY         []float64  `json:"dy"`
	G          []float64  `json:"g"`
	Softmax    AxisFamily `json:"softmax"`
	LogSoftmax AxisFamily `json:"log_softmax"`
}

// Jets reads every softmax_jet_*.json of dir.
func Jets(dir string) ([]*Jet, error) { return load[Jet](dir, "softmax_jet_*.json") }

// Axes reads every softmax_axis_*.json of dir.
func Axes(dir string) ([]*Axis, error) { return load[Axis](dir, "softmax_axis_*.json") }

// file is a kind of golden file: its Header, and a check of its shape and arrays.
type file[F any] interface {
	*F
	header() *Header
	check() error
}

// load reads and checks every file of dir that matches pattern.
func load[F any, PF file[F]](dir, pattern string) ([]PF, error) {
	files, err := filepath.Glob(filepath.Join(dir, pattern))
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("golden: no %s in %s (regenerate with the make_*golden.py generators of testdata/golden)", pattern, dir)
	}
	out := make([]PF, 0, len(files))
	for _, f := range files {
		data, err := readFile(f)
		if err != nil {
			return nil, err
		}
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.DisallowUnknownFields() // a renamed field must not be skipped silently
		v := PF(new(F))
		if err := dec.Decode(v); err != nil {
			return nil, fmt.Errorf("golden: %s: %w", f, err)
		}
		h := v.header()
		h.File = filepath.Base(f)
		if h.Torch == "" {
			return nil, fmt.Errorf("golden: %s: no torch version", f)
		}
		if err := v.check(); err != nil {
			return nil, fmt.Errorf("golden: %s: %w", f, err)
		}
		out = append(out, v)
	}
	return out, nil
}

// maxFile bounds a file's (decompressed) size: the files are small, and a corrupt gzip stream
// must not fill the memory.
const maxFile = 64 << 20

// readFile reads a file, decompressing it when its name ends in .gz.
func readFile(name string) ([]byte, error) {
	data, err := os.ReadFile(name)
	if err != nil || !strings.HasSuffix(name, ".gz") {
		return data, err
	}
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("golden: %s: %w", name, err)
	}
	out, err := io.ReadAll(io.LimitReader(zr, maxFile+1))
	if err == nil && len(out) > maxFile {
		err = fmt.Errorf("more than %d bytes decompressed", maxFile)
	}
	if err != nil {
		return nil, fmt.Errorf("golden: %s: %w", name, err)
	}
	return out, nil
}

// field is an array of a file with the length its shape implies.
type field struct {
	name string
	got  []float64
	want int
}

func checkFields(fs []field) error {
	for _, f := range fs {
		if len(f.got) != f.want {
			return fmt.Errorf("%s has %d elements, want %d", f.name, len(f.got), f.want)
		}
		for i, x := range f.got {
			if math.IsNaN(x) || math.IsInf(x, 0) {
				return fmt.Errorf("%s[%d] = %v is not finite", f.name, i, x)
			}
		}
	}
	return nil
}

func (j *Jet) check() error {
	if j.N < 1 || j.K < 1 || j.P < 1 || j.N > 1<<10 || j.K > 1<<10 || j.P > 1<<10 || !(j.InvTau > 0) {
		return fmt.Errorf("bad shape N=%d K=%d P=%d inv_tau=%v", j.N, j.K, j.P, j.InvTau)
	}
	nk, nkp, np, nkk, nkkp := j.N*j.K, j.N*j.K*j.P, j.N*j.P, j.N*j.K*j.K, j.N*j.K*j.K*j.P
	fs := []field{
		{"logits", j.Logits, nk}, {"decoded", j.Decoded, nkp}, {"v", j.V, nk},
		{"value", j.Value, np}, {"first", j.First, nkp}, {"second", j.Second, nkkp},
		{"hvp", j.HVP, nkp}, {"gauss_newton", j.GaussNewton, nkk},
	}
	for _, v := range []struct {
		name string
		vjp  *VJP
		g    int
	}{{"value_vjp", &j.ValueVJP, np}, {"first_vjp", &j.FirstVJP, nkp}, {"second_vjp", &j.SecondVJP, nkkp}, {"hvp_vjp", &j.HVPVJP, nkp}, {"gauss_newton_vjp", &j.GaussNewtonVJP, nkk}} {
		dv := 0
		if v.vjp == &j.HVPVJP {
			dv = nk
		}
		fs = append(fs, field{v.name + ".g", v.vjp.G, v.g}, field{v.name + ".d_logits", v.vjp.DLogits, nk},
			field{v.name + ".d_decoded", v.vjp.DDecoded, nkp}, field{v.name + ".d_v", v.vjp.DV, dv})
	}
	return checkFields(fs)
}

func (a *Axis) check() error {
	n := 1
	for _, d := range a.Shape {
		if d < 1 || d > 1<<10 {
			return fmt.Errorf("bad shape %v", a.Shape)
		}
		n *= d
	}
	if len(a.Shape) < 1 || len(a.Shape) > 8 || a.Axis < 0 || a.Axis >= len(a.Shape) {
		return fmt.Errorf("bad shape %v or axis %d", a.Shape, a.Axis)
	}
	fs := []field{{"x", a.X, n}, {"dy", a.DY, n}, {"g", a.G, n}}
	for _, f := range []struct {
		name string
		fam  *AxisFamily
	}{{"softmax", &a.Softmax}, {"log_softmax", &a.LogSoftmax}} {
		fs = append(fs, field{f.name + ".y", f.fam.Y, n}, field{f.name + ".dx", f.fam.DX, n},
			field{f.name + ".grad_y", f.fam.GradY, n}, field{f.name + ".grad_dy", f.fam.GradDY, n})
	}
	return checkFields(fs)
}

// Case is one kernel call of a file with its expected outputs: Call has float64 inputs and
// zeroed outputs of the right lengths, Want[i] is the expected Call.Out[i].
type Case struct {
	Name string // file and kernel, for messages
	Call *dispatch.Call
	Want [][]float64
}

// Cases returns a Case for every softmax-gate jet kernel (dispatch.KernelJet*) on the file's
// data.
func (j *Jet) Cases() []Case {
	ints := []int{j.N, j.K, j.P}
	l, d := j.Logits, j.Decoded
	list := []struct {
		k    dispatch.Kernel
		in   [][]float64
		want [][]float64
	}{
		{dispatch.KernelJetValue, [][]float64{l, d}, [][]float64{j.Value}},
		{dispatch.KernelJetFirst, [][]float64{l, d}, [][]float64{j.First}},
		{dispatch.KernelJetSecond, [][]float64{l, d}, [][]float64{j.Second}},
		{dispatch.KernelJetHVP, [][]float64{l, d, j.V}, [][]float64{j.HVP}},
		{dispatch.KernelJetGaussNewton, [][]float64{l, d}, [][]float64{j.GaussNewton}},
		{dispatch.KernelJetValueVJP, [][]float64{l, d, j.ValueVJP.G}, [][]float64{j.ValueVJP.DLogits, j.ValueVJP.DDecoded}},
		{dispatch.KernelJetFirstVJP, [][]float64{l, d, j.FirstVJP.G}, [][]float64{j.FirstVJP.DLogits, j.FirstVJP.DDecoded}},
		{dispatch.KernelJetSecondVJP, [][]float64{l, d, j.SecondVJP.G}, [][]float64{j.SecondVJP.DLogits, j.SecondVJP.DDecoded}},
		{dispatch.KernelJetHVPVJP, [][]float64{l, d, j.V, j.HVPVJP.G}, [][]float64{j.HVPVJP.DLogits, j.HVPVJP.DDecoded, j.HVPVJP.DV}},
		{dispatch.KernelJetGaussNewtonVJP, [][]float64{l, d, j.GaussNewtonVJP.G}, [][]float64{j.GaussNewtonVJP.DLogits, j.GaussNewtonVJP.DDecoded}},
	}
	out := make([]Case, len(list))
	for i, c := range list {
		out[i] = newCase(j.File, c.k, ints, []float64{j.InvTau}, c.in, c.want)
	}
	return out
}

// Cases returns a Case for every softmax-family axis kernel (dispatch.KernelSoftmaxBackward
// and the others of dispatch.FamilyAxis) on the file's data, the shape folded to
// [outer, n, inner] around the axis.
func (a *Axis) Cases() []Case {
	outer, inner := 1, 1
	for i, d := range a.Shape {
		if i < a.Axis {
			outer *= d
		} else if i > a.Axis {
			inner *= d
		}
	}
	ints := []int{outer, a.Shape[a.Axis], inner}
	sm, ls := &a.Softmax, &a.LogSoftmax
	return []Case{
		newCase(a.File, dispatch.KernelSoftmaxBackward, ints, nil, [][]float64{sm.Y, a.DY}, [][]float64{sm.DX}),
		newCase(a.File, dispatch.KernelLogSoftmaxBackward, ints, nil, [][]float64{ls.Y, a.DY}, [][]float64{ls.DX}),
		newCase(a.File, dispatch.KernelSoftmaxBackwardGrad, ints, nil, [][]float64{sm.Y, a.DY, a.G}, [][]float64{sm.GradY, sm.GradDY}),
		newCase(a.File, dispatch.KernelLogSoftmaxBackwardGrad, ints, nil, [][]float64{ls.Y, a.DY, a.G}, [][]float64{ls.GradY, ls.GradDY}),
	}
}

func newCase(file string, k dispatch.Kernel, ints []int, floats []float64, in, want [][]float64) Case {
	c := &dispatch.Call{Kernel: k, DType: dispatch.Float64, Ints: slices.Clone(ints), Floats: slices.Clone(floats)}
	for i, x := range in {
		c.F64.In[i] = slices.Clone(x)
	}
	for i, w := range want {
		c.F64.Out[i] = make([]float64, len(w))
	}
	c.Work = c.OutputElements()
	return Case{Name: file + " " + k.String(), Call: c, Want: want}
}

// RelErr is the normwise relative error max|got − want| / max|want| (absolute when want is all
// zero). NaN in the same place on both sides counts as equal; NaN on one side only is +Inf,
// and so is a length mismatch.
func RelErr(got, want []float64) float64 {
	if len(got) != len(want) {
		return math.Inf(1)
	}
	diff, scale := 0.0, 0.0
	for i := range want {
		g, w := got[i], want[i]
		if math.IsNaN(g) || math.IsNaN(w) {
			if math.IsNaN(g) != math.IsNaN(w) {
				return math.Inf(1)
			}
			continue
		}
		if math.IsInf(g, 0) || math.IsInf(w, 0) {
			if g != w {
				return math.Inf(1)
			}
			continue
		}
		diff = math.Max(diff, math.Abs(g-w))
		scale = math.Max(scale, math.Abs(w))
	}
	if scale == 0 {
		return diff
	}
	return diff / scale
}

package main

import (
	"fmt"
	"strings"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/gatejet/gatejet/internal/floats"
	"github.com/gatejet/gatejet/ops"
	"github.com/gatejet/gatejet/softmaxjet"
)

// tapeRun is a graph compiled once into a TapeMachine, with its inputs bound: run executes
// it and resets the machine (the steady state of a training loop: build once, run
// repeatedly with Reset).
type tapeRun struct {
	m   G.VM
	out *G.Node
}

func newTapeRun(g *G.ExprGraph, out *G.Node, lets map[*G.Node]*tensor.Dense) (*tapeRun, error) {
	for n, v := range lets {
		if err := G.Let(n, v); err != nil {
			return nil, err
		}
	}
	return &tapeRun{m: G.NewTapeMachine(g), out: out}, nil
}

func (t *tapeRun) run() error {
	err := t.m.RunAll()
	t.m.Reset()
	return err
}

func (t *tapeRun) close() { t.m.Close() }

// value returns the output node's value as float64.
func (t *tapeRun) value() []float64 { return elements(t.out.Value()) }

// elements copies a tensor's elements as float64.
func elements(v G.Value) []float64 {
	switch d := v.Data().(type) {
	case []float64:
		return append([]float64(nil), d...)
	case []float32:
		return floats.To64(d)
	}
	panic(fmt.Sprintf("unexpected data %T", v.Data()))
}

// jetOpRun builds logits [N,K] and decoded [N,K,P] inputs and one jet op of ops on them.
func jetOpRun(dt tensor.Dtype, sh softmaxjet.Shape, l, d, v []float64, build func(l, d, v *G.Node) (*G.Node, error)) (*tapeRun, error) {
	g := G.NewGraph()
	ln := G.NewMatrix(g, dt, G.WithShape(sh.N, sh.K), G.WithName("logits"))
	dn := G.NewTensor(g, dt, 3, G.WithShape(sh.N, sh.K, sh.P), G.WithName("decoded"))
	var vn *G.Node
	if v != nil {
		vn = G.NewMatrix(g, dt, G.WithShape(sh.N, sh.K), G.WithName("v"))
	}
	out, err := build(ln, dn, vn)
	if err != nil {
		return nil, err
	}
	lets := map[*G.Node]*tensor.Dense{ln: dense(dt, []int{sh.N, sh.K}, l), dn: dense(dt, []int{sh.N, sh.K, sh.P}, d)}
	if v != nil {
		lets[vn] = dense(dt, []int{sh.N, sh.K}, v)
	}
	return newTapeRun(g, out, lets)
}

// dense makes a tensor of dtype dt holding x.
func dense(dt tensor.Dtype, shape []int, x []float64) *tensor.Dense {
	if dt == tensor.Float64 {
		return tensor.New(tensor.WithShape(shape...), tensor.WithBacking(append([]float64(nil), x...)))
	}
	f := make([]float32, len(x))
	for i, v := range x {
		f[i] = float32(v)
	}
	return tensor.New(tensor.WithShape(shape...), tensor.WithBacking(f))
}

// gorgoniaFirst is the first channel by Gorgonia's own reverse-mode autodiff. The value
// channel is built from Gorgonia's primitives, ẑ = BatchedMatMul(softmax(s·l) [N,1,K],
// D [N,K,P]) [N,P], and first[n][a][c] = ∂ẑ[n][c]/∂l[n][a] is the Jacobian of ẑ in the
// logits. Rows are independent, so one reverse pass of the scalar Σ_n ẑ[n][c] gives column c
// of every row's Jacobian at once: the channel takes P forward-and-backward passes of the
// machine (a mask input W selects the column), each writing its [N,K] gradient into
// first[:, :, c]. That is the cheapest honest route through Gorgonia's autodiff; Gorgonia
// has no forward mode and cannot differentiate its softmax gradient again, so it has no
// route to the second channel at all.
type gorgoniaFirst struct {
	sh   softmaxjet.Shape
	m    G.VM
	w    *G.Node
	dl   *G.Node
	mask []*tensor.Dense // one [N,P] mask per column
	out  []float64       // first [N,K,P]
}

func newGorgoniaFirst(sh softmaxjet.Shape, s float64, l, d []float64) (*gorgoniaFirst, error) {
	g := G.NewGraph()
	ln := G.NewMatrix(g, tensor.Float64, G.WithShape(sh.N, sh.K), G.WithName("logits"))
	dn := G.NewTensor(g, tensor.Float64, 3, G.WithShape(sh.N, sh.K, sh.P), G.WithName("decoded"))
	wn := G.NewMatrix(g, tensor.Float64, G.WithShape(sh.N, sh.P), G.WithName("mask"))
	z, err := G.SoftMax(G.Must(G.Mul(ln, G.NewConstant(s))), 1)
	if err != nil {
		return nil, err
	}
	m, err := G.BatchedMatMul(G.Must(G.Reshape(z, tensor.Shape{sh.N, 1, sh.K})), dn)
	if err != nil {
		return nil, err
	}
	val := G.Must(G.Reshape(m, tensor.Shape{sh.N, sh.P}))
	cost := G.Must(G.Sum(G.Must(G.HadamardProd(val, wn))))
	grads, err := G.Grad(cost, ln)
	if err != nil {
		return nil, err
	}
	if err := G.Let(ln, dense(tensor.Float64, []int{sh.N, sh.K}, l)); err != nil {
		return nil, err
	}
	if err := G.Let(dn, dense(tensor.Float64, []int{sh.N, sh.K, sh.P}, d)); err != nil {
		return nil, err
	}
	gf := &gorgoniaFirst{sh: sh, m: G.NewTapeMachine(g), w: wn, dl: grads[0], out: make([]float64, sh.FirstLen())}
	for c := 0; c < sh.P; c++ {
		w := make([]float64, sh.N*sh.P)
		for n := 0; n < sh.N; n++ {
			w[n*sh.P+c] = 1
		}
		gf.mask = append(gf.mask, dense(tensor.Float64, []int{sh.N, sh.P}, w))
	}
	return gf, nil
}

// run computes the whole first channel: P passes.
func (gf *gorgoniaFirst) run() error {
	sh := gf.sh
	for c := 0; c < sh.P; c++ {
		if err := G.Let(gf.w, gf.mask[c]); err != nil {
			return err
		}
		if err := gf.m.RunAll(); err != nil {
			return err
		}
		dl := gf.dl.Value().Data().([]float64)
		for i, x := range dl { // i = n·K + a
			gf.out[i*sh.P+c] = x
		}
		gf.m.Reset()
	}
	return nil
}

func (gf *gorgoniaFirst) close() { gf.m.Close() }

// softmaxGrads returns the preallocating Do of gatejet's softmax backward op and of Gorgonia's
// own softmax gradient op (softmaxDiffOp, the op gorgonia.Grad puts behind gorgonia.SoftMax),
// both for a tensor of the given shape and axis, with the inputs they take: gatejet's op takes
// (y, dy); Gorgonia's takes (x, y, dy) and ignores x.
func softmaxGrads(dt tensor.Dtype, shape []int, axis int) (ours, theirs G.UsePreallocDoer, err error) {
	g := G.NewGraph()
	x := G.NewTensor(g, dt, len(shape), G.WithShape(shape...), G.WithName("x"))
	y, err := G.SoftMax(x, axis)
	if err != nil {
		return nil, nil, err
	}
	if _, err := G.Grad(G.Must(G.Sum(y)), x); err != nil {
		return nil, nil, err
	}
	for _, n := range g.AllNodes() {
		if n.Op() != nil && strings.HasPrefix(n.Op().String(), "SoftmaxDiff") {
			theirs, _ = n.Op().(G.UsePreallocDoer)
		}
	}
	if theirs == nil {
		return nil, nil, fmt.Errorf("no SoftmaxDiff op in the gradient of gorgonia.SoftMax")
	}
	g2 := G.NewGraph()
	yn := G.NewTensor(g2, dt, len(shape), G.WithShape(shape...), G.WithName("y"))
	dyn := G.NewTensor(g2, dt, len(shape), G.WithShape(shape...), G.WithName("dy"))
	dx, err := ops.SoftmaxBackward(yn, dyn, axis)
	if err != nil {
		return nil, nil, err
	}
	ours, _ = dx.Op().(G.UsePreallocDoer)
	return ours, theirs, nil
}

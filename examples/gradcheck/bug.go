package main

import (
	"fmt"
	"hash"

	"github.com/chewxy/hm"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// wrongSquare returns x² elementwise through an Op whose gradient is deliberately wrong:
// it returns g·x where the derivative of x² needs g·2x. It is here only to show what
// GradCheck reports when an op's gradient is wrong (the -bug flag).
func wrongSquare(x *G.Node) (*G.Node, error) {
	return G.ApplyOp(wrongSquareOp{}, x)
}

type wrongSquareOp struct{}

func (wrongSquareOp) Arity() int { return 1 }

func (wrongSquareOp) Type() hm.Type {
	a := hm.TypeVariable('a')
	return hm.NewFnType(a, a)
}

func (wrongSquareOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	s, ok := in[0].(tensor.Shape)
	if !ok {
		return nil, fmt.Errorf("wrongSquare: want a tensor.Shape, got %T", in[0])
	}
	return s.Clone(), nil
}

func (wrongSquareOp) Do(in ...G.Value) (G.Value, error) {
	x, ok := in[0].(tensor.Tensor)
	if !ok {
		return nil, fmt.Errorf("wrongSquare: want a tensor, got %T", in[0])
	}
	return tensor.Mul(x, x)
}

func (wrongSquareOp) ReturnsPtr() bool      { return false }
func (wrongSquareOp) CallsExtern() bool     { return false }
func (wrongSquareOp) OverwritesInput() int  { return -1 }
func (wrongSquareOp) WriteHash(h hash.Hash) { h.Write([]byte("wrongSquare")) }
func (wrongSquareOp) Hashcode() uint32      { return 0x5eed0bad }
func (wrongSquareOp) String() string        { return "wrongSquare" }

func (wrongSquareOp) DiffWRT(int) []bool { return []bool{true} }

// SymDiff (tape machine): the bug, g·x instead of 2·g·x.
func (wrongSquareOp) SymDiff(in G.Nodes, _, grad *G.Node) (G.Nodes, error) {
	dx, err := G.HadamardProd(grad, in[0])
	return G.Nodes{dx}, err
}

// DoDiff (lisp machine): the same bug, accumulated into x's gradient.
func (wrongSquareOp) DoDiff(_ G.ExecutionContext, in G.Nodes, out *G.Node) error {
	g, err := out.Grad()
	if err != nil {
		return err
	}
	dx, err := in[0].Grad()
	if err != nil {
		return err
	}
	prod, err := tensor.Mul(g, in[0].Value())
	if err != nil {
		return err
	}
	_, err = tensor.Add(dx, prod, tensor.UseUnsafe())
	return err
}

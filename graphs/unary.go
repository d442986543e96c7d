package graphs

import (
	"hash"
	"hash/fnv"

	"github.com/gatejet/gatejet"
	"github.com/gatejet/gatejet/internal/check"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// What the one-input ops of this package (SoftArgmin, LogDetPlusRidge) share.

// floatNode returns the dtype of n, the argument arg of the graph builder op: an ErrParam
// error for a nil node, an ErrDType error unless the dtype is Float64 or Float32.
func floatNode(op, arg string, n *gorgonia.Node) (tensor.Dtype, error) {
	if n == nil {
		return tensor.Dtype{}, check.Errorf(gatejet.ErrParam, op, arg, "nil node")
	}
	dt := n.Dtype()
	if dt != tensor.Float64 && dt != tensor.Float32 {
		return tensor.Dtype{}, check.Errorf(gatejet.ErrDType, op, arg, "want Float64 or Float32, got %v", dt)
	}
	return dt, nil
}

// unaryGrads returns what the DoDiff of a one-input op needs on a LispMachine: up, the
// gradient that reached its output out, and dIn, the live gradient of its input in[0] (the
// argument arg of op), which DoDiff adds to. A wrong number of inputs, a nil node or a
// node without a gradient is an ErrParam error.
func unaryGrads(op, arg string, in gorgonia.Nodes, out *gorgonia.Node) (up, dIn gorgonia.Value, err error) {
	if len(in) != 1 {
		return nil, nil, check.Errorf(gatejet.ErrParam, op, "", "want 1 input, got %d", len(in))
	}
	if in[0] == nil || out == nil {
		return nil, nil, check.Errorf(gatejet.ErrParam, op, "", "nil node")
	}
	if up, err = out.Grad(); err != nil {
		return nil, nil, check.Errorf(gatejet.ErrParam, op, "output", "no gradient: %v", err)
	}
	if dIn, err = in[0].Grad(); err != nil {
		return nil, nil, check.Errorf(gatejet.ErrParam, op, arg, "no gradient: %v", err)
	}
	return up, dIn, nil
}

// hashOf is an op's Hashcode: the FNV-32a hash of what it writes with WriteHash.
func hashOf(op interface{ WriteHash(hash.Hash) }) uint32 {
	h := fnv.New32a()
	op.WriteHash(h)
	return h.Sum32()
}

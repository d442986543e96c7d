package graphs

import (
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/gatejet/gatejet"
	"github.com/gatejet/gatejet/internal/check"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

const opGrad = "graphs.Grad"

// gradMu serialises every symbolic differentiation this package does (Grad, GradCheck,
// RequireGradients). Gorgonia v0.9.18's differentiation is not safe for concurrent use even
// on graphs that share nothing: gorgonia.Grad seeds every graph with one shared constant node,
// whose hash is written on first use, and SymDiff of its ops may touch shared nodes too.
var gradMu sync.Mutex

// Grad returns the gradient of the scalar cost with respect to each node of wrt, as new
// nodes of the cost's graph, built from each op's SymDiff: reverse-mode differentiation,
// like gorgonia.Grad, but one that can be called again on a cost that contains gradients.
//
// gorgonia.Grad (v0.9.18) records every derivative it builds on the node it differentiates
// and reuses it in later calls, whatever the cost: after ∇c = gorgonia.Grad(c, x), the call
// gorgonia.Grad(Σ(∇c)², x) finds x's old derivative and silently returns a wrong gradient,
// often ∇c itself. Grad
// keeps its bookkeeping to the call, so it can differentiate gradients: gradient penalties,
// Hessian-vector products of a whole loss (Grad of ⟨Grad(c, x), v⟩), Newton steps. It leaves
// the nodes' recorded derivatives (Node.Deriv) alone.
//
// Migrating from gorgonia.SoftMax and gorgonia.Grad: build the softmax with ops.Softmax
// (Gorgonia's softmax gradient cannot be differentiated again; Grad names it and says so)
// and take every gradient that is differentiated again with Grad:
//
//	p := gorgonia.Must(gorgonia.SoftMax(z))     // before
//	p, err := ops.Softmax(z, -1)                 // after (ops.LogSoftmax for gorgonia.LogSoftMax)
//	g, err := graphs.Grad(loss, w)               // ∇loss, in place of gorgonia.Grad
//	hv, err := graphs.Grad(penalty(g[0]), w)     // second order: gorgonia.Grad would return ∇loss
//
// Grad builds no Node.Deriv links, which Gorgonia's solvers and BindDualValues read: to train
// with a Gorgonia solver, differentiate the loss with gorgonia.Grad, and use Grad for what
// gorgonia.Grad gets wrong. Calls of Grad (and of GradCheck) from several goroutines are
// serialised by one lock; code that calls gorgonia.Grad while other goroutines may be
// differentiating must serialise those calls itself, since Gorgonia's differentiation shares
// state across graphs.
//
// Every op on a path from a node of wrt to the cost must be a gorgonia.SDOp: Gorgonia's own
// differentiable ops, and every gatejet op whose gradient ops are differentiable in turn
// (see the ops package). A node of wrt may be any node of the graph (an input, usually); the
// same node may appear twice. Grad adds nodes to the graph and changes no value.
//
// Errors are *gatejet.Error values: ErrParam for a nil or foreign node or one the cost does
// not depend on, ErrRank for a cost that is not a scalar, ErrDType for a cost that is not
// float64 or float32, ErrNotDifferentiable, naming the op, when a node of wrt reaches the
// cost through an op that cannot be differentiated symbolically (rather than a gradient
// that silently lacks that path), and gatejet.ErrSize,
// naming the node, when a gradient op's output would exceed gatejet.MaxBytes (raise it with
// gatejet.SetMaxBytes).
func Grad(cost *gorgonia.Node, wrt ...*gorgonia.Node) (gorgonia.Nodes, error) {
	if err := checkGrad(cost, wrt); err != nil {
		return nil, err
	}
	gradMu.Lock()
	defer gradMu.Unlock()
	return backprop(cost, wrt)
}

func checkGrad(cost *gorgonia.Node, wrt gorgonia.Nodes) error {
	if cost == nil {
		return check.Errorf(gatejet.ErrParam, opGrad, "cost", "nil node")
	}
	if !cost.IsScalar() {
		return check.Errorf(gatejet.ErrRank, opGrad, "cost", "want a scalar cost, got shape %v", cost.Shape())
	}
	if dt := cost.Dtype(); dt != tensor.Float64 && dt != tensor.Float32 {
		return check.Errorf(gatejet.ErrDType, opGrad, "cost", "want float64 or float32, got %v", dt)
	}
	if len(wrt) == 0 {
		return check.Errorf(gatejet.ErrParam, opGrad, "wrt", "no nodes to differentiate with respect to")
	}
	for i, n := range wrt {
		switch {
		case n == nil:
			return check.Errorf(gatejet.ErrParam, opGrad, "wrt", "node %d is nil", i)
		case n.Graph() != cost.Graph():
			return check.Errorf(gatejet.ErrParam, opGrad, "wrt", "node %d (%s) is not in the cost's graph", i, nodeName(n))
		}
	}
	return nil
}

// backprop is Grad after its checks, under gradMu.
func backprop(cost *gorgonia.Node, wrt gorgonia.Nodes) (gorgonia.Nodes, error) {
	g := cost.Graph()
	children := func(n *gorgonia.Node) gorgonia.Nodes {
		it := g.From(n.ID())
		if it == nil {
			return nil
		}
		out := make(gorgonia.Nodes, 0, it.Len())
		for it.Next() {
			out = append(out, it.Node().(*gorgonia.Node))
		}
		return out
	}

	// The cost's subgraph in topological order, the cost first (a post-order walk, reversed).
	var order gorgonia.Nodes
	kids := map[*gorgonia.Node]gorgonia.Nodes{}
	var visit func(n *gorgonia.Node)
	visit = func(n *gorgonia.Node) {
		if _, seen := kids[n]; seen {
			return
		}
		kids[n] = children(n)
		for _, c := range kids[n] {
			visit(c)
		}
		order = append(order, n)
	}
	visit(cost)
	for i, j := 0, len(order)-1; i < j; i, j = i+1, j-1 {
		order[i], order[j] = order[j], order[i]
	}

	// Which children each node is differentiable with respect to; nil for a node whose op
	// cannot be differentiated (no SymDiff) and for inputs.
	diffs := make(map[*gorgonia.Node][]bool, len(order))
	for _, n := range order {
		if op, ok := n.Op().(gorgonia.SDOp); ok {
			diffs[n] = diffWRT(op, len(kids[n]))
		}
	}

	// reaches: nodes the cost depends on differentiably; affected: nodes that depend
	// differentiably on a node of wrt. Only nodes in both carry gradient.
	reaches := map[*gorgonia.Node]bool{cost: true}
	for _, n := range order {
		if !reaches[n] {
			continue
		}
		for i, c := range kids[n] {
			if i < len(diffs[n]) && diffs[n][i] {
				reaches[c] = true
			}
		}
	}
	affected := make(map[*gorgonia.Node]bool, len(order))
	for _, n := range wrt {
		affected[n] = true
	}
	for i := len(order) - 1; i >= 0; i-- {
		n := order[i]
		for j, c := range kids[n] {
			if affected[c] && j < len(diffs[n]) && diffs[n][j] {
				affected[n] = true
			}
		}
	}
	for i, n := range wrt {
		if !reaches[n] {
			return nil, notDifferentiable(n, i, order, kids, diffs, reaches)
		}
	}
	// A node the cost depends on whose op has no usable DiffWRT (not a gorgonia.SDOp, or
	// one whose DiffWRT panics) passes no gradient to its inputs: where an input depends on
	// a node of wrt, the gradient would silently lack that path.
	for _, n := range order {
		if !reaches[n] || diffs[n] != nil {
			continue
		}
		for i, c := range kids[n] {
			if affected[c] {
				return nil, check.Errorf(ErrNotDifferentiable, opGrad, nodeName(n),
					"op %v cannot be differentiated, and its input %d (%s) depends on the nodes differentiated with respect to%s",
					n.Op(), i, nodeName(c), hint(n.Op()))
			}
		}
	}

	var one gorgonia.Value = gorgonia.NewF64(1)
	if cost.Dtype() == tensor.Float32 {
		one = gorgonia.NewF32(1)
	}
	grads := map[*gorgonia.Node]gorgonia.Nodes{cost: {g.Constant(one)}}
	sum := map[*gorgonia.Node]*gorgonia.Node{}
	for _, n := range order {
		if !reaches[n] || !affected[n] {
			continue
		}
		gn, err := reduceAdd(grads[n])
		if err != nil {
			return nil, check.Errorf(ErrNotDifferentiable, opGrad, nodeName(n),
				"summing the gradients that reach it: %v", err)
		}
		sum[n] = gn
		op, ok := n.Op().(gorgonia.SDOp)
		if !ok {
			continue // an input (or a node of wrt below which nothing is needed)
		}
		cg, err := symDiff(op, kids[n], n, gn)
		if err != nil {
			// A gradient op refused for its size can be built under a larger
			// gatejet.MaxBytes: that is a size error, not a missing derivative.
			kind := ErrNotDifferentiable
			if errors.Is(err, gatejet.ErrSize) {
				kind = gatejet.ErrSize
			}
			return nil, check.Errorf(kind, opGrad, nodeName(n), "op %v: SymDiff: %v", n.Op(), err)
		}
		for i, c := range kids[n] {
			if !diffs[n][i] || !affected[c] {
				continue
			}
			if i >= len(cg) || cg[i] == nil {
				return nil, check.Errorf(ErrNotDifferentiable, opGrad, nodeName(n),
					"op %v: SymDiff gave no gradient for its differentiable input %d", n.Op(), i)
			}
			grads[c] = append(grads[c], cg[i])
		}
	}
	out := make(gorgonia.Nodes, len(wrt))
	for i, n := range wrt {
		out[i] = sum[n]
	}
	return out, nil
}

// notDifferentiable explains why node i of wrt gets no gradient: the op through which it
// reaches the cost cannot be differentiated symbolically, or it does not reach the cost.
func notDifferentiable(n *gorgonia.Node, i int, order gorgonia.Nodes, kids map[*gorgonia.Node]gorgonia.Nodes, diffs map[*gorgonia.Node][]bool, reaches map[*gorgonia.Node]bool) error {
	below := map[*gorgonia.Node]bool{n: true}
	for j := len(order) - 1; j >= 0; j-- {
		m := order[j]
		for k, c := range kids[m] {
			if !below[c] {
				continue
			}
			below[m] = true
			if reaches[m] && (k >= len(diffs[m]) || !diffs[m][k]) {
				return check.Errorf(ErrNotDifferentiable, opGrad, "wrt",
					"node %d (%s) reaches the cost only through op %v of node %s, which cannot be differentiated with respect to its input %d (%s)%s",
					i, nodeName(n), m.Op(), nodeName(m), k, nodeName(c), hint(m.Op()))
			}
		}
	}
	return check.Errorf(gatejet.ErrParam, opGrad, "wrt",
		"the cost does not depend on node %d (%s)", i, nodeName(n))
}

// hint says what to use instead of an op of Gorgonia's that cannot be differentiated.
func hint(op gorgonia.Op) string {
	if strings.HasPrefix(fmt.Sprint(op), "SoftmaxDiff") {
		return ": it is the gradient of gorgonia.SoftMax (or LogSoftMax), which Gorgonia cannot differentiate again; " +
			"build the softmax with ops.Softmax(x, axis) (or ops.LogSoftmax), whose gradient is differentiable"
	}
	return ""
}

// reduceAdd sums the gradient terms that reach a node.
func reduceAdd(terms gorgonia.Nodes) (n *gorgonia.Node, err error) {
	if len(terms) == 1 {
		return terms[0], nil
	}
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic: %v", r)
		}
	}()
	return gorgonia.ReduceAdd(terms)
}

// diffWRT calls an op's DiffWRT; an op that panics there (some of Gorgonia's do for an
// unexpected arity) counts as differentiable with respect to nothing.
func diffWRT(op gorgonia.SDOp, n int) (d []bool) {
	defer func() {
		if r := recover(); r != nil {
			d = nil
		}
	}()
	return op.DiffWRT(n)
}

// symDiff calls an op's SymDiff, turning a panic of Gorgonia's into an error.
func symDiff(op gorgonia.SDOp, inputs gorgonia.Nodes, output, grad *gorgonia.Node) (g gorgonia.Nodes, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic: %v", r)
		}
	}()
	return op.SymDiff(inputs, output, grad)
}

// Package bridge hands package graphs the builders of its own ops (SoftArgmin and
// LogDetPlusRidge), which live in package ops: they embed ops' seam (options, ReuseOutput,
// path reporting, dispatch through cudaops), and ops cannot import graphs. Package ops sets
// the builders when it is initialised; graphs, which imports ops, calls them. opts is the
// caller's []ops.Option, which this package cannot name.
package bridge

import "gorgonia.org/gorgonia"

var (
	// SoftArgmin builds graphs.SoftArgmin's node.
	SoftArgmin func(costs *gorgonia.Node, invTau float64, opts any) (*gorgonia.Node, error)
	// LogDetPlusRidge builds graphs.LogDetPlusRidge's node.
	LogDetPlusRidge func(H *gorgonia.Node, lambda float64, opts any) (*gorgonia.Node, error)
)

// Package graphops hands package graphs the two ops it offers but package ops implements
// (they are built on the ops' seam): SoftArgmin and LogDetPlusRidge. Package ops sets the
// builders at initialisation; graphs imports ops, so they are set before graphs calls them.
// Users build these nodes with graphs.SoftArgmin and graphs.LogDetPlusRidge.
package graphops

import "gorgonia.org/gorgonia"

// Builders take the caller's options as given (a []ops.Option, which this package cannot
// name without importing ops).
var (
	SoftArgmin      func(costs *gorgonia.Node, invTau float64, opts any) (*gorgonia.Node, error)
	LogDetPlusRidge func(H *gorgonia.Node, lambda float64, opts any) (*gorgonia.Node, error)
)

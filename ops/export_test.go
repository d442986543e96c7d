package ops

import "github.com/gatejet/gatejet/internal/kernel"

// Exports for the external test package ops_test, so that its suites can run every gate of
// the table (kernel.Gates), not only those with exported constructors.

// JetOp builds channel c of gate g called with floats as they are, the route the jet cases
// take (jetWith).
var JetOp = jetWith

// SampleFloats returns the floats the jet cases call a gate other than the built-in ones
// with, for K atoms (sampleFloats).
var SampleFloats = sampleFloats

// launchKernel is the kernel of the op's launch (TestEveryOpRunsOnTheBackend).
func (s *seam) launchKernel() kernel.ID { return s.plan.k }

// CoordOp builds gate g's coordinate jet of channel c on the inputs in, called with floats as
// they are (coordWith).
var CoordOp = coordWith

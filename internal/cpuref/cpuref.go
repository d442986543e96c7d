// Package cpuref runs a dispatch.Call on the CPU, with the CPU function that the kernel table
// (internal/kernel) declares for its kernel. It is the oracle of the emulator and device tests
// and the CPU side of the benchmarks.
package cpuref

import (
	"github.com/gatejet/gatejet/internal/dispatch"
	"github.com/gatejet/gatejet/internal/kernel"
)

// Run computes c on the CPU, writing its outputs. c must pass Check.
func Run(c *dispatch.Call) error {
	const op = "cpuref.Run"
	if err := c.Check(); err != nil {
		return err
	}
	if c.DType == dispatch.Float32 {
		return kernel.Run(op, kernel.ID(c.Kernel), &c.F32, c.Ints, c.Floats)
	}
	return kernel.Run(op, kernel.ID(c.Kernel), &c.F64, c.Ints, c.Floats)
}

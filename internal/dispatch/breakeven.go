package dispatch

import (
	"math"

	"github.com/gatejet/gatejet/internal/kernel"
)

// The break-even model: until the costs are measured on a device (docs/gpu.md says how, with
// cudaops/gpubench), ModeAuto's default break-even of each kernel comes from these stated
// assumptions. A device call costs a fixed ModelCallSeconds plus the transfer of every operand
// element (inputs to the device, outputs back) at ModelHostDeviceBytesPerSecond; the device's
// own compute is taken as hidden behind the transfers. The CPU costs
// ModelCPUSecondsPerElement of the kernel's family for every operand element. The break-even
// is the Work (output elements) where the two meet.
const (
	// ModelHostDeviceBytesPerSecond is the assumed effective bandwidth of the backend's
	// host↔device copies through pinned staging memory: 12 GB/s, a PCIe 3.0 x16 link's
	// practical rate and half a 4.0 link's.
	ModelHostDeviceBytesPerSecond = 12e9
	// ModelCallSeconds is the assumed fixed cost of one device call: the launch, the one
	// stream synchronisation and the setup of its copies (20 µs).
	ModelCallSeconds = 20e-6
	// ModelElementBytes is the element size of the model's operands: float64, the dearer
	// case to copy, so float32 calls get a conservative (high) break-even.
	ModelElementBytes = 8
	// ModelSize is every size of the representative call at which a kernel's operand lengths
	// are evaluated (N = K = P = 16 for a row jet, the benchmark's K and P).
	ModelSize = 16
)

// ModelCPUSecondsPerElement is the model's CPU time per operand element (inputs and outputs)
// of a kernel of family f. The values are rounded from the CPU functions of the kernel table
// timed on one core of an x86-64 build machine, float64 (ns per operand element): element-wise
// 0.3 (ReLU) to 3 (SiLU, GELU), axis 0.2 (softmax backward) to 1.9 (softmax forward), row
// jets 0.2 (first, second) to 1.7 (Gauss-Newton, the VJPs).
func ModelCPUSecondsPerElement(f Family) float64 {
	switch f {
	case FamilyAxis, FamilyRowJet, FamilyCoordJet:
		return 1e-9
	}
	return 2e-9 // element-wise and batch kernels
}

// breakEvenModel holds the model's parameters, so that tests can vary them.
type breakEvenModel struct {
	bytesPerSecond, callSeconds, elementBytes float64
	cpu                                       func(Family) float64
}

var defaultModel = breakEvenModel{ModelHostDeviceBytesPerSecond, ModelCallSeconds, ModelElementBytes, ModelCPUSecondsPerElement}

// DefaultBreakEven is kernel k's ModeAuto break-even, in output elements, from the break-even
// model (until measured): the smallest Work for which
//
//	ModelCallSeconds + r·Work·ModelElementBytes/ModelHostDeviceBytesPerSecond ≤ r·Work·ModelCPUSecondsPerElement(family)
//
// where r is the kernel's operand elements per output element at the representative sizes
// (ModelSize). When the copies alone cost more than the CPU function it is math.MaxInt: the
// device never pays, and ModeAuto keeps the kernel on the CPU. An unknown kernel or one without
// outputs also gets math.MaxInt.
func DefaultBreakEven(k Kernel) int { return defaultModel.breakEven(k) }

func (m breakEvenModel) breakEven(k Kernel) int {
	sp := kernel.ID(k).Spec()
	r := operandsPerOutput(sp)
	if r == 0 {
		return math.MaxInt
	}
	// Seconds the device saves per output element, the fixed cost aside.
	saved := r * (m.cpu(sp.Family) - m.elementBytes/m.bytesPerSecond)
	if !(saved > 0) {
		return math.MaxInt
	}
	w := math.Ceil(m.callSeconds / saved)
	if !(w < math.MaxInt/2) {
		return math.MaxInt
	}
	return max(int(w), 1)
}

// operandsPerOutput is r of the model: the kernel's operand elements (inputs and outputs) per
// output element at the representative sizes (ModelSize); 0 for a nil spec, a kernel without
// sizes or one without outputs.
func operandsPerOutput(sp *kernel.Spec) float64 {
	if sp == nil || sp.Family.NumInts() == 0 {
		return 0
	}
	sizes := [4]int{ModelSize, ModelSize, ModelSize, ModelSize}
	ints := sizes[:min(sp.Family.NumInts(), len(sizes))]
	var moved, out float64
	for _, d := range sp.In {
		n, _ := d.Len(ints)
		moved += float64(n)
	}
	for _, d := range sp.Out {
		n, _ := d.Len(ints)
		moved += float64(n)
		out += float64(n)
	}
	if out == 0 {
		return 0
	}
	return moved / out
}

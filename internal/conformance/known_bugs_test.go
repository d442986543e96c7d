package conformance

import (
	"errors"
	"testing"

	G "gorgonia.org/gorgonia"

	"github.com/gatejet/gatejet"
	"github.com/gatejet/gatejet/cudaops"
	"github.com/gatejet/gatejet/ops"
)

// Known bugs: each test here fails on the current code and is skipped until the lead fixes
// it. Remove the t.Skip line to reproduce.

// TestKnownBugBackwardRank9Arg: ops.SoftmaxBackward and ops.LogSoftmaxBackward report a rank
// outside 1 to 8 with Arg "shape" (passed through from backward.AxisLayout), which names no
// argument of the constructor; a scalar y is reported with Arg "y". The argument at fault is
// y (dy has been checked to have y's shape).
func TestKnownBugBackwardRank9Arg(t *testing.T) {
	g := G.NewGraph()
	y := G.NewTensor(g, f64, 9, G.WithShape(1, 1, 1, 1, 1, 1, 1, 1, 2), G.WithName("y"))
	for _, f := range []func(y, dy *G.Node, axis int) (*G.Node, error){ops.SoftmaxBackward, ops.LogSoftmaxBackward} {
		_, err := f(y, y, 0)
		var ge *gatejet.Error
		if !errors.As(err, &ge) || !errors.Is(err, gatejet.ErrRank) {
			t.Fatalf("want an ErrRank *gatejet.Error, got %v", err)
		}
		if ge.Arg != "y" {
			t.Errorf("%s: want Arg \"y\", got %q (%v)", ge.Op, ge.Arg, err)
		}
	}
}

// TestKnownBugFailedRequiredRunCountedAsGPU: ops.PathCounts documents GPU as "the registered
// backend ran the kernel", and LastPath as the path of the op's most recent computation. Under
// ModeRequired with no backend (or a failing one) the run fails with ErrDevice, yet the op
// records cudaops.PathGPU (LastPath gpu, PathCounts{GPU: 1}); cudaops.Stats itself counts it as
// a device error, not a GPU run. A failed computation should not be recorded as a GPU run.
func TestKnownBugFailedRequiredRunCountedAsGPU(t *testing.T) {
	if b := cudaops.Active(); b != nil {
		t.Skipf("backend %q is registered", b.Name())
	}
	setMode(t, cudaops.ModeRequired)
	dg := buildDeviceGraph(t, f64, false)
	if _, err := runTape(dg.g, dg.outs()...); err == nil {
		t.Fatal("a required device without a backend ran")
	}
	c := dg.second.Op().(ops.PathReporter).PathCounts()
	if c.GPU != 0 {
		t.Errorf("PathCounts %+v after a failed required run: GPU counts a kernel no backend ran", c)
	}
	if p, ok := ops.LastPath(dg.second); ok && p == cudaops.PathGPU {
		t.Errorf("LastPath = gpu after a failed required run")
	}
}

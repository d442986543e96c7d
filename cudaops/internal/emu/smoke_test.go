package emu

import (
	"math/rand/v2"
	"testing"

	"github.com/gatejet/gatejet/cudaops"
	"github.com/gatejet/gatejet/cudaops/internal/cpuref"
	"github.com/gatejet/gatejet/cudaops/internal/launch"
	"github.com/gatejet/gatejet/cudaops/internal/testcase"
)

func TestSmoke(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, k := range cudaops.Kernels() {
		for _, dt := range []cudaops.DType{cudaops.Float64, cudaops.Float32} {
			var ints []int
			switch k.Family() {
			case cudaops.FamilySoftmaxJet, cudaops.FamilyLogisticJet:
				ints = []int{3, 8, 5}
			case cudaops.FamilyAxis:
				ints = []int{2, 7, 3}
			default:
				ints = []int{50}
			}
			c := testcase.New(k, dt, ints, rng)
			ref := testcase.As64(c)
			if err := cpuref.Run(ref); err != nil {
				t.Fatal(err)
			}
			res, err := Launch(c, launch.Options{})
			if err != nil {
				t.Fatalf("%s %s: %v", k, dt, err)
			}
			for i := range c.Out {
				e := testcase.RelErr(testcase.Float64s(c.Out[i]), testcase.Float64s(ref.Out[i]))
				t.Logf("%-28s %s out%d relerr %.2e  cfg %+v hw %d", k, dt, i, e, res.Config, res.HighWater)
			}
		}
	}
}

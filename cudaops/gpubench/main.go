//go:build gatejetcuda

// Command gpubench measures the device kernels against memory bandwidth and against a port
// of the seed's row-jet design. It needs the tag gatejetcuda and, to run, a GPU with its
// driver and NVRTC (no CUDA header or library to build):
//
//	go run -tags gatejetcuda ./cudaops/gpubench [-reps 20] [-out bench.json]
//
// Benchmarks:
//   - second: gj_jet_second_f64, N=65536 rows, K=16, P=16. Its time is compared with a
//     device-to-device copy moving the same number of bytes (read + write) in the same run:
//     fraction = copy time / kernel time (1 = as fast as a copy of the same traffic).
//   - seedport: the seed's design (thread 0 builds the K³ jet tower in shared memory) on the
//     same inputs; speed-up = seedport time / kernel time; parity of the two outputs.
//   - softmax_backward: gj_softmax_backward_f32 on [8192 × 4096] (axis 1), against its copy.
//
// Kernel times are CUDA-event times with inputs resident on the device; host transfers are
// not included. Every output is also checked against the CPU implementation.
package main

import (
	_ "embed"
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"time"

	"github.com/gatejet/gatejet/cudaops"
	"github.com/gatejet/gatejet/cudaops/internal/launch"
	"github.com/gatejet/gatejet/cudaops/internal/testcase"
	"github.com/gatejet/gatejet/internal/cpuref"
)

//go:embed seedport.cu
var seedPort string

// Result is one benchmark line (also the JSON record).
type Result struct {
	Name         string        `json:"name"`
	Ints         []int         `json:"ints"`
	DType        string        `json:"dtype"`
	Config       launch.Config `json:"config"`
	Kernel       time.Duration `json:"kernel_ns"`
	Bytes        int64         `json:"bytes"`
	GBps         float64       `json:"gbps"`
	Copy         time.Duration `json:"copy_ns,omitempty"`
	CopyGBps     float64       `json:"copy_gbps,omitempty"`
	Fraction     float64       `json:"fraction_of_copy,omitempty"`
	RelErrVsCPU  float64       `json:"relerr_vs_cpu"`
	SeedPort     time.Duration `json:"seedport_ns,omitempty"`
	SpeedUp      float64       `json:"speedup_vs_seedport,omitempty"`
	SeedPortDiff float64       `json:"seedport_relerr,omitempty"`
}

func gbps(bytes int64, d time.Duration) float64 {
	if d <= 0 {
		return 0
	}
	return float64(bytes) / d.Seconds() / 1e9
}

func relErrVsCPU(c *cudaops.Call) (float64, error) {
	ref := testcase.As64(c)
	if err := cpuref.Run(ref); err != nil {
		return 0, err
	}
	worst := 0.0
	got, want := testcase.Outputs(c), testcase.Outputs(ref)
	for i := range got {
		worst = max(worst, testcase.RelErr(got[i], want[i]))
	}
	return worst, nil
}

func bench(b *cudaops.DeviceBackend, name string, k cudaops.Kernel, dt cudaops.DType, ints []int, reps int) (Result, *cudaops.Call, error) {
	c := testcase.New(k, dt, ints, rand.New(rand.NewPCG(1, 2)))
	r := Result{Name: name, Ints: ints, DType: dt.String()}
	// The copy moves 2× its length (read + write): give it half the kernel's traffic.
	probe, err := b.Time(c, 1, 0)
	if err != nil {
		return r, nil, err
	}
	t, err := b.Time(c, reps, probe.Bytes/2)
	if err != nil {
		return r, nil, err
	}
	r.Config, r.Kernel, r.Bytes, r.Copy = t.Config, t.Kernel, t.Bytes, t.Copy
	r.GBps, r.CopyGBps = gbps(t.Bytes, t.Kernel), gbps(2*t.CopyLen, t.Copy)
	if r.Kernel > 0 {
		r.Fraction = float64(r.Copy) / float64(r.Kernel)
	}
	r.RelErrVsCPU, err = relErrVsCPU(c)
	return r, c, err
}

func main() {
	reps := flag.Int("reps", 20, "timed launches per measurement")
	out := flag.String("out", "", "write the results as JSON to this file")
	flag.Parse()
	b, err := cudaops.Device()
	if err != nil {
		fmt.Fprintln(os.Stderr, "gpubench:", err)
		os.Exit(1)
	}
	fmt.Println("device:", b)
	var results []Result
	fail := func(err error) {
		fmt.Fprintln(os.Stderr, "gpubench:", err)
		os.Exit(1)
	}

	const N, K, P = 65536, 16, 16
	r, c, err := bench(b, "second", cudaops.KernelJetSecond, cudaops.Float64, []int{N, K, P}, *reps)
	if err != nil {
		fail(err)
	}
	// The seed's design on the same inputs: one block per row, P threads.
	sp := testcase.Clone(c)
	cfg := launch.Config{Grid: N, Block: P}
	opts := []string{fmt.Sprintf("-DKK=%d", K), fmt.Sprintf("-DPP=%d", P)}
	if r.SeedPort, err = b.TimeSource(seedPort, "seedport_second_f64", opts, cfg, sp, *reps); err != nil {
		fail(err)
	}
	r.SpeedUp = float64(r.SeedPort) / float64(r.Kernel)
	r.SeedPortDiff = testcase.RelErr(testcase.Outputs(sp)[0], testcase.Outputs(c)[0])
	results = append(results, r)

	r, _, err = bench(b, "softmax_backward", cudaops.KernelSoftmaxBackward, cudaops.Float32, []int{8192, 4096, 1}, *reps)
	if err != nil {
		fail(err)
	}
	results = append(results, r)

	for _, r := range results {
		fmt.Printf("%-17s %-8s %v  kernel %v  %.1f GB/s  copy %.1f GB/s  fraction %.2f  relerr %.2e",
			r.Name, r.DType, r.Ints, r.Kernel, r.GBps, r.CopyGBps, r.Fraction, r.RelErrVsCPU)
		if r.SeedPort > 0 {
			fmt.Printf("  seedport %v (×%.1f, relerr %.2e)", r.SeedPort, r.SpeedUp, r.SeedPortDiff)
		}
		fmt.Println()
	}
	if *out != "" {
		data, _ := json.MarshalIndent(results, "", "  ")
		if err := os.WriteFile(*out, data, 0o644); err != nil {
			fail(err)
		}
	}
}

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
//   - coord_second: gj_jet_coord_second_f64, the second channel over the 2K primaries
//     (logits and latent coordinates), N=4096, K=16, P=16 (output [N,32,32,P]), against its copy.
//   - softmax_backward: gj_softmax_backward_f32 on [8192 × 4096] (axis 1), against its copy.
//   - model: the constants of the dispatcher's break-even model (dispatch.ModelCallSeconds,
//     ModelHostDeviceBytesPerSecond, ModelCPUSecondsPerElement), measured: whole Launch calls
//     of relu_forward f64 (host to device, kernel, device to host, one synchronisation) at a
//     small and a large size give the fixed cost of a call (the small one's time) and the
//     host↔device bandwidth (the extra bytes over the extra time); the CPU functions of one
//     kernel per family give the CPU time per operand element. Best of -reps wall-clock runs.
//
// Kernel times are CUDA-event times with inputs resident on the device; host transfers are
// not included (the model's call times include them). Every output is also checked against
// the CPU implementation.
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
	"github.com/gatejet/gatejet/internal/dispatch"
	"github.com/gatejet/gatejet/internal/kernel"
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

func relErrVsCPU(c *dispatch.Call) (float64, error) {
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

func bench(b *cudaops.DeviceBackend, name string, k dispatch.Kernel, dt dispatch.DType, ints []int, reps int) (Result, *dispatch.Call, error) {
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
	r, c, err := bench(b, "second", dispatch.KernelJetSecond, dispatch.Float64, []int{N, K, P}, *reps)
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

	r, _, err = bench(b, "coord_second", dispatch.Kernel(kernel.JetCoordSecond), dispatch.Float64, []int{4096, K, P}, *reps)
	if err != nil {
		fail(err)
	}
	results = append(results, r)

	r, _, err = bench(b, "softmax_backward", dispatch.KernelSoftmaxBackward, dispatch.Float32, []int{8192, 4096, 1}, *reps)
	if err != nil {
		fail(err)
	}
	results = append(results, r)

	m, err := measureModel(b, *reps)
	if err != nil {
		fail(err)
	}

	for _, r := range results {
		fmt.Printf("%-17s %-8s %v  kernel %v  %.1f GB/s  copy %.1f GB/s  fraction %.2f  relerr %.2e",
			r.Name, r.DType, r.Ints, r.Kernel, r.GBps, r.CopyGBps, r.Fraction, r.RelErrVsCPU)
		if r.SeedPort > 0 {
			fmt.Printf("  seedport %v (×%.1f, relerr %.2e)", r.SeedPort, r.SpeedUp, r.SeedPortDiff)
		}
		fmt.Println()
	}
	fmt.Printf("model             call %.1f µs (assumed %.1f)  host↔device %.1f GB/s (assumed %.1f)\n",
		m.CallSeconds*1e6, dispatch.ModelCallSeconds*1e6, m.HostDeviceBytesPerSecond/1e9, dispatch.ModelHostDeviceBytesPerSecond/1e9)
	for _, f := range m.CPU {
		fmt.Printf("model             CPU %-11s %-28s %.2f ns per operand element (assumed %.2f)\n",
			f.Family, f.Kernel, f.SecondsPerElement*1e9, dispatch.ModelCPUSecondsPerElement(f.family)*1e9)
	}
	if *out != "" {
		data, _ := json.MarshalIndent(struct {
			Kernels []Result `json:"kernels"`
			Model   Model    `json:"model"`
		}{results, m}, "", "  ")
		if err := os.WriteFile(*out, data, 0o644); err != nil {
			fail(err)
		}
	}
}

// Model is the break-even model's constants as measured here (see dispatch.DefaultBreakEven).
type Model struct {
	CallSeconds              float64    `json:"call_seconds"`
	HostDeviceBytesPerSecond float64    `json:"host_device_bytes_per_second"`
	CPU                      []CPUModel `json:"cpu"`
}

// CPUModel is the CPU time per operand element (inputs and outputs) of one kernel of a family.
type CPUModel struct {
	Family            string  `json:"family"`
	Kernel            string  `json:"kernel"`
	SecondsPerElement float64 `json:"seconds_per_element"`
	family            dispatch.Family
}

// best returns the shortest wall-clock time of reps runs of f, after one warm-up run.
func best(reps int, f func() error) (time.Duration, error) {
	if err := f(); err != nil {
		return 0, err
	}
	d := time.Duration(1<<63 - 1)
	for i := 0; i < max(reps, 1); i++ {
		start := time.Now()
		if err := f(); err != nil {
			return 0, err
		}
		d = min(d, time.Since(start))
	}
	return d, nil
}

// operandElements is the number of input and output elements of c (float64).
func operandElements(c *dispatch.Call) int {
	n := 0
	for _, v := range append(testcase.Inputs(c), testcase.Outputs(c)...) {
		n += len(v)
	}
	return n
}

func measureModel(b *cudaops.DeviceBackend, reps int) (Model, error) {
	var m Model
	rng := rand.New(rand.NewPCG(3, 4))
	small := testcase.New(dispatch.KernelReLUForward, dispatch.Float64, []int{256}, rng)
	large := testcase.New(dispatch.KernelReLUForward, dispatch.Float64, []int{1 << 24}, rng)
	ts, err := best(reps, func() error { return b.Launch(small) })
	if err != nil {
		return m, err
	}
	tl, err := best(reps, func() error { return b.Launch(large) })
	if err != nil {
		return m, err
	}
	m.CallSeconds = ts.Seconds()
	if tl > ts {
		m.HostDeviceBytesPerSecond = float64(8*(operandElements(large)-operandElements(small))) / (tl - ts).Seconds()
	}
	old := dispatch.SetMode(dispatch.ModeOff)
	defer dispatch.SetMode(old)
	for _, tc := range []struct {
		k    dispatch.Kernel
		ints []int
	}{
		{dispatch.KernelReLUForward, []int{1 << 22}},
		{dispatch.KernelGELUBackward, []int{1 << 22}},
		{dispatch.KernelSoftmaxBackward, []int{1024, 4096, 1}},
		{dispatch.KernelSoftmaxForward, []int{1024, 4096, 1}},
		{dispatch.KernelJetSecond, []int{1024, 16, 16}},
		{dispatch.KernelJetSecondVJP, []int{1024, 16, 16}},
	} {
		c := testcase.New(tc.k, dispatch.Float64, tc.ints, rng)
		d, err := best(reps, func() error { _, err := dispatch.Run(c); return err })
		if err != nil {
			return m, err
		}
		m.CPU = append(m.CPU, CPUModel{tc.k.Family().String(), tc.k.String(), d.Seconds() / float64(operandElements(c)), tc.k.Family()})
	}
	return m, nil
}

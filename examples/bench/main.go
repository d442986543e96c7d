// Command bench measures gatejet's kernels and Gorgonia ops against the routes one would
// otherwise take, in one process, and prints one table:
//
//	go run ./examples/bench                 # the full run (a few minutes on two idle cores)
//	go run ./examples/bench -quick          # small shapes, a few seconds
//	go run ./examples/bench -md             # the table in Markdown
//	go run ./examples/bench -h              # the flags
//
// Each row sets gatejet's time on an operation against one baseline run in the same process
// on the same input:
//
//   - memclr probe: clear() of a buffer of as many bytes as the operation writes, the memory
//     limit of an operation that mostly writes; copy3 probe: dx = y + dy over the same three
//     streams as the softmax backward (the faster of one and all goroutines); make() of the
//     output alone: what the TapeMachine pays for the op's fresh output every run;
//   - tower: TowerChannels of internal/tower, the order-2 jet tower (O(K³·P) per row);
//   - Gorgonia autodiff: the first channel as the Jacobian of Gorgonia's own SoftMax +
//     BatchedMatMul by reverse mode, one pass per output column (P passes give every row's
//     Jacobian, rows being independent); Gorgonia cannot differentiate its softmax gradient,
//     so it has no route to the second channel;
//   - finite differences: central differences (h = 1e-5) of the channel one order down;
//   - Second + contract: the HVP by building the second channel and contracting it with v;
//   - Gorgonia softmax grad op: the op gorgonia.Grad puts behind gorgonia.SoftMax, timed by
//     UsePreallocDo on the same (y, dy) as gatejet's ops.SoftmaxBackward, both writing into a
//     preallocated output (the gradient alone; no forward pass, no machine);
//   - gorgonia.SoftMax (Tape): a TapeMachine step, forward and gradient (for a bound upstream
//     gradient), through gorgonia.SoftMax against the same step through ops.Softmax(x, -1),
//     timed in turns.
//
// Jet channels marked "op, Tape" run as a gatejet op in a Gorgonia graph built once and run
// by a TapeMachine with Reset between runs (the steady state of a training loop; the machine
// gives the op a freshly allocated output every run, and that allocation is in the time).
// Kernels run on plain slices.
//
// Times are medians of several timed repetitions after warm-up. speedup = baseline ÷
// gatejet; a target of ≥0.50× against a memory probe means "within 2× of the probe".
// GB/s is gatejet's minimum memory traffic (inputs read, outputs written) per second and the
// probe's on its own bytes. agree is max|gatejet − baseline| / max|baseline| where the
// baseline computes the same numbers.
//
// The table goes to stdout and the same rows to a CSV file (-csv, default
// out/bench/bench.csv).
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"gorgonia.org/tensor"

	"github.com/gatejet/gatejet/internal/exampleutil"
	"github.com/gatejet/gatejet/internal/par"
	"github.com/gatejet/gatejet/softmaxjet"
)

func main() {
	var cfg config
	exampleutil.Main(op, func() (err error) {
		cfg, err = parseFlags(os.Args[1:], os.Stderr)
		return err
	}, func() error { return cfg.run(exampleutil.Stdout, os.Stderr) })
}

// op names the command in its *gatejet.Error values.
const op = "bench"

// about is what the command does, in its usage.
const about = "Times gatejet's kernels and ops against the routes one would otherwise take (Gorgonia's own ops and autodiff, finite differences, memory probes) and prints one table."

// group is a group of rows; -only picks groups by name.
type group struct {
	name string
	run  func() error
}

// benchGroups returns the groups of rows b measures, in the order they run.
func benchGroups(b *bench) []group {
	return []group{
		{"second", func() error {
			if b.quick {
				return b.secondCase(softmaxjet.Shape{N: 256, K: 8, P: 8}, false)
			}
			if err := b.secondCase(softmaxjet.Shape{N: 4096, K: 16, P: 16}, true); err != nil {
				return err
			}
			return b.secondCase(softmaxjet.Shape{N: 256, K: 64, P: 16}, false)
		}},
		{"first", func() error {
			if b.quick {
				return b.firstCase(softmaxjet.Shape{N: 128, K: 8, P: 4})
			}
			return b.firstCase(softmaxjet.Shape{N: 4096, K: 16, P: 16})
		}},
		{"hvp", func() error {
			ks, n := []int{8, 16, 32, 64, 128, 256}, 256
			if b.quick {
				ks, n = []int{8, 16}, 64
			}
			for _, k := range ks {
				target := 0.0
				if k == 64 {
					target = 30
				}
				if err := b.hvpCase(softmaxjet.Shape{N: n, K: k, P: 16}, k <= 128, k == 64 || (b.quick && k == 16), target); err != nil {
					return err
				}
			}
			return nil
		}},
		{"backward", func() error {
			shape := []int{4096, 1024}
			if b.quick {
				shape = []int{256, 128}
			}
			probe, name, err := b.copy3Probe(shape[0] * shape[1])
			if err != nil {
				return err
			}
			for _, dt := range []tensor.Dtype{tensor.Float64, tensor.Float32} {
				var last time.Duration
				target := 0.0
				if dt == tensor.Float64 && !b.quick {
					target = 3
				}
				if err := b.backwardCase(dt, shape, -1, &last, probe, name, target); err != nil {
					return err
				}
				if err := b.backwardCase(dt, shape, 0, &last, probe, name, 0); err != nil {
					return err
				}
			}
			return nil
		}},
		// Softmax f64 [4096×1024] fwd+grad on a TapeMachine vs gorgonia.SoftMax (softmax.go).
		{"softmax", func() error {
			if b.quick {
				return b.softmaxCase([]int{256, 128}, 0)
			}
			return b.softmaxCase([]int{4096, 1024}, 3)
		}},
	}
}

// groupNames are the names of the groups, in the order they run.
func groupNames() []string {
	var names []string
	for _, g := range benchGroups(&bench{}) {
		names = append(names, g.name)
	}
	return names
}

// Bounds of the timing flags: beyond them a run takes hours (or a sample count overflows).
const (
	maxReps   = 1000
	maxRepeat = 100
	maxBudget = time.Hour
)

// config is a command line.
type config struct {
	quick, verbose, md bool
	csv, only          string
	tm                 timer
	repeat             int
}

// parseFlags reads the command line into a config.
func parseFlags(args []string, errOut io.Writer) (config, error) {
	var c config
	fs := exampleutil.FlagSet(op, about, errOut)
	fs.BoolVar(&c.quick, "quick", false, "small shapes and few repetitions (a few seconds; for tests); -reps, -warm and -budget given with it still count")
	fs.StringVar(&c.csv, "csv", filepath.Join("out", "bench", "bench.csv"), "write the rows to this CSV file (empty: none)")
	fs.IntVar(&c.tm.reps, "reps", 9, fmt.Sprintf("timed repetitions per measurement, 1 to %d (median; fewer for slow baselines)", maxReps))
	fs.IntVar(&c.tm.warm, "warm", 2, fmt.Sprintf("untimed warm-up runs before each measurement, 0 to %d", maxReps))
	fs.DurationVar(&c.tm.budget, "budget", 4*time.Second, fmt.Sprintf("time the repetitions of one measurement may take, more than 0 and at most %v", maxBudget))
	fs.StringVar(&c.only, "only", "", "run only the groups whose names contain this ("+strings.Join(groupNames(), ", ")+")")
	fs.BoolVar(&c.verbose, "v", false, "log each row to stderr as it is measured")
	fs.BoolVar(&c.md, "md", false, "print the table as Markdown")
	fs.IntVar(&c.repeat, "repeat", 1, fmt.Sprintf("run the groups this many times, 1 to %d: the table is the last run's, followed by each target row's speedups over all runs", maxRepeat))
	if err := exampleutil.Parse(fs, args); err != nil {
		return c, err
	}
	if c.quick {
		// The quick timing, unless a flag given with -quick says otherwise.
		set := map[string]bool{}
		fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
		if !set["warm"] {
			c.tm.warm = 1
		}
		if !set["reps"] {
			c.tm.reps = 3
		}
		if !set["budget"] {
			c.tm.budget = 300 * time.Millisecond
		}
	}
	return c, nil
}

// run parses args and runs them (the tests' entry).
func run(args []string, stdout, stderr io.Writer) error {
	c, err := parseFlags(args, stderr)
	if err != nil {
		return err
	}
	return c.run(stdout, stderr)
}

// run measures the groups of c and prints the table. Every flag is checked first.
func (c config) run(stdout, stderr io.Writer) error {
	if err := c.validate(); err != nil {
		return err
	}
	if c.csv != "" {
		// Checked now, not after minutes of timing.
		if err := exampleutil.CheckOut(op, "-csv", filepath.Dir(c.csv), c.csv); err != nil {
			return err
		}
	}
	b := &bench{tm: c.tm, quick: c.quick, log: func(string, ...any) {}}
	if c.verbose {
		b.log = func(format string, a ...any) { fmt.Fprintf(stderr, format+"\n", a...) }
	}
	groups := benchGroups(b)
	start, loadStart := time.Now(), loadAvg()
	var runs [][]row
	for rep := 0; rep < c.repeat; rep++ {
		b.rows = nil
		for _, g := range groups {
			if c.only != "" && !strings.Contains(g.name, c.only) {
				continue
			}
			b.log("%s:", g.name)
			if err := g.run(); err != nil {
				return fmt.Errorf("%s: %w", g.name, err)
			}
		}
		runs = append(runs, b.rows)
	}
	fmt.Fprintf(stdout, "gatejet bench: %s/%s, %d cores (GOMAXPROCS %d, par.MinWork %d), %s; %s at the start, %s at the end; %.0f s\n",
		runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), runtime.GOMAXPROCS(0), par.MinWork(), runtime.Version(), loadStart, loadAvg(), time.Since(start).Seconds())
	if c.md {
		printMarkdown(stdout, b.rows)
	} else {
		printTable(stdout, b.rows)
	}
	if c.repeat > 1 {
		printRepeats(stdout, runs)
	}
	if c.csv != "" {
		if err := writeCSV(c.csv, b.rows); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "rows written to %s\n", c.csv)
	}
	return nil
}

// validate checks the timing flags and -only before anything runs: an ErrParam
// *gatejet.Error naming the flag.
func (c config) validate() error {
	switch tm := c.tm; {
	case tm.reps < 1 || tm.reps > maxReps:
		return exampleutil.BadFlag(op, "-reps", "want 1 ≤ -reps ≤ %d, got %d", maxReps, tm.reps)
	case tm.warm < 0 || tm.warm > maxReps:
		return exampleutil.BadFlag(op, "-warm", "want 0 ≤ -warm ≤ %d, got %d", maxReps, tm.warm)
	case tm.budget <= 0 || tm.budget > maxBudget:
		return exampleutil.BadFlag(op, "-budget", "want 0 < -budget ≤ %v, got %v", maxBudget, tm.budget)
	case c.repeat < 1 || c.repeat > maxRepeat:
		return exampleutil.BadFlag(op, "-repeat", "want 1 ≤ -repeat ≤ %d, got %d", maxRepeat, c.repeat)
	}
	for _, g := range groupNames() {
		if strings.Contains(g, c.only) {
			return nil
		}
	}
	return exampleutil.BadFlag(op, "-only", "%q names no group; want a part of one of %s", c.only, strings.Join(groupNames(), ", "))
}

// printRepeats prints, for each row with a target, its speedup in every run, how many runs
// met the target, and the median (the lower one for an even count): on a shared machine one
// run is one sample.
func printRepeats(w io.Writer, runs [][]row) {
	type key struct{ op, shape, dtype, baseline string }
	var order []key
	byKey := map[key][]row{}
	for _, rows := range runs {
		for _, r := range rows {
			if r.Target == 0 {
				continue
			}
			k := key{r.Op, r.Shape, r.DType, r.Baseline}
			if _, ok := byKey[k]; !ok {
				order = append(order, k)
			}
			byKey[k] = append(byKey[k], r)
		}
	}
	fmt.Fprintf(w, "\ntarget rows over %d runs (speedup in each run; median):\n", len(runs))
	if len(order) == 0 {
		fmt.Fprintln(w, "  none (no row of these groups has a target)")
		return
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, k := range order {
		rs := byKey[k]
		met, sp := 0, make([]float64, len(rs))
		cells := make([]string, len(rs))
		for i, r := range rs {
			sp[i] = r.Speedup()
			cells[i] = ratio(sp[i])
			if r.met() == "met" {
				met++
			}
		}
		sort.Float64s(sp)
		fmt.Fprintf(tw, "  %s\t%s\t%s\tvs %s\t%s\t%s\tmedian %s\tmet in %d of %d\n", k.op, k.shape, k.dtype, k.baseline,
			rs[0].target(), strings.Join(cells, " "), ratio(sp[(len(sp)-1)/2]), met, len(rs))
	}
	tw.Flush()
}

var header = []string{"operation", "shape", "dtype", "gatejet ms", "baseline", "baseline ms", "speedup", "target", "", "gatejet GB/s", "probe GB/s", "agree"}

func cells(r row) []string {
	return []string{r.Op, r.Shape, r.DType, ms(r.Gatejet), r.Baseline, ms(r.Other), ratio(r.Speedup()), r.target(), r.met(),
		gbs(r.BW()), gbs(r.ProbeBW) + " " + r.Probe, r.agree()}
}

func printTable(w io.Writer, rows []row) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, strings.Join(header, "\t"))
	for _, r := range rows {
		fmt.Fprintln(tw, strings.Join(cells(r), "\t"))
	}
	tw.Flush()
}

func printMarkdown(w io.Writer, rows []row) {
	fmt.Fprintln(w, "| "+strings.Join(header, " | ")+" |")
	seps := make([]string, len(header))
	for i := range seps {
		seps[i] = "---"
	}
	fmt.Fprintln(w, "|"+strings.Join(seps, "|")+"|")
	for _, r := range rows {
		fmt.Fprintln(w, "| "+strings.Join(cells(r), " | ")+" |")
	}
}

func writeCSV(path string, rows []row) error {
	f64 := func(x float64) string { return strconv.FormatFloat(x, 'g', 6, 64) }
	header := []string{"operation", "shape", "dtype", "gatejet_ms", "baseline", "baseline_ms", "speedup", "target_speedup", "met",
		"gatejet_bytes", "gatejet_GBps", "probe", "probe_GBps", "agree", "reps"}
	var records [][]string
	for _, r := range rows {
		agree := ""
		if r.agree() != "" {
			agree = f64(r.Agree)
		}
		target := ""
		if r.Target != 0 {
			target = f64(r.Target)
		}
		records = append(records, []string{r.Op, r.Shape, r.DType, f64(r.Gatejet.Seconds() * 1e3), r.Baseline, f64(r.Other.Seconds() * 1e3),
			f64(r.Speedup()), target, r.met(), strconv.FormatInt(r.Bytes, 10), f64(r.BW() / 1e9), r.Probe, f64(r.ProbeBW / 1e9), agree,
			strconv.Itoa(r.Reps)})
	}
	return exampleutil.WriteCSV(path, header, records)
}

// loadAvg reports the 1-minute load average (Linux), or "load n/a".
func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "load n/a"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "load n/a"
	}
	return "load average " + strings.Join(f[:3], " ")
}

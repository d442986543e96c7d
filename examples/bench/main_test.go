package main

import (
	"bytes"
	"encoding/csv"
	"errors"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gatejet/gatejet"
)

// TestQuickRun runs the benchmark in its quick mode and checks that it prints one table and
// writes the same rows to the CSV file. Timings are not asserted: they depend on the machine.
func TestQuickRun(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the quick benchmark (a few seconds)")
	}
	path := filepath.Join(t.TempDir(), "sub", "bench.csv")
	var out, errOut bytes.Buffer
	if err := run([]string{"-quick", "-csv", path}, &out, &errOut); err != nil {
		t.Fatalf("run: %v\nstderr: %s", err, errOut.String())
	}
	text := out.String()
	for _, want := range []string{"gatejet bench:", "operation", "speedup", "probe GB/s", "second (op, Tape)", "first (op, Tape)",
		"HVP (kernel)", "softmax backward axis -1", "tower (TowerChannels)", "Gorgonia autodiff", "Gorgonia softmax grad op",
		"memclr probe", "copy3 probe", "finite diff.", "Second + contract with v", "rows written to " + path} {
		if !strings.Contains(text, want) {
			t.Errorf("table lacks %q:\n%s", want, text)
		}
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) < 2 || recs[0][0] != "operation" || recs[0][3] != "gatejet_ms" {
		t.Fatalf("CSV header: %v", recs[0])
	}
	// One CSV row per table row: the table has a header line, the rows, then the CSV line.
	lines := strings.Split(strings.TrimSpace(text), "\n")
	tableRows := len(lines) - 3 // title, header, "rows written"
	if got := len(recs) - 1; got != tableRows {
		t.Errorf("CSV has %d rows, the table %d", got, tableRows)
	}
	for _, r := range recs[1:] {
		if len(r) != len(recs[0]) {
			t.Fatalf("ragged CSV row %v", r)
		}
	}
}

// TestBadFlags: an unknown flag or an extra argument is refused by the parser, and every
// timing flag at a nonsense value, an -only that names no group and a -csv that cannot be
// written are refused before anything is measured, with a *gatejet.Error naming the flag.
func TestBadFlags(t *testing.T) {
	var out, errOut bytes.Buffer
	if err := run([]string{"-nosuchflag"}, &out, &errOut); err == nil {
		t.Error("an unknown flag is not an error")
	}
	if err := run([]string{"-quick", "extra"}, &out, &errOut); err == nil {
		t.Error("an extra argument is not an error")
	}
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		flag string
	}{
		{[]string{"-reps", "0"}, "-reps"},
		{[]string{"-reps", "-1"}, "-reps"},
		{[]string{"-quick", "-reps", "0"}, "-reps"},
		{[]string{"-reps", "1001"}, "-reps"},
		{[]string{"-warm", "-1"}, "-warm"},
		{[]string{"-warm", "1001"}, "-warm"},
		{[]string{"-budget", "-1s"}, "-budget"},
		{[]string{"-budget", "0"}, "-budget"},
		{[]string{"-quick", "-budget", "-1ns"}, "-budget"},
		{[]string{"-budget", "2h"}, "-budget"},
		{[]string{"-repeat", "0"}, "-repeat"},
		{[]string{"-repeat", "-3"}, "-repeat"},
		{[]string{"-repeat", "101"}, "-repeat"},
		{[]string{"-only", "nosuch"}, "-only"},
		{[]string{"-csv", dir}, "-csv"},
		{[]string{"-csv", filepath.Join(file, "bench.csv")}, "-csv"},
	} {
		out.Reset()
		err := run(append([]string{"-quick"}, c.args...), &out, &errOut)
		var ge *gatejet.Error
		if !errors.As(err, &ge) || !errors.Is(err, gatejet.ErrParam) || ge.Op != "bench" || ge.Arg != c.flag {
			t.Errorf("%v: got %v, want an ErrParam *gatejet.Error of bench naming %s", c.args, err, c.flag)
		}
		if out.Len() > 0 {
			t.Errorf("%v: measured before refusing: %s", c.args, out.String())
		}
	}
}

// TestUsage: -h prints the command line and what the command does, and is no failure.
func TestUsage(t *testing.T) {
	var out, errOut bytes.Buffer
	if err := run([]string{"-h"}, &out, &errOut); !errors.Is(err, flag.ErrHelp) {
		t.Fatalf("-h: %v, want flag.ErrHelp", err)
	}
	if want := "usage: go run ./examples/bench [flags]\n" + about + "\n"; !strings.HasPrefix(errOut.String(), want) {
		t.Errorf("-h printed %q, want it to start with %q", errOut.String(), want)
	}
}

// TestQuickTiming: -quick sets the quick timing, except what a timing flag given with it says.
func TestQuickTiming(t *testing.T) {
	var errOut bytes.Buffer
	c, err := parseFlags([]string{"-quick"}, &errOut)
	if err != nil || c.tm != (timer{warm: 1, reps: 3, budget: 300 * time.Millisecond}) {
		t.Errorf("-quick: %+v, %v", c.tm, err)
	}
	c, err = parseFlags([]string{"-reps", "5", "-quick", "-budget", "1s"}, &errOut)
	if err != nil || c.tm != (timer{warm: 1, reps: 5, budget: time.Second}) {
		t.Errorf("-reps 5 -quick -budget 1s: %+v, %v", c.tm, err)
	}
	c, err = parseFlags(nil, &errOut)
	if err != nil || c.tm != (timer{warm: 2, reps: 9, budget: 4 * time.Second}) {
		t.Errorf("defaults: %+v, %v", c.tm, err)
	}
}

func TestQuickMarkdown(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the quick benchmark (a few seconds)")
	}
	var out, errOut bytes.Buffer
	if err := run([]string{"-quick", "-md", "-csv", "", "-only", "backward"}, &out, &errOut); err != nil {
		t.Fatalf("run: %v\nstderr: %s", err, errOut.String())
	}
	if !strings.Contains(out.String(), "| operation | shape |") || !strings.Contains(out.String(), "|---|") {
		t.Errorf("no Markdown table:\n%s", out.String())
	}
}

// TestQuickRepeat runs one group twice: the table is printed once, then the summary of the
// target rows over the runs.
func TestQuickRepeat(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the quick benchmark (a few seconds)")
	}
	var out, errOut bytes.Buffer
	if err := run([]string{"-quick", "-repeat", "2", "-csv", "", "-only", "backward"}, &out, &errOut); err != nil {
		t.Fatalf("run: %v\nstderr: %s", err, errOut.String())
	}
	text := out.String()
	if n := strings.Count(text, "operation"); n != 1 {
		t.Errorf("want one table, got %d headers:\n%s", n, text)
	}
	if !strings.Contains(text, "target rows over 2 runs") || !strings.Contains(text, "met in") {
		t.Errorf("no summary of the runs:\n%s", text)
	}
}

// TestInterleavedOrder: timer.interleaved runs its functions in turns, the same number of
// times each, and returns each one's median in the order given.
func TestInterleavedOrder(t *testing.T) {
	var calls []int
	mk := func(i int, d time.Duration) func() error {
		return func() error {
			calls = append(calls, i)
			time.Sleep(d)
			return nil
		}
	}
	tm := timer{warm: 1, reps: 5}
	meds, reps, err := tm.interleaved(mk(0, 4*time.Millisecond), mk(1, 0), mk(2, 2*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	if reps != 5 || len(meds) != 3 {
		t.Fatalf("reps %d, %d medians", reps, len(meds))
	}
	if !(meds[1] < meds[2] && meds[2] < meds[0]) {
		t.Errorf("medians out of order: %v", meds)
	}
	for i, c := range calls {
		if c != i%3 {
			t.Fatalf("call %d ran function %d, want %d (in turns): %v", i, c, i%3, calls)
		}
	}
	if len(calls) != 3*(1+5) {
		t.Errorf("%d calls, want %d", len(calls), 3*(1+5))
	}
}

// TestMainHelp: -h and -help print the usage and exit with status 0, like the other
// examples; a flag the parser refuses exits with status 2, a value run refuses with
// status 1, like the other examples. main runs in a child process (this test
// binary, re-executed) because it calls os.Exit.
func TestMainHelp(t *testing.T) {
	if args := os.Getenv("GATEJET_BENCH_MAIN_ARGS"); args != "" {
		os.Args = append([]string{"bench"}, strings.Fields(args)...)
		main()
		os.Exit(0) // main returned: the status the command exits with
	}
	for _, tc := range []struct {
		arg  string
		code int
	}{{"-h", 0}, {"-help", 0}, {"-nosuchflag", 2}, {"-reps 0", 1}} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestMainHelp$")
		cmd.Env = append(os.Environ(), "GATEJET_BENCH_MAIN_ARGS="+tc.arg)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		if code != tc.code {
			t.Errorf("bench %s: exit status %d, want %d\nstderr: %s", tc.arg, code, tc.code, stderr.String())
		}
		if want := "-quick"; tc.code == 1 {
			if want = "bench: -reps: invalid parameter"; !strings.Contains(stderr.String(), want) {
				t.Errorf("bench %s: stderr %q lacks %q", tc.arg, stderr.String(), want)
			}
		} else if !strings.Contains(stderr.String(), want) {
			t.Errorf("bench %s: no usage on stderr:\n%s", tc.arg, stderr.String())
		}
		if strings.Contains(stdout.String(), "gatejet bench:") {
			t.Errorf("bench %s ran the benchmark:\n%s", tc.arg, stdout.String())
		}
	}
}

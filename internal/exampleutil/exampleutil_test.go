package exampleutil

import (
	"errors"
	"flag"
	"fmt"
	"image/png"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"

	"github.com/gatejet/gatejet"
)

func TestWriteCSV(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sub", "out.csv")
	if err := WriteCSV(path, []string{"a", "b"}, [][]string{{"1", "x,y"}, {"2", ""}}); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if want := "a,b\n1,\"x,y\"\n2,\n"; string(b) != want {
		t.Fatalf("got %q, want %q", b, want)
	}
	if err := WriteCSV(filepath.Join(path, "x.csv"), nil, nil); err == nil {
		t.Fatal("a directory under a file: no error")
	}
}

func TestNormals(t *testing.T) {
	a, b := rand.New(rand.NewPCG(1, 2)), rand.New(rand.NewPCG(1, 2))
	v := Normals(a, 3, 2)
	for i, x := range v {
		if want := 2 * b.NormFloat64(); x != want {
			t.Fatalf("v[%d] = %v, want %v", i, x, want)
		}
	}
}

func TestOrDiscard(t *testing.T) {
	if got := OrDiscard(nil); got != io.Discard {
		t.Fatalf("OrDiscard(nil) = %v, want io.Discard", got)
	}
	var b strings.Builder
	if got := OrDiscard(&b); got != &b {
		t.Fatalf("OrDiscard(w) = %v, want w", got)
	}
}

// TestFloatFlag: a text that is not zero but rounds to 0 in float64 is refused, in decimal and
// in hexadecimal; written zeros and ordinary values are stored; a text that is no number is
// refused with strconv's reason alone.
func TestFloatFlag(t *testing.T) {
	v := 7.0
	f := FloatFlag(&v)
	for _, s := range []string{"1e-400", "-0x1p-2000", "5e-325", "0.5e-400"} {
		if err := f.Set(s); err == nil || !strings.Contains(err.Error(), "underflows to 0") || v != 7 {
			t.Fatalf("Set(%q): err %v, value %v; want an underflow error and 7 kept", s, err, v)
		}
	}
	for _, c := range []struct {
		s    string
		want float64
	}{{"0", 0}, {"-0.0e7", 0}, {"0x0p-9", 0}, {"0.25", 0.25}, {"-1e-300", -1e-300}, {"0x1p-3", 0.125}} {
		if err := f.Set(c.s); err != nil || v != c.want {
			t.Fatalf("Set(%q): err %v, value %v; want %v", c.s, err, v, c.want)
		}
	}
	if err := f.Set("many"); err == nil || strings.Contains(err.Error(), "many") {
		t.Fatalf("Set(\"many\"): err %v; want strconv's reason without the text", err)
	}
	if got := f.String(); got != "0.125" {
		t.Fatalf("String() = %q, want 0.125", got)
	}
	if got := (floatFlag{}).String(); got != "0" {
		t.Fatalf("zero Value's String() = %q, want 0 (flag.PrintDefaults compares with it)", got)
	}
}

// TestFlagSetUsage: the usage says the command line and what the program does; -h is
// flag.ErrHelp, an argument after the flags an error printed with the usage.
func TestFlagSetUsage(t *testing.T) {
	var out strings.Builder
	fs := FlagSet("demo", "Does a demo.", &out)
	n := fs.Int("n", 1, "rows")
	if err := Parse(fs, []string{"-h"}); !errors.Is(err, flag.ErrHelp) {
		t.Fatalf("-h: %v", err)
	}
	if want := "usage: go run ./examples/demo [flags]\nDoes a demo.\n  -n int\n"; !strings.HasPrefix(out.String(), want) {
		t.Fatalf("usage %q, want it to start with %q", out.String(), want)
	}
	out.Reset()
	if err := Parse(fs, []string{"-n", "3", "extra"}); err == nil || !strings.Contains(out.String(), `unexpected arguments ["extra"]`) ||
		!strings.Contains(out.String(), "Does a demo.") {
		t.Fatalf("extra argument: %v, printed %q", err, out.String())
	}
	if *n != 3 {
		t.Fatalf("-n = %d", *n)
	}
}

// TestCheckBuffers: a buffer over gatejet.MaxBytes, one whose element count overflows int,
// and buffers that fit alone but not together are ErrSize errors naming their flags.
func TestCheckBuffers(t *testing.T) {
	prev := gatejet.SetMaxBytes(1 << 20)
	defer gatejet.SetMaxBytes(prev)
	a := Buffer{Flags: "-a", Dims: []int{64, 1024}}      // 512 KiB of float64
	b := Buffer{Flags: "-a × -b", Dims: []int{64, 1024}} // 512 KiB
	if err := CheckBuffers("demo", 8, a, b); err != nil {
		t.Fatalf("exactly the limit together: %v", err)
	}
	for _, c := range []struct {
		bufs []Buffer
		arg  string
	}{
		{[]Buffer{a, {Flags: "-c", Dims: []int{1 << 17, 2}}}, "-c"},
		{[]Buffer{{Flags: "-big", Dims: []int{math.MaxInt, 2}}}, "-big"},
		{[]Buffer{a, b, {Flags: "-c", Dims: []int{1}}}, "-a + -a × -b + -c"},
	} {
		err := CheckBuffers("demo", 8, c.bufs...)
		var ge *gatejet.Error
		if !errors.As(err, &ge) || !errors.Is(err, gatejet.ErrSize) || ge.Op != "demo" || ge.Arg != c.arg {
			t.Errorf("%v: got %v, want an ErrSize error of demo naming %q", c.bufs, err, c.arg)
		}
	}
}

// TestCheckOut: a directory that can be made and written passes and is left empty; a path
// under a file, or an output file that is a directory, is an ErrParam error naming the flag.
func TestCheckOut(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "a", "b")
	if err := CheckOut("demo", "-out", dir, filepath.Join(dir, "x.csv")); err != nil {
		t.Fatal(err)
	}
	if ents, err := os.ReadDir(dir); err != nil || len(ents) != 0 {
		t.Fatalf("left behind %v (%v)", ents, err)
	}
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range [][2]string{{filepath.Join(file, "sub"), ""}, {filepath.Dir(dir), dir}} {
		err := CheckOut("demo", "-out", c[0], c[1])
		var ge *gatejet.Error
		if !errors.As(err, &ge) || !errors.Is(err, gatejet.ErrParam) || ge.Arg != "-out" {
			t.Errorf("%v: got %v", c, err)
		}
	}
}

// TestMain runs the test binary as an example program when asked to (see TestMainExits).
func TestMain(m *testing.M) {
	if args, ok := os.LookupEnv("EXAMPLEUTIL_MAIN"); ok {
		var fail bool
		Main("demo", func() error {
			fs := FlagSet("demo", "Does a demo.", os.Stderr)
			fs.BoolVar(&fail, "fail", false, "fail")
			return Parse(fs, strings.Fields(args))
		}, func() error {
			if fail {
				return errors.New("it failed")
			}
			fmt.Fprintln(Stdout, "the demo's result")
			return nil
		})
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestMainExits: Main ends the program with status 0 after -h and a good run, 2 after a bad
// flag and 1 after a failed run, whose error it prints prefixed with the program's name, or
// after a run whose writes to Stdout failed.
func TestMainExits(t *testing.T) {
	for _, c := range []struct {
		args   string
		status int
		stderr string
	}{
		{"-h", 0, "Does a demo."},
		{"", 0, ""},
		{"-nosuch", 2, "flag provided but not defined: -nosuch"},
		{"extra", 2, "unexpected arguments"},
		{"-fail", 1, "demo: it failed\n"},
		// Its output lost (a full disk): not a success.
		{"> /dev/full", 1, "demo: writing the standard output: "},
	} {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		args, full := strings.CutPrefix(c.args, "> /dev/full")
		if full {
			f, err := os.OpenFile("/dev/full", os.O_WRONLY, 0)
			if err != nil {
				t.Logf("skipping %q: %v", c.args, err)
				continue
			}
			defer f.Close()
			cmd.Stdout = f
		}
		cmd.Env = append(os.Environ(), "EXAMPLEUTIL_MAIN="+args)
		var stderr strings.Builder
		cmd.Stderr = &stderr
		err := cmd.Run()
		status := 0
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			status = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		if status != c.status || !strings.Contains(stderr.String(), c.stderr) {
			t.Errorf("%q: status %d, stderr %q; want %d and %q", c.args, status, stderr.String(), c.status, c.stderr)
		}
	}
}

// TestEveryExampleUsesFlagSet: every example program (a main package under examples/) reads
// its command line with FlagSet and runs through Main, so that -h says what it does and a
// bad flag or a refused run ends it the same way.
func TestEveryExampleUsesFlagSet(t *testing.T) {
	dirs, err := filepath.Glob(filepath.Join("..", "..", "examples", "*"))
	if err != nil {
		t.Fatal(err)
	}
	mains := 0
	for _, dir := range dirs {
		files, _ := filepath.Glob(filepath.Join(dir, "*.go"))
		var src strings.Builder
		isMain := false
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			isMain = isMain || strings.Contains(string(b), "\npackage main\n") || strings.HasPrefix(string(b), "package main\n")
			src.Write(b)
		}
		if !isMain {
			continue
		}
		mains++
		for _, want := range []string{"exampleutil.FlagSet(", "exampleutil.Main("} {
			if !strings.Contains(src.String(), want) {
				t.Errorf("%s does not call %s…)", dir, want)
			}
		}
	}
	if mains < 4 {
		t.Fatalf("found %d example programs, want at least 4", mains)
	}
}

func TestLogTicks(t *testing.T) {
	for _, r := range [][2]float64{{0, 1}, {-1, 1}, {1, math.Inf(1)}, {2, 1}, {math.NaN(), 1}} {
		if got := (LogTicks{}).Ticks(r[0], r[1]); len(got) != 0 {
			t.Errorf("Ticks(%g, %g) = %v, want none", r[0], r[1], got)
		}
	}
	if got := len(LogTicks{}.Ticks(1e-300, 1e300)); got > 14 {
		t.Errorf("%d ticks over 600 decades, want few", got)
	}
	var labels []string
	for _, tk := range (LogTicks{}).Ticks(1, 10) {
		labels = append(labels, tk.Label)
	}
	if got := strings.Join(labels, " "); got != "1 2 5 10" {
		t.Errorf("Ticks(1, 10) labels %q, want %q", got, "1 2 5 10")
	}
}

// TestWritePlots: a picture of two plots decodes as a PNG of the asked size, and a plot the
// library cannot draw (a log axis over a range ≤ 0) is an error, not a panic.
func TestWritePlots(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "sub", "p.png")
	if err := WritePlots(path, 4*vg.Inch, 2*vg.Inch, plot.New(), plot.New()); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	if b := img.Bounds(); b.Dx() < 200 || b.Dy() < 100 {
		t.Errorf("picture %v, want about 4×2 inches", b)
	}
	bad := plot.New()
	bad.Y.Scale = plot.LogScale{}
	bad.Y.Min, bad.Y.Max = -1, 1
	if err := WritePlots(filepath.Join(dir, "bad.png"), 4*vg.Inch, 2*vg.Inch, bad); err == nil {
		t.Error("a log axis over [-1, 1]: no error")
	}
}

// TestProgress: the bar is redrawn in place, a shorter line blanks what is left of a longer
// one, Clear blanks the line, and a nil writer draws nothing.
func TestProgress(t *testing.T) {
	var buf strings.Builder
	p := Progress{W: &buf}
	p.Show(0, 4, "a long stage ", " 0/4")
	p.Show(4, 4, "b ", " 4/4")
	p.Clear()
	want := "\ra long stage [..............................] 0/4" +
		"\rb [##############################] 4/4" + strings.Repeat(" ", 11) +
		"\r" + strings.Repeat(" ", 38) + "\r"
	if got := buf.String(); got != want {
		t.Errorf("drawn %q, want %q", got, want)
	}
	none := Progress{}
	none.Show(1, 2, "", "")
	none.Clear()
}

// TestIsTerminal: a character device counts as a terminal; files, pipes and buffers do not.
func TestIsTerminal(t *testing.T) {
	if IsTerminal(&strings.Builder{}) {
		t.Error("a buffer is a terminal")
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	if IsTerminal(w) {
		t.Error("a pipe is a terminal")
	}
	f, err := os.Create(filepath.Join(t.TempDir(), "f"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if IsTerminal(f) {
		t.Error("a regular file is a terminal")
	}
	if null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0); err == nil {
		defer null.Close()
		if !IsTerminal(null) {
			t.Errorf("%s is a character device, not a terminal by IsTerminal", os.DevNull)
		}
	}
}

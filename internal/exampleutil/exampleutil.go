// Package exampleutil holds the helpers that several example programs (examples/...) share:
// their command line (a flag set whose usage says what the program does, flag errors, size
// and output checks made before anything is allocated or computed), writing a CSV file,
// drawing normal random numbers, defaulting an output writer, reading a float64 flag and
// drawing plots (log-axis ticks, plots side by side in one PNG) and a terminal progress bar.
package exampleutil

import (
	"encoding/csv"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/gatejet/gatejet"
	"github.com/gatejet/gatejet/internal/check"
)

// FlagSet returns the flag set of the example program name (examples/name). Its usage,
// printed to errOut for -h and for a bad flag, is the command line, the line about (what
// the program does) and the flags.
func FlagSet(name, about string, errOut io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(errOut)
	fs.Usage = func() {
		fmt.Fprintf(errOut, "usage: go run ./examples/%s [flags]\n%s\n", name, about)
		fs.PrintDefaults()
	}
	return fs
}

// Stdout is the standard output of an example program: os.Stdout, remembering its first write
// error, which Main reports, so that a run whose output was lost (a full disk) does not end
// as a success.
var Stdout io.Writer = stdout

var stdout = &errWriter{w: os.Stdout}

// errWriter is a writer that remembers its first error and writes nothing after it.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) Write(p []byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	n, err := e.w.Write(p)
	if err != nil {
		e.err = err
	}
	return n, err
}

// Main is the main function of the example program op: parse reads the command line and run
// runs the program. After -h or -help the program ends with exit status 0, after a bad flag
// (which parse has printed with the usage) with status 2, after an error of run, or a failed
// write to Stdout, with status 1, the error printed to stderr, prefixed with "op: " unless it
// starts so already.
func Main(op string, parse, run func() error) {
	if err := parse(); errors.Is(err, flag.ErrHelp) {
		os.Exit(0)
	} else if err != nil {
		os.Exit(2)
	}
	err := run()
	if err == nil && stdout.err != nil {
		err = fmt.Errorf("writing the standard output: %w", stdout.err)
	}
	if err != nil {
		msg := err.Error()
		if !strings.HasPrefix(msg, op+":") {
			msg = op + ": " + msg
		}
		fmt.Fprintln(os.Stderr, msg)
		os.Exit(1)
	}
}

// Parse parses args with fs and refuses arguments after the flags, which no example takes.
// It returns flag.ErrHelp for -h and -help; on any error the problem and the usage have been
// printed.
func Parse(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		err := fmt.Errorf("unexpected arguments %q", fs.Args())
		fmt.Fprintln(fs.Output(), err)
		fs.Usage()
		return err
	}
	return nil
}

// BadFlag is an ErrParam *gatejet.Error of the program op whose argument is the flag (or
// flags) at fault.
func BadFlag(op, flags, format string, args ...any) error {
	return check.Errorf(gatejet.ErrParam, op, flags, format, args...)
}

// Buffer is one buffer a program will allocate: the flags that size it and its dimensions.
type Buffer struct {
	Flags string // "-rows × -K", the flags that set Dims
	Dims  []int
}

// CheckBuffers checks, before anything is allocated, that each buffer of elemSize-byte
// elements, and all of them together, fit gatejet.MaxBytes (a program holds them at once):
// an ErrSize *gatejet.Error of the program op naming the buffer's flags (for the total,
// every buffer's, joined by " + ") and the size otherwise, an element count that overflows
// int included.
func CheckBuffers(op string, elemSize int, bufs ...Buffer) error {
	var total float64
	flags := make([]string, len(bufs))
	for i, b := range bufs {
		n, err := check.Alloc(op, b.Flags, elemSize, b.Dims...)
		if err != nil {
			return err
		}
		total += float64(n) * float64(elemSize)
		flags[i] = b.Flags
	}
	if limit := gatejet.MaxBytes(); total > float64(limit) {
		return check.Errorf(gatejet.ErrSize, op, strings.Join(flags, " + "),
			"the buffers together take %s, over the limit of %s (gatejet.SetMaxBytes)", check.Bytes(total), check.Bytes(float64(limit)))
	}
	return nil
}

// CheckOut makes the output directory dir and checks that files can be created in it and
// that the given files, where they exist already, are regular files that can be written,
// so that a long run does not end in "permission denied". Nothing is left behind but the
// directory. Errors are BadFlag errors of the program op naming flag.
func CheckOut(op, flag, dir string, files ...string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return BadFlag(op, flag, "cannot make the output directory: %v", err)
	}
	f, err := os.CreateTemp(dir, "."+op+"-probe-*")
	if err != nil {
		return BadFlag(op, flag, "cannot write in the output directory %s: %v", dir, err)
	}
	name := f.Name()
	f.Close()
	if err := os.Remove(name); err != nil {
		return BadFlag(op, flag, "cannot remove the probe file %s: %v", name, err)
	}
	for _, path := range files {
		fi, err := os.Stat(path)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err == nil && !fi.Mode().IsRegular() {
			return BadFlag(op, flag, "%s exists and is not a regular file", path)
		}
		if err == nil {
			var f *os.File
			if f, err = os.OpenFile(path, os.O_WRONLY, 0); err == nil {
				err = f.Close()
			}
		}
		if err != nil {
			return BadFlag(op, flag, "cannot write %s: %v", path, err)
		}
	}
	return nil
}

// WriteCSV writes header and then rows to the CSV file path, creating its directory.
func WriteCSV(path string, header []string, rows [][]string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := csv.NewWriter(f)
	_ = w.Write(header)
	for _, r := range rows {
		_ = w.Write(r)
	}
	w.Flush()
	if err := w.Error(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// NormalSource is a random number generator with normal deviates: a *rand.Rand of math/rand
// or of math/rand/v2.
type NormalSource interface{ NormFloat64() float64 }

// Normals returns n draws of N(0, sd²) from rng.
func Normals(rng NormalSource, n int, sd float64) []float64 {
	v := make([]float64, n)
	for i := range v {
		v[i] = sd * rng.NormFloat64()
	}
	return v
}

// OrDiscard returns w, or io.Discard when w is nil: a run's output writers default to silence.
func OrDiscard(w io.Writer) io.Writer {
	if w == nil {
		return io.Discard
	}
	return w
}

// FloatFlag is a float64 flag stored in *p that refuses a value which rounds to zero although
// it is not zero (1e-400), so that the user is not told later that the flag they set is 0.
func FloatFlag(p *float64) flag.Value { return floatFlag{p} }

type floatFlag struct{ p *float64 }

func (f floatFlag) String() string {
	if f.p == nil {
		return "0"
	}
	return strconv.FormatFloat(*f.p, 'g', -1, 64)
}

func (f floatFlag) Set(s string) error {
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return errors.Unwrap(err) // strconv's error repeats the text the flag package prints
	}
	mantissa := strings.ToLower(strings.TrimLeft(s, "+-"))
	if strings.HasPrefix(mantissa, "0x") {
		mantissa = strings.TrimPrefix(strings.SplitN(mantissa, "p", 2)[0], "0x")
	} else {
		mantissa = strings.SplitN(mantissa, "e", 2)[0]
	}
	if v == 0 && strings.ContainsAny(mantissa, "123456789abcdef") {
		return errors.New("underflows to 0 in float64")
	}
	*f.p = v
	return nil
}

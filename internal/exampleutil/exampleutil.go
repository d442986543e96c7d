// Package exampleutil holds the helpers that several example programs (examples/...) share:
// writing a CSV file, drawing normal random numbers, defaulting an output writer and reading
// a float64 flag.
package exampleutil

import (
	"encoding/csv"
	"errors"
	"flag"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

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

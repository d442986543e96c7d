// Package exampleutil holds the helpers that several example programs (examples/...) share:
// writing a CSV file, drawing normal random numbers and defaulting an output writer.
package exampleutil

import (
	"encoding/csv"
	"io"
	"os"
	"path/filepath"
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

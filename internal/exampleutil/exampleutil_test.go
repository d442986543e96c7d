package exampleutil

import (
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
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

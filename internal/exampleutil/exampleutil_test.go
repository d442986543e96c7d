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

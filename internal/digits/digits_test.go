package digits

import (
	"bytes"
	"compress/gzip"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const path = "../../testdata/digits/digits.csv.gz"

func TestLoad(t *testing.T) {
	images, labels, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(labels) != 1797 || len(images) != 1797*Pixels {
		t.Fatalf("got %d labels and %d pixels, want 1797 and %d", len(labels), len(images), 1797*Pixels)
	}
	var count [10]int
	for _, l := range labels {
		count[l]++ // Read guarantees 0..9
	}
	for d, c := range count {
		// The set is balanced: about 180 of each digit.
		if c < 170 || c > 190 {
			t.Errorf("digit %d: %d images", d, c)
		}
	}
	lo, hi := images[0], images[0]
	for _, v := range images {
		lo, hi = min(lo, v), max(hi, v)
	}
	if lo != 0 || hi != MaxPixel {
		t.Errorf("pixels span [%v, %v], want [0, 16]", lo, hi)
	}
	// The first image, a 0: its first row is 0 0 5 13 9 1 0 0.
	want := []float64{0, 0, 5, 13, 9, 1, 0, 0}
	for i, w := range want {
		if images[i] != w {
			t.Fatalf("image 0 row 0: got %v, want %v", images[:8], want)
		}
	}
	if labels[0] != 0 || labels[1] != 1 {
		t.Errorf("first labels %v, want 0 1", labels[:2])
	}
}

func gz(t testing.TB, s string) []byte {
	var b bytes.Buffer
	w := gzip.NewWriter(&b)
	if _, err := w.Write([]byte(s)); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func line(pixel, label string) string {
	return strings.Repeat(pixel+",", Pixels) + label + "\n"
}

func TestRead(t *testing.T) {
	images, labels, err := Read(bytes.NewReader(gz(t, line("16.0", "9")+"\n")))
	if err != nil || len(labels) != 1 || labels[0] != 9 || images[63] != 16 {
		t.Fatalf("float form: %v %v %v", images, labels, err)
	}
	good := gz(t, line("3", "1"))
	for name, data := range map[string][]byte{
		"empty":        nil,
		"not gzip":     []byte(line("3", "1")),
		"truncated":    good[:len(good)-6],
		"no images":    gz(t, "\n\n"),
		"short line":   gz(t, "1,2,3\n"),
		"long line":    gz(t, "1,"+line("3", "1")),
		"pixel > 16":   gz(t, line("17", "1")),
		"pixel < 0":    gz(t, line("-1", "1")),
		"label 10":     gz(t, line("3", "10")),
		"fraction":     gz(t, line("3.5", "1")),
		"NaN":          gz(t, line("NaN", "1")),
		"huge":         gz(t, line("1e300", "1")),
		"text":         gz(t, line("x", "1")),
		"endless line": gz(t, strings.Repeat("1", 1<<20)),
	} {
		images, labels, err := Read(bytes.NewReader(data))
		if err == nil || images != nil || labels != nil {
			t.Errorf("%s: want an error and no data, got %d pixels, %d labels, %v", name, len(images), len(labels), err)
		}
	}
}

func TestLoadErrors(t *testing.T) {
	if _, _, err := Load(filepath.Join(t.TempDir(), "missing.csv.gz")); err == nil {
		t.Error("missing file: no error")
	}
	bad := filepath.Join(t.TempDir(), "bad.csv.gz")
	if err := os.WriteFile(bad, gz(t, line("3", "x")), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, _, err := Load(bad); err == nil || !strings.Contains(err.Error(), "bad.csv.gz") {
		t.Errorf("corrupt file: %v", err)
	}
}

// FuzzRead: any stream gives data that satisfies the format or an error, never a panic.
func FuzzRead(f *testing.F) {
	f.Add(gz(f, line("3", "1")))
	f.Add([]byte("not gzip"))
	f.Fuzz(func(t *testing.T, data []byte) {
		images, labels, err := Read(bytes.NewReader(data))
		if err != nil {
			if images != nil || labels != nil {
				t.Fatal("data returned with an error")
			}
			return
		}
		if len(labels) == 0 || len(images) != Pixels*len(labels) {
			t.Fatalf("%d pixels for %d labels", len(images), len(labels))
		}
		for _, v := range images {
			if v < 0 || v > MaxPixel {
				t.Fatalf("pixel %v", v)
			}
		}
		for _, l := range labels {
			if l < 0 || l > 9 {
				t.Fatalf("label %d", l)
			}
		}
	})
}

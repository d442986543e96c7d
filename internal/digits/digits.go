// Package digits reads the 8×8 handwritten digits of testdata/digits (see its README for the
// source and licence): a gzip-compressed CSV, one image a line, 64 pixel counts in 0..16 in
// row-major order followed by the label 0..9. It uses only Go's standard library.
package digits

import (
	"bufio"
	"compress/gzip"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
)

// Pixels is the number of features of one image (8×8); MaxPixel the largest pixel value.
const (
	Pixels   = 64
	MaxPixel = 16
)

// maxImages bounds what Read accepts, so that a hostile stream cannot make it allocate
// without limit (the file has 1,797).
const maxImages = 1 << 20

// maxLine bounds a line's length in bytes: 65 numbers of a few digits each, with room for
// spaces and a float form ("16.0").
const maxLine = 4096

// Load reads the gzip-compressed CSV at path. images holds the pixels row after row, 64 per
// image (image i is images[64·i : 64·i+64]); labels[i] is image i's digit.
func Load(path string) (images []float64, labels []int, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	images, labels, err = Read(f)
	if err != nil {
		return nil, nil, fmt.Errorf("digits: %s: %w", path, err)
	}
	return images, labels, nil
}

// Read reads the gzip-compressed CSV from r, as Load. Every line must hold 64 integers in
// 0..16 and a label in 0..9 separated by commas (an empty last line is allowed); anything else,
// a file with no image, or more than 2²⁰ images, is an error.
func Read(r io.Reader) (images []float64, labels []int, err error) {
	zr, err := gzip.NewReader(r)
	if err != nil {
		return nil, nil, err
	}
	defer zr.Close()
	sc := bufio.NewScanner(zr)
	sc.Buffer(make([]byte, 0, 1024), maxLine)
	line := 0
	for sc.Scan() {
		line++
		text := strings.TrimSpace(sc.Text())
		if text == "" {
			continue
		}
		if len(labels) == maxImages {
			return nil, nil, fmt.Errorf("line %d: more than %d images", line, maxImages)
		}
		fields := strings.Split(text, ",")
		if len(fields) != Pixels+1 {
			return nil, nil, fmt.Errorf("line %d: want %d comma-separated values, got %d", line, Pixels+1, len(fields))
		}
		for j, s := range fields {
			v, err := integer(s)
			if err != nil {
				return nil, nil, fmt.Errorf("line %d, value %d: %w", line, j+1, err)
			}
			if j == Pixels {
				if v < 0 || v > 9 {
					return nil, nil, fmt.Errorf("line %d: label %d outside 0..9", line, v)
				}
				labels = append(labels, v)
				continue
			}
			if v < 0 || v > MaxPixel {
				return nil, nil, fmt.Errorf("line %d, value %d: pixel %d outside 0..%d", line, j+1, v, MaxPixel)
			}
			images = append(images, float64(v))
		}
	}
	if err := sc.Err(); err != nil {
		return nil, nil, fmt.Errorf("line %d: %w", line+1, err)
	}
	if len(labels) == 0 {
		return nil, nil, fmt.Errorf("no images")
	}
	return images, labels, nil
}

// integer parses an integer written as such or as a float with no fraction ("16", "16.0").
func integer(s string) (int, error) {
	s = strings.TrimSpace(s)
	if v, err := strconv.Atoi(s); err == nil {
		return v, nil
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || f != math.Trunc(f) || math.Abs(f) > 1e6 {
		return 0, fmt.Errorf("%q is not an integer", s)
	}
	return int(f), nil
}

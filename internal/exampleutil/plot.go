package exampleutil

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// LogTicks marks a log axis at 1, 2 and 5 times each power of ten, labelling them all
// (gonum's LogTicks labels only the powers of ten, which leaves a short range bare).
type LogTicks struct{}

// Ticks implements plot.Ticker.
func (LogTicks) Ticks(lo, hi float64) []plot.Tick {
	var ticks []plot.Tick
	if !(lo > 0) || !(hi >= lo) || math.IsInf(hi, 1) {
		return ticks
	}
	e0, e1 := math.Floor(math.Log10(lo)), math.Ceil(math.Log10(hi))
	mantissas := []float64{1, 2, 5}
	step := 1.0
	if e1-e0 > 6 {
		// A range of many decades (1e-12 beside 1e3): only powers of ten, at most about a
		// dozen, so that the labels do not overlap.
		mantissas = []float64{1}
		step = math.Ceil((e1 - e0) / 12)
	}
	for e := e0; e <= e1; e += step {
		for _, m := range mantissas {
			v := m * math.Pow(10, e)
			if v >= lo && v <= hi {
				ticks = append(ticks, plot.Tick{Value: v, Label: strconv.FormatFloat(v, 'g', -1, 64)})
			}
		}
	}
	return ticks
}

// WritePlots draws plots side by side, aligned, on one picture w by h and writes it to path as
// a PNG, creating the directory. The callers sanitise their data (a log axis panics on a
// range ≤ 0); a panic of the plotting library that is left is returned as an error rather
// than killing a run after its training.
func WritePlots(path string, w, h vg.Length, plots ...*plot.Plot) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	img := vgimg.New(w, h)
	err := func() (err error) {
		defer func() {
			if r := recover(); r != nil {
				err = fmt.Errorf("plotting %s: %v", path, r)
			}
		}()
		tiles := draw.Tiles{Rows: 1, Cols: len(plots), PadX: vg.Inch / 3, PadTop: vg.Inch / 8,
			PadBottom: vg.Inch / 8, PadLeft: vg.Inch / 8, PadRight: vg.Inch / 8}
		canvases := plot.Align([][]*plot.Plot{plots}, tiles, draw.New(img))
		for i, p := range plots {
			p.Draw(canvases[0][i])
		}
		return nil
	}()
	if err != nil {
		return err
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := (vgimg.PngCanvas{Canvas: img}).WriteTo(f); err != nil {
		f.Close()
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return f.Close()
}

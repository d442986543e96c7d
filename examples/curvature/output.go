package main

import (
	"encoding/csv"
	"fmt"
	"image/color"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// progress draws a one-line text progress bar, redrawn in place with a carriage return
// at most ten times a second.
type progress struct {
	w     io.Writer
	last  time.Time
	width int // length of the last line drawn
}

func (p *progress) show(epoch, epochs, done, total int) {
	if now := time.Now(); done > 0 && now.Sub(p.last) < 100*time.Millisecond {
		return
	} else {
		p.last = now
	}
	const cells = 30
	fill := cells * done / total
	line := fmt.Sprintf("epoch %d/%d [%s%s] %d/%d batches", epoch, epochs,
		strings.Repeat("#", fill), strings.Repeat(".", cells-fill), done, total)
	fmt.Fprint(p.w, "\r"+line)
	p.width = len(line)
}

// clear blanks the bar's line so that the next line starts clean.
func (p *progress) clear() {
	if p.width > 0 {
		fmt.Fprint(p.w, "\r"+strings.Repeat(" ", p.width)+"\r")
		p.width = 0
	}
	p.last = time.Time{}
}

var csvHeader = []string{"epoch", "loss", "fit", "curvature", "recon_mse", "rows_per_s", "seconds"}

// writeCSV writes one row per epoch, creating the directory.
func writeCSV(path string, eps []Epoch) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := csv.NewWriter(f)
	_ = w.Write(csvHeader)
	g := func(v float64) string { return strconv.FormatFloat(v, 'g', 10, 64) }
	for _, e := range eps {
		_ = w.Write([]string{strconv.Itoa(e.Epoch), g(e.Loss), g(e.Fit), g(e.Curvature),
			g(e.ReconMSE), g(e.RowsPerSec), g(e.Seconds)})
	}
	w.Flush()
	if err := w.Error(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// writePlot draws two panels side by side: the loss and its two terms, and the
// reconstruction error against the noise floor σ².
func writePlot(path string, eps []Epoch, cfg Config) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	series := func(f func(Epoch) float64) plotter.XYs {
		xy := make(plotter.XYs, len(eps))
		for i, e := range eps {
			xy[i] = plotter.XY{X: float64(e.Epoch), Y: f(e)}
		}
		return xy
	}
	line := func(p *plot.Plot, name string, xy plotter.XYs, c color.Color, dashed bool) error {
		l, err := plotter.NewLine(xy)
		if err != nil {
			return err
		}
		l.Color = c
		l.Width = vg.Points(1.5)
		if dashed {
			l.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
		}
		p.Add(l)
		p.Legend.Add(name, l)
		return nil
	}
	blue := color.RGBA{R: 31, G: 119, B: 180, A: 255}
	orange := color.RGBA{R: 255, G: 127, B: 14, A: 255}
	green := color.RGBA{R: 44, G: 160, B: 44, A: 255}
	grey := color.RGBA{R: 120, G: 120, B: 120, A: 255}

	left := plot.New()
	left.Title.Text = fmt.Sprintf("Laplace objective (K=%d, P=%d, τ=%g, λ=%g)", cfg.K, cfg.P, cfg.Tau, cfg.Lambda)
	left.X.Label.Text = "epoch"
	left.Y.Label.Text = "nats per row"
	left.Y.Scale = plot.LogScale{}
	left.Y.Tick.Marker = logTicks{}
	left.Add(plotter.NewGrid())
	for _, s := range []struct {
		name string
		f    func(Epoch) float64
		c    color.Color
	}{
		{"loss = fit + curvature", func(e Epoch) float64 { return e.Loss }, blue},
		{"fit ‖y−ẑ‖²/2σ²", func(e Epoch) float64 { return e.Fit }, orange},
		{"curvature ½·log det(I+H/σ²λ)", func(e Epoch) float64 { return e.Curvature }, green},
	} {
		if err := line(left, s.name, series(s.f), s.c, false); err != nil {
			return err
		}
	}
	left.Legend.Top = true

	right := plot.New()
	right.Title.Text = "reconstruction error"
	right.X.Label.Text = "epoch"
	right.Y.Label.Text = "mean squared error"
	right.Y.Scale = plot.LogScale{}
	right.Y.Tick.Marker = logTicks{}
	right.Add(plotter.NewGrid())
	if err := line(right, "recon MSE", series(func(e Epoch) float64 { return e.ReconMSE }), blue, false); err != nil {
		return err
	}
	floor := cfg.Noise * cfg.Noise
	if err := line(right, "noise floor σ²", series(func(Epoch) float64 { return floor }), grey, true); err != nil {
		return err
	}
	right.Legend.Top = true

	const w, h = 12 * vg.Inch, 4.5 * vg.Inch
	img := vgimg.New(w, h)
	dc := draw.New(img)
	tiles := draw.Tiles{Rows: 1, Cols: 2, PadX: vg.Inch / 3, PadTop: vg.Inch / 8, PadBottom: vg.Inch / 8,
		PadLeft: vg.Inch / 8, PadRight: vg.Inch / 8}
	canvases := plot.Align([][]*plot.Plot{{left, right}}, tiles, dc)
	left.Draw(canvases[0][0])
	right.Draw(canvases[0][1])

	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := (vgimg.PngCanvas{Canvas: img}).WriteTo(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// logTicks marks a log axis at 1, 2 and 5 times each power of ten, labelling them all
// (gonum's LogTicks labels only the powers of ten, which leaves a short range bare).
type logTicks struct{}

func (logTicks) Ticks(lo, hi float64) []plot.Tick {
	var ticks []plot.Tick
	if !(lo > 0) || !(hi >= lo) {
		return ticks
	}
	for e := math.Floor(math.Log10(lo)); e <= math.Ceil(math.Log10(hi)); e++ {
		for _, m := range []float64{1, 2, 5} {
			v := m * math.Pow(10, e)
			if v >= lo && v <= hi {
				ticks = append(ticks, plot.Tick{Value: v, Label: strconv.FormatFloat(v, 'g', -1, 64)})
			}
		}
	}
	return ticks
}

package main

import (
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	vgdraw "gonum.org/v1/plot/vg/draw"

	"github.com/gatejet/gatejet/internal/digits"
	"github.com/gatejet/gatejet/internal/exampleutil"
)

// progress is the bar of the whole run (exampleutil.Progress): it counts the units of work
// done out of total and names the stage at work. main gives it the standard output only when
// that is a terminal.
type progress struct {
	exampleutil.Progress
	stage       string
	done, total int
}

func newProgress(w io.Writer) *progress { return &progress{Progress: exampleutil.Progress{W: w}} }

// tick counts one unit of work done and redraws the bar.
func (p *progress) tick() {
	p.done++
	if p.W == nil || p.total <= 0 {
		return
	}
	d := min(p.done, p.total)
	p.Show(d, p.total, "", fmt.Sprintf(" %3d%% %s", 100*d/p.total, p.stage))
}

var curvesHeader = []string{"method", "iteration", "seconds", "train_mse"}

// writeCurvesCSV writes one row per iteration of each method.
func writeCurvesCSV(path string, gn, adam []point) error {
	var rows [][]string
	for _, s := range []struct {
		name  string
		curve []point
	}{{"gauss-newton", gn}, {"adam", adam}} {
		for _, p := range s.curve {
			rows = append(rows, []string{s.name, strconv.Itoa(p.Iter), g10(p.Seconds), g10(p.MSE)})
		}
	}
	return exampleutil.WriteCSV(path, curvesHeader, rows)
}

var gridHeader = []string{"tau", "lambda", "log_evidence", "occam", "train_mse", "val_mse", "chosen_by"}

// writeGridCSV writes one row per grid point.
func writeGridCSV(path string, res Result) error {
	rows := make([][]string, len(res.Grid))
	for i, gp := range res.Grid {
		var by []string
		if i == res.ByEvidence {
			by = append(by, "evidence")
		}
		if i == res.ByValidation {
			by = append(by, "validation")
		}
		rows[i] = []string{g10(gp.Tau), g10(gp.Lambda), g10(gp.LogEvidence), g10(gp.Occam), g10(gp.TrainMSE), g10(gp.ValMSE), strings.Join(by, "+")}
	}
	if t := res.Tuned; t != nil {
		rows = append(rows, []string{g10(t.Tau), g10(t.Lambda), g10(t.LogEvidence), g10(t.Occam), g10(t.TrainMSE), g10(t.ValMSE), "evidence-ascent"})
	}
	return exampleutil.WriteCSV(path, gridHeader, rows)
}

func g10(v float64) string { return strconv.FormatFloat(v, 'g', 10, 64) }

var (
	white = color.RGBA{255, 255, 255, 255}
	grid  = color.RGBA{225, 225, 225, 255}
)

// writeCurvesPNG plots the training error of both methods on a log scale against the
// iteration (left) and against the wall time (right), with the target error dashed. A value
// a log axis cannot show (≤ 0, not finite) is left out, its neighbours not joined across it;
// a value with no drawn neighbour is a dot.
func writeCurvesPNG(path string, gn, adam []point, target float64) error {
	blue := color.RGBA{R: 31, G: 119, B: 180, A: 255}
	orange := color.RGBA{R: 255, G: 127, B: 14, A: 255}
	grey := color.RGBA{R: 120, G: 120, B: 120, A: 255}
	drawable := func(v float64) bool { return v > 0 && !math.IsInf(v, 1) }
	var plots []*plot.Plot
	for _, ax := range []struct {
		title, label string
		x            func(point) float64
	}{
		{"training error against iterations", "iteration", func(p point) float64 { return float64(p.Iter) }},
		{"training error against wall time", "seconds", func(p point) float64 { return p.Seconds }},
	} {
		p := plot.New()
		p.Title.Text = ax.title
		p.X.Label.Text = ax.label
		p.Y.Label.Text = "training MSE"
		p.Y.Scale = plot.LogScale{}
		p.Y.Tick.Marker = exampleutil.LogTicks{}
		p.Add(plotter.NewGrid())
		p.Legend.Top = true
		lo, hi := math.Inf(1), math.Inf(-1)
		for _, s := range []struct {
			name  string
			curve []point
			c     color.Color
		}{{"Gauss-Newton (LM)", gn, blue}, {"Adam", adam, orange}} {
			style := vgdraw.LineStyle{Color: s.c, Width: vg.Points(1.5)}
			var run plotter.XYs
			flush := func() error {
				switch {
				case len(run) == 1: // a dot, which a line of one point would not show
					d, err := plotter.NewScatter(run)
					if err != nil {
						return err
					}
					d.GlyphStyle = vgdraw.GlyphStyle{Color: s.c, Radius: vg.Points(2.5), Shape: vgdraw.CircleGlyph{}}
					p.Add(d)
				case len(run) > 1:
					l, err := plotter.NewLine(run)
					if err != nil {
						return err
					}
					l.LineStyle = style
					p.Add(l)
				}
				run = nil
				return nil
			}
			for _, pt := range s.curve {
				if !drawable(pt.MSE) {
					if err := flush(); err != nil {
						return err
					}
					continue
				}
				run = append(run, plotter.XY{X: ax.x(pt), Y: pt.MSE})
				lo, hi = math.Min(lo, pt.MSE), math.Max(hi, pt.MSE)
			}
			if err := flush(); err != nil {
				return err
			}
			p.Legend.Add(s.name, &plotter.Line{LineStyle: style})
		}
		if drawable(target) {
			// A constant: drawn across the whole axis.
			tl := plotter.NewFunction(func(float64) float64 { return target })
			tl.Color = grey
			tl.Width = vg.Points(1.5)
			tl.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
			p.Add(tl)
			p.Legend.Add(fmt.Sprintf("target %.4g", target), tl)
			lo, hi = math.Min(lo, target), math.Max(hi, target)
		}
		if lo > hi {
			lo, hi = 1, 10
			p.Title.Text += " — no values > 0 to draw"
		}
		// A margin, so that the target at the edge stays clear of the axis.
		m := 1.25
		if lo == hi {
			m = 2
		}
		p.Y.Min, p.Y.Max = math.Max(lo/m, math.SmallestNonzeroFloat64), math.Min(hi*m, math.MaxFloat64)
		plots = append(plots, p)
	}
	return exampleutil.WritePlots(path, 12*vg.Inch, 4.5*vg.Inch, plots...)
}

// writeImagesPNG draws up to ten held-out images, one of each digit where the set has one:
// the originals in the top row, the Gauss-Newton reconstructions below them, the Adam ones at
// the bottom; ink dark on white.
func writeImagesPNG(path string, test split, gnRecon, adamRecon []float64) error {
	var pick []int
	seen := map[int]bool{}
	for i, l := range test.labels {
		if !seen[l] && len(pick) < 10 {
			seen[l] = true
			pick = append(pick, i)
		}
	}
	for i := 0; i < test.n && len(pick) < 10; i++ {
		if !contains(pick, i) {
			pick = append(pick, i)
		}
	}
	const cell, gap = 6, 6
	side := 8*cell + gap
	img := image.NewRGBA(image.Rect(0, 0, len(pick)*side+gap, 3*side+gap))
	draw.Draw(img, img.Bounds(), image.NewUniform(white), image.Point{}, draw.Src)
	for row, src := range [][]float64{test.x, gnRecon, adamRecon} {
		for col, i := range pick {
			x0, y0 := gap+col*side, gap+row*side
			// A one-pixel frame: a grey square that the image's cells then cover but for its edge.
			draw.Draw(img, image.Rect(x0-1, y0-1, x0+8*cell+1, y0+8*cell+1), image.NewUniform(grid), image.Point{}, draw.Src)
			for j, v := range src[i*digits.Pixels : (i+1)*digits.Pixels] {
				g := uint8(math.Round(255 * (1 - min(max(v, 0), 1))))
				r := image.Rect(x0+(j%8)*cell, y0+(j/8)*cell, x0+(j%8+1)*cell, y0+(j/8+1)*cell)
				draw.Draw(img, r, image.NewUniform(color.RGBA{g, g, g, 255}), image.Point{}, draw.Src)
			}
		}
	}
	return writePNG(path, img)
}

func contains(s []int, v int) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

func writePNG(path string, img image.Image) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := png.Encode(f, img); err != nil {
		f.Close()
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return f.Close()
}

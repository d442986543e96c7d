package main

import (
	"fmt"
	"image/color"
	"io"
	"math"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/gatejet/gatejet/internal/exampleutil"
)

// progress is the bar of the training loop on stderr (exampleutil.Progress) when that is a
// terminal. To anything else (a file, a pipe, a buffer: a log) it writes one plain line
// instead, once, so that logs hold no carriage-return frames.
type progress struct {
	exampleutil.Progress
	tty   bool // draw the bar (W is a terminal)
	noted bool // the plain line has been written (not a terminal)
}

func newProgress(w io.Writer) *progress {
	return &progress{Progress: exampleutil.Progress{W: w}, tty: exampleutil.IsTerminal(w)}
}

func (p *progress) show(epoch, epochs, done, total int) {
	if !p.tty {
		if !p.noted {
			fmt.Fprintf(p.W, "progress: %d batches per epoch (no progress bar: stderr is not a terminal)\n", total)
			p.noted = true
		}
		return
	}
	p.Show(done, total, fmt.Sprintf("epoch %d/%d ", epoch, epochs), fmt.Sprintf(" %d/%d batches", done, total))
}

var csvHeader = []string{"epoch", "loss", "fit", "curvature", "recon_mse", "rows_per_s", "seconds"}

// writeCSV writes one row per epoch, creating the directory.
func writeCSV(path string, eps []Epoch) error {
	g := func(v float64) string { return strconv.FormatFloat(v, 'g', 10, 64) }
	rows := make([][]string, len(eps))
	for i, e := range eps {
		rows[i] = []string{strconv.Itoa(e.Epoch), g(e.Loss), g(e.Fit), g(e.Curvature),
			g(e.ReconMSE), g(e.RowsPerSec), g(e.Seconds)}
	}
	return exampleutil.WriteCSV(path, csvHeader, rows)
}

// writePlot draws two panels side by side: the loss and its two terms, and the
// reconstruction error against the noise floor σ². Both have log y axes, on which a value
// that is ≤ 0 (a curvature term that rounds to zero can come out as −1e-13) or not finite
// cannot be drawn: such values are left out, said so in the legend, and returned as notes,
// one per series, for the caller to print. Every drawn value is a marker, so that a run of
// one epoch shows; consecutive drawn epochs are joined by a line.
func writePlot(path string, eps []Epoch, cfg Config) (notes []string, err error) {
	blue := color.RGBA{R: 31, G: 119, B: 180, A: 255}
	orange := color.RGBA{R: 255, G: 127, B: 14, A: 255}
	green := color.RGBA{R: 44, G: 160, B: 44, A: 255}
	grey := color.RGBA{R: 120, G: 120, B: 120, A: 255}

	left := newLogPanel(fmt.Sprintf("Laplace objective (K=%d, P=%d, τ=%g, λ=%g)", cfg.K, cfg.P, cfg.Tau, cfg.Lambda),
		"nats per row", eps)
	for _, s := range []struct {
		name string
		f    func(Epoch) float64
		c    color.Color
	}{
		{"loss = fit + curvature", func(e Epoch) float64 { return e.Loss }, blue},
		{"fit ‖y−ẑ‖²/2σ²", func(e Epoch) float64 { return e.Fit }, orange},
		{"curvature ½·log det(I+H/σ²λ)", func(e Epoch) float64 { return e.Curvature }, green},
	} {
		if err := left.add(s.name, eps, s.f, s.c); err != nil {
			return nil, err
		}
	}

	right := newLogPanel("reconstruction error", "mean squared error", eps)
	if err := right.add("recon MSE", eps, func(e Epoch) float64 { return e.ReconMSE }, blue); err != nil {
		return nil, err
	}
	// The floor is a constant: drawn across the whole axis, so that it shows for one epoch.
	if floor := cfg.Noise * cfg.Noise; right.drawable(floor) {
		fl := plotter.NewFunction(func(float64) float64 { return floor })
		fl.Color = grey
		fl.Width = vg.Points(1.5)
		fl.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
		right.p.Add(fl)
		right.p.Legend.Add("noise floor σ²", fl)
		right.span(floor)
	}
	for _, pn := range []*logPanel{left, right} {
		pn.finish()
		notes = append(notes, pn.notes...)
	}

	return notes, exampleutil.WritePlots(path, 12*vg.Inch, 4.5*vg.Inch, left.p, right.p)
}

// logPanel is a plot with a log y axis whose range is set from the values drawn on it
// (gonum's own range would be ≤ 0 for a single value or none, which a log axis panics on).
type logPanel struct {
	p      *plot.Plot
	lo, hi float64 // range of the drawn values; lo > hi while there are none
	notes  []string
}

func newLogPanel(title, ylabel string, eps []Epoch) *logPanel {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = "epoch"
	p.X.Tick.Marker = epochTicks{}
	p.Y.Label.Text = ylabel
	p.Y.Scale = plot.LogScale{}
	p.Y.Tick.Marker = exampleutil.LogTicks{}
	p.Add(plotter.NewGrid())
	p.Legend.Top = true
	// Half an epoch either side of the first and the last, so one epoch has a range too.
	p.X.Min, p.X.Max = 0.5, 1.5
	if len(eps) > 0 {
		p.X.Min, p.X.Max = float64(eps[0].Epoch)-0.5, float64(eps[len(eps)-1].Epoch)+0.5
	}
	return &logPanel{p: p, lo: math.Inf(1), hi: math.Inf(-1)}
}

// drawable reports whether v can be drawn on a log axis.
func (*logPanel) drawable(v float64) bool { return v > 0 && !math.IsInf(v, 1) }

func (pn *logPanel) span(v float64) {
	pn.lo, pn.hi = math.Min(pn.lo, v), math.Max(pn.hi, v)
}

// add draws one series: a marker at each drawable value, a line through each run of
// consecutive ones; the values left out are counted in the legend and in a note.
func (pn *logPanel) add(name string, eps []Epoch, f func(Epoch) float64, c color.Color) error {
	style := draw.LineStyle{Color: c, Width: vg.Points(1.5)}
	var pts, run plotter.XYs
	var nonPos, nonFinite int
	flush := func() error {
		if len(run) > 1 {
			l, err := plotter.NewLine(run)
			if err != nil {
				return err
			}
			l.LineStyle = style
			pn.p.Add(l)
		}
		run = nil
		return nil
	}
	for _, e := range eps {
		v := f(e)
		if !pn.drawable(v) {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				nonFinite++
			} else {
				nonPos++
			}
			if err := flush(); err != nil {
				return err
			}
			continue
		}
		xy := plotter.XY{X: float64(e.Epoch), Y: v}
		pts, run = append(pts, xy), append(run, xy)
		pn.span(v)
	}
	if err := flush(); err != nil {
		return err
	}
	marks, err := plotter.NewScatter(pts)
	if err != nil {
		return err
	}
	marks.GlyphStyle = draw.GlyphStyle{Color: c, Radius: vg.Points(2.5), Shape: draw.CircleGlyph{}}
	pn.p.Add(marks)

	var left []string
	if nonPos > 0 {
		left = append(left, fmt.Sprintf("%d of %d values ≤ 0", nonPos, len(eps)))
	}
	if nonFinite > 0 {
		left = append(left, fmt.Sprintf("%d of %d values NaN or ±Inf", nonFinite, len(eps)))
	}
	if len(left) > 0 {
		why := strings.Join(left, ", ")
		pn.notes = append(pn.notes, fmt.Sprintf("%s: %s, not drawn on the log scale (loss.csv has every value)",
			name, why))
		name += fmt.Sprintf(" (%d of %d not drawn)", nonPos+nonFinite, len(eps)) // details in the note
	}
	pn.p.Legend.Add(name, &plotter.Line{LineStyle: style}, marks)
	return nil
}

// finish sets the y range to the drawn values with a margin (1 to 10 and a note in the
// title when nothing could be drawn).
func (pn *logPanel) finish() {
	lo, hi := pn.lo, pn.hi
	switch {
	case lo > hi:
		lo, hi = 1, 10
		pn.p.Title.Text += " — no values > 0 to draw"
	default:
		// A margin, so that a constant line at the edge (the noise floor) stays clear of
		// the axis; a factor of two either side of a single value.
		m := 1.25
		if lo == hi {
			m = 2
		}
		lo, hi = math.Max(lo/m, math.SmallestNonzeroFloat64), math.Min(hi*m, math.MaxFloat64)
	}
	pn.p.Y.Min, pn.p.Y.Max = lo, hi
}

// epochTicks marks whole epochs only, at most about ten (the axis runs half an epoch
// beyond the first and the last).
type epochTicks struct{}

func (epochTicks) Ticks(lo, hi float64) []plot.Tick {
	var ticks []plot.Tick
	if math.IsNaN(lo) || math.IsInf(lo, 0) || math.IsNaN(hi) || math.IsInf(hi, 0) || hi < lo {
		return ticks
	}
	first, last := math.Ceil(lo), math.Floor(hi)
	step := math.Max(1, math.Ceil((last-first+1)/10))
	for e := first; e <= last; e += step {
		ticks = append(ticks, plot.Tick{Value: e, Label: strconv.FormatFloat(e, 'f', -1, 64)})
	}
	return ticks
}

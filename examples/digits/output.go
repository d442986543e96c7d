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
	"time"

	"github.com/gatejet/gatejet/internal/digits"
	"github.com/gatejet/gatejet/internal/exampleutil"
)

// progress draws a one-line progress bar, redrawn in place with a carriage return at most ten
// times a second. It draws nothing when its writer is nil: main gives it the standard output
// only when that is a terminal, so that logs hold no carriage-return frames.
type progress struct {
	w           io.Writer
	stage       string
	done, total int
	last        time.Time
	width       int // length of the last line drawn
}

func newProgress(w io.Writer) *progress { return &progress{w: w} }

// isTerminal reports whether f is a character device (a terminal, or /dev/null, where
// drawing is harmless).
func isTerminal(f *os.File) bool {
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// tick counts one unit of work done and redraws the bar.
func (p *progress) tick() {
	p.done++
	if p.w == nil || p.total <= 0 {
		return
	}
	if now := time.Now(); now.Sub(p.last) < 100*time.Millisecond && p.done < p.total {
		return
	} else {
		p.last = now
	}
	const cells = 30
	fill := cells * min(p.done, p.total) / p.total
	line := fmt.Sprintf("[%s%s] %3d%% %s", strings.Repeat("#", fill), strings.Repeat(".", cells-fill),
		100*min(p.done, p.total)/p.total, p.stage)
	pad := ""
	if n := len(line); n < p.width {
		pad = strings.Repeat(" ", p.width-n)
	}
	fmt.Fprint(p.w, "\r"+line+pad)
	p.width = len(line)
}

// clear blanks the bar's line so that the next line starts clean.
func (p *progress) clear() {
	if p.w != nil && p.width > 0 {
		fmt.Fprint(p.w, "\r"+strings.Repeat(" ", p.width)+"\r")
	}
	p.width = 0
	p.last = time.Time{}
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
	white  = color.RGBA{255, 255, 255, 255}
	frame  = color.RGBA{90, 90, 90, 255}
	grid   = color.RGBA{225, 225, 225, 255}
	blue   = color.RGBA{31, 119, 180, 255}
	orange = color.RGBA{255, 127, 14, 255}
	grey   = color.RGBA{140, 140, 140, 255}
)

// writeCurvesPNG draws the training error of both methods on a log scale against the
// iteration (left panel) and against the wall time (right panel): Gauss-Newton blue, Adam
// orange, the target a grey dashed line; grid lines at 1, 2 and 5 times each power of ten.
func writeCurvesPNG(path string, gn, adam []point, target float64) error {
	const pw, ph, left, gap, top = 460, 360, 56, 76, 20
	const W, H = left + 2*pw + gap + 24, top + ph + 40
	img := image.NewRGBA(image.Rect(0, 0, W, H))
	draw.Draw(img, img.Bounds(), image.NewUniform(white), image.Point{}, draw.Src)

	lo, hi := target, target
	for _, c := range [][]point{gn, adam} {
		for _, p := range c {
			if p.MSE > 0 && !math.IsInf(p.MSE, 0) {
				lo, hi = math.Min(lo, p.MSE), math.Max(hi, p.MSE)
			}
		}
	}
	if !(lo > 0) || !(hi > lo) {
		lo, hi = math.Max(lo, 1e-300)/2, math.Max(hi, 1e-300)*2
	}
	ly0, ly1 := math.Log10(lo)-0.05, math.Log10(hi)+0.05
	maxIter, maxSec := 1.0, 1e-9
	for _, c := range [][]point{gn, adam} {
		if len(c) > 0 {
			maxIter = math.Max(maxIter, float64(c[len(c)-1].Iter))
			maxSec = math.Max(maxSec, c[len(c)-1].Seconds)
		}
	}
	for panel, xOf := range []func(point) float64{
		func(p point) float64 { return float64(p.Iter) / maxIter },
		func(p point) float64 { return p.Seconds / maxSec },
	} {
		x0, y0 := left+panel*(pw+gap), top
		px := func(fx float64) float64 { return float64(x0) + fx*float64(pw) }
		py := func(v float64) float64 { return float64(y0+ph) - (math.Log10(v)-ly0)/(ly1-ly0)*float64(ph) }
		for e := math.Floor(ly0); e <= math.Ceil(ly1); e++ {
			for _, mant := range []float64{1, 2, 5} {
				v := mant * math.Pow(10, e)
				if l := math.Log10(v); l >= ly0 && l <= ly1 {
					y := int(math.Round(py(v)))
					hline(img, x0, x0+pw, y, grid, 0)
					label := strconv.FormatFloat(v, 'g', 3, 64)
					text(img, x0-6-textWidth(label), y-5, label, frame)
				}
			}
		}
		hline(img, x0, x0+pw, int(math.Round(py(target))), grey, 6)
		for _, s := range []struct {
			c   []point
			col color.RGBA
		}{{adam, orange}, {gn, blue}} {
			for i, p := range s.c {
				x, y := px(xOf(p)), py(p.MSE)
				if i == 0 {
					disc(img, x, y, 2.5, s.col)
					continue
				}
				q := s.c[i-1]
				line(img, px(xOf(q)), py(q.MSE), x, y, s.col)
			}
		}
		rect(img, x0, y0, x0+pw, y0+ph, frame)
		// The x axis runs from 0 to the last iteration (left) or the last second (right).
		end := strconv.Itoa(int(maxIter))
		if panel == 1 {
			end = strconv.FormatFloat(maxSec, 'f', 2, 64) + "s"
		}
		text(img, x0, y0+ph+8, "0", frame)
		text(img, x0+pw-textWidth(end), y0+ph+8, end, frame)
	}
	return writePNG(path, img)
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
			for j, v := range src[i*digits.Pixels : (i+1)*digits.Pixels] {
				g := uint8(math.Round(255 * (1 - min(max(v, 0), 1))))
				r := image.Rect(x0+(j%8)*cell, y0+(j/8)*cell, x0+(j%8+1)*cell, y0+(j/8+1)*cell)
				draw.Draw(img, r, image.NewUniform(color.RGBA{g, g, g, 255}), image.Point{}, draw.Src)
			}
			rect(img, x0-1, y0-1, x0+8*cell, y0+8*cell, grid)
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

// hline draws a horizontal line from x0 to x1 at y, dashed with dashes of dash pixels when
// dash > 0.
func hline(img *image.RGBA, x0, x1, y int, c color.RGBA, dash int) {
	for x := x0; x <= x1; x++ {
		if dash > 0 && (x-x0)/dash%2 == 1 {
			continue
		}
		img.SetRGBA(x, y, c)
	}
}

func rect(img *image.RGBA, x0, y0, x1, y1 int, c color.RGBA) {
	hline(img, x0, x1, y0, c, 0)
	hline(img, x0, x1, y1, c, 0)
	for y := y0; y <= y1; y++ {
		img.SetRGBA(x0, y, c)
		img.SetRGBA(x1, y, c)
	}
}

// line draws a line two pixels wide from (x0, y0) to (x1, y1).
func line(img *image.RGBA, x0, y0, x1, y1 float64, c color.RGBA) {
	steps := int(math.Ceil(2*math.Hypot(x1-x0, y1-y0))) + 1
	for i := 0; i <= steps; i++ {
		f := float64(i) / float64(steps)
		disc(img, x0+f*(x1-x0), y0+f*(y1-y0), 1, c)
	}
}

// disc fills the pixels within radius r of (x, y); points off the image are skipped.
func disc(img *image.RGBA, x, y, r float64, c color.RGBA) {
	if math.IsNaN(x) || math.IsNaN(y) || math.Abs(x) > 1e6 || math.Abs(y) > 1e6 {
		return
	}
	for py := int(math.Floor(y - r)); py <= int(math.Ceil(y+r)); py++ {
		for px := int(math.Floor(x - r)); px <= int(math.Ceil(x+r)); px++ {
			if dx, dy := float64(px)-x, float64(py)-y; dx*dx+dy*dy <= r*r+0.25 {
				if (image.Point{px, py}).In(img.Rect) {
					img.SetRGBA(px, py, c)
				}
			}
		}
	}
}

// glyphs is a 3×5 pixel font for the axis labels: digits, '.', '-', 'e' and 's'.
var glyphs = map[rune][5]string{
	'0': {"111", "101", "101", "101", "111"},
	'1': {"010", "110", "010", "010", "111"},
	'2': {"111", "001", "111", "100", "111"},
	'3': {"111", "001", "111", "001", "111"},
	'4': {"101", "101", "111", "001", "001"},
	'5': {"111", "100", "111", "001", "111"},
	'6': {"111", "100", "111", "101", "111"},
	'7': {"111", "001", "001", "001", "001"},
	'8': {"111", "101", "111", "101", "111"},
	'9': {"111", "101", "111", "001", "111"},
	'.': {"000", "000", "000", "000", "010"},
	'-': {"000", "000", "111", "000", "000"},
	'e': {"000", "111", "111", "100", "111"},
	's': {"000", "111", "110", "011", "111"},
}

// glyphScale is the size of a font pixel in image pixels.
const glyphScale = 2

func textWidth(s string) int { return len(s) * 4 * glyphScale }

// text draws s with its top-left corner at (x, y); characters outside the font are skipped.
func text(img *image.RGBA, x, y int, s string, c color.RGBA) {
	for i, r := range s {
		g, ok := glyphs[r]
		if !ok {
			continue
		}
		for row, bits := range g {
			for col, b := range bits {
				if b != '1' {
					continue
				}
				px, py := x+(4*i+col)*glyphScale, y+row*glyphScale
				draw.Draw(img, image.Rect(px, py, px+glyphScale, py+glyphScale), image.NewUniform(c), image.Point{}, draw.Src)
			}
		}
	}
}

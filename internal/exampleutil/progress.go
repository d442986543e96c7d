package exampleutil

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"
)

// Progress draws a one-line text progress bar on W, redrawn in place with a carriage return.
// It draws nothing when W is nil. The examples give it a terminal only (IsTerminal), so that
// logs hold no carriage-return frames.
type Progress struct {
	W     io.Writer
	last  time.Time
	width int // length of the last line drawn
}

// Show draws the bar of done out of total between the texts before and after, as in
// "epoch 1/3 [#####.....] 5/30 batches". The first bar (done ≤ 0) and the last (done ≥ total)
// are always drawn, the ones between at most ten a second.
func (p *Progress) Show(done, total int, before, after string) {
	if p.W == nil || total <= 0 {
		return
	}
	if now := time.Now(); done > 0 && done < total && now.Sub(p.last) < 100*time.Millisecond {
		return
	} else {
		p.last = now
	}
	const cells = 30
	fill := cells * min(max(done, 0), total) / total
	line := before + "[" + strings.Repeat("#", fill) + strings.Repeat(".", cells-fill) + "]" + after
	pad := ""
	if n := len(line); n < p.width {
		pad = strings.Repeat(" ", p.width-n) // blank what is left of a longer line
	}
	fmt.Fprint(p.W, "\r"+line+pad)
	p.width = len(line)
}

// Clear blanks the bar's line so that the next line starts clean.
func (p *Progress) Clear() {
	if p.W != nil && p.width > 0 {
		fmt.Fprint(p.W, "\r"+strings.Repeat(" ", p.width)+"\r")
	}
	p.width = 0
	p.last = time.Time{}
}

// IsTerminal reports whether w is a file that is a character device (a terminal, or
// /dev/null, where drawing is harmless).
func IsTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

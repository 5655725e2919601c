// Package progress reports a long step's progress on standard error: a bar
// on a terminal, otherwise a plain line at most every 5 seconds (CI logs).
package progress

import (
	"fmt"
	"io"
	"os"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"
)

// Progress is one step's progress.
type Progress struct {
	w        io.Writer
	terminal *Terminal // Lazy's, for the first update to start it
	lazy     bool      // a Lazy progress whose first update has not come
	label    string
	total    int
	bar      *progressbar.ProgressBar
	last     time.Time
	done     int
}

// Terminal is the terminal a bar is drawn on. Its bytes go through Out,
// which need not be the terminal's *os.File (cli.Run's standard error is a
// writer bound to the run's context); its width is read from File, which is
// never written (nil: the width is unknown).
type Terminal struct {
	Out  io.Writer
	File *os.File
}

// TerminalOf is stream, when it is a terminal (an *os.File on one), as the
// Terminal of a bar drawn through out; nil when it is none. A caller that
// wraps its standard error asks it of the stream before wrapping it: the
// wrapped stream is no *os.File.
func TerminalOf(stream, out io.Writer) *Terminal {
	f, ok := stream.(*os.File)
	if !ok || !term.IsTerminal(int(f.Fd())) {
		return nil
	}
	return &Terminal{Out: out, File: f}
}

// New starts the progress of label over total items: plain lines go to w; the
// bar (a fixed label and numbers) goes to terminal, which is nil when there
// is none (TerminalOf).
func New(w io.Writer, terminal *Terminal, label string, total int) *Progress {
	p := &Progress{w: w, label: label, total: total, last: time.Now()}
	if terminal != nil {
		width := barWidth
		if terminal.File != nil {
			if cols, _, err := term.GetSize(int(terminal.File.Fd())); err == nil && cols > 0 {
				width = fitWidth(cols, label, total)
			}
		}
		p.bar = newBar(terminal.Out, label, total, width)
	}
	return p
}

// barWidth is the width of the bar itself (progressbar's default) where the
// terminal's width is unknown.
const barWidth = 40

// fitWidth is the width of the bar itself that keeps its line within a
// terminal cols wide, at most barWidth: a longer line would wrap, and every
// redraw would leave a line behind. progressbar fits the bar itself only
// when it writes to the terminal's *os.File.
func fitWidth(cols int, label string, total int) int {
	// "LABEL 100% |BAR| (DONE/TOTAL) [ELAPSED:LEFT]": 6 for the percentage,
	// 2 for the bar's edges, 4 and twice TOTAL's digits for the counts, 4
	// and up to 8 for each of the two times (12h3m4s), and the last column
	// left empty.
	digits := len(strconv.Itoa(total))
	rest := utf8.RuneCountInString(label) + 6 + 2 + 4 + 2*digits + 4 + 16 + 1
	return max(1, min(barWidth, cols-rest))
}

// newBar is the bar of label over total items, width wide, drawn on out.
func newBar(out io.Writer, label string, total, width int) *progressbar.ProgressBar {
	return progressbar.NewOptions(total,
		progressbar.OptionSetWriter(out),
		progressbar.OptionSetDescription(label),
		progressbar.OptionSetWidth(width),
		progressbar.OptionShowCount(),
		progressbar.OptionSetPredictTime(true),
		progressbar.OptionClearOnFinish(),
		progressbar.OptionThrottle(100*time.Millisecond),
	)
}

// Lazy is the progress of a step whose total is known only at its first
// update, which starts it as New would.
func Lazy(w io.Writer, terminal *Terminal, label string) *Progress {
	return &Progress{w: w, terminal: terminal, lazy: true, label: label}
}

// Update sets the items done of total.
func (p *Progress) Update(done, total int) {
	if p.lazy {
		*p = *New(p.w, p.terminal, p.label, total)
	}
	p.done = done
	if p.bar != nil {
		_ = p.bar.Set(done)
		return
	}
	if time.Since(p.last) >= 5*time.Second && done < total {
		fmt.Fprintf(p.w, "%s: %d/%d (%d%%)\n", p.label, done, total, 100*done/max(total, 1))
		p.last = time.Now()
	}
}

// Finish ends the bar.
func (p *Progress) Finish() {
	if p.bar != nil {
		_ = p.bar.Finish()
	}
}

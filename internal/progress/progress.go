// Package progress reports a long step's progress on standard error: a bar
// on a terminal, otherwise a plain line at most every 5 seconds (CI logs).
package progress

import (
	"fmt"
	"io"
	"os"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"
)

// Progress is one step's progress.
type Progress struct {
	w        io.Writer
	terminal io.Writer // Lazy's, until the first update starts it
	label    string
	total    int
	bar      *progressbar.ProgressBar
	last     time.Time
	done     int
}

// New starts the progress of label over total items: plain lines go to w; the
// bar (a fixed label and numbers) goes to terminal when it is one.
func New(w, terminal io.Writer, label string, total int) *Progress {
	p := &Progress{w: w, label: label, total: total, last: time.Now()}
	if f, ok := terminal.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		p.bar = progressbar.NewOptions(total,
			progressbar.OptionSetWriter(f),
			progressbar.OptionSetDescription(label),
			progressbar.OptionShowCount(),
			progressbar.OptionSetPredictTime(true),
			progressbar.OptionClearOnFinish(),
			progressbar.OptionThrottle(100*time.Millisecond),
		)
	}
	return p
}

// Lazy is the progress of a step whose total is known only at its first
// update, which starts it as New would.
func Lazy(w, terminal io.Writer, label string) *Progress {
	return &Progress{w: w, terminal: terminal, label: label}
}

// Update sets the items done of total.
func (p *Progress) Update(done, total int) {
	if p.terminal != nil {
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

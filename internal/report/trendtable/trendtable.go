// Package trendtable renders a trend.Trend, the small trend of the gated
// measures over the base branch's last runs, as the Markdown section of check's
// and compare's reports (the PR comment, the job summary) and as terminal
// lines. It does no arithmetic: the selection and the sparkline are the trend
// package's, the numbers go through internal/format, and user-controlled text
// (branch, group and measure names, commits) is escaped.
package trendtable

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/retrieval-gate/retrieval-gate/internal/format"
	"github.com/retrieval-gate/retrieval-gate/internal/report/gatetable"
	"github.com/retrieval-gate/retrieval-gate/internal/trend"
)

// Label renders a measure key for a report ("hit@5"); the report's own.
type Label func(key string) string

// group is a trend group as the reports name it ("type: faq"); esc renders the
// user-controlled name.
func group(g string, esc func(string) string) string {
	if kind, name, ok := strings.Cut(g, ":"); ok {
		return kind + ": " + esc(name)
	}
	return esc(g)
}

// value is a point's mean with its n; DCG@k's with the maximum possible in
// its run ("9.851 of 31.805"), or "max unknown" for a run whose record does
// not tell it. Every point of a row is at the row's k (trend.Build), the k
// its label names.
func value(p *trend.Point) string {
	if p == nil {
		return format.Missing
	}
	v := format.Num(p.Mean)
	switch {
	case p.Max > 0:
		v += " of " + format.Num(p.Max)
	case math.IsNaN(p.Max):
		v += ", max unknown"
	}
	return fmt.Sprintf("%s (n=%d)", v, p.N)
}

// leftOut is the base runs a row leaves out, at another k than its own: "3
// at k=5 left out", "2 at k=5, 1 at k=10 left out" ("without a k" for runs
// whose record states none); "" when there are none.
func leftOut(r trend.Row) string {
	if len(r.LeftOut) == 0 {
		return ""
	}
	parts := make([]string, len(r.LeftOut))
	for i, l := range r.LeftOut {
		parts[i] = fmt.Sprintf("%d at k=%d", l.Runs, l.K)
		if l.K == 0 {
			parts[i] = fmt.Sprintf("%d without a k", l.Runs)
		}
	}
	return strings.Join(parts, ", ") + " left out"
}

// anyLeftOut reports whether a row of t leaves runs out.
func anyLeftOut(t *trend.Trend) bool {
	for _, r := range t.Rows {
		if len(r.LeftOut) > 0 {
			return true
		}
	}
	return false
}

// leftOutNote says why a row leaves runs out (the runs column counts them).
const leftOutNote = "a row joins only the runs at this run's k, since a measure at another cutoff is another measure: the runs at another k are left out, as counted"

func first(ps []trend.Point) *trend.Point {
	if len(ps) == 0 {
		return nil
	}
	return &ps[0]
}

func last(ps []trend.Point) *trend.Point {
	if len(ps) == 0 {
		return nil
	}
	return &ps[len(ps)-1]
}

// spark is a row's sparkline: the base runs, an arrow, this run.
func spark(r trend.Row) string {
	s := r.Spark
	if r.CurrentGlyph != "" {
		if s != "" {
			s += " → "
		}
		if r.CurrentChanged {
			s += trend.ChangeMark
		}
		s += r.CurrentGlyph
	}
	if s == "" {
		return format.Missing
	}
	return s
}

// changesListed bounds the inputs named per change, and changeName the length
// of each name: the fingerprint's keys come from the history file, and a
// hostile or corrupt one must not fill the comment.
const (
	changesListed = 8
	changeName    = 60
)

// changes is the list of input changes, "" when none.
func changes(t *trend.Trend, esc func(string) string) string {
	parts := make([]string, 0, len(t.Changes))
	for _, c := range t.Changes {
		what := make([]string, 0, min(len(c.What), changesListed+1))
		for i, w := range c.What {
			if i == changesListed {
				what = append(what, fmt.Sprintf("and %d more", len(c.What)-changesListed))
				break
			}
			short, _ := format.Shorten(w, changeName)
			what = append(what, esc(short))
		}
		who := "this run"
		if !c.Current {
			who = "run " + esc(format.CommitPrefix(c.Commit, 7))
			if c.Commit == "" {
				who = "run of " + esc(c.Time)
			}
		}
		parts = append(parts, who+": "+strings.Join(what, ", "))
	}
	return strings.Join(parts, "; ")
}

func heading(t *trend.Trend, esc func(string) string) string {
	return fmt.Sprintf("Trend%s: the last %s of %s", on(t.Branch, esc), format.Count(t.Runs, "run", "runs"), esc(t.Command))
}

// on is " on BRANCH" in a heading, or " (no branch)" for runs without one
// (no git repository, no CI variable), where the heading said "Trend on :".
func on(branch string, esc func(string) string) string {
	if branch == "" {
		return " (no branch)"
	}
	return " on " + esc(branch)
}

// onText is " on BRANCH" in a sentence, or " without a branch".
func onText(branch string, esc func(string) string) string {
	if branch == "" {
		return " without a branch"
	}
	return " on " + esc(branch)
}

// Markdown writes the trend section (nothing when t is nil).
func Markdown(b *strings.Builder, t *trend.Trend, label Label) {
	if t == nil {
		return
	}
	esc := format.EscapeMarkdown
	w := func(f string, args ...any) { fmt.Fprintf(b, f, args...) }
	if t.Runs == 0 {
		w("### Trend%s\n\nNo earlier run of %s%s in the history: the trend of the last %d runs starts with the next one.\n\n",
			on(t.Branch, esc), esc(t.Command), onText(t.Branch, esc), t.Limit)
		return
	}
	w("### %s\n\n", heading(t, esc))
	w("| measure | group | runs | oldest → newest → this run | oldest | newest | this run |\n|---|---|---:|---|---:|---:|---:|\n")
	for _, r := range t.Rows {
		runs := strconv.Itoa(len(r.Points))
		if lo := leftOut(r); lo != "" {
			runs += " (" + lo + ")"
		}
		w("| %s | %s | %s | %s | %s | %s | %s |\n", label(r.Key), group(r.Group, esc), runs, spark(r),
			value(first(r.Points)), value(last(r.Points)), value(r.Current))
	}
	w("\nEach sparkline is scaled from its row's lowest to its highest value; runs whose report lacks the measure are skipped.")
	if anyLeftOut(t) {
		w(" %s%s.", strings.ToUpper(leftOutNote[:1]), leftOutNote[1:])
	}
	if c := changes(t, esc); c != "" {
		w(" %s marks a run whose inputs differ from the run before it, so a jump there may be new inputs (a relabelling, a new knowledge base), not a retrieval change: %s.", trend.ChangeMark, c)
	}
	w("\n\n")
}

// Text writes the trend lines of the terminal report (nothing when t is nil);
// esc makes user-controlled text one inert line.
func Text(out io.Writer, t *trend.Trend, label Label, esc func(string) string) {
	if t == nil {
		return
	}
	if t.Runs == 0 {
		fmt.Fprintf(out, "trend: no earlier run of %s%s in the history\n", esc(t.Command), onText(t.Branch, esc))
		return
	}
	fmt.Fprintf(out, "%s (oldest → newest → this run):\n", strings.ToLower(heading(t, esc)[:1])+heading(t, esc)[1:])
	for _, r := range t.Rows {
		runs := format.Count(len(r.Points), "run", "runs")
		if lo := leftOut(r); lo != "" {
			runs += "; " + lo
		}
		fmt.Fprintf(out, "  %s %s: %s  %s → %s → %s (%s)\n", label(r.Key), group(r.Group, esc), spark(r),
			value(first(r.Points)), value(last(r.Points)), value(r.Current), runs)
	}
	if anyLeftOut(t) {
		fmt.Fprintf(out, "  (%s)\n", leftOutNote)
	}
	if c := changes(t, esc); c != "" {
		fmt.Fprintf(out, "  %s inputs changed: %s\n", trend.ChangeMark, c)
	}
}

// Gates are the gate table's entries as the trend's selection
// (trend.Gated) reads them: group, measure and threshold (NaN when none).
func Gates(es []gatetable.Entry) []trend.Gate {
	out := make([]trend.Gate, len(es))
	for i, e := range es {
		out[i] = trend.Gate{Group: e.Group, Measure: e.Measure, Threshold: math.NaN()}
		if e.Threshold != nil {
			out[i].Threshold = e.Threshold.V()
		}
	}
	return out
}

// UnreadWarning is the warning of a run whose history branch could not be read
// (trend.Reading.Unread): there is no trend. "" when the history was read.
func UnreadWarning(r trend.Reading) string {
	switch {
	case r.Unread == nil:
		return ""
	case r.UnreadRecords:
		return fmt.Sprintf("retrieval-gate: no trend: the history on branch %q is not readable: %v", r.Branch, r.Unread)
	}
	return fmt.Sprintf("retrieval-gate: no trend: the history branch %q could not be read: %v", r.Branch, r.Unread)
}

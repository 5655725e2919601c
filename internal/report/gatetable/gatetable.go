// Package gatetable is the one gate table of every report (check, compare,
// calibrate): the JSON entries of a document's "gates" (full-precision numbers)
// and their rendering as a Markdown table and a terminal table. The terminal
// table has one column per field: gate, group, measure, status, threshold,
// value, n, reason. The Markdown table has five short columns, to fit GitHub's
// comment column: the gate with its group and measure on a second small line,
// status, threshold, value, n; each reason is a numbered note under it.
// It does no arithmetic: a gate's reason comes as data (outcome.Gate.Why) and
// Reason (reason.go) writes its words; the numbers go through internal/format.
package gatetable

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/retrieval-gate/retrieval-gate/internal/format"
	"github.com/retrieval-gate/retrieval-gate/internal/outcome"
)

// Entry is one gate of a JSON report. Fields are in the alphabetical order of
// their JSON names. Threshold and Value are present for a gate on a measure
// (null when absent: a floor left off has no threshold, a group with n = 0 has
// no value) and absent for the others (integrity, lock); Detectable is the
// smallest difference the gate's n detects at 80% power and α = 0.05, for a floor.
type Entry struct {
	Detectable *format.Float  `json:"detectable_difference,omitempty"`
	Group      string         `json:"group,omitempty"`
	Measure    string         `json:"measure,omitempty"`
	N          int64          `json:"n"`
	Name       string         `json:"name"`
	Reason     string         `json:"reason,omitempty"`
	Status     outcome.Status `json:"status"`
	Threshold  *format.Float  `json:"threshold,omitempty"`
	// Unreliable: the reason cites an interval marked unreliable (its method
	// covers less than 95% at its n in simulation); the tables footnote it.
	Unreliable bool          `json:"unreliable,omitempty"`
	Value      *format.Float `json:"value,omitempty"`
}

// UnreliableNote is the footnote under a gate table whose reasons mark an
// interval (format.UnreliableMark).
const UnreliableNote = format.UnreliableNote + " (docs/statistics.md)"

// anyUnreliable reports whether an entry's reason marks an interval.
func anyUnreliable(es []Entry) bool {
	for _, e := range es {
		if e.Unreliable {
			return true
		}
	}
	return false
}

func ptr(v float64) *format.Float {
	f := format.Float(v)
	return &f
}

// FromOutcome is the entries of gates, in order.
func FromOutcome(gates outcome.Gates) []Entry {
	out := make([]Entry, 0, len(gates))
	for _, g := range gates {
		e := Entry{Name: g.Name, Group: g.Group, Measure: g.Measure, Status: g.Status, N: g.N, Reason: Reason(g.Why), Unreliable: unreliable(g.Why)}
		if g.Measure != "" {
			e.Value, e.Threshold = ptr(g.Value), ptr(g.Threshold)
		}
		if !math.IsNaN(g.Detectable) {
			e.Detectable = ptr(g.Detectable)
		}
		out = append(out, e)
	}
	return out
}

// Failed is the names of the failed entries, in order.
func Failed(es []Entry) []string {
	var out []string
	for _, e := range es {
		if e.Status == outcome.Fail {
			out = append(out, e.Name)
		}
	}
	return out
}

// The report readers (checkreport.ReadParsed, ...) decode entries through encoding/json,
// which calls UnmarshalJSON on a *Entry found by reflection. The assertion states it,
// and its explicit conversion of a value is what lets deadcode see that call (a nil
// pointer or an implicit conversion to a blank var is folded away before its analysis).
var _ = json.Unmarshaler(new(Entry))

// UnmarshalJSON keeps a null threshold or value present (as NaN): an off floor
// reads back as an off floor.
func (e *Entry) UnmarshalJSON(b []byte) error {
	type plain Entry
	var raw struct {
		plain
		Threshold json.RawMessage `json:"threshold"`
		Value     json.RawMessage `json:"value"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	*e = Entry(raw.plain)
	opt := func(m json.RawMessage) (*format.Float, error) {
		if m == nil {
			return nil, nil
		}
		f := new(format.Float)
		return f, f.UnmarshalJSON(m)
	}
	var err error
	if e.Threshold, err = opt(raw.Threshold); err != nil {
		return err
	}
	e.Value, err = opt(raw.Value)
	return err
}

// Numbers are the entry's value and threshold, printed so that they never read
// as equal when they differ (the missing glyph when absent); a count's
// (outcome.IsCount) as whole numbers.
func (e Entry) Numbers() (value, threshold string) {
	v, t := math.NaN(), math.NaN()
	if e.Value != nil {
		v = e.Value.V()
	}
	if e.Threshold != nil {
		t = e.Threshold.V()
	}
	if outcome.IsCount(e.Measure) {
		return format.Whole(v), format.Whole(t)
	}
	return format.Distinct(v, t)
}

// n is the entry's n, or the missing glyph when it has none.
func (e Entry) n() string {
	if e.N == 0 {
		return format.Missing
	}
	return strconv.FormatInt(e.N, 10)
}

func orMissing(s string) string {
	if s == "" {
		return format.Missing
	}
	return s
}

// StatusIcon is a status as the Markdown shows it.
func StatusIcon(s outcome.Status) string {
	switch s {
	case outcome.Pass:
		return "✅ pass"
	case outcome.Fail:
		return "❌ fail"
	}
	return string(s)
}

// Header is the Markdown table's header and alignment rows: five short columns,
// so that the table fits GitHub's comment column (about 850 px) whatever the
// gates are called. The gate's group and measure are a second, small line of
// its cell; its reason is a numbered note under the table (Markdown).
const Header = "| gate<br><sub>group · measure</sub> | status | threshold | value | n |\n|---|---|---:|---:|---:|\n"

// Markdown writes the gate table (user-controlled text escaped), then each
// gate's reason as a numbered note ("[1] **gate**: reason"), marked in its
// status cell; nothing when there are no gates. A gate with neither group nor
// measure (integrity, lock) has no second line; one with either shows the
// missing glyph for the other. A reason that marks an interval is footnoted
// UnreliableNote under the notes.
func Markdown(b *strings.Builder, es []Entry) { MarkdownNoted(b, es, UnreliableNote) }

// MarkdownNoted is Markdown with foot as the footnote of a marked interval:
// compare's with human labels, whose gates cite human-corrected intervals,
// marked by another rule than UnreliableNote's.
func MarkdownNoted(b *strings.Builder, es []Entry, foot string) {
	if len(es) == 0 {
		return
	}
	esc := format.EscapeMarkdown
	b.WriteString(Header)
	var notes []string
	for _, e := range es {
		v, t := e.Numbers()
		sub := ""
		if e.Group != "" || e.Measure != "" {
			sub = "<br><sub>" + esc(orMissing(e.Group)) + " · " + esc(orMissing(e.Measure)) + "</sub>"
		}
		mark := ""
		if e.Reason != "" {
			notes = append(notes, fmt.Sprintf("[%d] **%s**: %s", len(notes)+1, esc(e.Name), esc(e.Reason)))
			mark = fmt.Sprintf(" [%d]", len(notes))
		}
		fmt.Fprintf(b, "| %s%s | %s%s | %s | %s | %s |\n", esc(e.Name), sub, StatusIcon(e.Status), mark, t, v, e.n())
	}
	if len(notes) > 0 {
		b.WriteString("\n")
		for i, n := range notes {
			b.WriteString(n)
			if i < len(notes)-1 {
				b.WriteString("  ") // a hard line break: one note per line
			}
			b.WriteString("\n")
		}
	}
	if anyUnreliable(es) {
		b.WriteString("\n" + foot + "\n")
	}
}

// Text writes the gate table for the terminal, indented by two spaces
// (user-controlled text sanitized); nothing when there are no gates. A
// reason that marks an interval is footnoted UnreliableNote under it.
func Text(b *strings.Builder, es []Entry) { TextNoted(b, es, UnreliableNote) }

// TextNoted is Text with foot as the footnote of a marked interval (as
// MarkdownNoted).
func TextNoted(b *strings.Builder, es []Entry, foot string) {
	if len(es) == 0 {
		return
	}
	san := format.SanitizeText
	tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', 0)
	fmt.Fprint(tw, "  gate\tgroup\tmeasure\tstatus\tthreshold\tvalue\tn\treason\n")
	for _, e := range es {
		v, t := e.Numbers()
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", san(e.Name), san(orMissing(e.Group)),
			san(orMissing(e.Measure)), e.Status, t, v, e.n(), san(orMissing(e.Reason)))
	}
	tw.Flush()
	if anyUnreliable(es) {
		b.WriteString("  " + foot + "\n")
	}
}

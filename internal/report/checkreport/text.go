package checkreport

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/retrieval-gate/retrieval-gate/internal/format"
	"github.com/retrieval-gate/retrieval-gate/internal/outcome"
	"github.com/retrieval-gate/retrieval-gate/internal/report/gatetable"
	"github.com/retrieval-gate/retrieval-gate/internal/report/trendtable"
)

// textMaxListed bounds the problems and missed cases printed on the terminal.
const textMaxListed = 20

// Text writes the terminal report check prints: the verdict line (the gates
// that failed, passed and are off), the counts and the groups' measures with
// their intervals; the gate table when a gate failed; against a baseline its
// provenance, overall rows and newly missed cases; the trend; the integrity
// problems; and a last line that counts what TextVerbose adds (the missed
// cases, retrieved ids that are not cards, the locale deltas, every gate). A
// passing run reads as a pass: its details do not follow it (issue 32 item 14).
func (d *Document) Text(w io.Writer) error { return d.text(w, false) }

// TextVerbose writes the whole terminal report, check --verbose: Text's with
// the locale deltas, the gate table of a pass, every baseline group and flip
// list and the rank-biased overlap, the stale-index warning with its examples
// and the missed cases.
func (d *Document) TextVerbose(w io.Writer) error { return d.text(w, true) }

// verdictLine is the report's first line: the verdict and k, then the gates by
// status (failed, passed, off), each by its name.
func (d *Document) verdictLine() string {
	var failed, passed, off []string
	for _, g := range d.Gates {
		name := format.SanitizeText(g.Name)
		switch g.Status {
		case outcome.Fail:
			failed = append(failed, name)
		case outcome.Pass:
			passed = append(passed, name)
		default:
			off = append(off, name)
		}
	}
	line := fmt.Sprintf("retrieval-gate check: %s (k=%d)", strings.ToUpper(string(d.Verdict)), d.K)
	for _, part := range []struct {
		label string
		names []string
	}{{"failed", failed}, {"passed", passed}, {"off", off}} {
		if len(part.names) > 0 {
			line += " · " + part.label + ": " + strings.Join(part.names, ", ")
		}
	}
	return line
}

func (d *Document) text(w io.Writer, verbose bool) error {
	var b strings.Builder
	p := func(f string, args ...any) { fmt.Fprintf(&b, f, args...) }
	san := format.SanitizeText
	keys := d.columns()

	p("%s\n", d.verdictLine())
	if h := d.BaselineHeadline(san); h != "" {
		p("vs base: %s\n", h)
	}
	p("cases: %d total, %d with gold (scored), %d without gold (not scored)", d.Cases.Total, d.Cases.WithGold, d.Cases.WithoutGold)
	if d.Cases.Precomputed > 0 {
		p(", %d with precomputed scores", d.Cases.Precomputed)
	}
	p("\n\n")

	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprint(tw, "group\tn\tno gold")
	for _, k := range keys {
		fmt.Fprintf(tw, "\t%s", san(d.label(k)))
	}
	fmt.Fprint(tw, "\n")
	row := func(label string, g Group) {
		fmt.Fprintf(tw, "%s\t%d\t%d", san(label), g.N, g.WithoutGold)
		for _, k := range keys {
			fmt.Fprintf(tw, "\t%s", meanCI(g, k))
		}
		fmt.Fprint(tw, "\n")
	}
	row("overall", d.Overall)
	for _, name := range sortedKeys(d.ByType) {
		row("type "+name, d.ByType[name])
	}
	for _, name := range sortedKeys(d.ByLocale) {
		row("locale "+name, d.ByLocale[name])
	}
	tw.Flush()
	if d.anyUnreliable() {
		p("%s\n", UnreliableNote)
	}
	if l := d.omittedLine(); l != "" {
		p("%s\n", l)
	}
	if l := d.relevantLine(san); l != "" {
		p("%s\n", l)
		p("mean [95%% CI: %s]; hit@%d is the success number\n", d.MeanMethods(), d.K)
	} else {
		p("mean [95%% CI: %s]; recall@%d is a lower bound under disjunctive gold; hit@%d is the success number\n", d.MeanMethods(), d.K, d.K)
	}

	var details []string // what --verbose adds, for the last line
	if verbose {
		p("\nlocale deltas vs %s (%s):\n", san(d.ReferenceLocale), IndicativeOnly)
		if why := d.noDeltas(san); why != "" {
			p("  none: %s\n", why)
		} else {
			tw = tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
			for _, loc := range sortedKeys(d.LocaleDeltas) {
				fmt.Fprintf(tw, "  %s %s", san(loc), d.deltaN(loc))
				for _, k := range keys {
					if _, ok := d.LocaleDeltas[loc][k]; ok {
						fmt.Fprintf(tw, "\t%s %s", san(d.label(k)), d.deltaCell(loc, k))
					}
				}
				fmt.Fprint(tw, "\n")
			}
			tw.Flush()
			p("  %s\n", d.DeltaNLegend(san))
		}
	} else if d.noDeltas(san) == "" {
		details = append(details, "the locale deltas")
	}
	details = append(details, d.textBaseline(&b, verbose)...) // vs base (baseline_render.go)
	if verbose || d.Verdict != outcome.Pass {
		p("\ngates:\n")
		gatetable.Text(&b, d.Gates)
	} else {
		details = append(details, "the gate table")
	}
	if d.Trend != nil {
		p("\n")
		trendtable.Text(&b, d.Trend, d.label, san)
	}

	in := d.Integrity
	if !in.OK {
		p("\nintegrity problems (%d; gold ids that are not cards of the %d-card KB):\n", in.ProblemsTotal, in.KBCards)
		n := min(textMaxListed, len(in.Problems))
		for _, pr := range in.Problems[:n] {
			p("  %s:%d: %s: %s\n", san(pr.File), pr.Line, format.CaseGold(pr.CaseID, pr.GoldID), pr.Reason)
		}
		if more := in.ProblemsTotal - int64(n); more > 0 {
			p("  … and %d more (see --json)\n", more)
		}
	}
	if u := in.Unknown; u.Entries > 0 {
		if verbose {
			p("\nwarning: %d retrieved entries in %d cases are not cards of the KB (stale index?), e.g. %s\n",
				u.Entries, u.Cases, san(strings.Join(u.Examples, ", ")))
		} else {
			details = append([]string{fmt.Sprintf("%d retrieved %s in %d %s %s of the KB (stale index?)",
				u.Entries, plural(u.Entries, "entry", "entries"), u.Cases, plural(u.Cases, "case", "cases"), plural(u.Entries, "is not a card", "are not cards"))}, details...)
		}
	}
	switch {
	case d.MissedNotCarried && verbose:
		p("\nmissed cases (hit@%d = 0): %s\n", d.K, MissedNotCarriedLine)
	case d.MissedNotCarried:
		details = append([]string{fmt.Sprintf("the missed cases (hit@%d = 0): %s", d.K, MissedNotCarriedLine)}, details...)
	case d.MissedTotal > 0 && verbose:
		p("\nmissed cases (hit@%d = 0): %d\n", d.K, d.MissedTotal)
		n := min(textMaxListed, len(d.Missed))
		for _, m := range d.Missed[:n] {
			p("  %s:%d  %s  [%s]\n", san(m.File), m.Line, san(m.ID), san(m.Locale))
		}
		if more := d.MissedTotal - int64(n); more > 0 {
			p("  … and %d more (see --markdown or --cases-out)\n", more)
		}
	case d.MissedTotal > 0:
		details = append([]string{fmt.Sprintf("%d missed %s (hit@%d = 0)", d.MissedTotal, plural(d.MissedTotal, "case", "cases"), d.K)}, details...)
	}
	if len(details) > 0 {
		p("\n--verbose adds: %s\n", strings.Join(details, "; "))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// plural is one for n = 1, else many.
func plural[N int | int64](n N, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

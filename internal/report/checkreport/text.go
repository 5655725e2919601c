package checkreport

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/retrieval-gate/retrieval-gate/internal/format"
	"github.com/retrieval-gate/retrieval-gate/internal/report/gatetable"
	"github.com/retrieval-gate/retrieval-gate/internal/report/trendtable"
)

// textMaxListed bounds the problems and missed cases printed on the terminal.
const textMaxListed = 20

// Text writes the human-readable table for the terminal.
func (d *Document) Text(w io.Writer) error {
	var b strings.Builder
	p := func(f string, args ...any) { fmt.Fprintf(&b, f, args...) }
	san := format.SanitizeText
	keys := d.columns()

	p("retrieval-gate check: %s (k=%d)\n", strings.ToUpper(string(d.Verdict)), d.K)
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
		p("mean [95%% CI: %s]; hit@%d is the success number\n\n", d.MeanMethods(), d.K)
	} else {
		p("mean [95%% CI: %s]; recall@%d is a lower bound under disjunctive gold; hit@%d is the success number\n\n", d.MeanMethods(), d.K, d.K)
	}

	p("locale deltas vs %s (%s):\n", san(d.ReferenceLocale), IndicativeOnly)
	if why := d.noDeltas(san); why != "" {
		p("  none: %s\n", why)
	} else {
		tw = tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
		for _, loc := range sortedKeys(d.LocaleDeltas) {
			fmt.Fprintf(tw, "  %s", san(loc))
			for _, k := range keys {
				if v, ok := d.LocaleDeltas[loc][k]; ok {
					fmt.Fprintf(tw, "\t%s %s", san(d.label(k)), format.Signed(v.V()))
				}
			}
			fmt.Fprint(tw, "\n")
		}
		tw.Flush()
	}
	d.textBaseline(&b) // vs base (baseline_render.go)
	p("\ngates:\n")
	gatetable.Text(&b, d.Gates)
	if d.Trend != nil {
		p("\n")
		trendtable.Text(&b, d.Trend, d.label, san)
	}

	in := d.Integrity
	if !in.OK {
		p("\nintegrity problems (%d; gold ids that are not cards of the %d-card KB):\n", in.ProblemsTotal, in.KBCards)
		n := min(textMaxListed, len(in.Problems))
		for _, pr := range in.Problems[:n] {
			p("  %s:%d: case %s: gold id %q: %s\n", san(pr.File), pr.Line, san(pr.CaseID), pr.GoldID, pr.Reason)
		}
		if more := in.ProblemsTotal - int64(n); more > 0 {
			p("  … and %d more (see --json)\n", more)
		}
	}
	if u := in.Unknown; u.Entries > 0 {
		p("\nwarning: %d retrieved entries in %d cases are not cards of the KB (stale index?), e.g. %s\n",
			u.Entries, u.Cases, san(strings.Join(u.Examples, ", ")))
	}
	if d.MissedNotCarried {
		p("\nmissed cases (hit@%d = 0): %s\n", d.K, MissedNotCarriedLine)
	}
	if d.MissedTotal > 0 {
		p("\nmissed cases (hit@%d = 0): %d\n", d.K, d.MissedTotal)
		n := min(textMaxListed, len(d.Missed))
		for _, m := range d.Missed[:n] {
			p("  %s:%d  %s  [%s]\n", san(m.File), m.Line, san(m.ID), san(m.Locale))
		}
		if more := d.MissedTotal - int64(n); more > 0 {
			p("  … and %d more (see --markdown or --cases-out)\n", more)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

package report

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/retrieval-gate/retrieval-gate/internal/gate"
)

// textMaxListed bounds the problems and missed cases printed on the terminal.
const textMaxListed = 20

// WriteText writes the human-readable table for the terminal.
func WriteText(w io.Writer, r *gate.Result) error {
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	keys := columns(r)

	p("retrieval-gate check: %s (k=%d)\n", strings.ToUpper(r.Verdict), r.K)
	p("cases: %d total, %d with gold (scored), %d without gold (not scored)", r.Total, r.WithGold, r.WithoutGold)
	if r.Precomputed > 0 {
		p(", %d with precomputed scores", r.Precomputed)
	}
	p("\n\n")

	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprint(tw, "group\tn\tno gold")
	for _, k := range keys {
		fmt.Fprintf(tw, "\t%s", sanitizeText(metricLabel(k, r.K)))
	}
	fmt.Fprint(tw, "\n")
	row := func(label string, g gate.Group) {
		fmt.Fprintf(tw, "%s\t%d\t%d", sanitizeText(label), g.N, g.WithoutGold)
		for _, k := range keys {
			fmt.Fprintf(tw, "\t%s", meanCI(g, k))
		}
		fmt.Fprint(tw, "\n")
	}
	row("overall", r.Overall)
	for _, g := range r.ByType {
		row("type "+g.Name, g)
	}
	for _, g := range r.ByLocale {
		row("locale "+g.Name, g)
	}
	tw.Flush()
	p("mean [bootstrap 95%% CI]; recall@%d is a lower bound under disjunctive gold; hit@%d is the success number\n\n", r.K, r.K)

	p("locale deltas vs %s (%s):\n", sanitizeText(r.ReferenceLocale), IndicativeOnly)
	if why := noDeltas(r, sanitizeText); why != "" {
		p("  none: %s\n", why)
	} else {
		tw = tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
		for _, ld := range r.Deltas {
			fmt.Fprintf(tw, "  %s", sanitizeText(ld.Locale))
			for _, d := range ld.Deltas {
				fmt.Fprintf(tw, "\t%s %s", sanitizeText(metricLabel(d.Key, r.K)), signed(d.Value))
			}
			fmt.Fprint(tw, "\n")
		}
		tw.Flush()
	}
	p("\ngates:\n")
	for _, g := range r.Gates {
		p("  %-11s %s", g.Name, g.Status)
		if g.IsFloor && g.Floor.Set {
			p("  (floor %s, value %s)", num(g.Floor.Value), num(g.Value))
		}
		if g.Reason != "" {
			p(": %s", sanitizeText(g.Reason))
		}
		p("\n")
	}

	in := r.Integrity
	if !in.OK {
		p("\nintegrity problems (%d; gold ids that are not cards of the %d-card KB):\n", in.ProblemsTotal, in.KBCards)
		n := min(textMaxListed, len(in.Problems))
		for _, pr := range in.Problems[:n] {
			p("  %s:%d: case %s: gold id %q: %s\n", sanitizeText(pr.File), pr.Line, sanitizeText(pr.CaseID), pr.GoldID, pr.Reason)
		}
		if more := in.ProblemsTotal - int64(n); more > 0 {
			p("  … and %d more (see --json)\n", more)
		}
	}
	if u := in.Unknown; u.Entries > 0 {
		p("\nwarning: %d retrieved entries in %d cases are not cards of the KB (stale index?), e.g. %s\n",
			u.Entries, u.Cases, sanitizeText(strings.Join(u.Examples, ", ")))
	}
	if r.MissedTotal > 0 {
		p("\nmissed cases (hit@%d = 0): %d\n", r.K, r.MissedTotal)
		n := min(textMaxListed, len(r.Missed))
		for _, m := range r.Missed[:n] {
			p("  %s:%d  %s  [%s]\n", sanitizeText(m.File), m.Line, sanitizeText(m.ID), sanitizeText(m.Locale))
		}
		if more := r.MissedTotal - int64(n); more > 0 {
			p("  … and %d more (see --markdown or --cases-out)\n", more)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

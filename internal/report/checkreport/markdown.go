package checkreport

import (
	"fmt"
	"strings"

	"github.com/retrieval-gate/retrieval-gate/internal/format"
	"github.com/retrieval-gate/retrieval-gate/internal/report/gatetable"
	"github.com/retrieval-gate/retrieval-gate/internal/report/trendtable"
)

// DefaultMaxListed is how many integrity problems and missed cases a report lists.
const DefaultMaxListed = 200

// MarkdownOptions shape the Markdown report.
type MarkdownOptions struct {
	// Marker is the first line: the hidden comment marker that finds the PR
	// comment again, given by the publisher (publish.Marker); "" writes none.
	Marker string
	// MaxListed bounds the integrity problems and the missed cases listed (each);
	// the rest are counted as "… and N more not shown". 0 is DefaultMaxListed,
	// negative lists none.
	MaxListed int
}

// mdLabel is label escaped for Markdown (extra keys come from user input).
func (d *Document) mdLabel(key string) string {
	l := d.label(key)
	if l == key {
		return format.EscapeMarkdown(l)
	}
	return l
}

// mdTableHead writes the header and alignment rows of a table: the fixed columns
// head (aligned by align), then one column per metric key, labelled prefix + its
// label and aligned by keyAlign.
func (d *Document) mdTableHead(b *strings.Builder, head, align string, keys []string, prefix, keyAlign string) {
	b.WriteString(head)
	for _, key := range keys {
		fmt.Fprintf(b, " %s%s |", prefix, d.mdLabel(key))
	}
	b.WriteString("\n" + align)
	for range keys {
		b.WriteString(keyAlign)
	}
	b.WriteString("\n")
}

func listed(maxListed int) int {
	switch {
	case maxListed == 0:
		return DefaultMaxListed
	case maxListed < 0:
		return 0
	}
	return maxListed
}

// Markdown renders the report the PR comment and the job summary carry: the
// marker, the verdict, k, every group with its n, the locale deltas (indicative
// only), each gate's status, the integrity problems, the stale-index warning and
// the missed cases in a collapsed section. User-controlled text is escaped.
func (d *Document) Markdown(opts MarkdownOptions) string {
	maxListed := listed(opts.MaxListed)
	var b strings.Builder
	w := func(f string, args ...any) { fmt.Fprintf(&b, f, args...) }
	esc := format.EscapeMarkdown
	keys := d.columns()

	if opts.Marker != "" {
		w("%s\n", opts.Marker)
	}
	w("## %s retrieval-gate: %s\n\n", d.VerdictIcon(), d.headingLine(esc)) // with the comparison, when there is one (headline.go)
	w("**Verdict: %s** · k = %d · %d cases: %d with gold (scored), %d without gold (not scored)",
		d.Verdict, d.K, d.Cases.Total, d.Cases.WithGold, d.Cases.WithoutGold)
	if d.Cases.Precomputed > 0 {
		w(" · %d with precomputed scores", d.Cases.Precomputed)
	}
	w("\n\n")
	d.mdBaseline(&b, maxListed) // vs base (baseline_render.go)

	// Groups.
	d.mdTableHead(&b, "| group | n | without gold |", "|---|---:|---:|", keys, "", "---|")
	row := func(label string, g Group) {
		w("| %s | %d | %d |", label, g.N, g.WithoutGold)
		for _, k := range keys {
			w(" %s |", meanCI(g, k))
		}
		w("\n")
	}
	row("**overall**", d.Overall)
	for _, name := range sortedKeys(d.ByType) {
		row("type: "+esc(name), d.ByType[name])
	}
	for _, name := range sortedKeys(d.ByLocale) {
		row("locale: "+esc(name), d.ByLocale[name])
	}
	if d.anyUnreliable() {
		w("\n%s\n", UnreliableNote)
	}
	if l := d.omittedLine(); l != "" {
		w("\n%s\n", l)
	}
	w("\nMean [95%% CI: %s] over the gold-carrying cases of each group; n is that count. ", d.MeanMethods())
	if l := d.relevantLine(esc); l != "" {
		w("hit@%d is the success number (against `must_cite_one_of`). recall@%d and nDCG@%d (binary gain) count every card of "+
			"`relevant_ids` ∪ `must_cite_one_of` for the cases that carry `relevant_ids` (real recall), and are a conservative "+
			"**lower bound** under disjunctive gold for the others.\n\n%s.\n\n", d.K, d.K, d.K, l)
	} else {
		w("hit@%d is the success number. recall@%d is a conservative **lower bound** under disjunctive gold "+
			"(`must_cite_one_of`: citing any one card suffices). nDCG@%d uses binary gain.\n\n", d.K, d.K, d.K)
	}

	// Locale deltas.
	w("### Locale deltas vs %s (%s)\n\n", esc(d.ReferenceLocale), IndicativeOnly)
	if why := d.noDeltas(esc); why != "" {
		w("No deltas: %s.\n\n", why)
	} else {
		d.mdTableHead(&b, "| locale |", "|---|", keys, "Δ ", "---:|")
		for _, loc := range sortedKeys(d.LocaleDeltas) {
			w("| %s (%s) |", esc(loc), d.deltaN(loc))
			for _, k := range keys {
				w(" %s |", d.deltaCell(loc, k))
			}
			w("\n")
		}
		w("\n%s.\n\n", d.DeltaNLegend(esc))
	}

	// Gates.
	w("### Gates\n\n")
	gatetable.Markdown(&b, d.Gates)
	w("\n")
	trendtable.Markdown(&b, d.Trend, d.mdLabel) // the gated measures over the base branch's last runs
	if len(d.Cases.UnknownKeys) > 0 {
		w("> [!WARNING]\n> %s\n\n", esc(d.UnknownKeysWarning()))
	}

	// Integrity.
	in := d.Integrity
	if in.OK {
		w("**Dataset integrity:** every gold id resolves to one of the %d cards of the knowledge base.\n\n", in.KBCards)
	} else {
		w("### Integrity problems (%d)\n\nEach gold id below is not a card of the knowledge base (%d cards); the integrity gate blocks until they are fixed.\n\n", in.ProblemsTotal, in.KBCards)
		n := min(maxListed, len(in.Problems))
		if n > 0 {
			w("| file:line | case | gold id | reason |\n|---|---|---|---|\n")
			for _, p := range in.Problems[:n] {
				w("| %s:%d | %s | %s | %s |\n", esc(p.File), p.Line, esc(p.CaseID), esc(p.GoldID), esc(p.Reason))
			}
		}
		if more := in.ProblemsTotal - int64(n); more > 0 {
			w("\n… and %d more not shown.\n", more)
		}
		w("\n")
	}
	if u := in.Unknown; u.Entries > 0 {
		w("> [!WARNING]\n> %d retrieved entries in %d cases are not cards of the knowledge base (a stale index?), e.g. %s. This is a warning, not a failure.\n\n",
			u.Entries, u.Cases, joinEscaped(u.Examples))
	}

	// Missed cases.
	if d.MissedNotCarried {
		w("<details><summary>Missed cases (hit@%d = 0): %s</summary>\n\n</details>\n", d.K, MissedNotCarriedLine)
		return b.String()
	}
	w("<details><summary>Missed cases (hit@%d = 0): %d</summary>\n\n", d.K, d.MissedTotal)
	d.mdMissed(&b, maxListed)
	w("\n</details>\n")
	return b.String()
}

// queryCell is the longest query a table cell shows (two lines of GitHub's
// comment column); a longer one is shortened there and given whole below.
const queryCell = 80

// mdMissed writes the listed missed cases: a table of two short columns (the
// case over its locale, type and line; the query, shortened, over the first gold
// id and how many more), then the long lists, one item per case below the table: its top
// k, and every gold id and the whole query where the row shortened them.
func (d *Document) mdMissed(b *strings.Builder, maxListed int) {
	w := func(f string, args ...any) { fmt.Fprintf(b, f, args...) }
	esc := format.EscapeMarkdown
	n := min(maxListed, len(d.Missed))
	if n == 0 {
		if d.MissedTotal == 0 {
			w("None.\n")
		}
	} else {
		// One cases file is named once, above the table.
		oneFile := true
		for _, m := range d.Missed[:n] {
			oneFile = oneFile && m.File == d.Missed[0].File
		}
		if oneFile {
			w("Lines of %s.\n\n", esc(d.Missed[0].File))
		}
		w("| case | query; gold |\n|---|---|\n")
		for _, m := range d.Missed[:n] {
			where := fmt.Sprintf("line %d", m.Line)
			if !oneFile {
				where = fmt.Sprintf("%s:%d", esc(m.File), m.Line)
			}
			q, _ := format.Shorten(m.Query, queryCell)
			w("| %s<br><sub>%s · %s · %s</sub> | %s<br><sub>gold: %s</sub> |\n", esc(m.ID), esc(m.Locale), esc(m.Type), where, esc(q), firstOf(m.Gold))
		}
		w("\nTop %d of each case:\n\n", d.K)
		for _, m := range d.Missed[:n] {
			top := "(precomputed)"
			if !m.Precomputed {
				if top = joinEscaped(m.TopK); top == "" {
					top = "(nothing retrieved)"
				}
			}
			w("- %s: %s", esc(m.ID), top)
			if len(m.Gold) > 1 {
				w("; gold: %s", joinEscaped(m.Gold))
			}
			if _, whole := format.Shorten(m.Query, queryCell); !whole {
				w("; query: %s", esc(m.Query))
			}
			w("\n")
		}
	}
	if more := d.MissedTotal - int64(n); more > 0 {
		w("\n… and %d more not shown.\n", more)
	}
}

// firstOf is the first id of a list and how many more: "en-refunds (+2)".
func firstOf(ids []string) string {
	switch len(ids) {
	case 0:
		return format.Missing
	case 1:
		return format.EscapeMarkdown(ids[0])
	}
	return fmt.Sprintf("%s (+%d)", format.EscapeMarkdown(ids[0]), len(ids)-1)
}

func joinEscaped(ids []string) string {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = format.EscapeMarkdown(id)
	}
	return strings.Join(out, ", ")
}

package report

import (
	"fmt"
	"math"
	"strings"

	"github.com/retrieval-gate/retrieval-gate/internal/gate"
	"github.com/retrieval-gate/retrieval-gate/internal/metrics"
	"github.com/retrieval-gate/retrieval-gate/internal/publish"
)

// DefaultMaxListed is how many integrity problems and missed cases a report lists.
const DefaultMaxListed = 200

// MarkdownOptions shape the Markdown report.
type MarkdownOptions struct {
	// Key names the hidden marker `<!-- retrieval-gate:KEY -->` that finds the PR
	// comment again; "" is "default". Characters outside [A-Za-z0-9._/-] become "_".
	Key string
	// MaxListed bounds the integrity problems and the missed cases listed (each);
	// the rest are counted as "… and N more not shown". 0 is DefaultMaxListed,
	// negative lists none.
	MaxListed int
}

// metricLabel is the short column label of a metric key at cut k.
func metricLabel(key string, k int) string {
	switch key {
	case metrics.KeyHit:
		return fmt.Sprintf("hit@%d", k)
	case metrics.KeyRecall:
		return fmt.Sprintf("recall@%d", k)
	case metrics.KeyNDCG:
		return fmt.Sprintf("nDCG@%d", k)
	}
	return key
}

// mdLabel is metricLabel escaped for Markdown (extra keys come from user input).
func mdLabel(key string, k int) string {
	l := metricLabel(key, k)
	if l == key {
		return EscapeMarkdown(l)
	}
	return l
}

// mdTableHead writes the header and alignment rows of a table: the fixed columns
// head (aligned by align), then one column per metric key, labelled prefix + its
// label and aligned by keyAlign.
func mdTableHead(b *strings.Builder, head, align string, keys []string, prefix string, k int, keyAlign string) {
	b.WriteString(head)
	for _, key := range keys {
		fmt.Fprintf(b, " %s%s |", prefix, mdLabel(key, k))
	}
	b.WriteString("\n" + align)
	for range keys {
		b.WriteString(keyAlign)
	}
	b.WriteString("\n")
}

// noDeltas says why a report shows no locale deltas, or "" when it shows some;
// quote renders the reference locale for the report's format.
func noDeltas(r *gate.Result, quote func(string) string) string {
	switch {
	case !r.ReferenceHasGold:
		return "the reference locale " + quote(r.ReferenceLocale) + " has no gold-carrying cases"
	case len(r.Deltas) == 0:
		return "no other locale has gold-carrying cases"
	}
	return ""
}

// columns are the metric keys of the report: those of the overall group.
func columns(r *gate.Result) []string {
	var keys []string
	for _, m := range r.Overall.Metrics {
		keys = append(keys, m.Key)
	}
	if len(keys) == 0 {
		keys = metrics.TriadKeys[:]
	}
	return keys
}

func num(v float64) string {
	if math.IsNaN(v) {
		return "—"
	}
	return fmt.Sprintf("%.3f", v)
}

func signed(v float64) string {
	if math.IsNaN(v) {
		return "—"
	}
	if math.Abs(v) < 0.0005 {
		return "±0.000"
	}
	return fmt.Sprintf("%+.3f", v)
}

func meanCI(g gate.Group, key string) string {
	m, ok := g.Metric(key)
	if !ok || m.N == 0 {
		return "—"
	}
	s := fmt.Sprintf("%s [%s, %s]", num(m.Mean), num(m.CI95[0]), num(m.CI95[1]))
	if m.N != g.N {
		s += fmt.Sprintf(" (n=%d)", m.N)
	}
	return s
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
func Markdown(r *gate.Result, opts MarkdownOptions) string {
	maxListed := listed(opts.MaxListed)
	var b strings.Builder
	w := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	keys := columns(r)

	w("%s\n", publish.Marker(opts.Key))
	icon := "✅"
	if r.Verdict != gate.StatusPass {
		icon = "❌"
	}
	w("## %s retrieval-gate: %s\n\n", icon, r.Verdict)
	w("**Verdict: %s** · k = %d · %d cases: %d with gold (scored), %d without gold (not scored)",
		r.Verdict, r.K, r.Total, r.WithGold, r.WithoutGold)
	if r.Precomputed > 0 {
		w(" · %d with precomputed scores", r.Precomputed)
	}
	w("\n\n")

	// Groups.
	mdTableHead(&b, "| group | n | without gold |", "|---|---:|---:|", keys, "", r.K, "---|")
	row := func(label string, g gate.Group) {
		w("| %s | %d | %d |", label, g.N, g.WithoutGold)
		for _, k := range keys {
			w(" %s |", meanCI(g, k))
		}
		w("\n")
	}
	row("**overall**", r.Overall)
	for _, g := range r.ByType {
		row("type: "+EscapeMarkdown(g.Name), g)
	}
	for _, g := range r.ByLocale {
		row("locale: "+EscapeMarkdown(g.Name), g)
	}
	w("\nMean [bootstrap 95%% CI] over the gold-carrying cases of each group; n is that count. ")
	w("hit@%d is the success number. recall@%d is a conservative **lower bound** under disjunctive gold "+
		"(`must_cite_one_of`: citing any one card suffices). nDCG@%d uses binary gain.\n\n", r.K, r.K, r.K)

	// Locale deltas.
	w("### Locale deltas vs %s (%s)\n\n", EscapeMarkdown(r.ReferenceLocale), IndicativeOnly)
	if why := noDeltas(r, EscapeMarkdown); why != "" {
		w("No deltas: %s.\n\n", why)
	} else {
		mdTableHead(&b, "| locale |", "|---|", keys, "Δ ", r.K, "---:|")
		for _, ld := range r.Deltas {
			w("| %s |", EscapeMarkdown(ld.Locale))
			for _, k := range keys {
				v := math.NaN()
				for _, d := range ld.Deltas {
					if d.Key == k {
						v = d.Value
					}
				}
				w(" %s |", signed(v))
			}
			w("\n")
		}
		w("\n")
	}

	// Gates.
	w("### Gates\n\n| gate | status | threshold | value | reason |\n|---|---|---:|---:|---|\n")
	for _, g := range r.Gates {
		th, val := "—", "—"
		if g.IsFloor {
			if g.Floor.Set {
				th = num(g.Floor.Value)
			}
			val = num(g.Value)
		}
		w("| %s | %s | %s | %s | %s |\n", g.Name, statusIcon(g.Status), th, val, EscapeMarkdown(g.Reason))
	}
	w("\n")

	// Integrity.
	in := r.Integrity
	if in.OK {
		w("**Dataset integrity:** every gold id resolves to one of the %d cards of the knowledge base.\n\n", in.KBCards)
	} else {
		w("### Integrity problems (%d)\n\nEach gold id below is not a card of the knowledge base (%d cards); the integrity gate blocks until they are fixed.\n\n", in.ProblemsTotal, in.KBCards)
		n := min(maxListed, len(in.Problems))
		if n > 0 {
			w("| file:line | case | gold id | reason |\n|---|---|---|---|\n")
			for _, p := range in.Problems[:n] {
				w("| %s:%d | %s | %s | %s |\n", EscapeMarkdown(p.File), p.Line, EscapeMarkdown(p.CaseID), EscapeMarkdown(p.GoldID), EscapeMarkdown(p.Reason))
			}
		}
		if more := in.ProblemsTotal - int64(n); more > 0 {
			w("\n… and %d more not shown.\n", more)
		}
		w("\n")
	}
	if u := in.Unknown; u.Entries > 0 {
		ex := make([]string, len(u.Examples))
		for i, e := range u.Examples {
			ex[i] = EscapeMarkdown(e)
		}
		w("> [!WARNING]\n> %d retrieved entries in %d cases are not cards of the knowledge base (a stale index?), e.g. %s. This is a warning, not a failure.\n\n",
			u.Entries, u.Cases, strings.Join(ex, ", "))
	}

	// Missed cases.
	w("<details><summary>Missed cases (hit@%d = 0): %d</summary>\n\n", r.K, r.MissedTotal)
	n := min(maxListed, len(r.Missed))
	if n > 0 {
		w("| case | file:line | locale | type | query | gold | top %d |\n|---|---|---|---|---|---|---|\n", r.K)
		for _, m := range r.Missed[:n] {
			top := "(precomputed)"
			if !m.Precomputed {
				top = joinEscaped(m.TopK)
				if top == "" {
					top = "(nothing retrieved)"
				}
			}
			w("| %s | %s:%d | %s | %s | %s | %s | %s |\n", EscapeMarkdown(m.ID), EscapeMarkdown(m.File), m.Line,
				EscapeMarkdown(m.Locale), EscapeMarkdown(m.Type), EscapeMarkdown(m.Query), joinEscaped(m.Gold), top)
		}
	} else if r.MissedTotal == 0 {
		w("None.\n")
	}
	if more := r.MissedTotal - int64(n); more > 0 {
		w("\n… and %d more not shown.\n", more)
	}
	w("\n</details>\n")
	return b.String()
}

func joinEscaped(ids []string) string {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = EscapeMarkdown(id)
	}
	return strings.Join(out, ", ")
}

func statusIcon(s string) string {
	switch s {
	case gate.StatusPass:
		return "✅ pass"
	case gate.StatusFail:
		return "❌ fail"
	}
	return s
}

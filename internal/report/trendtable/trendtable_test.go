package trendtable_test

import (
	"bytes"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/internal/format"
	"github.com/retrieval-gate/retrieval-gate/internal/report/trendtable"
	"github.com/retrieval-gate/retrieval-gate/internal/trend"
)

func label(k string) string { return "L(" + format.EscapeMarkdown(k) + ")" }

func hostile() *trend.Trend {
	m := trend.Measure{Group: "type:<img src=x>|*a*", Key: "hit"}
	return &trend.Trend{Command: "check", Branch: "evil<script>|x\n::error::y", Limit: 10, Runs: 2,
		Rows: []trend.Row{{Measure: m, Spark: "▁¦█", CurrentGlyph: "▄", CurrentChanged: true,
			Points:  []trend.Point{{Value: trend.Value{Mean: 0.5, N: 10}, Commit: "c1"}, {Value: trend.Value{Mean: 1, N: 11}, Commit: "c2", Changed: []string{"kb"}}},
			Current: &trend.Point{Value: trend.Value{Mean: 0.75, N: 12}}}},
		Changes: []trend.Change{{Commit: "[x](http://e)", What: []string{"kb"}}, {Current: true, What: []string{"run:<b>"}}}}
}

func TestMarkdown(t *testing.T) {
	var b strings.Builder
	trendtable.Markdown(&b, hostile(), label)
	md := b.String()
	assert.Contains(t, md, "### Trend on evil&lt;script&gt;\\|x ::error::y: the last 2 runs of check\n")
	assert.Contains(t, md, "| L(hit) | type: &lt;img src=x&gt;\\|\\*a\\* | 2 | ▁¦█ → ¦▄ | 0.500 (n=10) | 1.000 (n=11) | 0.750 (n=12) |\n")
	assert.Contains(t, md, "run \\[x\\](htt: kb; this run: run:&lt;b&gt;.")
	for _, bad := range []string{"<img", "<script", "<b>", "](http"} {
		assert.NotContains(t, md, bad)
	}
	for _, line := range strings.Split(md, "\n") {
		assert.False(t, strings.HasPrefix(line, "::"), "a line that could be a workflow command: %q", line)
	}

	b.Reset()
	trendtable.Markdown(&b, &trend.Trend{Command: "compare", Branch: "main", Limit: 5}, label)
	assert.Equal(t, "### Trend on main\n\nNo earlier run of compare on main in the history: the trend of the last 5 runs starts with the next one.\n\n", b.String())

	// Runs without a branch (no git repository, no CI variable): no empty name.
	b.Reset()
	trendtable.Markdown(&b, &trend.Trend{Command: "check", Limit: 5}, label)
	assert.Equal(t, "### Trend (no branch)\n\nNo earlier run of check without a branch in the history: the trend of the last 5 runs starts with the next one.\n\n", b.String())
	b.Reset()
	nb := hostile()
	nb.Branch = ""
	trendtable.Markdown(&b, nb, label)
	assert.Contains(t, b.String(), "### Trend (no branch): the last 2 runs of check\n")

	b.Reset()
	trendtable.Markdown(&b, nil, label)
	assert.Empty(t, b.String())
}

func TestText(t *testing.T) {
	var b bytes.Buffer
	trendtable.Text(&b, hostile(), func(k string) string { return k }, format.SanitizeText)
	out := b.String()
	require.Equal(t, 3, strings.Count(out, "\n"), out)
	assert.NotContains(t, out, "\n::")
	assert.Contains(t, out, "  hit type: ")
	assert.Contains(t, out, ": ▁¦█ → ¦▄  0.500 (n=10) → 1.000 (n=11) → 0.750 (n=12) (2 runs)\n")
	assert.Contains(t, out, "  ¦ inputs changed: ")

	// No earlier run: one line, naming the branch, or saying there is none
	// (no git repository, no CI variable), as the Markdown does, never an
	// empty name ("on  in the history").
	for _, tc := range []struct {
		name string
		tr   trend.Trend
		want string
	}{
		{"on a branch", trend.Trend{Command: "compare", Branch: "main", Limit: 5}, "trend: no earlier run of compare on main in the history\n"},
		{"without a branch", trend.Trend{Command: "check", Limit: 5}, "trend: no earlier run of check without a branch in the history\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			trendtable.Text(&b, &tc.tr, label, format.SanitizeText)
			assert.Equal(t, tc.want, b.String())
		})
	}
}

// A history branch that could not be read is a warning in these words, per
// step; a history that was read is none.
func TestUnreadWarning(t *testing.T) {
	cause := errors.New("--history-branch: could not read the repository: GitHub answered 404 Not Found")
	tests := []struct {
		name string
		r    trend.Reading
		want string
	}{
		{"read", trend.Reading{Branch: "h", Read: true}, ""},
		{"branch unread", trend.Reading{Branch: "retrieval-gate-history", Unread: cause},
			`retrieval-gate: no trend: the history branch "retrieval-gate-history" could not be read: --history-branch: could not read the repository: GitHub answered 404 Not Found`},
		{"records unreadable", trend.Reading{Branch: "h", Unread: errors.New("h:history.jsonl:3: not JSON"), UnreadRecords: true},
			`retrieval-gate: no trend: the history on branch "h" is not readable: h:history.jsonl:3: not JSON`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, trendtable.UnreadWarning(tt.r))
		})
	}
}

// DCG@k's values carry the maximum possible in their run; a run recorded
// without it says so.
func TestDCGWithItsMaximum(t *testing.T) {
	m := trend.Measure{Group: "strategy:hybrid", Key: "dcg_at_k"}
	tr := &trend.Trend{Command: "compare", Branch: "main", Limit: 10, Runs: 2,
		Rows: []trend.Row{{Measure: m, Spark: "▁█", CurrentGlyph: "▄",
			Points: []trend.Point{{Value: trend.Value{Mean: 9.5, N: 100, Max: math.NaN()}, Commit: "c1"},
				{Value: trend.Value{Mean: 9.85, N: 100, Max: 31.80479}, Commit: "c2"}},
			Current: &trend.Point{Value: trend.Value{Mean: 9.7, N: 101, Max: 31.80479}}}}}
	var b strings.Builder
	trendtable.Markdown(&b, tr, label)
	assert.Contains(t, b.String(), "| 9.500, max unknown (n=100) | 9.850 of 31.805 (n=100) | 9.700 of 31.805 (n=101) |\n")
	var out bytes.Buffer
	trendtable.Text(&out, tr, func(k string) string { return k }, format.SanitizeText)
	assert.Contains(t, out.String(), "9.500, max unknown (n=100) → 9.850 of 31.805 (n=100) → 9.700 of 31.805 (n=101)")
}

// A row never joins runs at different cutoffs (trend.Build): its values and
// sparkline are the runs at this run's k, the k its label names, and the runs
// column counts those left out by their k, which a sentence explains.
func TestRowAtOneK(t *testing.T) {
	m := trend.Measure{Group: "overall", Key: "retrieval_hit_at_k"}
	at := func(commit string, k int, mean float64) trend.Run {
		return trend.Run{Commit: commit, K: k, Values: map[trend.Measure]trend.Value{m: {Mean: mean, N: 132, K: k}}}
	}
	tr := trend.Build([]trend.Run{at("c1", 5, 0.742), at("c2", 2, 0.9), at("c3", 5, 0.75), at("c4", 10, 0.95)}, at("", 2, 0.924), []trend.Measure{m})
	tr.Command, tr.Branch, tr.Limit = "check", "main", 10
	var b strings.Builder
	trendtable.Markdown(&b, tr, label)
	md := b.String()
	assert.Contains(t, md, "| L(retrieval\\_hit\\_at\\_k) | overall | 1 (2 at k=5, 1 at k=10 left out) | ▁ → █ | 0.900 (n=132) | 0.900 (n=132) | 0.924 (n=132) |\n")
	assert.Contains(t, md, " A row joins only the runs at this run's k, since a measure at another cutoff is another measure: the runs at another k are left out, as counted.")
	assert.NotContains(t, md, "0.742")
	var out bytes.Buffer
	trendtable.Text(&out, tr, func(k string) string { return k }, format.SanitizeText)
	assert.Contains(t, out.String(), "  retrieval_hit_at_k overall: ▁ → █  0.900 (n=132) → 0.900 (n=132) → 0.924 (n=132) (1 run; 2 at k=5, 1 at k=10 left out)\n")
	assert.Contains(t, out.String(), "  (a row joins only the runs at this run's k, since a measure at another cutoff is another measure: the runs at another k are left out, as counted)\n")

	// A run whose record states no k is at none; with nothing left out, no sentence.
	tr = trend.Build([]trend.Run{at("c1", 0, 0.5), at("c2", 2, 0.9)}, at("", 2, 0.924), []trend.Measure{m})
	b.Reset()
	trendtable.Markdown(&b, tr, label)
	assert.Contains(t, b.String(), "| 1 (1 without a k left out) |")
	tr = trend.Build([]trend.Run{at("c2", 2, 0.9)}, at("", 2, 0.924), []trend.Measure{m})
	b.Reset()
	trendtable.Markdown(&b, tr, label)
	assert.NotContains(t, b.String(), "left out")
	out.Reset()
	trendtable.Text(&out, tr, func(k string) string { return k }, format.SanitizeText)
	assert.NotContains(t, out.String(), "left out")
}

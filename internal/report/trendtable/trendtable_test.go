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

// A base run at another cutoff than this run's names its k: the row's label is
// at this run's k, and hit@5 is not hit@2. A run at this run's k, or one whose
// record states none, is the row's measure as labelled.
func TestValueAtAnotherK(t *testing.T) {
	m := trend.Measure{Group: "overall", Key: "retrieval_hit_at_k"}
	tr := &trend.Trend{Command: "check", Branch: "main", Limit: 10, Runs: 2,
		Rows: []trend.Row{{Measure: m, Spark: "▁¦█", CurrentGlyph: "█",
			Points: []trend.Point{{Value: trend.Value{Mean: 0.742, N: 132, K: 5}, Commit: "c1"},
				{Value: trend.Value{Mean: 0.9, N: 132, K: 2}, Commit: "c2", Changed: []string{"--k"}}},
			Current: &trend.Point{Value: trend.Value{Mean: 0.924, N: 132, K: 2}}}}}
	var b strings.Builder
	trendtable.Markdown(&b, tr, label)
	assert.Contains(t, b.String(), "| 0.742 at k=5 (n=132) | 0.900 (n=132) | 0.924 (n=132) |\n")
	var out bytes.Buffer
	trendtable.Text(&out, tr, func(k string) string { return k }, format.SanitizeText)
	assert.Contains(t, out.String(), "0.742 at k=5 (n=132) → 0.900 (n=132) → 0.924 (n=132)")
}

package checkreport

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/retrieval-gate/retrieval-gate/internal/baseline"
	"github.com/retrieval-gate/retrieval-gate/internal/format"
	"github.com/retrieval-gate/retrieval-gate/internal/metrics"
	"github.com/retrieval-gate/retrieval-gate/internal/outcome"
)

// The first line states the comparison whenever there is one: never a bare
// "pass" above rows that went the other way (issue 21 item 16).
func TestBaselineHeadline(t *testing.T) {
	compared := func(change string, regression outcome.Status) *Baseline {
		return &Baseline{Status: BaselineCompared, HeadlineMeasure: metrics.KeyHit, Regression: regression,
			Overall: PairedGroup{N: 132, Metrics: map[string]Paired{metrics.KeyHit: {Delta: -0.0606, P: 0.0078125, N: 132, Change: change}}},
			Flips:   Flips{NewlyMissedTotal: 8}}
	}
	for _, c := range []struct {
		name     string
		verdict  outcome.Status
		bl       *Baseline
		icon     string
		headline string
	}{
		{"no baseline", outcome.Pass, nil, "✅", ""},
		{"unavailable", outcome.Pass, &Baseline{Status: BaselineUnavailable, Reason: "no artifact"}, "✅", "no baseline: the regression gates are off"},
		{"worse, no gate", outcome.Pass, compared(baseline.ChangeWorse, outcome.Off), "⚠️", "hit@5 -0.061 vs base (p = 0.0078, n = 132), 8 newly missed · no regression gate set"},
		{"worse, gate passes", outcome.Pass, compared(baseline.ChangeWorse, outcome.Pass), "⚠️", "hit@5 -0.061 vs base (p = 0.0078, n = 132), 8 newly missed · regression gates pass"},
		{"not significant", outcome.Pass, compared("", outcome.Off), "✅", "hit@5 -0.061 vs base (p = 0.0078, n = 132), 8 newly missed · no regression gate set"},
		{"gate fails", outcome.Fail, compared(baseline.ChangeWorse, outcome.Fail), "❌", "hit@5 -0.061 vs base (p = 0.0078, n = 132), 8 newly missed · regression gate failed"},
		{"nothing paired", outcome.Pass, &Baseline{Status: BaselineCompared, Regression: outcome.Off, Cases: BaselineCases{Baseline: 40}}, "✅", "no case paired with the baseline (40 in it) · no regression gate set"},
	} {
		t.Run(c.name, func(t *testing.T) {
			d := &Document{K: 5, Verdict: c.verdict, Baseline: c.bl}
			assert.Equal(t, c.icon, d.VerdictIcon())
			assert.Equal(t, c.headline, d.BaselineHeadline(format.EscapeMarkdown))
			md := d.Markdown(MarkdownOptions{})
			want := "## " + c.icon + " retrieval-gate: " + string(c.verdict)
			if c.headline != "" {
				want += " · " + c.headline
			}
			assert.Equal(t, want, strings.SplitN(md, "\n", 2)[0])
		})
	}
}

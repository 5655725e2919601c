package checkreport

import (
	"fmt"
	"strings"

	"github.com/retrieval-gate/retrieval-gate/internal/baseline"
	"github.com/retrieval-gate/retrieval-gate/internal/format"
	"github.com/retrieval-gate/retrieval-gate/internal/outcome"
)

// The first line of every check report states the comparison with the baseline
// when there is one, so that a reviewer never reads a bare "pass" above a
// comparison that went the other way (issue 21 item 16): the Markdown heading
// (the PR comment and the job summary), the text report's first line and the
// HTML page's verdict card.

// VerdictIcon is the verdict's icon: ❌ when it fails; ⚠️ when it passes while
// the headline measure is significantly worse than the baseline (no regression
// gate caught it, or none was set); ✅ otherwise.
func (d *Document) VerdictIcon() string {
	switch {
	case d.Verdict != outcome.Pass:
		return "❌"
	case d.headlineWorse():
		return "⚠️"
	}
	return "✅"
}

func (d *Document) headlineWorse() bool {
	bl := d.Baseline
	if bl == nil || bl.Status != BaselineCompared || bl.HeadlineMeasure == "" {
		return false
	}
	p, ok := bl.Overall.Metrics[bl.HeadlineMeasure]
	return ok && p.Change == baseline.ChangeWorse
}

// BaselineHeadline is what the first line adds after the verdict when the run
// was compared with a baseline, "" without --baseline: "hit@5 -0.061 vs base
// (p = 0.0078), 8 newly missed · no regression gate set". esc escapes the
// user-controlled text for the target format (a precomputed measure key).
func (d *Document) BaselineHeadline(esc func(string) string) string {
	bl := d.Baseline
	if bl == nil {
		return ""
	}
	if bl.Status != BaselineCompared {
		return "no baseline: the regression gates are off"
	}
	var parts []string
	if p, ok := bl.Overall.Metrics[bl.HeadlineMeasure]; ok && bl.HeadlineMeasure != "" {
		parts = append(parts, fmt.Sprintf("%s %s vs base (%s, n = %d), %d newly missed",
			d.labelEsc(bl.HeadlineMeasure, esc), format.Signed(p.Delta.V()), pEquals(p.P.V()), p.N, bl.Flips.NewlyMissedTotal))
	} else {
		parts = append(parts, fmt.Sprintf("no case paired with the baseline (%d in it)", bl.Cases.Baseline))
	}
	switch bl.Regression {
	case outcome.Off:
		parts = append(parts, "no regression gate set")
	case outcome.Pass:
		parts = append(parts, "regression gates pass")
	case outcome.Fail:
		parts = append(parts, "regression gate failed")
	}
	if c := bl.Churn; c != nil {
		switch c.Status {
		case outcome.Pass:
			parts = append(parts, "churn gates pass")
		case outcome.Fail:
			parts = append(parts, "churn gate failed")
		}
	}
	return strings.Join(parts, " · ")
}

// pEquals is "p = 0.0078", or "p < 1e-300" at the floor of format.P.
func pEquals(p float64) string {
	s := format.P(p)
	if strings.HasPrefix(s, "<") {
		return "p " + s
	}
	return "p = " + s
}

// headingLine is the verdict with the comparison, as the first line writes it.
func (d *Document) headingLine(esc func(string) string) string {
	s := string(d.Verdict)
	if h := d.BaselineHeadline(esc); h != "" {
		s += " · " + h
	}
	return s
}

// labelEsc is the label of key, escaped by esc when it is the key itself (a
// precomputed key comes from user input; a registered label does not).
func (d *Document) labelEsc(key string, esc func(string) string) string {
	if l := d.label(key); l != key {
		return l
	}
	return esc(key)
}

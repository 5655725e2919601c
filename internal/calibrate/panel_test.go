package calibrate

import (
	"context"
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/internal/input"
	"github.com/retrieval-gate/retrieval-gate/internal/input/labelfile"
	"github.com/retrieval-gate/retrieval-gate/internal/metrics"
)

const panelLock = `{"dimensions": {"faithfulness": {"construct": "contradiction-only", "gated": true}},
 "bins": [0.34, 0.67], "kappa_weighting": "quadratic", "min_kappa": 0.6, "min_n": 1, "raters": "panel"}`

// hl is one human label line of faithfulness: case, rater, bin, extra fields.
func hl(id, rater string, bin int, extra string) string {
	r := ""
	if rater != "" {
		r = `, "rater": "` + rater + `"`
	}
	return `{"case_id": "` + id + `", "dimension": "faithfulness", "bin": ` + string(rune('0'+bin)) +
		`, "construct": "contradiction-only", "labeled_at": "2026-09-01T09:00:00Z"` + r + extra + "}\n"
}

func jl(id string, score string) string {
	return `{"case_id": "` + id + `", "dimension": "faithfulness", "score": ` + score +
		`, "construct": "contradiction-only", "judged_at": "2026-10-01T09:00:00Z"}` + "\n"
}

func readPanel(t *testing.T, lockSrc, human, judge string) (*labelfile.Lock, *labelfile.Labels, *labelfile.Labels) {
	t.Helper()
	lock := lockOf(t, lockSrc)
	hs, err := labelfile.ReadLabels(context.Background(), strings.NewReader(human), "human.jsonl", labelfile.HumanSide, lock)
	require.NoError(t, err)
	js, err := labelfile.ReadLabels(context.Background(), strings.NewReader(judge), "judge.jsonl", labelfile.JudgeSide, lock)
	require.NoError(t, err)
	return lock, hs, js
}

func TestPanelConsensusAndAlpha(t *testing.T) {
	human := hl("c1", "ana", 0, "") + hl("c1", "bo", 0, "") + hl("c1", "cy", 1, "") + // median 0
		hl("c2", "ana", 2, "") + hl("c2", "bo", 1, "") + // an even split: the lower middle bin, 1
		hl("c3", "ana", 1, "") + hl("c3", "bo", 2, "") + hl("c3", "owner", 2, `, "adjudication": true`) + // adjudicated: 2
		hl("c4", "ana", 2, "") // one rater: 2, not in alpha's n
	judge := jl("c1", "0.1") + jl("c2", "0.5") + jl("c3", "0.9") + jl("c4", "1")
	lock, hs, js := readPanel(t, panelLock, human, judge)
	res, err := Evaluate(context.Background(), Input{Lock: lock, Human: hs, Judge: js, Resamples: 500, Seed: metrics.DefaultSeed})
	require.NoError(t, err)
	d := res.Dimensions[0]
	assert.Equal(t, 4, d.N, "one pair per case, whatever the panel's size")
	assert.Equal(t, [][]int{{1, 0, 0}, {0, 1, 0}, {0, 0, 2}}, d.Confusion, "the consensus agrees with the judge on every case")
	require.NotNil(t, d.Panel)
	pd := d.Panel
	assert.Equal(t, []string{"ana", "bo", "cy"}, pd.Raters, "the adjudicator is not a panel rater by adjudicating")
	assert.Equal(t, 4, pd.Cases)
	assert.Equal(t, int64(3), pd.Units)
	assert.Equal(t, int64(7), pd.Values)
	assert.Equal(t, 3, pd.Disagreed)
	assert.Equal(t, []string{"c1", "c2"}, pd.Unadjudicated)
	assert.Equal(t, []Adjudication{{CaseID: "c3", Rater: "owner", Bin: 2, PanelBins: []int{1, 2}, Median: 1, File: "human.jsonl", Line: 8}}, pd.Adjudications)
	units := metrics.NewAlphaUnits(3)
	for _, u := range [][]int{{0, 0, 1}, {2, 1}, {1, 2}} {
		units.Add(u)
	}
	want := units.Alpha(metrics.KappaWeights(3, "quadratic"))
	assert.InDelta(t, want, pd.Alpha, 1e-15)
	assert.True(t, pd.AlphaBelowMinKappa, "alpha %v is below min_kappa 0.6", pd.Alpha)
	assert.Equal(t, []string{"contradiction-only"}, d.HumanConstructs)
}

func TestPanelSingleFramingUnchanged(t *testing.T) {
	// Under raters: single (the default) rater ids may be given, one label per case.
	lockSrc := strings.Replace(panelLock, `, "raters": "panel"`, ``, 1)
	lock, hs, js := readPanel(t, lockSrc, hl("c1", "ana", 0, "")+hl("c2", "", 2, ""), jl("c1", "0")+jl("c2", "1"))
	res, err := Evaluate(context.Background(), Input{Lock: lock, Human: hs, Judge: js})
	require.NoError(t, err)
	assert.Nil(t, res.Dimensions[0].Panel)
	assert.Equal(t, 2, res.Dimensions[0].N)
}

func TestPanelErrors(t *testing.T) {
	single := strings.Replace(panelLock, `, "raters": "panel"`, ``, 1)
	adj := `, "adjudication": true`
	tests := []struct {
		name, lock, human, want string
	}{
		{"adjudication where the panel agrees", panelLock, hl("c1", "ana", 1, "") + hl("c1", "bo", 1, "") + hl("c1", "owner", 2, adj),
			`human.jsonl:3: adjudication of case "c1", dimension "faithfulness" where the panel does not disagree (the panel agrees (bins 1, 1)): the owner adjudicates only cases the panel raters disagree on`},
		{"adjudication of a single label", panelLock, hl("c1", "owner", 2, adj) + hl("c1", "ana", 1, ""),
			`human.jsonl:1: adjudication of case "c1", dimension "faithfulness" where the panel does not disagree (a single panel label (bin 1)): the owner adjudicates only cases the panel raters disagree on`},
		{"adjudication without a panel label", panelLock, hl("c1", "owner", 2, adj),
			`human.jsonl:1: adjudication of case "c1", dimension "faithfulness" where the panel does not disagree (no panel label): the owner adjudicates only cases the panel raters disagree on`},
		{"second adjudication", panelLock, hl("c1", "ana", 0, "") + hl("c1", "bo", 2, "") + hl("c1", "owner", 2, adj) + hl("c1", "lead", 0, adj),
			`human.jsonl:4: a second adjudication of case "c1", dimension "faithfulness" (rater "lead"; the first, by rater "owner", is on line 3): a case has one adjudication`},
		{"panel label without a rater", panelLock, hl("c1", "ana", 0, "") + hl("c2", "", 2, ""),
			`human.jsonl:2: the lock's raters is "panel": every human label names its rater ("rater")`},
		{"adjudication under a single rater", single, hl("c1", "ana", 0, "") + hl("c1", "owner", 2, adj),
			`human.jsonl:2: an adjudication needs a rater panel: the lock's raters is "single", so each case has one human label and nothing to adjudicate`},
		{"two raters under a single rater", single, hl("c1", "ana", 0, "") + hl("c2", "ana", 0, "") + hl("c1", "bo", 2, ""),
			`human.jsonl:3: a second human label for case "c1", dimension "faithfulness" (rater "bo"; the first, rater "ana", is on line 1): the lock's raters is "single", one label per case; a panel needs "raters": "panel" in the lock`},
		// The owner adjudicates between the panel's labels (issue 34 item 12).
		{"adjudication to a bin no rater gave", panelLock, hl("c1", "ana", 1, "") + hl("c1", "bo", 2, "") + hl("c1", "cy", 2, "") + hl("c1", "owner", 0, adj),
			`human.jsonl:4: adjudication of case "c1", dimension "faithfulness" to bin 0, which no panel rater gave (panel bins 1, 2, 2): the owner adjudicates between the panel's labels; a bin outside them relabels the case`},
		{"adjudication between the panel's bins", panelLock, hl("c1", "ana", 0, "") + hl("c1", "bo", 2, "") + hl("c1", "owner", 1, adj),
			`human.jsonl:3: adjudication of case "c1", dimension "faithfulness" to bin 1, which no panel rater gave (panel bins 0, 2): the owner adjudicates between the panel's labels; a bin outside them relabels the case`},
		// The lock's owner is never a panel rater, and alone adjudicates (item 13).
		{"the owner on the panel", ownerLock, hl("c1", "ana", 1, "") + hl("c1", "bo", 2, "") + hl("c1", "cy", 2, "") + hl("c1", "owner", 1, ""),
			`human.jsonl:4: a panel label by the owner "owner" on case "c1", dimension "faithfulness": the owner saw the judge's scores, and the panel never did, so the owner's labels are not panel labels (the owner adjudicates, with "adjudication": true, where the panel disagrees)`},
		{"an adjudication by another rater", ownerLock, hl("c1", "ana", 1, "") + hl("c1", "bo", 2, "") + hl("c1", "cy", 2, adj),
			`human.jsonl:3: an adjudication by rater "cy" of case "c1", dimension "faithfulness": the lock's owner is "owner", who alone adjudicates`},
		// The first error in the file is the one reported.
		{"first by line", panelLock, hl("c1", "ana", 1, "") + hl("c1", "bo", 1, "") + hl("c2", "", 0, "") + hl("c1", "owner", 2, adj),
			`human.jsonl:3: the lock's raters is "panel": every human label names its rater ("rater")`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lock, hs, js := readPanel(t, tt.lock, tt.human, jl("c1", "0.5"))
			_, err := Evaluate(context.Background(), Input{Lock: lock, Human: hs, Judge: js})
			require.Error(t, err)
			var ie *input.Error
			require.ErrorAs(t, err, &ie)
			assert.Equal(t, tt.want, err.Error())
		})
	}
}

// ownerLock is panelLock naming its owner, with a carried-over dimension.
const ownerLock = `{"dimensions": {"faithfulness": {"construct": "contradiction-only", "gated": true},
 "groundedness": {"construct": "support", "gated": false, "carried_over": true}},
 "bins": [0.34, 0.67], "kappa_weighting": "quadratic", "min_kappa": 0.6, "min_n": 1, "raters": "panel", "owner": "owner"}`

func TestPanelOwner(t *testing.T) {
	// The owner's labels stand in a carried-over dimension (the base's labels)
	// and as adjudications; the owner is not one of the panel's raters.
	g := strings.NewReplacer(`"faithfulness"`, `"groundedness"`, `"contradiction-only"`, `"support"`)
	human := hl("c1", "ana", 1, "") + hl("c1", "bo", 2, "") + hl("c1", "owner", 2, `, "adjudication": true`) +
		g.Replace(hl("c1", "owner", 0, ""))
	judge := jl("c1", "0.9") + g.Replace(jl("c1", "0.1"))
	lock, hs, js := readPanel(t, ownerLock, human, judge)
	res, err := Evaluate(context.Background(), Input{Lock: lock, Human: hs, Judge: js})
	require.NoError(t, err)
	f, gr := res.Dimensions[0], res.Dimensions[1]
	assert.Equal(t, []string{"ana", "bo"}, f.Panel.Raters)
	assert.Equal(t, [][]int{{0, 0, 0}, {0, 0, 0}, {0, 0, 1}}, f.Confusion, "the adjudication is the case's label")
	assert.Equal(t, []string{"owner"}, gr.Panel.Raters)
	assert.Equal(t, 1, gr.N)
}

func TestPanelGuards(t *testing.T) {
	// A rater on another construct makes the dimension a construct mismatch,
	// naming that rater's label; a late adjudication is an anchoring violation.
	human := hl("c1", "ana", 0, "") + strings.Replace(hl("c1", "bo", 2, ""), "contradiction-only", "support", 1) +
		hl("c2", "ana", 0, "") + hl("c2", "bo", 2, "") +
		strings.Replace(hl("c2", "owner", 2, `, "adjudication": true`), "2026-09-01T09:00:00Z", "2026-10-02T09:00:00Z", 1)
	lock, hs, js := readPanel(t, panelLock, human, jl("c1", "0")+jl("c2", "1"))
	res, err := Evaluate(context.Background(), Input{Lock: lock, Human: hs, Judge: js})
	require.NoError(t, err)
	d := res.Dimensions[0]
	assert.Equal(t, StatusConstructMismatch, d.Status)
	assert.Equal(t, []string{"contradiction-only", "support"}, d.HumanConstructs)
	require.Len(t, d.Violations, 2)
	assert.Equal(t, "c1", d.Violations[0].CaseID)
	assert.Equal(t, 2, d.Violations[0].Line)
	assert.Equal(t, "c2", d.Violations[1].CaseID)
	assert.Equal(t, 5, d.Violations[1].Line, "the anchoring violation names the newest label of the case")
	assert.Equal(t, NotEarlier, d.Violations[1].Kind)
	assert.Equal(t, "2026-10-02T09:00:00Z", d.Violations[1].LabeledAt.UTC().Format(time.RFC3339))
	assert.Equal(t, "human.jsonl", d.Violations[1].File)
	assert.True(t, math.IsNaN(d.Panel.CI95[0]), "no resamples, no interval")
}

// FuzzPanel reads arbitrary human labels under either rater framing and
// evaluates them against a judge score for every case: either an input error
// naming the file and line, or a result whose panel keeps its invariants.
func FuzzPanel(f *testing.F) {
	f.Add(hl("c1", "ana", 0, "")+hl("c1", "bo", 2, "")+hl("c1", "owner", 1, `, "adjudication": true`)+hl("c2", "ana", 1, ""), true, false)
	f.Add(hl("c1", "ana", 0, "")+hl("c1", "bo", 2, "")+hl("c1", "owner", 2, `, "adjudication": true`)+hl("c2", "ana", 1, ""), true, false)
	f.Add(hl("c1", "ana", 0, "")+hl("c1", "bo", 0, "")+hl("c1", "owner", 1, `, "adjudication": true`), true, false)
	f.Add(hl("c1", "ana", 0, "")+hl("c1", "bo", 2, ""), false, false)
	f.Add(hl("c1", "", 0, "")+hl("c2", "", 2, ""), false, false)
	f.Add(hl("c1", "ana", 0, "")+hl("c1", "bo", 2, "")+hl("c1", "owner", 2, `, "adjudication": true`)+hl("c2", "owner", 1, ""), true, true)
	single := strings.Replace(panelLock, `, "raters": "panel"`, ``, 1)
	owned := strings.Replace(panelLock, `"raters": "panel"`, `"raters": "panel", "owner": "owner"`, 1)
	f.Fuzz(func(t *testing.T, human string, panel, owner bool) {
		src := single
		switch {
		case panel && owner:
			src = owned
		case panel:
			src = panelLock
		}
		lock := lockOf(t, src)
		ctx := context.Background()
		hs, err := labelfile.ReadLabels(ctx, strings.NewReader(human), "h.jsonl", labelfile.HumanSide, lock)
		if err != nil {
			return
		}
		cases := map[string]bool{}
		var judge strings.Builder
		for _, l := range hs.All() {
			if !cases[l.CaseID] {
				cases[l.CaseID] = true
				judge.WriteString(`{"case_id": ` + strconvQuote(l.CaseID) + `, "dimension": "faithfulness", "score": 0.5, "construct": "contradiction-only", "judged_at": "2099-01-01T00:00:00Z"}` + "\n")
			}
		}
		js, err := labelfile.ReadLabels(ctx, strings.NewReader(judge.String()), "j.jsonl", labelfile.JudgeSide, lock)
		require.NoError(t, err)
		res, err := Evaluate(ctx, Input{Lock: lock, Human: hs, Judge: js, Resamples: 20, Seed: metrics.DefaultSeed})
		if err != nil {
			var ie *input.Error
			require.ErrorAs(t, err, &ie)
			require.True(t, strings.HasPrefix(err.Error(), "h.jsonl:"), err.Error())
			return
		}
		d := res.Dimensions[0]
		require.LessOrEqual(t, d.N, len(cases))
		if !panel {
			require.Nil(t, d.Panel)
			return
		}
		p := d.Panel
		require.NotNil(t, p)
		require.Equal(t, len(cases), p.Cases)
		require.LessOrEqual(t, p.Units, int64(p.Cases))
		if !math.IsNaN(p.Alpha) { // undefined alpha is NaN
			require.LessOrEqual(t, p.Alpha, 1+1e-12, "alpha %v", p.Alpha)
		}
		if !math.IsNaN(p.CI95[0]) {
			require.LessOrEqual(t, p.CI95[0], p.CI95[1])
		}
		require.Equal(t, p.Disagreed, len(p.Adjudications)+len(p.Unadjudicated))
		for _, a := range p.Adjudications {
			require.GreaterOrEqual(t, len(a.PanelBins), 2)
			require.NotEqual(t, a.PanelBins[0], a.PanelBins[len(a.PanelBins)-1], "an adjudication only where the panel disagrees")
			require.Contains(t, a.PanelBins, a.Bin, "an adjudication between the panel's bins")
			if owner {
				require.Equal(t, "owner", a.Rater, "only the owner adjudicates")
			}
		}
		if owner {
			require.NotContains(t, p.Raters, "owner", "the owner is never a panel rater")
		}
	})
}

func strconvQuote(s string) string { b, _ := json.Marshal(s); return string(b) }

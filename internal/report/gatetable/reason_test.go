package gatetable

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/retrieval-gate/retrieval-gate/internal/outcome"
)

// Each reason code reads as the sentence the reports printed before reasons
// became data (the domain packages' tests pin the rest through their gates).
func TestReason(t *testing.T) {
	pt := outcome.PairedTest{Strategy: "hybrid", Delta: 0.12, Lo: 0.05, Hi: 0.19, PHolm: 0.003}
	tests := []struct {
		name string
		why  []outcome.Clause
		want string
	}{
		{"none", nil, ""},
		{"beaten", []outcome.Clause{{Code: outcome.Beaten, Measure: "dcg_at_k", Tests: []outcome.PairedTest{pt, pt}}},
			"significantly better on dcg_at_k: hybrid +0.120, 95% CI [+0.050, +0.190], Holm p = 0.0030; hybrid +0.120, 95% CI [+0.050, +0.190], Holm p = 0.0030"},
		{"not beaten", []outcome.Clause{{Code: outcome.NotBeaten, Measure: "dcg_at_k", Tests: []outcome.PairedTest{pt}}},
			"no strategy is significantly better on dcg_at_k (closest: hybrid +0.120, 95% CI [+0.050, +0.190], Holm p = 0.0030)"},
		{"below min_n", []outcome.Clause{{Code: outcome.BelowMinN, N: 12, M: 30}}, "n = 12 is below min_n 30"},
		{"holm over the group gates", []outcome.Clause{{Code: outcome.HolmGroupGates, N: 3, P: 0.0312, Value: 0.0937}},
			"the p is Holm-adjusted over the 3 per-group regression gates of this run (unadjusted p = 0.0312)"},
		{"violations", []outcome.Clause{{Code: outcome.Violations, Name: "fail", N: 2}}, "fail: 2 violation(s)"},
		{"unpaired", []outcome.Clause{{Code: outcome.TooManyUnpaired, Text: "5%"}}, "more unpaired labels than --max-unpaired 5% allows"},
		{"carried over", []outcome.Clause{{Code: outcome.LabelsChanged, N: 2, Text: "origin/main"}}, "the labels of 2 case(s) changed since origin/main; a carried-over dimension keeps its labels"},
		{"carried over, no base", []outcome.Clause{{Code: outcome.LabelsChanged, Name: "no-base-file", Text: "main"}}, "the human labels file does not exist at main, so the carried-over labels cannot be shown unchanged"},
		{"not blind", []outcome.Clause{{Code: outcome.NotBlind, N: 3, M: 40, Names: []string{"", "ana"}}}, "3 of 40 paired human label(s) are not provably committed before the judge scores they are compared with (raters: (no rater id), ana)"},
		{"anchoring", []outcome.Clause{{Code: outcome.AnchorNoCommit, Name: "human", Text: "labels/h.jsonl"}, {Code: outcome.AnchorUncommitted, Name: "judge", Text: "j.jsonl"}},
			"the human labels file labels/h.jsonl has no commit; the judge scores file j.jsonl has uncommitted changes"},
		{"same commit", []outcome.Clause{{Code: outcome.AnchorSameCommit, Text: "0123456789abcdef0123"}},
			"the human labels and the judge scores were last changed in the same commit 0123456789ab: the labels are not provably older"},
		{"not ancestor", []outcome.Clause{{Code: outcome.AnchorNotAncestor, Names: []string{"aaaaaaaaaaaaaaaa", "bbbbbbbbbbbbbbbb"}}},
			"the commit that last changed the human labels (aaaaaaaaaaaa) is not an ancestor of the one that last changed the judge scores (bbbbbbbbbbbb)"},
		{"shallow", []outcome.Clause{{Code: outcome.AnchorShallow, Text: "cccccccccccccccccc"}},
			"the repository is a shallow clone and cccccccccccc is its boundary: the history before it was not fetched, so the files look last changed there (actions/checkout with fetch-depth: 0 fetches it)"},
		{"clauses joined", []outcome.Clause{{Code: outcome.NoGoldScored, Name: "locale:pt-BR"}, {Code: outcome.IndicativeOnly}},
			"n = 0: no gold-carrying cases were scored in locale:pt-BR; " + IndicativeOnly},
		{"allowed empty", []outcome.Clause{{Code: outcome.NoGoldScored, Allowed: true}}, "no gold-carrying cases were scored (allowed by --allow-empty)"},
		{"detects", []outcome.Clause{{Code: outcome.Detects, N: 100, Detectable: 0.1, Distance: 0.2, Power: 0.8, Alpha: 0.05}},
			"n = 100 detects differences of ±0.100 at 80% power (α = 0.05); the distance to the floor is 0.200"},
		{"rbo below", []outcome.Clause{{Code: outcome.RBOBelow, Value: 0.5, Threshold: 0.9, N: 156}, {Code: outcome.Interval95, N: 156, Lo: 0.47, Hi: 0.53, Test: "hall-t", Threshold: 0.9}},
			"overall mean RBO 0.500 over 156 cases is below the floor 0.900; 95% interval [0.470, 0.530] (hall-t, n = 156)"},
		{"churn above, threshold inside", []outcome.Clause{{Code: outcome.ChurnAbove, Name: "type:golden", Value: 0.25, Threshold: 0.2, N: 20, M: 5},
			{Code: outcome.Interval95, N: 20, Lo: 0.1, Hi: 0.49, Test: "wilson-cc", Threshold: 0.2, Only: true}},
			"type:golden: the top k of 5 of 20 cases changed as a set, a share of 0.250, more than the 0.200 allowed; 95% interval [0.100, 0.490] (wilson-cc, n = 20): the threshold 0.200 lies inside it, so this n cannot tell the figure from the threshold"},
		{"churn above, over clusters", []outcome.Clause{{Code: outcome.ChurnAbove, Value: 0.25, Threshold: 0.2, N: 20, M: 5},
			{Code: outcome.Interval95, N: 20, M: 8, Lo: 0.05, Hi: 0.45, Test: "cluster-t", Threshold: 0.2, Only: true}},
			"overall: the top k of 5 of 20 cases changed as a set, a share of 0.250, more than the 0.200 allowed; 95% interval [0.050, 0.450] (cluster-t over 8 clusters of cases in families, n = 20): the threshold 0.200 lies inside it, so this n cannot tell the figure from the threshold"},
		{"per-locale churn gate", []outcome.Clause{{Code: outcome.ChurnAbove, Name: "locale:pt-BR", Value: 0.5, Threshold: 0.2, N: 40, M: 20},
			{Code: outcome.Interval95, N: 40, Lo: 0.35, Hi: 0.65, Test: "wilson-cc", Threshold: 0.2}, {Code: outcome.IndicativeChurn}},
			"locale:pt-BR: the top k of 20 of 40 cases changed as a set, a share of 0.500, more than the 0.200 allowed; 95% interval [0.350, 0.650] (wilson-cc, n = 40); per-locale churn gate: indicative only, not significance-tested"},
		{"ann recall below", []outcome.Clause{{Code: outcome.ANNRecallBelow, Value: 0.8125, Threshold: 0.95, N: 400, M: 10}},
			"the index's recall@10 against exact search, 0.812 over 400 queries, is below the floor 0.950"},
		{"ann recall below, every list as deep as asked", []outcome.Clause{{Code: outcome.ANNRecallBelow, Value: 0.8125, Threshold: 0.95, N: 400, M: 10, Span: [2]int64{10, 10}}},
			"the index's recall@10 against exact search, 0.812 over 400 queries, is below the floor 0.950"},
		{"ann recall below, a store smaller than the depth", []outcome.Clause{{Code: outcome.ANNRecallBelow, Value: 0.9, Threshold: 0.95, N: 156, M: 50, Span: [2]int64{38, 38}}},
			"the index's recall@38 (50 asked; the store holds fewer records a query can match) against exact search, 0.900 over 156 queries, is below the floor 0.950"},
		{"no ann query", []outcome.Clause{{Code: outcome.NoANNQuery, N: 5, M: 5}},
			"the exact check checked no query (5 run, 5 sampled without an exact neighbour: no record of their locale)"},
		{"no top k", []outcome.Clause{{Code: outcome.NoTopK, Name: "locale:en", N: 3, M: 3}},
			"no case of locale:en that both runs hold carries its top k in both runs (3 held, 3 without a top k in one run): the churn cannot be measured"},
		{"detects a drop over clusters", []outcome.Clause{{Code: outcome.DetectsDrop, N: 40, M: 4, Detectable: math.NaN(), Threshold: 0.05, Power: 0.8, Alpha: 0.05}},
			"n = 40 paired cases in 4 clusters cannot detect any drop at 80% power (α = 0.05); the tolerance is 0.050"},
		{"drop without spread", []outcome.Clause{{Code: outcome.DropNoSpread, N: 6, Value: -1, Threshold: 0.05}},
			"the paired differences do not vary (every one is -1.000): the drop that n = 6 paired cases can detect cannot be estimated; the tolerance is 0.050"},
		{"drop without spread, over clusters", []outcome.Clause{{Code: outcome.DropNoSpread, N: 40, M: 8, Value: 0, Threshold: 0.05}},
			"the clusters' mean differences do not vary (every one is 0.000): the drop that n = 40 paired cases in 8 clusters can detect cannot be estimated; the tolerance is 0.050"},
		{"unknown code shows the code", []outcome.Clause{{Code: "new_code"}}, "new_code"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, Reason(tt.why))
		})
	}
	// Every code is worded (outcome.Codes is complete: outcome's test).
	for _, c := range outcome.Codes {
		assert.NotEqual(t, string(c), Reason([]outcome.Clause{{Code: c, Names: []string{"a", "b"}}}), "Reason does not word %q", c)
	}
}

// TestReasonOneCluster: a count of clusters reads "1 cluster", not "1 clusters".
func TestReasonOneCluster(t *testing.T) {
	for _, tc := range []struct {
		c    outcome.Clause
		want string
	}{
		{outcome.Clause{Code: outcome.DetectsDrop, N: 40, M: 1, Detectable: math.NaN(), Threshold: 0.05},
			"n = 40 paired cases in 1 cluster cannot detect any drop"},
		{outcome.Clause{Code: outcome.DetectsDrop, N: 40, M: 4, Detectable: math.NaN(), Threshold: 0.05},
			"n = 40 paired cases in 4 clusters cannot detect any drop"},
		{outcome.Clause{Code: outcome.DropNoSpread, N: 40, M: 1, Value: -1, Threshold: 0.05},
			"the drop that n = 40 paired cases in 1 cluster can detect"},
	} {
		assert.Contains(t, Reason([]outcome.Clause{tc.c}), tc.want)
	}
}

// The exact check's figure is named by the depth it was measured at: a
// query's exact list is shorter than the depth asked when fewer records match
// it (the demo's 38 chunks, a dozen a locale, under hybrid's 50), and its
// recall is then recall at that length.
func TestANNRecallAt(t *testing.T) {
	tests := []struct {
		name     string
		asked    int64
		measured [2]int64
		want     string
	}{
		{"as deep as asked", 50, [2]int64{50, 50}, "recall@50"},
		{"no query checked", 50, [2]int64{0, 0}, "recall@50"},
		{"the whole store", 50, [2]int64{38, 38}, "recall@38 (50 asked; the store holds fewer records a query can match)"},
		{"per locale", 50, [2]int64{12, 14}, "recall@12–14 (50 asked; the store holds fewer records a query can match)"},
		{"one locale short", 10, [2]int64{4, 10}, "recall@4–10 (10 asked; the store holds fewer records a query can match)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, ANNRecallAt(tt.asked, tt.measured))
		})
	}
}

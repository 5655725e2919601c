package checkreport

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/internal/baseline"
	"github.com/retrieval-gate/retrieval-gate/internal/format"
	"github.com/retrieval-gate/retrieval-gate/internal/gate"
	"github.com/retrieval-gate/retrieval-gate/internal/metrics"
)

// Each integrity problem reads as the reports wrote it before problems became
// kinds; a kind without a row here, or that ProblemReason does not word, fails.
func TestProblemReason(t *testing.T) {
	tests := []struct {
		kind gate.ProblemKind
		want string
	}{
		{gate.UnknownCard, "unknown card"},
		{gate.EmptyID, "empty card id"},
		{gate.UnknownRelevant, "unknown card (relevant_ids)"},
		{gate.EmptyRelevant, "empty card id (relevant_ids)"},
		{"new_kind", "new_kind"},
	}
	covered := map[gate.ProblemKind]bool{}
	for _, tt := range tests {
		t.Run(string(tt.kind), func(t *testing.T) {
			assert.Equal(t, tt.want, ProblemReason(tt.kind))
		})
		covered[tt.kind] = true
	}
	for _, k := range gate.ProblemKinds {
		require.True(t, covered[k], "problem kind %q has no row in this table", k)
		assert.NotEqual(t, string(k), ProblemReason(k), "ProblemReason does not word %q", k)
	}
}

// Each setting a baseline differs in reads as the consequence the reports
// wrote before differences became settings; a setting without a row here, or
// that DifferenceConsequence does not word, fails.
func TestDifferenceConsequence(t *testing.T) {
	tests := []struct {
		setting baseline.Setting
		want    string
	}{
		{baseline.SettingSchema, "read as retrieval-gate/baseline@1: fields this build does not know are ignored"},
		{baseline.SettingK, "the measures are at different cutoffs: a Δ mixes the retrieval change with the cutoff change"},
		{baseline.SettingKB, "the knowledge base changed: a Δ may come from the cards rather than the retriever"},
		{baseline.SettingFormat, "a --cases-out file: k and the KB cannot be checked, flips show no top k and no rank drops are found"},
		{"new_setting", "new_setting"},
	}
	covered := map[baseline.Setting]bool{}
	for _, tt := range tests {
		t.Run(string(tt.setting), func(t *testing.T) {
			assert.Equal(t, tt.want, DifferenceConsequence(tt.setting))
		})
		covered[tt.setting] = true
	}
	for _, s := range baseline.Settings {
		require.True(t, covered[s], "setting %q has no row in this table", s)
		assert.NotEqual(t, string(s), DifferenceConsequence(s), "DifferenceConsequence does not word %q", s)
	}
}

// The legend of the means names hall-t from metrics.LargeSampleMinN cases only
// when a group's interval is hall-t at that n (issue 23: means of large groups
// no longer resample).
func TestMeanMethodsLegend(t *testing.T) {
	small := &Document{Overall: Group{N: 132, Metrics: map[string]Summary{"retrieval_ndcg_at_k": {N: 132, CI95Method: metrics.MethodBCa}}}}
	assert.Equal(t, "Wilson (continuity-corrected) for 0/1 values, else hall-t (t united with Hall's skewness-corrected t) below 30 cases, BCa bootstrap from 30", small.MeanMethods())
	large := &Document{Overall: Group{N: 20000, Metrics: map[string]Summary{"retrieval_ndcg_at_k": {N: 20000, CI95Method: metrics.MethodHallT}}},
		ByType: map[string]Group{"golden": {N: 12, Metrics: map[string]Summary{"retrieval_ndcg_at_k": {N: 12, CI95Method: metrics.MethodHallT}}}}}
	assert.Equal(t, small.MeanMethods()+", hall-t again from 10000", large.MeanMethods())
}

// Issue 34 item 2: when cases carry a cluster key, the legend of the means
// (text, Markdown and HTML) and the churn's methods say that the intervals
// are computed over the clusters, with the overall counts.
func TestClustersLegends(t *testing.T) {
	d := &Document{Overall: Group{N: 132, Metrics: map[string]Summary{
		"retrieval_hit_at_k":  {N: 132, Clusters: 38, CI95Method: metrics.MethodClusterHull},
		"retrieval_ndcg_at_k": {N: 132, Clusters: 38, CI95Method: metrics.MethodClusterT}}}}
	plain := &Document{Overall: Group{N: 132, Metrics: map[string]Summary{"retrieval_ndcg_at_k": {N: 132, CI95Method: metrics.MethodBCa}}}}
	assert.Equal(t, "cases in families: 132 cases in 38 clusters overall (a case without a cluster key is one), each group's interval computed over its own clusters (cluster-t: Student's t with the cluster-robust standard error); in a group without a cluster key: "+plain.MeanMethods(), d.MeanMethods())
	c := &Churn{Depth: 5, Overall: ChurnGroup{N: 156, Clusters: 62,
		ChangedShare: Estimate{CI95Method: metrics.MethodBoundedWilson}, Left: Estimate{CI95Method: metrics.MethodClusterHull}, RBO: Estimate{CI95Method: metrics.MethodClusterT}}}
	assert.Equal(t, "95% intervals: the share bounded-wilson-cc, the entries that left cluster-t-hull, the mean RBO cluster-t (of 1 − RBO, mapped back), over the 62 clusters of the 156 cases (cases in families: a case without a cluster key is one; each group over its own clusters): docs/statistics.md", c.ChurnMethods())
	c.Overall.Clusters = 0
	assert.NotContains(t, c.ChurnMethods(), "clusters of")
}

// A churn or overlap estimate marked unreliable (UnreliableMark after its
// interval, e.g. over fewer than 20 clusters) is explained in the methods'
// line that every format prints under it; an unmarked one adds no note.
func TestEstimateUnreliableNote(t *testing.T) {
	iv := [2]format.Float{0.4, 0.6}
	marked := Estimate{Mean: 0.5, CI95: iv, CI95Method: metrics.MethodClusterT, Unreliable: true}
	plain := Estimate{Mean: 0.5, CI95: iv, CI95Method: metrics.MethodHallT}
	for name, tc := range map[string]struct {
		churn   ChurnGroup
		overlap [2]OverlapGroup
		want    bool
	}{
		"none marked":     {churn: ChurnGroup{N: 12, ChangedShare: plain, Left: plain, RBO: plain}, overlap: [2]OverlapGroup{{N: 12, CI95: &iv, CI95Method: metrics.MethodHallT}, {}}},
		"churn RBO":       {churn: ChurnGroup{N: 12, ChangedShare: plain, Left: plain, RBO: marked}, want: true},
		"churn share":     {churn: ChurnGroup{N: 12, ChangedShare: marked, Left: plain, RBO: plain}, want: true},
		"overlap paired":  {overlap: [2]OverlapGroup{{N: 12, CI95: &iv, CI95Method: metrics.MethodClusterT, Unreliable: true}, {}}, want: true},
		"overlap no gold": {overlap: [2]OverlapGroup{{}, {N: 12, CI95: &iv, CI95Method: metrics.MethodClusterT, Unreliable: true}}, want: true},
	} {
		t.Run(name, func(t *testing.T) {
			c := &Churn{Depth: 5, Overall: tc.churn}
			o := &Overlap{Depth: 5, Paired: tc.overlap[0], WithoutGold: tc.overlap[1]}
			lines := c.ChurnMethods() + "\n" + o.OverlapMethods()
			marks := strings.Contains(estimateText(tc.churn.RBO)+estimateText(tc.churn.ChangedShare), UnreliableMark) ||
				strings.Contains(tc.overlap[0].MeanText()+tc.overlap[1].MeanText(), UnreliableMark)
			require.Equal(t, tc.want, marks, "the case's figures")
			assert.Equal(t, tc.want, strings.Contains(lines, EstimateUnreliableNote), lines)
		})
	}
}

package gatetable

import (
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/internal/format"
	"github.com/retrieval-gate/retrieval-gate/internal/outcome"
)

func TestMarkdown(t *testing.T) {
	tests := []struct {
		name string
		es   []Entry
		want string
	}{
		{"none", nil, ""},
		{
			"a floor that fails, with its reason as a note",
			[]Entry{{Name: "min_hit", Group: "overall", Measure: "retrieval_hit_at_k", Status: outcome.Fail, N: 4, Threshold: ptr(0.9), Value: ptr(0.75), Reason: "below the floor"}},
			Header + "| min\\_hit<br><sub>overall · retrieval\\_hit\\_at\\_k</sub> | ❌ fail [1] | 0.900 | 0.750 | 4 |\n\n[1] **min\\_hit**: below the floor\n",
		},
		{
			"integrity and lock gates have no second line; n = 0 and absent numbers are the missing glyph",
			[]Entry{
				{Name: "integrity", Status: outcome.Pass, N: 5},
				{Name: "lock", Status: outcome.Fail, Reason: "the lock changed since origin/main"},
			},
			Header + "| integrity | ✅ pass | — | — | 5 |\n| lock | ❌ fail [1] | — | — | — |\n\n[1] **lock**: the lock changed since origin/main\n",
		},
		{
			"a group without a measure shows the missing glyph for it; notes are numbered in order, one per line",
			[]Entry{
				{Name: "non_empty", Group: "overall", Status: outcome.Pass, N: 4},
				{Name: "min_recall", Group: "overall", Measure: "retrieval_recall_at_k", Status: outcome.Off, N: 4, Threshold: ptr(math.NaN()), Value: ptr(0.625)},
				{Name: "a", Status: outcome.Fail, Reason: "first"},
				{Name: "b", Status: outcome.Fail, Reason: "second"},
			},
			Header + "| non\\_empty<br><sub>overall · —</sub> | ✅ pass | — | — | 4 |\n" +
				"| min\\_recall<br><sub>overall · retrieval\\_recall\\_at\\_k</sub> | off | — | 0.625 | 4 |\n" +
				"| a | ❌ fail [1] | — | — | — |\n| b | ❌ fail [2] | — | — | — |\n\n[1] **a**: first  \n[2] **b**: second\n",
		},
		{
			"user-controlled names, groups and reasons are escaped",
			[]Entry{{Name: "floor:x@locale:a|b", Group: "locale:a|b", Measure: "m", Status: outcome.Fail, N: 3, Threshold: ptr(0.5), Value: ptr(0.25), Reason: "<script> @team"}},
			Header + "| " + format.EscapeMarkdown("floor:x@locale:a|b") + "<br><sub>locale:a\\|b · m</sub> | ❌ fail [1] | 0.500 | 0.250 | 3 |\n\n[1] **" +
				format.EscapeMarkdown("floor:x@locale:a|b") + "**: &lt;script&gt; &#64;&#8203;team\n",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b strings.Builder
			Markdown(&b, tt.es)
			assert.Equal(t, tt.want, b.String())
		})
	}
}

// Every field of an entry reaches the Markdown (nothing of the terminal table is
// lost): name, group, measure, status, threshold, value, n and reason.
func TestMarkdownKeepsEveryField(t *testing.T) {
	e := Entry{Name: "max_drop_recall", Group: "overall", Measure: "retrieval_recall_at_k", Status: outcome.Fail, N: 132,
		Threshold: ptr(0.01), Value: ptr(0.085), Reason: "overall mean dropped 0.085"}
	var md, txt strings.Builder
	Markdown(&md, []Entry{e})
	Text(&txt, []Entry{e})
	for _, field := range strings.Fields(txt.String())[8:] { // the terminal row's fields, after its header
		assert.Contains(t, strings.ReplaceAll(md.String(), "\\_", "_"), field)
	}
}

// A reason that cites an interval marked unreliable marks it (†) as the
// report's own tables do, and the gate table says what the mark means under
// it, in every format (the churn gate's reason cited a marked interval bare).
func TestUnreliableIntervalsInReasons(t *testing.T) {
	gates := outcome.Gates{
		{Name: "max_churn", Group: "overall", Measure: "top_k_churn", Status: outcome.Fail, N: 25, Value: 1, Threshold: 0.5,
			Why: []outcome.Clause{{Code: outcome.Interval95, N: 25, M: 6, Lo: 0.517, Hi: 1, Test: "bounded-wilson-cc", Unreliable: true}}},
		{Name: "not_beaten", Group: "strategy:ann", Measure: "dcg_at_k", Status: outcome.Fail, N: 12,
			Why: []outcome.Clause{{Code: outcome.Beaten, Measure: "dcg_at_k", Tests: []outcome.PairedTest{{Strategy: "hybrid", Delta: 5.5, Lo: -1.8, Hi: 9, PHolm: 0.0005, Unreliable: true}}}}},
	}
	es := FromOutcome(gates)
	require.Len(t, es, 2)
	assert.True(t, es[0].Unreliable)
	assert.Contains(t, es[0].Reason, "95% interval [0.517, 1.000]† (bounded-wilson-cc over 6 clusters")
	assert.True(t, es[1].Unreliable)
	assert.Contains(t, es[1].Reason, "hybrid +5.500, 95% CI [-1.800, +9.000]†, Holm p = 0.0005")
	var text, md strings.Builder
	Text(&text, es)
	Markdown(&md, es)
	assert.Equal(t, 1, strings.Count(text.String(), UnreliableNote))
	assert.Equal(t, 1, strings.Count(md.String(), UnreliableNote))
	// Without a marked interval: no mark, no footnote.
	gates[0].Why[0].Unreliable, gates[1].Why[0].Tests[0].Unreliable = false, false
	es = FromOutcome(gates)
	text.Reset()
	Text(&text, es)
	assert.NotContains(t, text.String(), format.UnreliableMark)
	assert.False(t, es[0].Unreliable || es[1].Unreliable)
}

// TestNumbersOfCounts: a gate on a count (calibrate's unpaired labels,
// changed cases, labels not provably blind) prints whole numbers, "3" and
// "0", not "3.000"; any other measure keeps its decimals, and a count that
// is not whole (a document edited by hand) keeps them too.
func TestNumbersOfCounts(t *testing.T) {
	f := func(v float64) *format.Float { x := format.Float(v); return &x }
	for _, tc := range []struct {
		e         Entry
		value     string
		threshold string
	}{
		{Entry{Measure: outcome.MeasureUnpairedLabels, Value: f(3), Threshold: f(0)}, "3", "0"},
		{Entry{Measure: outcome.MeasureChangedCases, Value: f(2), Threshold: f(math.NaN())}, "2", format.Missing},
		{Entry{Measure: outcome.MeasureNotBlindLabels, Value: f(12345)}, "12345", format.Missing},
		{Entry{Measure: outcome.MeasureUnpairedLabels, Value: f(2.5), Threshold: f(1)}, "2.500", "1"},
		{Entry{Measure: "weighted_kappa", Value: f(1), Threshold: f(0.6)}, "1.000", "0.600"},
	} {
		v, th := tc.e.Numbers()
		assert.Equal(t, tc.value, v, "%s", tc.e.Measure)
		assert.Equal(t, tc.threshold, th, "%s", tc.e.Measure)
	}
}

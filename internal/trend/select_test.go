package trend_test

import (
	"context"
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/valyala/fastjson"

	"github.com/retrieval-gate/retrieval-gate/internal/history"
	"github.com/retrieval-gate/retrieval-gate/internal/metrics"
	"github.com/retrieval-gate/retrieval-gate/internal/outcome"
	"github.com/retrieval-gate/retrieval-gate/internal/trend"
)

func TestSelection(t *testing.T) {
	nan := math.NaN()
	gates := []trend.Gate{
		{Group: "overall", Measure: "", Threshold: nan},                   // integrity: no measure
		{Group: "overall", Measure: "retrieval_hit_at_k", Threshold: nan}, // left off
		{Group: "overall", Measure: "retrieval_recall_at_k", Threshold: 0.8},
		{Group: "locale:de", Measure: "retrieval_recall_at_k", Threshold: 0.7},
		{Group: "overall", Measure: "retrieval_recall_at_k", Threshold: 0.05}, // a second gate on it: once
		{Group: "", Measure: "retrieval_ndcg_at_k", Threshold: 0.5},           // no group
	}
	gated := []trend.Measure{{Group: "overall", Key: "retrieval_recall_at_k"}, {Group: "locale:de", Key: "retrieval_recall_at_k"}}
	assert.Equal(t, gated, trend.Gated(gates))
	assert.Equal(t, gated, trend.CheckMeasures(gates))
	assert.Equal(t, gated, trend.CompareMeasures(gates, "a", "", nil, "ndcg_at_k"))

	all := trend.CheckMeasures(gates[:2])
	require.Len(t, all, len(metrics.CaseKeys))
	for i, m := range all {
		assert.Equal(t, trend.Measure{Group: outcome.GroupOverall, Key: metrics.CaseKeys[i]}, m)
	}

	for _, tc := range []struct {
		name, recommended, best string
		order                   []string
		want                    []trend.Measure
	}{
		{"recommended", "dense", "bm25", []string{"x"}, []trend.Measure{{Group: outcome.StrategyGroup("dense"), Key: "p"}}},
		{"no clear winner: the best", "", "bm25", []string{"x"}, []trend.Measure{{Group: outcome.StrategyGroup("bm25"), Key: "p"}}},
		{"one strategy", "", "", []string{"x", "y"}, []trend.Measure{{Group: outcome.StrategyGroup("x"), Key: "p"}}},
		{"nothing", "", "", nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, trend.CompareMeasures(nil, tc.recommended, tc.best, tc.order, "p"))
		})
	}
}

func TestObserveAndRead(t *testing.T) {
	lines := []string{}
	for _, r := range []struct{ branch, mean string }{{"main", "0.5"}, {"feature", "0.9"}, {"main", "0.75"}} {
		rec := history.Record{Command: "check", Branch: r.branch, Commit: "c", Time: "2026-01-01T00:00:00Z", Fingerprint: fp("kb"),
			Document: []byte(`{"overall":{"metrics":{"m":{"mean":` + r.mean + `,"n":4}}}}`)}
		b, err := history.Line(rec)
		require.NoError(t, err)
		lines = append(lines, string(b))
	}
	src := trend.ReaderSource(context.Background(), "h.jsonl", strings.NewReader(strings.Join(lines, "")))
	var seen []string
	src = trend.Observe(src, "main", func(rec history.Record, doc *fastjson.Value) error {
		seen = append(seen, doc.Get("overall", "metrics", "m").Get("mean").String())
		return nil
	})
	cur := fastjson.MustParse(`{"overall":{"metrics":{"m":{"mean":0.8,"n":4}}}}`)
	ms := []trend.Measure{{Group: "overall", Key: "m"}}

	tr, err := trend.Read(src, cur, fp("kb"), trend.Options{Command: "check", Branch: "main", Limit: 10, Measures: ms})
	require.NoError(t, err)
	require.NotNil(t, tr)
	assert.Equal(t, 2, tr.Runs)
	assert.Equal(t, []string{"0.5", "0.75"}, seen)

	// No trend asked for: the observers still see every record of the branch.
	seen = nil
	src2 := trend.Observe(trend.ReaderSource(context.Background(), "h.jsonl", strings.NewReader(strings.Join(lines, ""))), "main",
		func(history.Record, *fastjson.Value) error { seen = append(seen, "x"); return nil })
	tr, err = trend.Read(src2, cur, fp("kb"), trend.Options{Command: "check", Branch: "main", Limit: 0, Measures: ms})
	require.NoError(t, err)
	assert.Nil(t, tr)
	assert.Len(t, seen, 2)

	// A branch not created yet has no runs.
	tr, err = trend.Read(trend.ReaderSource(context.Background(), "h.jsonl", nil), cur, fp("kb"), trend.Options{Command: "check", Branch: "main", Limit: 3, Measures: ms})
	require.NoError(t, err)
	assert.Equal(t, 0, tr.Runs)
}

package comparereport

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/internal/compare"
	"github.com/retrieval-gate/retrieval-gate/internal/input/trecfile"
	"github.com/retrieval-gate/retrieval-gate/internal/metrics"
)

// rerankFixture compares "a" with its reranked "a+rerank" over 20 queries,
// each with one relevant document "r" (grade 3) and one other "x": each
// puts "r" first on the queries where its function says so, second on the
// others.
func rerankFixture(t *testing.T, base, reranked func(i int) bool) *compare.Result {
	t.Helper()
	var qr strings.Builder
	const queries = 20
	for i := range queries {
		fmt.Fprintf(&qr, "q%02d 0 r 3\nq%02d 0 x 0\n", i, i)
	}
	q, err := trecfile.ParseQrels(context.Background(), strings.NewReader(qr.String()), "q.trec")
	require.NoError(t, err)
	run := func(name string, first func(int) bool) compare.Input {
		var qs []trecfile.RunQuery
		for i := range queries {
			docs := []string{"x", "r"}
			if first(i) {
				docs = []string{"r", "x"}
			}
			qs = append(qs, trecfile.RunQuery{ID: fmt.Sprintf("q%02d", i), Docs: docs})
		}
		return compare.Input{Name: name, Run: &trecfile.Run{File: name, Format: "trec", K: 2, Queries: qs}}
	}
	res, err := compare.Compare(q, []compare.Input{run("a", base), run("a+rerank", reranked)},
		compare.Options{K: 2, Gain: metrics.GainExp, RelevantLevel: 2, Resamples: 200, Seed: 1})
	require.NoError(t, err)
	return res
}

// The reranker findings the reports put in words (the diagnosis, the
// dashboard's "Base vs reranker") are in the JSON too, under "rerankers":
// each reranked strategy against its base with the finding's test as
// computed (every number unrounded, with its n) and what it says (effect);
// they read back as written. No reranked run: an empty list.
func TestRerankersInJSON(t *testing.T) {
	always := func(int) bool { return true }
	never := func(int) bool { return false }
	tests := []struct {
		name           string
		base, reranked func(i int) bool
		effect         compare.Effect
	}{
		{"helps", never, always, compare.EffectHelps},
		{"hurts", always, never, compare.EffectHurts},
		{"no significant change", never, func(i int) bool { return i < 2 }, compare.EffectNone},
		{"identical rankings", never, never, compare.EffectNone},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := rerankFixture(t, tt.base, tt.reranked)
			var f *compare.Finding
			for i := range res.Findings {
				if res.Findings[i].Kind == compare.Reranker {
					require.Nil(t, f, "one reranker finding")
					f = &res.Findings[i]
				}
			}
			require.NotNil(t, f)
			require.Equal(t, tt.effect, f.Effect())
			var b bytes.Buffer
			require.NoError(t, New(res).WriteJSON(&b))
			var doc struct {
				Rerankers []map[string]any `json:"rerankers"`
			}
			require.NoError(t, json.Unmarshal(b.Bytes(), &doc))
			require.Len(t, doc.Rerankers, 1)
			got := doc.Rerankers[0]
			p := f.Test
			want := map[string]any{
				"reranked": "a+rerank", "base": "a", "effect": string(tt.effect), "metric": metrics.KeyDCG, "primary": true,
				"n": float64(p.N), "delta": p.Delta, "ci95": []any{p.CI.Lo, p.CI.Hi}, "ci95_method": p.CI.Method, "unreliable": p.CI.Unreliable,
				"p_value": p.PHolm, "p_value_unadjusted": p.P, "p_value_method": p.PMethod, "significant": p.Significant, "note": p.Note,
			}
			if p.Identical {
				want["identical"] = true
			}
			assert.Equal(t, want, got, "the finding's test, unrounded")
			assert.Equal(t, float64(20), got["n"])

			back, err := Read(bytes.NewReader(b.Bytes()))
			require.NoError(t, err)
			assert.False(t, back.RerankersUnknown)
			assert.Equal(t, New(res).Rerankers, back.Rerankers)
		})
	}
	t.Run("no reranked run", func(t *testing.T) {
		var b bytes.Buffer
		require.NoError(t, New(compareFixture(t, "ann", "hybrid")).WriteJSON(&b))
		var doc map[string]json.RawMessage
		require.NoError(t, json.Unmarshal(b.Bytes(), &doc))
		assert.JSONEq(t, "[]", string(doc["rerankers"]), "present and empty")
	})
}

// A document written before the JSON had "rerankers" reads back with them
// unknown (the dashboard then says the test is not in it); one whose
// reranker finding is not a report's strategy, or whose effect is not one of
// compare.Effects, is refused at its line.
func TestRerankersReadBack(t *testing.T) {
	var b bytes.Buffer
	require.NoError(t, New(rerankFixture(t, func(int) bool { return false }, func(int) bool { return true })).WriteJSON(&b))
	js := b.String()
	require.Equal(t, 1, strings.Count(js, `"effect": "helps"`), "the reranker finding in the JSON")

	var m map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(b.Bytes(), &m))
	delete(m, "rerankers")
	old, err := json.Marshal(m)
	require.NoError(t, err)
	d, err := Read(bytes.NewReader(old))
	require.NoError(t, err)
	assert.True(t, d.RerankersUnknown)
	assert.Empty(t, d.Rerankers)

	for _, tc := range []struct{ from, to, want string }{
		{`"effect": "helps"`, `"effect": "better"`, `rerankers[0].effect`},
		{`"reranked": "a+rerank"`, `"reranked": "b+rerank"`, `rerankers[0].reranked is "b+rerank", not a strategy of the report`},
	} {
		bad := strings.Replace(js, tc.from, tc.to, 1)
		line := 1 + strings.Count(bad[:strings.Index(bad, tc.to)], "\n")
		_, err := Read(strings.NewReader(bad))
		require.Error(t, err, tc.to)
		assert.Contains(t, err.Error(), fmt.Sprintf("%d: ", line), tc.to)
		assert.Contains(t, err.Error(), tc.want, tc.to)
	}
}

package comparereport

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/internal/compare"
)

// The hybrid findings the diagnosis puts in words (a hybrid against a dense
// and against a full-text strategy) are in the JSON too, under "hybrids":
// each with the finding's test as computed (unrounded, with its n), the
// other strategy's kind and what the test says (effect); they read back as
// written. No hybrid run: an empty list.
func TestHybridsInJSON(t *testing.T) {
	res := compareFixture(t, "ann", "hybrid", "bm25")
	var fs []compare.Finding
	for _, f := range res.Findings {
		if f.Kind == compare.HybridVsDense || f.Kind == compare.HybridVsLexical {
			fs = append(fs, f)
		}
	}
	require.Len(t, fs, 2, "hybrid against ann, and against bm25")
	var b bytes.Buffer
	require.NoError(t, New(res).WriteJSON(&b))
	var doc struct {
		Hybrids []map[string]any `json:"hybrids"`
	}
	require.NoError(t, json.Unmarshal(b.Bytes(), &doc))
	require.Len(t, doc.Hybrids, len(fs))
	for i, f := range fs {
		p := f.Test
		kind := map[compare.FindingKind]string{compare.HybridVsDense: "dense", compare.HybridVsLexical: "lexical"}[f.Kind]
		want := map[string]any{
			"hybrid": f.A, "other": f.B, "other_kind": kind, "effect": string(f.Effect()), "metric": p.Metric, "primary": true,
			"n": float64(p.N), "delta": p.Delta, "ci95": []any{p.CI.Lo, p.CI.Hi}, "ci95_method": p.CI.Method, "unreliable": p.CI.Unreliable,
			"p_value": p.PHolm, "p_value_unadjusted": p.P, "p_value_method": p.PMethod, "significant": p.Significant, "note": p.Note,
		}
		if p.Identical {
			want["identical"] = true
		}
		assert.Equal(t, want, doc.Hybrids[i], "finding %d, unrounded", i)
	}
	back, err := Read(bytes.NewReader(b.Bytes()))
	require.NoError(t, err)
	assert.Equal(t, New(res).Hybrids, back.Hybrids)

	var none bytes.Buffer
	require.NoError(t, New(compareFixture(t, "ann", "bm25")).WriteJSON(&none))
	var m map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(none.Bytes(), &m))
	assert.JSONEq(t, "[]", string(m["hybrids"]), "present and empty")
}

// A document written before the JSON had "hybrids" reads back with none;
// one whose hybrid finding names a strategy the report does not have, or
// whose other_kind or effect is not one it writes, is refused at its line.
func TestHybridsReadBack(t *testing.T) {
	var b bytes.Buffer
	require.NoError(t, New(compareFixture(t, "ann", "hybrid")).WriteJSON(&b))
	js := b.String()
	require.Equal(t, 1, strings.Count(js, `"other_kind": "dense"`), "the hybrid finding in the JSON")

	var m map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(b.Bytes(), &m))
	delete(m, "hybrids")
	old, err := json.Marshal(m)
	require.NoError(t, err)
	d, err := Read(bytes.NewReader(old))
	require.NoError(t, err)
	assert.NotNil(t, d.Hybrids)
	assert.Empty(t, d.Hybrids)

	for _, tc := range []struct{ from, to, want string }{
		{`"other_kind": "dense"`, `"other_kind": "ann"`, `hybrids[0].other_kind`},
		{`"hybrid": "hybrid"`, `"hybrid": "fusion"`, `hybrids[0].hybrid is "fusion", not a strategy of the report`},
		{`"other": "ann"`, `"other": "bm25"`, `hybrids[0].other is "bm25", not a strategy of the report`},
	} {
		bad := strings.Replace(js, tc.from, tc.to, 1)
		require.NotEqual(t, js, bad, tc.from)
		line := 1 + strings.Count(bad[:strings.Index(bad, tc.to)], "\n")
		_, err := Read(strings.NewReader(bad))
		require.Error(t, err, tc.to)
		assert.Contains(t, err.Error(), fmt.Sprintf("%d: ", line), tc.to)
		assert.Contains(t, err.Error(), tc.want, tc.to)
	}
}

package gate

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/internal/input/casefile"
	"github.com/retrieval-gate/retrieval-gate/internal/input/kbfile"
	"github.com/retrieval-gate/retrieval-gate/internal/metrics"
)

// TestScoreRanked: ScoreRanked scores as ScoreInto does and appends the whole
// deduplicated ranked list, whose first k are the top k scored (and kept for a
// missed case), also for a case without gold (the baseline's rank-biased
// overlap compares its top k); nothing for precomputed scores.
func TestScoreRanked(t *testing.T) {
	s := &Scorer{KB: kb, K: 2}
	for _, tt := range []struct {
		name string
		c    casefile.Case
		want []string
	}{
		{"missed, duplicates and beyond k", casefile.Case{ID: "x", Gold: []string{"g"}, Retrieved: rs("a", "a", "b", "c", "g")}, []string{"a", "b", "c", "g"}},
		{"hit", casefile.Case{ID: "x", Gold: []string{"g"}, Retrieved: rs("g", "c")}, []string{"g", "c"}},
		{"no gold", casefile.Case{ID: "x", Retrieved: rs("a", "a", "b")}, []string{"a", "b"}},
		{"precomputed", casefile.Case{ID: "x", Gold: []string{"g"}, Scores: map[string]float64{"retrieval_hit_at_k": 1}}, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var want, got CaseResult
			require.NoError(t, s.ScoreInto(&tt.c, &want))
			prefix := []string{"keep"}
			ranked, err := s.ScoreRanked(&tt.c, &got, prefix)
			require.NoError(t, err)
			assert.Equal(t, want, got)
			assert.Equal(t, append([]string{"keep"}, tt.want...), ranked)
			if got.Missed() {
				assert.Equal(t, tt.want[:s.K], got.TopK)
			}
		})
	}
}

// A *kbfile.KB is called directly (not through CardSet):
// the results and ranked lists are those of the same KB behind the CardSet
// interface, on random cases with repeated, unknown, long (past the 15 bytes
// of a short key) and chunk-only identities (the direct KB's keys deduplicate
// them, kbfile.KB.Keys; the interface's strings).
func TestScoreDirectKBAsCardSet(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "kb.jsonl")
	var kbLines []byte
	cards := cardSet{}
	for i := range 40 {
		id := fmt.Sprintf("c%d", i)
		if i%4 == 0 {
			id = fmt.Sprintf("a-card-with-a-long-id-%d", i)
		}
		cards[id] = true
		kbLines = fmt.Appendf(kbLines, "{\"id\": %q, \"title\": \"t\", \"text\": \"x\"}\n", id)
	}
	require.NoError(t, os.WriteFile(path, kbLines, 0o644))
	real, err := kbfile.Load(t.Context(), path)
	require.NoError(t, err)
	rng := metrics.NewRand(5)
	id := func() string {
		switch i := rng.IntN(60); {
		case i >= 40:
			return fmt.Sprintf("unknown-%d", i%3)
		case i%4 == 0:
			return fmt.Sprintf("a-card-with-a-long-id-%d", i)
		default:
			return fmt.Sprintf("c%d", i)
		}
	}
	for _, k := range []int{1, 6, 41} {
		keyed, plain := &Scorer{KB: real, K: k}, &Scorer{KB: cards, K: k}
		for trial := range 300 {
			c := casefile.Case{File: "f", Line: trial + 1, ID: "x", Gold: []string{id()}}
			switch trial % 7 {
			case 1:
				c.Relevant = []string{id(), "", id()}
			case 2:
				c.Gold = append(c.Gold, "", id(), c.Gold[0])
			case 3:
				c.Scores = map[string]float64{metrics.KeyHit: 0}
			}
			n := rng.IntN(14)
			if trial%30 == 0 {
				n = 40 // past the scorer's scratch arrays
			}
			for range n {
				e := casefile.Retrieved{ID: id() + "#c1"}
				if rng.IntN(5) > 0 {
					e.ParentID = id()
				}
				c.Retrieved = append(c.Retrieved, e)
			}
			var want, got CaseResult
			wantRanked, err := plain.ScoreRanked(&c, &want, nil)
			require.NoError(t, err)
			gotRanked, err := keyed.ScoreRanked(&c, &got, nil)
			require.NoError(t, err)
			require.Equal(t, want, got, "trial %d", trial)
			require.Equal(t, wantRanked, gotRanked, "trial %d", trial)
			require.NoError(t, keyed.ScoreInto(&c, &got))
			require.Equal(t, want, got, "trial %d", trial)
			// The identities keyed by the reader (casefile.MapOptions.Keyer):
			// the same results.
			c.Keyer, c.RetrievedKeys = real, make([]uint64, len(c.Retrieved))
			ids := make([]string, len(c.Retrieved))
			for i, e := range c.Retrieved {
				ids[i] = e.Identity()
			}
			real.Keys(ids, c.RetrievedKeys)
			gotRanked, err = keyed.ScoreRanked(&c, &got, nil)
			require.NoError(t, err)
			require.Equal(t, want, got, "trial %d, keyed by the reader", trial)
			require.Equal(t, wantRanked, gotRanked, "trial %d, keyed by the reader", trial)
		}
	}
}

// The scorer of a *kbfile.KB takes a case's retrieved keys from the case
// (Case.RetrievedKeys, keyed once per Parquet dictionary entry) when they
// are that KB's, one an entry; it keys the identities itself otherwise.
func TestScoreCaseKeys(t *testing.T) {
	path := filepath.Join(t.TempDir(), "kb.jsonl")
	require.NoError(t, os.WriteFile(path, []byte(`{"id": "a", "title": "t", "text": "x"}
{"id": "b", "title": "t", "text": "x"}
{"id": "g", "title": "t", "text": "x"}
`), 0o644))
	kb1, err := kbfile.Load(t.Context(), path)
	require.NoError(t, err)
	kb2, err := kbfile.Load(t.Context(), path)
	require.NoError(t, err)
	s := &Scorer{KB: kb1, K: 2}
	for _, tt := range []struct {
		name    string
		keyer   casefile.Keyer
		keys    []uint64
		unknown int
	}{
		{"the KB's keys, every id unknown by them", kb1, []uint64{0, 0}, 2},
		{"another KB's", kb2, []uint64{0, 0}, 0},
		{"not one an entry", kb1, []uint64{0}, 0},
		{"no keyer", nil, []uint64{0, 0}, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := casefile.Case{File: "f", Line: 1, ID: "x", Gold: []string{"g"}, Retrieved: rs("a", "b"), Keyer: tt.keyer, RetrievedKeys: tt.keys}
			var r CaseResult
			require.NoError(t, s.ScoreInto(&c, &r))
			assert.Equal(t, tt.unknown, r.UnknownRetrieved)
		})
	}
}

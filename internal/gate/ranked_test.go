package gate

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/internal/input/casefile"
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

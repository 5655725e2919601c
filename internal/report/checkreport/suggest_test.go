package checkreport

import (
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/internal/floor"
	"github.com/retrieval-gate/retrieval-gate/internal/metrics"
	"github.com/retrieval-gate/retrieval-gate/internal/outcome"
)

func TestSuggestedFloorsText(t *testing.T) {
	ok := floor.Suggestion{Spec: floor.Spec{Measure: metrics.KeyHit, Group: "type:multi hop", Value: 0.7}, N: 120, Mean: 0.8, CI95: [2]float64{0.71, 0.86},
		Method: metrics.MethodWilson, Detectable: 0.1, Why: outcome.Clause{Code: outcome.Detects, N: 120, Detectable: 0.1, Distance: 0.1, Power: 0.8, Alpha: 0.05}}
	overall := ok
	overall.Spec = floor.Spec{Measure: metrics.KeyNDCG, Group: outcome.GroupOverall, Value: 0.05}
	refused := floor.Suggestion{Spec: floor.Spec{Measure: metrics.KeyNDCG, Group: "locale:pt-BR"}, Refused: floor.RefusedUnreliable, N: 28, Mean: 0.64,
		CI95: [2]float64{0.48, 0.77}, Method: metrics.MethodBCa, Detectable: math.NaN(), Indicative: true}
	var b strings.Builder
	require.NoError(t, SuggestedFloorsText(&b, []floor.Suggestion{overall, ok, refused}, 3))
	s := b.String()
	for _, want := range []string{
		"suggested floors from this run (k = 3): " + SuggestRule + "\n",
		"overall         nDCG@3   120  0.800 [0.710, 0.860]  0.05   n = 120 detects differences of ±0.100",
		"type:multi hop  hit@3    120  0.800 [0.710, 0.860]  0.70   n = 120 detects",
		"locale:pt-BR    nDCG@3   28   0.640 [0.480, 0.770]  —      no floor: n = 28 is too few for the BCa interval's coverage (at least 30); per-locale: indicative only\n",
		"as flags:\n  --floor retrieval_ndcg_at_k=0.05 \\\n  --floor 'retrieval_hit_at_k@type:multi hop=0.70'\n",
		"as the floors Action input:\n  floors: |\n    retrieval_ndcg_at_k=0.05\n    retrieval_hit_at_k@type:multi hop=0.70\n",
	} {
		assert.Contains(t, s, want)
	}
	b.Reset()
	require.NoError(t, SuggestedFloorsText(&b, []floor.Suggestion{refused}, 3))
	assert.Contains(t, b.String(), "\nno group supports a floor.\n")
	assert.NotContains(t, b.String(), "--floor")
	assert.Equal(t, `'a b'\''c'`, shellWord("a b'c"))
	assert.Equal(t, "x@locale:pt-BR=0.50", shellWord("x@locale:pt-BR=0.50"))
}

// A group whose interval is over the clusters of cases in families is
// refused for its clusters, not its cases: 40 cases in 4 clusters read "n =
// 40 is too few for the Wilson interval's coverage (at least 30)", and a
// cluster-t interval was held to 30 where it needs 100 clusters.
func TestSuggestedFloorsRefusedOverClusters(t *testing.T) {
	for _, c := range []struct {
		method   string
		clusters int64
		want     string
	}{
		{metrics.MethodBoundedWilson, 4, "no floor: n = 40 in 4 clusters: too few clusters for the Wilson interval's coverage (at least 30)"},
		{metrics.MethodClusterHull, 12, "no floor: n = 40 in 12 clusters: too few clusters for the cluster-t-hull interval's coverage (at least 100)"},
		{metrics.MethodClusterT, 12, "no floor: n = 40 in 12 clusters: too few clusters for the cluster-t interval's coverage (at least 100)"},
	} {
		s := floor.Suggestion{Spec: floor.Spec{Measure: metrics.KeyHit, Group: outcome.GroupOverall}, Refused: floor.RefusedUnreliable, N: 40, Mean: 1,
			CI95: [2]float64{0.4, 1}, Method: c.method, Clusters: c.clusters, Detectable: math.NaN()}
		assert.Equal(t, c.want, refusedText(s))
	}
}

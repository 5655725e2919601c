package check

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/internal/baseline"
	"github.com/retrieval-gate/retrieval-gate/internal/metrics"
)

// Issue 34 item 2: the regressed demo's cases given a cluster key (their
// first gold card: the paraphrases of one card are a family) are compared
// with the baseline over the clusters: each paired entry names the clusters
// and a cluster-level test; without the key, over cases.
func TestRunBaselineClusters(t *testing.T) {
	raw, err := os.ReadFile(demo + "/regressed.jsonl")
	require.NoError(t, err)
	var b strings.Builder
	families := map[string]bool{}
	for line := range strings.SplitSeq(strings.TrimSpace(string(raw)), "\n") {
		var c struct {
			Gold []string `json:"must_cite_one_of"`
		}
		require.NoError(t, json.Unmarshal([]byte(line), &c))
		if len(c.Gold) == 0 {
			b.WriteString(line + "\n")
			continue
		}
		key, _ := json.Marshal(c.Gold[0])
		families[c.Gold[0]] = true
		b.WriteString(`{"cluster": ` + string(key) + `, ` + strings.TrimPrefix(line, "{") + "\n")
	}
	run := func(cases string) *baseline.Comparison {
		in := demoIn(t, demo+"/regressed.jsonl")
		in.Cases = strings.NewReader(cases)
		base, err := os.Open(demo + "/baseline.jsonl.gz")
		require.NoError(t, err)
		defer base.Close()
		in.Baseline, in.BaselineName = base, "baseline.jsonl.gz"
		res, err := Run(context.Background(), in, Options{K: 5, ReferenceLocale: "en"})
		require.NoError(t, err)
		require.NotNil(t, res.Comparison)
		return res.Comparison
	}
	hitOf := func(g baseline.GroupStats) baseline.Stat {
		for _, s := range g.Stats {
			if s.Key == metrics.KeyHit {
				return s
			}
		}
		t.Fatal("no hit")
		return baseline.Stat{}
	}
	plain := hitOf(run(string(raw)).Overall)
	assert.Equal(t, baseline.TestMcNemar, plain.Test)
	assert.Zero(t, plain.Clusters)

	cmp := run(b.String())
	hit := hitOf(cmp.Overall)
	assert.Equal(t, plain.N, hit.N)
	assert.Equal(t, plain.Delta, hit.Delta)
	assert.Positive(t, hit.Clusters)
	assert.Less(t, hit.Clusters, hit.N, "families share clusters")
	assert.LessOrEqual(t, hit.Clusters, int64(len(families)))
	assert.Contains(t, []string{baseline.TestClusterSignFlipExact, baseline.TestClusterSignFlipMC}, hit.Test)
	assert.Equal(t, metrics.MethodClusterT, hit.CI95Method)
	for _, g := range cmp.ByType {
		for _, s := range g.Stats {
			assert.Positive(t, s.Clusters, "%s %s", g.Name, s.Key)
		}
	}
	t.Logf("hit@5 overall: over cases %s p %.4g %v; over %d clusters %s p %.4g %v (%s)", plain.Test, plain.P, plain.CI95, hit.Clusters, hit.Test, hit.P, hit.CI95, hit.CI95Method)
}

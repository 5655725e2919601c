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
	"github.com/retrieval-gate/retrieval-gate/internal/gate"
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

// Issue 34 item 2, check's plain groups and churn: with the cases' cluster
// key, each group's mean interval and the churn's intervals are computed
// over the clusters (cluster-t, widened to the interval over the cases
// where that reaches further) and name the clusters; the interval only
// widens. Without the key, nothing changes.
func TestRunGroupsClusters(t *testing.T) {
	raw, err := os.ReadFile(demo + "/regressed.jsonl")
	require.NoError(t, err)
	var b strings.Builder
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
		b.WriteString(`{"cluster": ` + string(key) + `, ` + strings.TrimPrefix(line, "{") + "\n")
	}
	run := func(cases string) *Result {
		in := demoIn(t, demo+"/regressed.jsonl")
		in.Cases = strings.NewReader(cases)
		base, err := os.Open(demo + "/baseline.jsonl.gz")
		require.NoError(t, err)
		defer base.Close()
		in.Baseline, in.BaselineName = base, "baseline.jsonl.gz"
		res, err := Run(context.Background(), in, Options{K: 5, ReferenceLocale: "en"})
		require.NoError(t, err)
		require.NotNil(t, res.Comparison)
		return res
	}
	plain, clus := run(string(raw)), run(b.String())
	groups := func(r *Result) []gate.Group {
		return append(append([]gate.Group{r.Gate.Overall}, r.Gate.ByType...), r.Gate.ByLocale...)
	}
	pg, cg := groups(plain), groups(clus)
	require.Len(t, cg, len(pg))
	widened := 0
	for i := range pg {
		for j, m := range pg[i].Metrics {
			c := cg[i].Metrics[j]
			require.Equal(t, m.Key, c.Key)
			assert.Zero(t, m.Clusters, "%s %s", pg[i].Name, m.Key)
			assert.NotContains(t, []string{metrics.MethodClusterT, metrics.MethodClusterHull}, m.Method)
			assert.Equal(t, m.Mean, c.Mean)
			assert.Equal(t, m.N, c.N)
			require.Positive(t, c.Clusters, "%s %s", cg[i].Name, c.Key)
			assert.LessOrEqual(t, c.Clusters, c.N)
			assert.Contains(t, []string{metrics.MethodClusterT, metrics.MethodClusterHull, metrics.MethodBoundedWilson}, c.Method, "%s %s", cg[i].Name, c.Key)
			assert.LessOrEqual(t, c.CI95[0], m.CI95[0], "%s %s", cg[i].Name, c.Key)
			assert.GreaterOrEqual(t, c.CI95[1], m.CI95[1], "%s %s", cg[i].Name, c.Key)
			if c.CI95[1]-c.CI95[0] > m.CI95[1]-m.CI95[0]+1e-9 {
				widened++
			}
		}
	}
	assert.Positive(t, widened, "some interval widens with clusters")
	hit, _ := clus.Gate.Overall.Metric(metrics.KeyHit)
	assert.Less(t, hit.Clusters, hit.N, "families share clusters")

	pc, cc := plain.Comparison.Churn.Overall, clus.Comparison.Churn.Overall
	assert.Zero(t, pc.Clusters)
	assert.Equal(t, metrics.MethodWilson, pc.Share.CI95.Method)
	require.Positive(t, cc.Clusters)
	assert.Less(t, cc.Clusters, cc.N)
	assert.Equal(t, pc.Share.Mean, cc.Share.Mean)
	for _, e := range [][2]baseline.Estimate{{pc.Share, cc.Share}, {pc.RBO, cc.RBO}, {pc.Left, cc.Left}} {
		assert.LessOrEqual(t, e[1].CI95.Lo, e[0].CI95.Lo)
		assert.GreaterOrEqual(t, e[1].CI95.Hi, e[0].CI95.Hi)
	}
	// Every changed: over cases Wilson's [0.970, 1]; over 62 clusters the
	// bounded Wilson of a sample without variation, [0.927, 1].
	assert.Equal(t, metrics.MethodBoundedWilson, cc.Share.CI95.Method)
	assert.Less(t, cc.Share.CI95.Lo, pc.Share.CI95.Lo-0.03)
	t.Logf("hit@5 overall: %v %s → %v %s over %d clusters; churn share %v → %v over %d clusters", plain.Gate.Overall.Metrics[0].CI95, plain.Gate.Overall.Metrics[0].Method, hit.CI95, hit.Method, hit.Clusters, pc.Share.CI95.CI(), cc.Share.CI95.CI(), cc.Clusters)
}

package checkreport

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/internal/baseline"
	"github.com/retrieval-gate/retrieval-gate/internal/format"
	"github.com/retrieval-gate/retrieval-gate/internal/gate"
	"github.com/retrieval-gate/retrieval-gate/internal/metrics"
)

// comparison joins a small hostile baseline with a run through the real Comparer.
func comparison(t *testing.T) *baseline.Comparison {
	t.Helper()
	hdr := `{"schema":"retrieval-gate/baseline@1","k":5,"kb_fingerprint":"sha256:old","commit":"0123456789abcdef","created_at":"2026-01-01T00:00:00Z","cases":6}` + "\n"
	lines := []string{
		`{"id":"en-1","locale":"en","type":"golden","query":"reset | password","gold":["en-reset"],"scores":{"retrieval_hit_at_k":1,"retrieval_ndcg_at_k":1,"retrieval_recall_at_k":1},"rank":1,"top":["en-reset","en-2fa"]}`,
		`{"id":"es|1","locale":"es-419","type":"golden","query":"¿Cómo?","gold":["es-reset"],"scores":{"retrieval_hit_at_k":0,"retrieval_ndcg_at_k":0,"retrieval_recall_at_k":0},"rank":0,"top":["es-x"]}`,
		`{"id":"en-2","locale":"en","type":"golden","query":"relabelled","gold":["en-old"],"scores":{"retrieval_hit_at_k":1,"retrieval_ndcg_at_k":1,"retrieval_recall_at_k":1},"rank":1,"top":["en-old"]}`,
		`{"id":"gone","locale":"en","type":"golden","gold":["en-reset"],"scores":{"retrieval_hit_at_k":1,"retrieval_ndcg_at_k":1,"retrieval_recall_at_k":1},"rank":1,"top":["en-reset"]}`,
		`{"id":"ng-1","locale":"en","type":"golden","query":"no gold | here","scores":{},"top":["en-reset","en-2fa","en-billing"]}`,
		`{"id":"ng-2","locale":"en","type":"golden","query":"unchanged","scores":{},"top":["en-reset","en-2fa"]}`,
	}
	b, err := baseline.Load(context.Background(), strings.NewReader(hdr+strings.Join(lines, "\n")+"\n"), "base.jsonl.gz", t.TempDir())
	require.NoError(t, err)
	t.Cleanup(func() { b.Close() })
	c := baseline.NewComparer(b, baseline.Options{K: 3, KBFingerprint: "sha256:new", Resamples: 500,
		Now: time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC), MaxDrop: map[string]baseline.Tolerance{metrics.KeyHit: {Set: true, Value: 0.1}}})
	add := func(id, locale, query string, gold []string, hit float64, top []string, rank int) {
		r := gate.CaseResult{File: "cases.jsonl", Line: 3, ID: id, Locale: locale, Type: "golden", Scored: true}
		for i := range r.Scores {
			r.Scores[i], r.Has[i] = hit, true
		}
		cur := baseline.Current{IDHash: baseline.IDHash(id), GoldHash: baseline.GoldHash(gold), Ranked: true, Rank: rank, Top: top}
		c.Add(&r, &baseline.CaseLine{ID: id, Query: query, Gold: gold}, &cur)
	}
	add("en-1", "en", "reset | password <b>", []string{"en-reset"}, 0, []string{"en-2fa", "*x*"}, 0)
	add("es|1", "es-419", "¿Cómo?", []string{"es-reset"}, 1, []string{"es-reset"}, 1)
	add("en-2", "en", "relabelled", []string{"en-new"}, 1, []string{"en-new"}, 1)
	add("new-1", "en", "new", []string{"en-reset"}, 1, []string{"en-reset"}, 1)
	noGold := func(id, query string, top []string) {
		r := gate.CaseResult{File: "cases.jsonl", Line: 4, ID: id, Locale: "en", Type: "golden"}
		cur := baseline.Current{IDHash: baseline.IDHash(id), HasTop: true, Top: top}
		c.Add(&r, &baseline.CaseLine{ID: id, Query: query}, &cur)
	}
	noGold("ng-1", "no gold | here", []string{"en-2fa", "*x*", "en-reset"})
	noGold("ng-2", "unchanged", []string{"en-reset", "en-2fa"})
	res, err := c.ResultContext(context.Background())
	require.NoError(t, err)
	return res
}

func TestBaselineMarkdownGolden(t *testing.T) {
	d := New(fixture(t, gate.Floor{}))
	d.SetBaseline(comparison(t))
	md := d.Markdown(MarkdownOptions{Marker: "<!-- retrieval-gate:default -->"})
	golden(t, "check_baseline.md.golden", []byte(md))
	assert.Contains(t, md, "### vs base")
	assert.Contains(t, md, "older than 7 days")
	assert.NotContains(t, md, "<b>")
	var txt, verbose bytes.Buffer
	require.NoError(t, d.Text(&txt))
	golden(t, "check_baseline.txt.golden", txt.Bytes())
	require.NoError(t, d.TextVerbose(&verbose))
	golden(t, "check_baseline.verbose.txt.golden", verbose.Bytes())
	assert.Contains(t, txt.String(), "newly missed: ", "which cases broke, without --verbose")
	assert.NotContains(t, txt.String(), "type golden n=", "the baseline's groups: --verbose")
	assert.Contains(t, verbose.String(), "type golden n=")
}

// TestBaselineTextSaysIntervalIs95 holds the terminal's paired rows to the
// honest-numbers rule: the bracket after each Δ is said to be its 95%
// interval, under the rows, with and without --verbose (the Markdown and the
// HTML say it in their headings and legends).
func TestBaselineTextSaysIntervalIs95(t *testing.T) {
	d := New(fixture(t, gate.Floor{}))
	d.SetBaseline(comparison(t))
	for _, verbose := range []bool{false, true} {
		var b bytes.Buffer
		if verbose {
			require.NoError(t, d.TextVerbose(&b))
		} else {
			require.NoError(t, d.Text(&b))
		}
		lines := strings.Split(b.String(), "\n")
		last := -1
		for i, l := range lines {
			if strings.Contains(l, " Δ ") && strings.Contains(l, " -> ") {
				last = i
			}
		}
		require.GreaterOrEqual(t, last, 0, "verbose %v: no paired row", verbose)
		legend := -1
		for i := last + 1; i < len(lines) && i <= last+3; i++ {
			if strings.Contains(lines[i], "[its 95% interval]") {
				legend = i
			}
		}
		assert.GreaterOrEqual(t, legend, 0, "verbose %v: the paired rows' legend (their brackets are 95%% intervals) follows them:\n%s", verbose, b.String())
	}
}

func TestBaselineJSONRoundTrip(t *testing.T) {
	d := New(fixture(t, gate.Floor{}))
	d.SetBaseline(comparison(t))
	var b bytes.Buffer
	require.NoError(t, d.WriteJSON(&b))
	back, err := Read(&b)
	require.NoError(t, err)
	require.NotNil(t, back.Baseline)
	var again bytes.Buffer
	require.NoError(t, back.WriteJSON(&again))
	var first bytes.Buffer
	require.NoError(t, d.WriteJSON(&first))
	assert.Equal(t, first.String(), again.String()) // NaN-safe: compare the JSON
	assert.Equal(t, int64(2), back.Baseline.Cases.Paired)
	assert.Equal(t, "en-1", back.Baseline.Flips.NewlyMissed[0].CaseID)
	// Each paired entry names its interval's method, as compare's paired entries do:
	// 2 pairs of a bounded measure are below metrics.DifferenceReliableMinN.
	assert.Contains(t, first.String(), `"ci95_method": "hall-t-betting"`)
	for _, g := range []PairedGroup{back.Baseline.Overall, back.Baseline.ByLocale["en"]} {
		require.NotEmpty(t, g.Metrics)
		for key, p := range g.Metrics {
			want := metrics.MethodHallTBetting
			switch {
			case key == metrics.KeyHit: // a 0/1 measure: inverted from its McNemar test
				want = metrics.MethodMcNemarInverted
			case g.N == 1: // one pair: the betting interval alone (the rule of three needs two)
			}
			assert.Equal(t, want, p.CI95Method, key)
		}
	}
	// The rank-biased overlap, unrounded: per listed case and per flip.
	o := back.Baseline.Overlap
	require.NotNil(t, o)
	assert.Equal(t, OverlapMeasure, o.Measure)
	assert.Equal(t, 0.9, o.Persistence.V())
	assert.Equal(t, 3, o.Depth)
	require.Len(t, o.MostChangedWithoutGold, 1)
	assert.Equal(t, metrics.RBOExtEnded([]string{"en-reset", "en-2fa", "en-billing"}, []string{"en-2fa", "*x*", "en-reset"}, 0.9), o.MostChangedWithoutGold[0].RBO.V())
	assert.Equal(t, metrics.RBOExtEnded([]string{"en-reset", "en-2fa"}, []string{"en-2fa", "*x*"}, 0.9), back.Baseline.Flips.NewlyMissed[0].RBO.V())
	assert.Equal(t, int64(2), o.WithoutGold.N)
	assert.Equal(t, int64(1), o.WithoutGold.Changed)
	// By hand: X = 0, 1, 2 at depths 1–3: (0.1/0.9)(0.81/2 + 0.729·2/3) + (2/3)(0.729) = 0.585.
	assert.InDelta(t, 0.585, o.MostChangedWithoutGold[0].RBO.V(), 1e-12)
	// The churn's figures by locale are qualified as the locale deltas and
	// the paired comparison by locale are.
	require.NotNil(t, back.Baseline.Churn)
	require.NotEmpty(t, back.Baseline.Churn.ByLocale)
	assert.Equal(t, IndicativeOnly, back.Baseline.Churn.ByLocaleNote)
	assert.Contains(t, first.String(), `"by_locale_note": "indicative only, not significance-tested",`)
	// Each group's mean RBO carries the churn's interval, unrounded, with its method.
	res := comparison(t)
	for _, g := range []struct {
		got  OverlapGroup
		want baseline.OverlapGroup
	}{{o.Paired, res.Overlap.Paired}, {o.WithoutGold, res.Overlap.WithoutGold}} {
		require.NotNil(t, g.got.CI95)
		assert.Equal(t, g.want.RBO.Mean, g.got.Mean.V())
		assert.Equal(t, g.want.RBO.CI95.Lo, g.got.CI95[0].V())
		assert.Equal(t, g.want.RBO.CI95.Hi, g.got.CI95[1].V())
		assert.Equal(t, metrics.MethodHallTBetting, g.got.CI95Method)
		assert.False(t, g.got.Unreliable)
		assert.Zero(t, g.got.Clusters)
	}
	assert.Contains(t, first.String(), `"without_gold": {
        "changed": 1,
        "ci95": [
          `)

	// A report written before the overlap's interval reads back without one,
	// is written back without one, and shows the mean alone.
	var doc map[string]any
	require.NoError(t, json.Unmarshal(first.Bytes(), &doc))
	for _, g := range []string{"paired", "without_gold"} {
		og := doc["baseline"].(map[string]any)["overlap"].(map[string]any)[g].(map[string]any)
		require.Contains(t, og, "ci95")
		for _, k := range []string{"ci95", "ci95_method", "clusters", "unreliable"} {
			delete(og, k)
		}
	}
	oldJSON, err := json.Marshal(doc)
	require.NoError(t, err)
	old := string(oldJSON)
	require.NotEqual(t, first.String(), old)
	back, err = Read(strings.NewReader(old))
	require.NoError(t, err)
	require.NotNil(t, back.Baseline.Overlap)
	assert.Nil(t, back.Baseline.Overlap.WithoutGold.CI95)
	assert.Equal(t, "0.792", back.Baseline.Overlap.WithoutGold.MeanText())
	assert.Empty(t, back.Baseline.Overlap.OverlapMethods())
	var older bytes.Buffer
	require.NoError(t, back.WriteJSON(&older))
	var olderDoc map[string]any
	require.NoError(t, json.Unmarshal(older.Bytes(), &olderDoc))
	for _, g := range []string{"paired", "without_gold"} {
		og := olderDoc["baseline"].(map[string]any)["overlap"].(map[string]any)[g].(map[string]any)
		assert.Contains(t, og, "mean", g)
		assert.NotContains(t, og, "ci95", g)
		assert.NotContains(t, og, "clusters", g)
		assert.Empty(t, og["ci95_method"], g) // no interval, no method (an empty string)
		assert.Contains(t, og, "ci95_method", g)
		assert.Equal(t, false, og["unreliable"], g)
	}
	// n = 0: the mean and its interval null, no method; the reports say "—".
	zero := OverlapGroup{Mean: format.Float(math.NaN()), CI95: &[2]format.Float{format.Float(math.NaN()), format.Float(math.NaN())}}
	assert.Equal(t, format.Missing, zero.MeanText())

	// A document without the key (every aggregates@1 report so far) reads as before.
	plain := New(fixture(t, gate.Floor{}))
	b.Reset()
	require.NoError(t, plain.WriteJSON(&b))
	assert.NotContains(t, b.String(), `"baseline"`)
	back, err = Read(&b)
	require.NoError(t, err)
	assert.Nil(t, back.Baseline)

	// Unavailable: status and reason, nothing else to show.
	u := New(fixture(t, gate.Floor{}))
	u.SetBaseline(baseline.Unavailable(baseline.Unavailability{Code: "no_artifact", Detail: "no artifact <x>"}, baseline.Options{}))
	assert.Contains(t, u.Markdown(MarkdownOptions{}), "No baseline: no artifact")
	assert.Equal(t, BaselineUnavailable, u.Baseline.Status)
}

// Issue 34 item 2: a comparison over clusters says so, with the overall n
// cases in m clusters; without clusters nothing is said.
func TestClustersNote(t *testing.T) {
	bl := &Baseline{Overall: PairedGroup{Metrics: map[string]Paired{"retrieval_hit_at_k": {N: 150, Clusters: 38}}}}
	assert.Equal(t, "cases in families: 150 paired cases in 38 clusters overall (a case without a cluster key is one); the paired intervals and tests are computed over the clusters (cluster-t, sign-flip of the clusters' sums), and each group over its own clusters", bl.ClustersNote())
	assert.Empty(t, (&Baseline{Overall: PairedGroup{Metrics: map[string]Paired{"retrieval_hit_at_k": {N: 150}}}}).ClustersNote())
}

// A paired interval over the clusters of cases in families is marked by its
// number of clusters, not by the measure's range: its footnote says so in
// every format. It read "the interval of a paired difference of a measure
// without a known range …" beside hit@5 over 1 cluster of 8 cases, a measure
// whose range is known. Over cases the footnote is as before.
func TestPairedUnreliableNoteOverClusters(t *testing.T) {
	for _, clusters := range []int64{0, 3} {
		d := New(fixture(t, gate.Floor{}))
		d.SetBaseline(comparison(t))
		for k, p := range d.Baseline.Overall.Metrics {
			p.Unreliable, p.Clusters = true, clusters
			d.Baseline.Overall.Metrics[k] = p
		}
		want, other := PairedUnreliableNote, PairedClustersUnreliableNote
		if clusters > 0 {
			want, other = other, want
		}
		var txt, verbose bytes.Buffer
		require.NoError(t, d.Text(&txt))
		require.NoError(t, d.TextVerbose(&verbose))
		md := d.Markdown(MarkdownOptions{})
		for name, s := range map[string]string{"text": txt.String(), "verbose": verbose.String(), "markdown": md} {
			assert.Contains(t, s, want, "%s, %d clusters", name, clusters)
			assert.NotContains(t, s, other, "%s, %d clusters", name, clusters)
		}
	}
}

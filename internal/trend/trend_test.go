package trend_test

import (
	"context"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/valyala/fastjson"

	"github.com/retrieval-gate/retrieval-gate/internal/history"
	"github.com/retrieval-gate/retrieval-gate/internal/metrics"
	"github.com/retrieval-gate/retrieval-gate/internal/trend"
)

func TestLevels(t *testing.T) {
	for _, tc := range []struct {
		vals []float64
		want []int
	}{
		{nil, []int{}},
		{[]float64{0.5}, []int{3}},
		{[]float64{0.9, 0.9, 0.9}, []int{3, 3, 3}},
		{[]float64{0, 1}, []int{0, 7}},
		{[]float64{0, 0.5, 1}, []int{0, 4, 7}}, // 3.5 rounds up
		{[]float64{1, 0.75, 0.5}, []int{7, 4, 0}},
		{[]float64{0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9}, []int{0, 1, 2, 3, 4, 5, 6, 7}},
	} {
		assert.Equal(t, tc.want, trend.Levels(tc.vals), "%v", tc.vals)
	}
	assert.Equal(t, "▁▂▃▄▅▆▇█", sparkline([]float64{0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9}))
	assert.Equal(t, "▄▄", sparkline([]float64{3, 3}))
}

func fp(kb string) history.Fingerprint {
	f, _ := history.NewFingerprint(context.Background(), nil, map[string]string{"kb": kb})
	return f
}

var hit = trend.Measure{Group: "overall", Key: "retrieval_hit_at_k"}
var es = trend.Measure{Group: "locale:es", Key: "retrieval_hit_at_k"}

func TestBuild(t *testing.T) {
	runs := []trend.Run{
		{Commit: "a", Fingerprint: fp("1"), Values: map[trend.Measure]trend.Value{hit: {Mean: 0.5, N: 100}, es: {Mean: 0.8, N: 10}}},
		{Commit: "b", Fingerprint: fp("1"), Values: map[trend.Measure]trend.Value{hit: {Mean: 0.75, N: 100}}}, // no es group
		{Commit: "c", Fingerprint: fp("2"), Values: map[trend.Measure]trend.Value{hit: {Mean: 1, N: 101}, es: {Mean: 0.9, N: 10}}},
	}
	cur := trend.Run{Fingerprint: fp("2"), Values: map[trend.Measure]trend.Value{hit: {Mean: 0.5, N: 101}}}
	tr := trend.Build(runs, cur, []trend.Measure{hit, es})
	require.Equal(t, 3, tr.Runs)
	require.Len(t, tr.Rows, 2)

	h := tr.Rows[0]
	require.Len(t, h.Points, 3)
	assert.Equal(t, []string{"a", "b", "c"}, []string{h.Points[0].Commit, h.Points[1].Commit, h.Points[2].Commit})
	assert.Nil(t, h.Points[1].Changed)
	assert.Equal(t, []string{"--kb"}, h.Points[2].Changed)
	// 0.5, 0.75, 1 and this run's 0.5 on one scale [0.5, 1].
	assert.Equal(t, "▁▅¦█", h.Spark)
	assert.Equal(t, "▁", h.CurrentGlyph)
	assert.False(t, h.CurrentChanged)
	assert.Equal(t, trend.Value{Mean: 0.5, N: 101}, h.Current.Value)

	e := tr.Rows[1]
	require.Len(t, e.Points, 2, "the run without the measure is skipped")
	assert.Equal(t, "a", e.Points[0].Commit)
	assert.Equal(t, []string{"--kb"}, e.Points[1].Changed, "a change between the row's consecutive points")
	assert.Equal(t, "▁¦█", e.Spark)
	assert.Nil(t, e.Current, "this run lacks the measure")
	assert.Empty(t, e.CurrentGlyph)

	require.Len(t, tr.Changes, 1)
	assert.Equal(t, trend.Change{Commit: "c", What: []string{"--kb"}}, tr.Changes[0])

	// This run's inputs differ from the newest base run's.
	cur.Fingerprint = fp("3")
	tr = trend.Build(runs, cur, []trend.Measure{hit})
	assert.True(t, tr.Rows[0].CurrentChanged)
	assert.Equal(t, trend.Change{Current: true, What: []string{"--kb"}}, tr.Changes[len(tr.Changes)-1])

	// No base run: this run alone, nothing marked.
	tr = trend.Build(nil, cur, []trend.Measure{hit})
	assert.Equal(t, 0, tr.Runs)
	assert.Empty(t, tr.Rows[0].Spark)
	assert.Equal(t, "▄", tr.Rows[0].CurrentGlyph)
	assert.False(t, tr.Rows[0].CurrentChanged)
	assert.Empty(t, tr.Changes)
}

// fpk is the fingerprint of a run on knowledge base kb at cutoff k.
func fpk(kb string, k int) history.Fingerprint {
	f, _ := history.NewFingerprint(context.Background(), nil, map[string]string{"kb": kb, "k": fmt.Sprint(k)})
	return f
}

// A row never joins runs at different cutoffs: it keeps the base runs at this
// run's k, scales its sparkline over them alone, and counts the others by k;
// a run whose document states no k is at none of them.
func TestBuildAtTwoK(t *testing.T) {
	at := func(commit string, k int, mean float64) trend.Run {
		return trend.Run{Commit: commit, Fingerprint: fpk("1", k), K: k, Values: map[trend.Measure]trend.Value{hit: {Mean: mean, N: 100, K: k}}}
	}
	runs := []trend.Run{at("a", 5, 0.7), at("b", 5, 0.75), at("c", 10, 0.9), at("d", 0, 0.95), at("e", 10, 0.92), at("f", 5, 0.8)}
	cur := at("", 5, 0.78)
	tr := trend.Build(runs, cur, []trend.Measure{hit})
	assert.Equal(t, 6, tr.Runs, "the base runs found")
	r := tr.Rows[0]
	assert.Equal(t, 5, r.K)
	require.Len(t, r.Points, 3)
	assert.Equal(t, []string{"a", "b", "f"}, []string{r.Points[0].Commit, r.Points[1].Commit, r.Points[2].Commit})
	for _, p := range r.Points {
		assert.Equal(t, 5, p.K)
	}
	assert.Equal(t, []trend.LeftOut{{K: 0, Runs: 1}, {K: 10, Runs: 2}}, r.LeftOut)
	// f's inputs are b's: the runs at k = 10 between them are not in the row.
	assert.Nil(t, r.Points[2].Changed)
	// 0.7, 0.75, 0.8 and this run's 0.78 on one scale [0.7, 0.8]: the 0.9s at k = 10 are not on it.
	assert.Equal(t, "▁▅█", r.Spark)
	assert.Equal(t, "▇", r.CurrentGlyph)
	assert.False(t, r.CurrentChanged)
	// The input changes listed are those between the runs the row joins: not
	// the --k of the runs left out.
	assert.Empty(t, tr.Changes)
	f := runs[5]
	f.Fingerprint = fpk("2", 5)
	tr = trend.Build([]trend.Run{runs[0], runs[1], runs[2], runs[3], runs[4], f}, cur, []trend.Measure{hit})
	assert.Equal(t, []trend.Change{{Commit: "f", What: []string{"--kb"}}, {Current: true, What: []string{"--kb"}}}, tr.Changes)
	assert.Equal(t, "▁▅¦█", tr.Rows[0].Spark)
	assert.True(t, tr.Rows[0].CurrentChanged)

	// This run at k = 10: the row is the k = 10 runs.
	cur = at("", 10, 0.91)
	r = trend.Build(runs, cur, []trend.Measure{hit}).Rows[0]
	assert.Equal(t, 10, r.K)
	require.Len(t, r.Points, 2)
	assert.Equal(t, "c", r.Points[0].Commit)
	assert.Equal(t, "e", r.Points[1].Commit)
	assert.Equal(t, []trend.LeftOut{{K: 0, Runs: 1}, {K: 5, Runs: 3}}, r.LeftOut)
	assert.False(t, r.CurrentChanged, "this run's inputs are e's")

	// At a k no base run had: nothing to join, every run counted.
	cur = at("", 3, 0.5)
	r = trend.Build(runs, cur, []trend.Measure{hit}).Rows[0]
	assert.Empty(t, r.Points)
	assert.Empty(t, r.Spark)
	assert.Equal(t, "▄", r.CurrentGlyph)
	assert.Equal(t, []trend.LeftOut{{K: 0, Runs: 1}, {K: 5, Runs: 3}, {K: 10, Runs: 2}}, r.LeftOut)

	// Collect reads each run's k from its document, this run's too.
	var lines []string
	for i, k := range []int{5, 2, 5} {
		f := fpk("1", k)
		lines = append(lines, fmt.Sprintf(`{"schema":%q,"command":"check","branch":"main","commit":"m%d","time":"2026-01-02T00:00:00Z","fingerprint":{"digest":%q,"inputs":{},"params":{"kb":"1","k":"%d"}},"document":{"k":%d,"overall":{"metrics":{"retrieval_hit_at_k":{"mean":0.%d,"n":7}}}}}`,
			history.Schema, i, f.Digest, k, k, 5+i))
	}
	src := trend.Source(func(fn func(history.Record, *fastjson.Value) error) error {
		return history.ScanReader(context.Background(), "h.jsonl", strings.NewReader(strings.Join(lines, "\n")), fn)
	})
	doc := fastjson.MustParse(`{"k":5,"overall":{"metrics":{"retrieval_hit_at_k":{"mean":0.9,"n":7}}}}`)
	tr, err := trend.Collect(src, doc, fpk("1", 5), trend.Options{Command: "check", Branch: "main", Limit: 10, Measures: []trend.Measure{hit}})
	require.NoError(t, err)
	r = tr.Rows[0]
	assert.Equal(t, 5, r.K)
	require.Len(t, r.Points, 2)
	assert.Equal(t, "m0", r.Points[0].Commit)
	assert.Equal(t, "m2", r.Points[1].Commit)
	assert.Equal(t, []trend.LeftOut{{K: 2, Runs: 1}}, r.LeftOut)
}

func record(command, branch, commit string, hitMean float64, kb string) string {
	f := fp(kb)
	return fmt.Sprintf(`{"schema":%q,"command":%q,"branch":%q,"commit":%q,"time":"2026-01-02T00:00:00Z","fingerprint":{"digest":%q,"inputs":{},"params":{"kb":%q}},"document":{"overall":{"metrics":{"retrieval_hit_at_k":{"mean":%v,"n":7}}}}}`,
		history.Schema, command, branch, commit, f.Digest, kb, hitMean)
}

func TestCollect(t *testing.T) {
	var lines []string
	for i := range 25 {
		lines = append(lines, record("check", "main", fmt.Sprintf("m%d", i), float64(i)/100, "1"))
		lines = append(lines, record("check", "feature", fmt.Sprintf("f%d", i), 0.5, "1"))
		lines = append(lines, record("compare", "main", fmt.Sprintf("c%d", i), 0.5, "1"))
	}
	lines = append(lines, `{"schema":"`+history.Schema+`","command":"check","branch":"main","commit":"null","time":"2026-01-02T00:00:00Z","document":{"overall":{"metrics":{"retrieval_hit_at_k":{"mean":null,"n":0}}}}}`)
	src := trend.Source(func(fn func(history.Record, *fastjson.Value) error) error {
		return history.ScanReader(context.Background(), "h.jsonl", strings.NewReader(strings.Join(lines, "\n")), fn)
	})
	cur := fastjson.MustParse(`{"overall":{"metrics":{"retrieval_hit_at_k":{"mean":0.5,"n":8}}}}`)
	tr, err := trend.Collect(src, cur, fp("1"), trend.Options{Command: "check", Branch: "main", Limit: 10, Measures: []trend.Measure{hit}})
	require.NoError(t, err)
	assert.Equal(t, 10, tr.Runs, "the newest 10 runs of check on main")
	assert.Equal(t, "main", tr.Branch)
	row := tr.Rows[0]
	require.Len(t, row.Points, 9, "the newest run's mean is null: skipped")
	assert.Equal(t, "m16", row.Points[0].Commit)
	assert.Equal(t, "m24", row.Points[8].Commit)
	assert.Equal(t, trend.Value{Mean: 0.24, N: 7}, row.Points[8].Value)
	assert.Equal(t, trend.Value{Mean: 0.5, N: 8}, row.Current.Value)
	require.Len(t, tr.Changes, 2, "the record without a fingerprint differs from its neighbours")

	tr, err = trend.Collect(src, cur, fp("1"), trend.Options{Command: "check", Branch: "none", Limit: 10, Measures: []trend.Measure{hit}})
	require.NoError(t, err)
	assert.Equal(t, 0, tr.Runs)

	tr, err = trend.Collect(trend.FileSource(context.Background(), t.TempDir()+"/missing.jsonl"), cur, fp("1"), trend.Options{Command: "check", Branch: "main", Limit: 10, Measures: []trend.Measure{hit}})
	require.NoError(t, err, "a history that does not exist yet has no runs")
	assert.Equal(t, 0, tr.Runs)

	bad := trend.Source(func(fn func(history.Record, *fastjson.Value) error) error {
		return history.ScanReader(context.Background(), "h.jsonl", strings.NewReader("{}\n"), fn)
	})
	_, err = trend.Collect(bad, cur, fp("1"), trend.Options{Command: "check", Branch: "main", Limit: 10, Measures: []trend.Measure{hit}})
	require.ErrorContains(t, err, "h.jsonl:1")
}

func TestExtract(t *testing.T) {
	doc := fastjson.MustParse(`{"overall":{"metrics":{"a":{"mean":0.5,"n":3}}},"by_type":{"x.y":{"metrics":{"a":{"mean":1,"n":2}}}},
		"by_locale":{"es":{"metrics":{"a":{"mean":0.25,"n":1}}}},"strategies":{"bm25":{"metrics":{"dcg_at_k":{"mean":2.5,"n":9}}}},
		"max_dcg_at_k":31.80479,"k":7}`)
	ms := []trend.Measure{{"overall", "a"}, {"type:x.y", "a"}, {"locale:es", "a"}, {"strategy:bm25", "dcg_at_k"},
		{"overall", "b"}, {"type:z", "a"}, {"strategy:dense", "dcg_at_k"}, {"other", "a"}}
	got := trend.Extract(doc, ms)
	assert.Equal(t, map[trend.Measure]trend.Value{
		{"overall", "a"}: {Mean: 0.5, N: 3, K: 7}, {"type:x.y", "a"}: {Mean: 1, N: 2, K: 7}, {"locale:es", "a"}: {Mean: 0.25, N: 1, K: 7},
		{"strategy:bm25", "dcg_at_k"}: {Mean: 2.5, N: 9, Max: 31.80479, K: 7},
	}, got)
}

// DCG@k's maximum in a run: the document's max_dcg_at_k; for a document
// written before it, derived from k, gain and the relevance scale; unknown
// (NaN) when the document has no relevance scale.
func TestMaxDCG(t *testing.T) {
	for _, tc := range []struct {
		name, doc string
		want      float64
	}{
		{"recorded", `{"max_dcg_at_k": 20.5, "k": 10, "gain": "exp", "relevance_scale": [0, 3]}`, 20.5},
		{"derived, exp", `{"k": 10, "gain": "exp", "relevance_scale": [0, 3]}`, metrics.MaxDCG(10, 3, metrics.GainExp)},
		{"derived, linear, level 4", `{"k": 5, "gain": "linear", "relevance_scale": [-2, 4]}`, metrics.MaxDCG(5, 4, metrics.GainLinear)},
		{"binary scale: level 1", `{"k": 3, "gain": "exp", "relevance_scale": [0, 1]}`, metrics.MaxDCG(3, 1, metrics.GainExp)},
		{"no scale: unknown", `{"k": 10, "gain": "exp"}`, math.NaN()},
		{"no k: unknown", `{"gain": "exp", "relevance_scale": [0, 3]}`, math.NaN()},
		{"unknown gain", `{"k": 10, "gain": "log", "relevance_scale": [0, 3]}`, math.NaN()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := trend.MaxDCG(fastjson.MustParse(tc.doc))
			if math.IsNaN(tc.want) {
				assert.True(t, math.IsNaN(got), "%v", got)
				return
			}
			assert.InDelta(t, tc.want, got, 1e-12)
		})
	}
	assert.InDelta(t, 31.805, metrics.MaxDCG(10, 3, metrics.GainExp), 5e-4)
}

// sparkline is the glyphs of trend.Levels(vals), as the renderers draw them.
func sparkline(vals []float64) string {
	var b strings.Builder
	for _, l := range trend.Levels(vals) {
		b.WriteRune(trend.Glyphs[l])
	}
	return b.String()
}

// Values near ±MaxFloat64 (a hostile history) overflow hi - lo; the levels stay
// in range and ordered (this panicked with an index of -2^63).
func TestLevelsExtremes(t *testing.T) {
	assert.Equal(t, []int{7, 0, 4}, trend.Levels([]float64{1.7e308, -1.7e308, 0}))
	assert.Equal(t, []int{7, 0}, trend.Levels([]float64{math.MaxFloat64, -math.MaxFloat64}))
	assert.Equal(t, []int{3, 3}, trend.Levels([]float64{math.MaxFloat64, math.MaxFloat64}))
	assert.Equal(t, []int{0, 7}, trend.Levels([]float64{1e300, math.Nextafter(1e300, math.Inf(1))}))
}

package comparereport

import (
	"math"

	"github.com/retrieval-gate/retrieval-gate/internal/compare"
	"github.com/retrieval-gate/retrieval-gate/internal/input/jsonpos"
	"github.com/retrieval-gate/retrieval-gate/internal/input/trecfile"
	"github.com/retrieval-gate/retrieval-gate/internal/metrics"
	"github.com/retrieval-gate/retrieval-gate/internal/report/readback"
)

// validate checks a compare document read back as strictly as compare writes
// it (readback): 1 ≤ k ≤ compare.MaxK, the gain, the relevance scale and level, the gates and
// a verdict that is theirs, the query counts, every strategy's n and its
// measures' means and intervals within their scales, every paired test and
// the recommendation's test between strategies of the document with a
// probability for p, the recommendation a strategy (or compare.NoClearWinner),
// the statistics' alpha in (0, 1), the best and worst by every measure lists
// of query ids of a measure, the query texts strings, each reranker finding
// between strategies of the document with one of compare.Effects; fields a
// document written before they existed lacks (max_dcg_at_k, scenarios, the
// buckets, judged@k, queries_by_measure, query_texts, rerankers) are optional,
// and the human-qrels part is checked by the rules of every document.
func validate(c *readback.Checker, root *jsonpos.Value) {
	c.Command = "compare"
	d := c.Root(root, Schema)
	// ids checks that the array at key of o is query ids (strings).
	ids := func(o readback.Obj, key string) {
		for i, e := range o.Array(key) {
			if e.Kind != jsonpos.String {
				c.Failf(e.Line, "%s is not a string: a query id", readback.Index(readback.Path(o.Path, key), i))
			}
		}
	}
	d.IntAtMost("k", 1, compare.MaxK, "the largest k compare takes") // a larger one took seconds a million (the ideal DCG's loop)
	d.String("gain")
	if v := root.Get("relevance_scale"); v == nil || v.Kind != jsonpos.Array || len(v.Elems) != 2 {
		line := root.Line
		if v != nil {
			line = v.Line
		}
		c.Failf(line, "relevance_scale is not [lowest, highest]: a compare report always has it")
	} else {
		d.Interval("relevance_scale", -128, 127, false)
	}
	d.IntAtMost("relevant_level", 1, trecfile.MaxRelevance, "the highest relevance level compare reads")
	d.Gates()
	q := d.Object("queries")
	judged := q.Int("judged", 0)
	withRel := q.IntAtMost("with_relevant", 0, judged, "queries.judged")
	q.IntAtMost("at_relevant_level", 0, judged, "queries.judged")
	names := map[string]bool{}
	d.Members("strategies", func(name string, s readback.Obj) {
		names[name] = true
		n := s.IntAtMost("n", 0, withRel, "queries.with_relevant")
		s.Int("missing_from_run", 0)
		s.Members("metrics", func(key string, m readback.Obj) {
			lo, hi := readback.Scale(key)
			m.Float("mean", lo, hi)
			m.Interval("ci95", lo, hi, false)
			m.IntAtMost("n", 0, n, "the strategy's n")
			m.String("ci95_method")
			m.Bool("unreliable")
		})
		s.OptObject("relevance_distribution")
		if v := s.V.Get("relevance_distribution_n"); v != nil && v.Kind != jsonpos.Null {
			s.Int("relevance_distribution_n", 0)
		}
		if s.V.Get("queries_by_measure") != nil { // issue 32 item 4
			s.Members("queries_by_measure", func(key string, r readback.Obj) {
				if metrics.QueryIndex(key) < 0 {
					c.Failf(r.V.Line, "%s: %s is not a measure of compare", r.Path, jsonpos.QuoteKey([]byte(key)))
				}
				for _, list := range []string{"best", "worst"} {
					ids(r, list)
				}
			})
		}
	})
	if t := d.OptObject("query_texts"); t.Has() { // compare --queries (issue 32 item 4)
		for _, m := range t.V.Members {
			if m.Value.Kind != jsonpos.String {
				c.Failf(m.Value.Line, "%s is not a string: a query's text", readback.Path(t.Path, m.Key))
			}
		}
	}
	if c.Err() == nil && len(names) == 0 {
		c.Failf(root.Get("strategies").Line, "strategies is empty: a compare report has at least one")
	}
	strategy := func(o readback.Obj, key string) {
		if name := o.String(key); c.Err() == nil && !names[name] {
			c.Failf(o.V.Get(key).Line, "%s is %s, not a strategy of the report", readback.Path(o.Path, key), jsonpos.QuoteKey([]byte(name)))
		}
	}
	test := func(t readback.Obj) {
		key := t.String("metric")
		lo, hi := readback.Scale(key)
		t.Float("delta", lo-hi, hi-lo)
		t.Interval("ci95", lo-hi, hi-lo, false)
		t.IntAtMost("n", 0, judged, "queries.judged")
		t.String("ci95_method")
		t.Float("p_value", 0, 1)
		t.Float("p_value_unadjusted", 0, 1)
		t.String("p_value_method")
		t.Bool("primary")
		t.Bool("significant")
		t.Bool("unreliable")
		t.String("note")
		if t.V.Get("clusters") != nil { // compare --clusters (issue 34)
			t.IntAtMost("clusters", 1, t.Int("n", 0), "the test's n")
		}
	}
	d.Objects("paired", func(_ int, p readback.Obj) {
		strategy(p, "strategy")
		strategy(p, "baseline")
		test(p)
	})
	effects := make([]string, len(compare.Effects)) // of the reranker and hybrid findings
	for i, e := range compare.Effects {
		effects[i] = string(e)
	}
	if root.Get("rerankers") != nil { // written before the reranker findings were in the JSON: absent
		d.Objects("rerankers", func(_ int, r readback.Obj) {
			strategy(r, "reranked")
			strategy(r, "base")
			r.String("effect", effects...)
			test(r)
		})
	}
	if root.Get("hybrids") != nil { // written before the hybrid findings were in the JSON: absent
		d.Objects("hybrids", func(_ int, h readback.Obj) {
			strategy(h, "hybrid")
			strategy(h, "other")
			h.String("other_kind", HybridOtherDense, HybridOtherLexical)
			h.String("effect", effects...)
			test(h)
		})
	}
	if rt := d.OptObject("recommendation_test"); rt.Has() {
		strategy(rt, "best")
		strategy(rt, "runner_up")
		test(rt)
	}
	if rec := d.String("recommended"); c.Err() == nil && rec != compare.NoClearWinner && !names[rec] {
		c.Failf(root.Get("recommended").Line, "recommended is %s, neither a strategy of the report nor %q", jsonpos.QuoteKey([]byte(rec)), compare.NoClearWinner)
	}
	if p := d.OptString("primary"); p != "" && metrics.QueryIndex(p) < 0 {
		c.Failf(root.Get("primary").Line, "primary is %s, not a measure of compare", jsonpos.QuoteKey([]byte(p)))
	}
	st := d.Object("statistics")
	if a := st.Float("alpha", 0, 1); a == 0 || a == 1 {
		c.Failf(st.V.Get("alpha").Line, "statistics.alpha is %v, not a level in (0, 1)", a)
	}
	st.Int("resamples", 0)
	st.Int("seed", 0)
	if cl := st.OptObject("clusters"); cl.Has() { // compare --clusters (issue 34)
		cl.String("file")
		nq := cl.IntAtMost("queries", 0, withRel, "queries.with_relevant")
		cl.IntAtMost("clusters", 0, nq, "statistics.clusters.queries")
		cl.IntAtMost("listed", 0, nq, "statistics.clusters.queries")
	}
	d.OptFloat("max_dcg_at_k", 0, math.Inf(1))
	d.OptFloat("judged_at_k_threshold", 0, 1)
	if h := d.OptObject("human"); h.Has() {
		if st := h.OptObject("strata"); st.Has() { // stratified by locale (issue 34 item 3)
			st.String("by", "locale")
			st.String("file")
			st.Int("min_labelled", 1)
			st.Bool("pooled")
			st.Int("shared_n_human", 0)
			st.Int("strata", 0)
			st.Objects("locales", func(_ int, l readback.Obj) {
				l.String("locale")
				l.IntAtMost("n_human", 0, l.Int("n", 0), "the locale's n")
				l.Float("weight", 0, 1)
				l.Int("stratum", 0)
			})
		}
	}
	c.Sweep(root)
}

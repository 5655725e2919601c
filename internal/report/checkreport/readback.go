package checkreport

import (
	"github.com/retrieval-gate/retrieval-gate/internal/input/jsonpos"
	"github.com/retrieval-gate/retrieval-gate/internal/report/readback"
)

// validate checks a check document read back as strictly as check writes it
// (readback): k ≥ 1, the gates and a verdict that is theirs, every group's
// counts (n, without_gold, with_relevant_ids ≤ n) and every measure's mean,
// interval and n within the measure's scale and the group's n, the case counts
// (with and without gold adding up to the total), the integrity evidence, the
// locale deltas within the measure's range; the baseline part by the rules of
// every document (readback.Sweep).
func validate(c *readback.Checker, root *jsonpos.Value) {
	c.Command = "check"
	d := c.Root(root, Schema)
	d.Int("k", 1)
	d.Gates()
	cs := d.Object("cases")
	total := cs.Int("total", 0)
	withGold := cs.IntAtMost("with_gold", 0, total, "cases.total")
	withoutGold := cs.IntAtMost("without_gold", 0, total, "cases.total")
	if c.Err() == nil && withGold+withoutGold != total {
		c.Failf(cs.V.Line, "cases: with_gold %d and without_gold %d do not add up to total %d", withGold, withoutGold, total)
	}
	cs.IntAtMost("precomputed", 0, total, "cases.total")
	cs.Objects("unknown_keys", func(_ int, u readback.Obj) {
		u.String("key")
		u.IntAtMost("cases", 0, total, "cases.total")
	})
	group := func(g readback.Obj, max int64, maxWhat string) int64 {
		n := g.IntAtMost("n", 0, max, maxWhat)
		g.Int("without_gold", 0)
		g.IntAtMost("with_relevant_ids", 0, n, "the group's n")
		g.Members("metrics", func(key string, s readback.Obj) {
			lo, hi := readback.Scale(key)
			s.Float("mean", lo, hi)
			s.Interval("ci95", lo, hi, false)
			s.IntAtMost("n", 0, n, "the group's n")
			s.String("ci95_method")
			s.Bool("unreliable")
			if s.V.Get("clusters") != nil { // cases in families (issue 34)
				s.IntAtMost("clusters", 1, s.Int("n", 0), "the measure's n")
			}
		})
		return n
	}
	overall := group(d.Object("overall"), withGold, "cases.with_gold")
	for _, key := range []string{"by_type", "by_locale"} {
		d.Members(key, func(_ string, g readback.Obj) { group(g, overall, "overall.n") })
	}
	d.Members("locale_deltas", func(_ string, ld readback.Obj) {
		for _, m := range ld.V.Members {
			lo, hi := readback.Scale(m.Key)
			ld.Float(m.Key, lo-hi, hi-lo)
		}
	})
	d.String("reference_locale")
	d.String("locale_deltas_note")
	om := d.Object("groups_omitted")
	for _, key := range []string{"type", "locale"} {
		o := om.Object(key)
		o.Int("groups", 0)
		o.IntAtMost("cases", 0, total, "cases.total")
	}
	in := d.Object("integrity")
	in.Bool("ok")
	in.Int("kb_cards", 0)
	problems := 0
	in.Objects("problems", func(_ int, p readback.Obj) {
		problems++
		p.String("case_id")
		p.String("file")
		p.String("gold_id")
		p.Int("line", 0)
		p.String("reason")
	})
	in.Int("problems_total", int64(problems))
	un := in.Object("unknown_retrieved")
	un.IntAtMost("cases", 0, total, "cases.total")
	un.Int("entries", 0)
	for i, e := range un.Array("examples") {
		if e.Kind != jsonpos.String {
			c.Failf(e.Line, "%s is %s, not a string", readback.Index(readback.Path(un.Path, "examples"), i), e.TypeName())
		}
	}
	d.OptObject("baseline")
	c.Sweep(root)

}

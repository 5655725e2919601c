package calibratereport

import (
	"github.com/retrieval-gate/retrieval-gate/internal/input/jsonpos"
	"github.com/retrieval-gate/retrieval-gate/internal/report/readback"
)

// validate checks a calibrate document read back as strictly as calibrate
// writes it (readback): the gates and a verdict that is theirs, the bins
// (increasing, inside (0, 1)), min_kappa, the weighting, and each dimension's
// n, status, kappas within [-1, 1], agreement within [0, 1], interval (with
// its method and unreliable flag, when the document has them) and confusion
// matrix (one row and column per bin, counts); the lock's ok and
// changes; the other parts (panel, blind labels, carried-over dimensions, git
// anchoring) by the rules of every document.
func validate(c *readback.Checker, root *jsonpos.Value) {
	c.Command = "calibrate"
	d := c.Root(root, Schema)
	d.Gates()
	bins := d.Array("bins")
	prev := 0.0
	for i, b := range bins {
		p := readback.Index("bins", i)
		f, ok := b.Float64(c.Data)
		if b.Kind != jsonpos.Number || !ok || f <= prev || f >= 1 {
			c.Failf(b.Line, "%s is %s: the bins are increasing numbers inside (0, 1)", p, b.TypeName())
			break
		}
		prev = f
	}
	levels := len(bins) + 1
	d.Float("min_kappa", -1, 1)
	d.String("kappa_weighting")
	d.String("raters")
	d.Members("dimensions", func(_ string, dim readback.Obj) {
		dim.Int("n", 0)
		dim.String("status", readback.Statuses...)
		dim.Bool("gated")
		dim.Bool("carried_over")
		dim.String("construct")
		dim.OptFloat("kappa", -1, 1)
		dim.OptFloat("weighted_kappa", -1, 1)
		dim.OptFloat("agreement", 0, 1)
		dim.Interval("ci95", -1, 1, true)
		intervalFlags(dim)
		if m := dim.OptObject("invalid_measurement"); m.Has() {
			intervalFlags(m)
		}
		rows := dim.Array("confusion")
		if len(rows) > 0 && len(rows) != levels && c.Err() == nil {
			c.Failf(dim.V.Get("confusion").Line, "%s has %d rows, not one per bin (%d)", readback.Path(dim.Path, "confusion"), len(rows), levels)
		}
		for i, row := range rows {
			p := readback.Index(readback.Path(dim.Path, "confusion"), i)
			if row.Kind != jsonpos.Array || len(row.Elems) != levels {
				c.Failf(row.Line, "%s is not a row of %d counts", p, levels)
				break
			}
			for j, e := range row.Elems {
				f, ok := e.Float64(c.Data)
				if e.Kind != jsonpos.Number || !ok || f < 0 || f != float64(int64(f)) {
					c.Failf(e.Line, "%s is %s, not a count", readback.Index(p, j), e.TypeName())
					break
				}
			}
		}
		for _, key := range []string{"notes", "violations"} {
			dim.Array(key)
		}
	})
	lock := d.Object("lock")
	lock.Bool("ok")
	lock.Array("changed")
	lock.OptString("base")
	c.Sweep(root)
}

// intervalFlags checks the ci95_method (a string, or null) and unreliable (true
// or false) of an object with a ci95. Each may be absent: a document written
// before calibrate wrote them reads as before, its intervals unmarked.
func intervalFlags(o readback.Obj) {
	if o.V.Get("ci95_method") != nil {
		o.OptString("ci95_method")
	}
	if o.V.Get("unreliable") != nil {
		o.Bool("unreliable")
	}
}

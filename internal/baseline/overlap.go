package baseline

import (
	"math"
	"strings"
	"sync/atomic"

	"github.com/retrieval-gate/retrieval-gate/internal/gate"
	"github.com/retrieval-gate/retrieval-gate/internal/metrics"
)

// Change without gold (issue 22 item 4): every case whose top k both runs
// carry gets the rank-biased overlap of the two, RBO_EXT at persistence
// metrics.RBOPersistence over the deduplicated top k cut to the smaller of the
// two runs' k. A top k shorter than k is a ranking that ended (the retriever
// returned fewer), not a prefix to extrapolate: metrics.RBOExtEnded, so a head
// that keeps 2 of the base's 5 is a change, not RBO 1. The cases paired for scoring and the cases
// without gold in both runs (not scored, so today they show no change at all)
// are summarised apart, each group's mean RBO with its 95% interval (the
// churn's method, rboTally: rbo.go), and the most changed cases without gold
// are listed.

// DefaultMaxMoved is how many of the most changed cases without gold are kept
// (the PR comment and the JSON list them all).
const DefaultMaxMoved = 10

// OverlapGroup summarises the rank-biased overlap of a set of cases.
type OverlapGroup struct {
	N int64 // cases with both top k known
	// RBO is the mean RBO over the N with its 95% interval (rboTally, the
	// churn's method; NaN, no method, when N is 0).
	RBO     Estimate
	Changed int64 // of the N, cases whose top k differ in any way (order, items, length)
	Unknown int64 // cases where a run's top k is not known (precomputed scores, an older baseline)
	// Clusters: the clusters the N cases fall into when some carry a
	// `cluster` key (a case without one is a cluster of its own); the
	// interval is then computed over them. 0 when no case carries one.
	Clusters int64
}

// Moved is a case without gold whose top k changed.
type Moved struct {
	ID, File, Locale, Type, Query string
	Line                          int
	Before, After                 []string // the baseline's and this run's top k
	RBO                           float64
}

// Overlap is the rank-biased overlap of the comparison.
type Overlap struct {
	P      float64 // persistence
	Depth  int     // the top k compared: the smaller k of the two runs
	Weight float64 // the share of RBO's weight on the first Depth ranks (metrics.RBOPrefixWeight)
	// Paired are the cases paired for the measures; WithoutGold the cases
	// without gold in both runs.
	Paired, WithoutGold OverlapGroup
	// MostChanged are the cases without gold with the lowest RBO whose top k
	// changed, lowest first, ties in file order (at most DefaultMaxMoved).
	MostChanged []Moved
}

// overlapAcc accumulates an OverlapGroup in file order.
type overlapAcc struct {
	changed, unknown int64
	rbo              rboTally
}

func (a *overlapAcc) add(cur *Current) {
	if !cur.HasRBO {
		a.unknown++
		return
	}
	a.rbo.add(cur.RBO, cur.Cluster)
	if !cur.SameTop {
		a.changed++
	}
}

func (a *overlapAcc) group() OverlapGroup {
	g := OverlapGroup{N: a.rbo.n(), Changed: a.changed, Unknown: a.unknown}
	g.RBO, g.Clusters = a.rbo.estimate()
	return g
}

type movedRef struct {
	rec  int
	cur  CaseLine
	file string
	rbo  float64
}

// movedList keeps the changed cases with the lowest RBO, lowest first, ties in
// file order, at most max: offered in file order (Add), looked at early by the
// workers (Prepare) through the cut.
type movedList struct {
	items []movedRef
	max   int
	// cut is the float64 bits of the RBO a case must be below to enter a full
	// list (2 while it is not full); it only falls, so the workers' Prepare
	// may read it late and still keep every case that could enter.
	cut atomic.Uint64
}

func (l *movedList) init(max int) {
	l.max = max
	l.cut.Store(math.Float64bits(2))
}

// may reports whether a changed case of RBO rbo may enter the list (read
// atomically: safe on a worker).
func (l *movedList) may(rbo float64) bool {
	return l.max > 0 && rbo < math.Float64frombits(l.cut.Load())
}

// offer adds the case to the list if its RBO is low enough (file order; an
// equal RBO earlier in the file keeps its place). depth cuts its top k.
func (l *movedList) offer(rec int, r *gate.CaseResult, line *CaseLine, cur *Current, depth int) {
	if !cur.HasRBO || cur.SameTop || l.max <= 0 {
		return
	}
	full := len(l.items) == l.max
	if full && cur.RBO >= l.items[len(l.items)-1].rbo {
		return
	}
	// Cloned: the case's strings may share a block of the case reader, which a
	// kept string would hold for the whole run.
	top := make([]string, 0, min(len(cur.Top), depth))
	for _, id := range cur.Top[:cap(top)] {
		top = append(top, strings.Clone(id))
	}
	m := movedRef{rec: rec, file: r.File, rbo: cur.RBO, cur: CaseLine{ID: strings.Clone(r.ID), Line: r.Line,
		Locale: strings.Clone(r.Locale), Type: strings.Clone(r.Type), Query: strings.Clone(line.Query), HasTop: true, Top: top}}
	i := len(l.items)
	for i > 0 && l.items[i-1].rbo > cur.RBO {
		i--
	}
	if full {
		l.items = l.items[:len(l.items)-1]
	}
	l.items = append(l.items, movedRef{})
	copy(l.items[i+1:], l.items[i:])
	l.items[i] = m
	if len(l.items) == l.max {
		l.cut.Store(math.Float64bits(l.items[len(l.items)-1].rbo))
	}
}

// result is the list with each case's baseline top k read back, cut to depth.
func (l *movedList) result(b *Baseline, depth int) ([]Moved, error) {
	var out []Moved
	for _, m := range l.items {
		d, err := b.detail(m.rec)
		if err != nil {
			return nil, err
		}
		out = append(out, Moved{ID: m.cur.ID, File: m.file, Line: m.cur.Line, Locale: m.cur.Locale,
			Type: m.cur.Type, Query: m.cur.Query, Before: d.Top[:min(len(d.Top), depth)], After: m.cur.Top, RBO: m.rbo})
	}
	return out, nil
}

// overlapState is the Comparer's part of the overlap.
type overlapState struct {
	depth               int
	paired, withoutGold overlapAcc
	moved               movedList // the cases without gold
}

func (o *overlapState) init(opt Options, h *Header) {
	o.depth = min(max(opt.K, 0), maxTopDepth)
	if h != nil && h.K > 0 {
		o.depth = min(o.depth, h.K)
	}
	o.paired.rbo, o.withoutGold.rbo = newRBOTally(), newRBOTally()
	o.moved.init(DefaultMaxMoved)
}

// setRBO computes cur's rank-biased overlap with rec's top k, once.
func (c *Comparer) setRBO(rec *record, cur *Current) {
	if cur.rboSet {
		return
	}
	cur.rboSet = true
	if !rec.hasTop || !(cur.Ranked || cur.HasTop) {
		return
	}
	d := c.ov.depth
	bt := c.b.top(rec)
	bt = bt[:min(len(bt), d)]
	var buf [32]uint64
	ct := buf[:0]
	for _, id := range cur.Top[:min(len(cur.Top), d)] {
		ct = append(ct, IDHash(id))
	}
	cur.RBO, cur.HasRBO = metrics.RBOExtEnded(bt, ct, metrics.RBOPersistence), true
	cur.SameTop = len(bt) == len(ct)
	for i := 0; cur.SameTop && i < len(bt); i++ {
		cur.SameTop = bt[i] == ct[i]
	}
	cur.Left = metrics.LeftTop(bt, ct)
	cur.SameSet = cur.Left == 0 && len(bt) == len(ct)
}

// mayMove reports whether a case without gold may enter the moved list (Prepare,
// on a worker: the list's cut is read atomically).
func (c *Comparer) mayMove(cur *Current) bool {
	return cur.HasRBO && !cur.SameTop && c.ov.moved.may(cur.RBO)
}

// addMoved offers a case without gold to the moved list (Add, file order).
func (c *Comparer) addMoved(rec int, r *gate.CaseResult, line *CaseLine, cur *Current) {
	c.ov.moved.offer(rec, r, line, cur, c.ov.depth)
}

// overlapResult finishes the overlap, reading the moved cases' baseline top k.
func (c *Comparer) overlapResult() (Overlap, error) {
	o := &c.ov
	out := Overlap{P: metrics.RBOPersistence, Depth: o.depth, Weight: metrics.RBOPrefixWeight(metrics.RBOPersistence, o.depth),
		Paired: o.paired.group(), WithoutGold: o.withoutGold.group()}
	var err error
	out.MostChanged, err = o.moved.result(c.b, o.depth)
	return out, err
}

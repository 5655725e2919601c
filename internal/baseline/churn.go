package baseline

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/retrieval-gate/retrieval-gate/internal/floor"
	"github.com/retrieval-gate/retrieval-gate/internal/gate"
	"github.com/retrieval-gate/retrieval-gate/internal/metrics"
	"github.com/retrieval-gate/retrieval-gate/internal/outcome"
)

// Churn gates (issue 35 item 1): what changed against the baseline without
// gold. Every case both runs hold (paired, without gold in both, or with its
// gold changed: the retrieval is compared, not the labels) whose top k both
// runs carry counts, grouped by this run's type and locale as the paired
// comparison is:
//
//   - its rank-biased overlap (overlap.go), whose mean over the group is
//     gated by --min-rbo [GROUP=]F;
//   - whether its top k changed as a set (an entry left, or the list's length
//     changed; the order alone does not count), whose share is gated by
//     --max-churn [GROUP=]F;
//   - how many entries of the baseline's top k left this run's
//     (metrics.LeftTop), reported as a mean.
//
// A gate compares the group's observed figure with its threshold, as a floor
// does (the cases are the ones the two runs answered: the figure is what
// happened to them, not an estimate); each figure is reported with its n and
// a 95% interval for the population of queries the cases stand for, which the
// gate's reason states with whether the threshold lies inside it. They are
// thresholds, not tests: no p-value, so they are not in the Holm family of
// the per-group regression gates.
//
// The intervals: the share changed is a proportion (metrics.WilsonCI95,
// wilson-cc). The mean RBO and the mean number of entries that left are
// means of bounded per-case values that are mostly at one end (0 for
// 1 − RBO and for the entries that left, wherever nothing moved), which is
// the shape of a paired difference: metrics.Histogram.DifferenceCI95 over
// the range ([0, 1] for 1 − RBO, mapped back to the RBO; [0, depth] for the
// entries), whose method each figure names. When cases carry a `cluster` key
// (cases in families, issue 34 item 2), each figure's interval is computed
// over the clusters instead (metrics.ClusterTally: cluster-t, the method
// compare --clusters and the paired statistics use, widened to the interval
// over the cases where that reaches further: cluster-t-hull). The mean RBO's
// is rboTally's (rbo.go), which the overlap lines' mean RBO shares.

// The measure keys of the churn gates (a gate's measure in every report).
const (
	KeyRBO   = "rbo_ext"     // the mean rank-biased overlap of a group's top k
	KeyChurn = "top_k_churn" // the share of a group's cases whose top k changed as a set
)

// Churn gate names of the overall group; a group's is the name, "@" and the group.
const (
	GateMinRBO   = "min_rbo"
	GateMaxChurn = "max_churn"
)

// DefaultMaxChanged is how many of the most changed cases (all cases both runs
// hold) are kept.
const DefaultMaxChanged = 10

// ChurnGrammar is what --min-rbo and --max-churn name: one measure each, and
// check's groups (overall, type:NAME, locale:TAG, written as a floor's).
var ChurnGrammar = floor.Grammar{
	Measures:        []metrics.Info{{Key: KeyRBO, Label: "mean RBO", Scale: metrics.ScaleUnit}, {Key: KeyChurn, Label: "top-k churn", Scale: metrics.ScaleUnit}},
	Groups:          true,
	CanonicalLocale: gate.CanonicalLocale,
}

// AddChurnLines adds to l the churn gates on measure key (KeyRBO or KeyChurn)
// of v, one [GROUP=]F per line (the --min-rbo and --max-churn flags and
// their Action inputs): F alone is the overall group; GROUP is written as a
// floor's (type:NAME, locale:TAG, overall; a name with '=' as a Go string,
// type:"a=b"); F in [0, 1]. Blank lines and lines starting with # are
// skipped; a second gate on one group is refused.
func AddChurnLines(l *floor.List, key, v string) error {
	for _, line := range strings.Split(v, "\n") {
		if line = strings.TrimSpace(line); line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		expr := key + "=" + line
		if strings.Contains(line, "=") {
			expr = key + "@" + line
		}
		s, err := ChurnGrammar.Parse(expr)
		if err != nil {
			msg := strings.NewReplacer(
				strconv.Quote(expr), strconv.Quote(line),
				floor.ErrSyntax.Error(), "want F or GROUP=F",
				"the range of "+key, "the range of the figure").Replace(err.Error())
			return errors.New(msg)
		}
		if err := l.Add(s); err != nil {
			return fmt.Errorf("two gates on %s: give one", s.Group)
		}
	}
	return nil
}

// ChurnGateName is the gate name of a churn gate: min_rbo or max_churn, with
// "@GROUP" for a group other than overall.
func ChurnGateName(s floor.Spec) string {
	n := GateMinRBO
	if s.Measure == KeyChurn {
		n = GateMaxChurn
	}
	if s.Group != outcome.GroupOverall {
		n += "@" + s.Group
	}
	return n
}

// Estimate is a figure over a group's cases with its 95% interval.
type Estimate struct {
	Mean float64
	CI95 metrics.Interval
}

// ChurnGroup is the churn of a group's cases both runs hold.
type ChurnGroup struct {
	Name    string // overall, or the type's or the locale's name
	Held    int64  // cases both runs hold
	N       int64  // of them, those whose top k both runs carry
	Unknown int64  // Held − N: a run's top k is not known (precomputed scores, an older baseline)
	RBO     Estimate
	Changed int64    // of the N, cases whose top k changed as a set
	Share   Estimate // Changed / N
	Left    Estimate // mean entries of the baseline's top k that left this run's
	// Clusters: the clusters the N cases fall into when some carry a
	// `cluster` key (a case without one is a cluster of its own); the three
	// intervals are then computed over them. 0 when no case carries one.
	Clusters int64
}

// Churn is the churn of the comparison's top k.
type Churn struct {
	Depth    int // the top k compared: the smaller k of the two runs
	Overall  ChurnGroup
	ByType   []ChurnGroup
	ByLocale []ChurnGroup
	// MostChanged are the cases both runs hold whose top k changed, lowest
	// RBO first (ties in file order), at most DefaultMaxChanged.
	MostChanged []Moved
}

// churnCell accumulates the churn of one type and locale.
type churnCell struct {
	held, n, changed int64
	rbo              rboTally           // the mean RBO and its interval (rbo.go)
	left             *metrics.Histogram // entries that left
	// The cases with a cluster key (nil until one comes): the entries that
	// left and whether the set changed (0 or 1), by cluster.
	clus *churnClusters
}

// churnClusters are a churn cell's cluster tallies.
type churnClusters struct {
	left, changed *metrics.ClusterTally
}

func newChurnClusters() *churnClusters {
	return &churnClusters{left: metrics.NewClusterTally(), changed: metrics.NewClusterTally()}
}

func newChurnCell() *churnCell {
	return &churnCell{rbo: newRBOTally(), left: metrics.NewHistogram()}
}

func (ce *churnCell) merge(o *churnCell) {
	ce.held += o.held
	ce.n += o.n
	ce.changed += o.changed
	ce.rbo.merge(&o.rbo)
	ce.left.Merge(o.left)
	if o.clus != nil {
		if ce.clus == nil {
			ce.clus = newChurnClusters()
		}
		ce.clus.left.Merge(o.clus.left)
		ce.clus.changed.Merge(o.clus.changed)
	}
}

// churnState is the Comparer's part of the churn.
type churnState struct {
	cells   map[cellKey]*churnCell
	lastKey cellKey // the cell of the previous case: cases come in runs of one group
	last    *churnCell
	changed movedList // every case both runs hold
}

func (s *churnState) init() {
	s.cells = map[cellKey]*churnCell{}
	s.changed.init(DefaultMaxChanged)
}

// mayChange reports whether a case may enter the most changed list (Prepare,
// on a worker).
func (c *Comparer) mayChange(cur *Current) bool {
	return cur.HasRBO && !cur.SameTop && c.ch.changed.may(cur.RBO)
}

// addChurn counts a case both runs hold (Add, file order): record rec of the
// baseline.
func (c *Comparer) addChurn(rec int, r *gate.CaseResult, line *CaseLine, cur *Current) {
	s := &c.ch
	ce := s.last
	if ce == nil || s.lastKey.typ != r.Type || s.lastKey.locale != r.Locale {
		key := cellKey{r.Type, r.Locale}
		if ce = s.cells[key]; ce == nil {
			ce = newChurnCell()
			key = cellKey{strings.Clone(r.Type), strings.Clone(r.Locale)}
			s.cells[key] = ce
		}
		s.lastKey, s.last = key, ce
	}
	ce.held++
	if !cur.HasRBO {
		return
	}
	ce.n++
	ce.rbo.add(cur.RBO, cur.Cluster)
	ce.left.Add(float64(cur.Left))
	changed := 0.0
	if !cur.SameSet {
		ce.changed++
		changed = 1
	}
	if cur.Cluster != "" {
		if ce.clus == nil {
			ce.clus = newChurnClusters()
		}
		ce.clus.left.Add(cur.Cluster, float64(cur.Left))
		ce.clus.changed.Add(cur.Cluster, changed)
	}
	s.changed.offer(rec, r, line, cur, c.ov.depth)
}

// churnGroup is the churn of the merged cells.
func churnGroup(name string, ce *churnCell, depth int) ChurnGroup {
	g := ChurnGroup{Name: name, Held: ce.held, N: ce.n, Unknown: ce.held - ce.n, Changed: ce.changed}
	g.RBO, g.Clusters = ce.rbo.estimate()
	g.Share, g.Left = nanEstimate(), nanEstimate()
	if ce.n == 0 {
		return g
	}
	n := float64(ce.n)
	depthHi := float64(max(depth, 1))
	share := metrics.WilsonCI95(ce.changed, ce.n)
	left := ce.left.DifferenceCI95(0, depthHi)
	if ce.clus != nil {
		// Cases in families: each figure's interval over the clusters
		// (metrics.ClusterTally: cluster-t, a case without a key one),
		// widened to the interval over the cases where that reaches further
		// (the mean RBO's: rboTally.estimate).
		changed := metrics.NewHistogram()
		if ce.changed > 0 {
			changed.AddN(1, ce.changed)
		}
		if ce.n > ce.changed {
			changed.AddN(0, ce.n-ce.changed)
		}
		share = ce.clus.changed.CI95(changed, 0, 1).Widen(share).Interval
		left = ce.clus.left.CI95(ce.left, 0, depthHi).Widen(left).Interval
	}
	g.Share = Estimate{Mean: float64(ce.changed) / n, CI95: share}
	g.Left = Estimate{Mean: ce.left.Mean(), CI95: left}
	return g
}

// churnResult finishes the churn: the groups and the most changed cases.
func (c *Comparer) churnResult() (Churn, error) {
	s, depth := &c.ch, c.ov.depth
	out := Churn{Depth: depth}
	keys := make([]cellKey, 0, len(s.cells))
	for k := range s.cells {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].typ != keys[j].typ {
			return keys[i].typ < keys[j].typ
		}
		return keys[i].locale < keys[j].locale
	})
	merged := func(pick func(cellKey) bool) *churnCell {
		m := newChurnCell()
		for _, k := range keys {
			if pick(k) {
				m.merge(s.cells[k])
			}
		}
		return m
	}
	var types, locales []string
	for _, k := range keys {
		if !slices.Contains(types, k.typ) {
			types = append(types, k.typ)
		}
		if !slices.Contains(locales, k.locale) {
			locales = append(locales, k.locale)
		}
	}
	slices.Sort(types)
	slices.Sort(locales)
	out.Overall = churnGroup(outcome.GroupOverall, merged(func(cellKey) bool { return true }), depth)
	for _, t := range types {
		out.ByType = append(out.ByType, churnGroup(t, merged(func(k cellKey) bool { return k.typ == t }), depth))
	}
	for _, l := range locales {
		out.ByLocale = append(out.ByLocale, churnGroup(l, merged(func(k cellKey) bool { return k.locale == l }), depth))
	}
	var err error
	out.MostChanged, err = s.changed.result(c.b, depth)
	return out, err
}

// group finds a group of the churn by its floor-grammar name, or returns nil
// and the names of the groups there are.
func (ch *Churn) group(name string) (*ChurnGroup, []string) {
	return findGroup(name, &ch.Overall, ch.ByType, ch.ByLocale, func(g *ChurnGroup) string { return g.Name })
}

// churnGates decides the churn gates: min_rbo and max_churn on the overall
// group (off when not set, with their value), then the groups' in
// command-line order, each kind's --min-rbo before its --max-churn;
// out.ChurnStatus is their status.
func (c *Comparer) churnGates(out *Comparison) {
	out.ChurnStatus = outcome.Off
	specs := func(l floor.List, key string) floor.List {
		if _, ok := l.Find(key, outcome.GroupOverall); !ok {
			l = append(floor.List{{Measure: key, Group: outcome.GroupOverall, Value: math.NaN()}}, l...)
		}
		return l
	}
	var all floor.List
	for _, l := range []floor.List{specs(c.opt.MinRBO, KeyRBO), specs(c.opt.MaxChurn, KeyChurn)} {
		for _, s := range l {
			if s.Group == outcome.GroupOverall {
				all = append(all, s)
			}
		}
	}
	for _, l := range []floor.List{c.opt.MinRBO, c.opt.MaxChurn} {
		for _, s := range l {
			if s.Group != outcome.GroupOverall {
				all = append(all, s)
			}
		}
	}
	for _, s := range all {
		g := c.churnGate(&out.Churn, s)
		switch {
		case g.Status == outcome.Fail:
			out.ChurnStatus = outcome.Fail
		case g.Status == outcome.Pass && out.ChurnStatus == outcome.Off:
			out.ChurnStatus = outcome.Pass
		}
		out.Gates = append(out.Gates, g)
	}
}

// churnGate decides one churn gate (s.Value NaN: the overall gate left off).
// A gate set on a locale says, last in its reason, that it is indicative
// only, as a per-locale floor and a per-locale regression gate do; it still
// decides (it was asked for), as they do.
func (c *Comparer) churnGate(ch *Churn, s floor.Spec) outcome.Gate {
	g := c.decideChurn(ch, s)
	if !math.IsNaN(s.Value) && strings.HasPrefix(s.Group, floor.LocalePrefix) {
		g.Why = append(g.Why, outcome.Clause{Code: outcome.IndicativeChurn})
	}
	return g
}

// decideChurn is churnGate's decision and its reason.
func (c *Comparer) decideChurn(ch *Churn, s floor.Spec) outcome.Gate {
	set := !math.IsNaN(s.Value)
	g := outcome.New(ChurnGateName(s), outcome.Off)
	g.Group, g.Measure = s.Group, s.Measure
	if set {
		g.Status, g.Threshold = outcome.Fail, s.Value
	}
	grp, names := ch.group(s.Group)
	if grp == nil {
		g.Why = []outcome.Clause{{Code: outcome.NoSuchGroup, Names: names}}
		return g
	}
	est := grp.RBO
	if s.Measure == KeyChurn {
		est = grp.Share
	}
	g.N = grp.N
	if grp.N > 0 {
		g.Value = est.Mean
	}
	if !set {
		return g
	}
	label := ""
	if s.Group != outcome.GroupOverall {
		label = s.Group
	}
	if grp.N == 0 {
		g.Why = []outcome.Clause{{Code: outcome.NoTopK, Name: label, N: grp.Held, M: grp.Unknown}}
		return g
	}
	switch {
	case s.Measure == KeyRBO && est.Mean+gateTolerance >= s.Value:
		g.Status = outcome.Pass
	case s.Measure == KeyChurn && est.Mean <= s.Value+gateTolerance:
		g.Status = outcome.Pass
	case s.Measure == KeyRBO:
		g.Why = append(g.Why, outcome.Clause{Code: outcome.RBOBelow, Name: label, Value: est.Mean, Threshold: s.Value, N: grp.N})
	default:
		g.Why = append(g.Why, outcome.Clause{Code: outcome.ChurnAbove, Name: label, Value: est.Mean, Threshold: s.Value, N: grp.N, M: grp.Changed})
	}
	lo, hi := est.CI95.Lo, est.CI95.Hi
	g.Why = append(g.Why, outcome.Clause{Code: outcome.Interval95, Measure: s.Measure, N: grp.N, M: grp.Clusters,
		Lo: lo, Hi: hi, Test: est.CI95.Method, Threshold: s.Value, Only: lo <= s.Value && s.Value <= hi, Unreliable: est.CI95.Unreliable})
	return g
}

// unavailableChurnGates are the churn gates when there is no baseline: the
// overall ones and every one set, off, with the reason for those set.
func unavailableChurnGates(why Unavailability, opt Options) outcome.Gates {
	var gs outcome.Gates
	add := func(s floor.Spec, set bool) {
		g := outcome.New(ChurnGateName(s), outcome.Off)
		g.Group, g.Measure = s.Group, s.Measure
		if set {
			g.Threshold = s.Value
			g.Why = []outcome.Clause{{Code: outcome.NoBaseline, Name: why.Code, Text: why.Detail}}
		}
		gs = append(gs, g)
	}
	for _, k := range []struct {
		l   floor.List
		key string
	}{{opt.MinRBO, KeyRBO}, {opt.MaxChurn, KeyChurn}} {
		s, ok := k.l.Find(k.key, outcome.GroupOverall)
		if !ok {
			s = floor.Spec{Measure: k.key, Group: outcome.GroupOverall}
		}
		add(s, ok)
	}
	for _, l := range []floor.List{opt.MinRBO, opt.MaxChurn} {
		for _, s := range l {
			if s.Group != outcome.GroupOverall {
				add(s, true)
			}
		}
	}
	return gs
}

package gate

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/retrieval-gate/retrieval-gate/internal/floor"
	"github.com/retrieval-gate/retrieval-gate/internal/metrics"
	"github.com/retrieval-gate/retrieval-gate/internal/outcome"
)

// Floor is an absolute floor on an overall mean; the zero value is off.
type Floor struct {
	Set   bool
	Value float64
}

// ParseFloor reads a floor flag: "" or "none" is off, otherwise a number in [0,1].
func ParseFloor(s string) (Floor, error) {
	s = strings.TrimSpace(s)
	if s == "" || strings.EqualFold(s, "none") {
		return Floor{}, nil
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(v) {
		return Floor{}, fmt.Errorf("%q is not a number in [0,1] (or none)", s)
	}
	if v < 0 || v > 1 {
		return Floor{}, fmt.Errorf("%v is outside [0,1]", v)
	}
	if v == 0 {
		v = 0 // "-0" is the floor 0, shown "0" (it was shown "-0")
	}
	return Floor{Set: true, Value: v}, nil
}

// Config is what the decisions depend on besides the cases.
type Config struct {
	K               int
	ReferenceLocale string
	MinHit          Floor
	MinRecall       Floor
	KBCards         int
	// Floors are the --floor gates, after min_hit and min_recall (which must not
	// be on the same measure and group: the command refuses that).
	Floors floor.List
	// AllowEmpty turns the non_empty gate off: a run that scored no
	// gold-carrying case passes (instead of failing with ReasonNoGold).
	AllowEmpty bool
	Resamples  int    // 0: metrics.DefaultResamples
	Seed       uint64 // 0: metrics.DefaultSeed
}

// summarize is metrics.SummarizeContext: a variable so that a test can count
// the intervals a result computes.
var summarize = metrics.SummarizeContext

// Metric is one metric's summary in a group, with what its floor's detectable
// difference needs: the sample sd of its values and whether they are all 0 or 1.
type Metric struct {
	Key string
	metrics.Summary
	SD     float64
	Binary bool
	// Clusters is the number of clusters the N cases fall into when some
	// carry a `cluster` key (a case without one is a cluster of its own):
	// the interval is then metrics.ClusterTally's, over the clusters (widened
	// to the interval over the cases when that reaches further:
	// metrics.ClusterInterval.Widen), and SE its cluster-robust standard
	// error; 0 when no case carries a key.
	Clusters int64
	SE       float64
}

// Group is the aggregate of a set of cases. N counts the scored (gold-carrying)
// cases; a metric's own N can be smaller only for precomputed scores that lack
// its key. WithoutGold counts the group's cases that carry no scores;
// WithRelevant the scored ones that carry relevant_ids (their recall@k and
// nDCG@k are real recall; the others' a lower bound).
type Group struct {
	Name         string
	N            int64
	WithoutGold  int64
	WithRelevant int64
	Metrics      []Metric // registered measures first (registry order), then other precomputed keys sorted
}

// Metric returns the group's summary of key.
func (g *Group) Metric(key string) (Metric, bool) {
	for _, m := range g.Metrics {
		if m.Key == key {
			return m, true
		}
	}
	return Metric{}, false
}

// Delta is one metric's difference of a locale's mean from the reference locale's.
type Delta struct {
	Key   string
	Value float64
}

// LocaleDelta holds a locale's deltas (indicative only, not significance-tested).
type LocaleDelta struct {
	Locale string
	Deltas []Delta
}

// UnknownRetrieved is the stale-index warning: retrieved identities not in the KB.
type UnknownRetrieved struct {
	Entries, Cases int64
	Examples       []string
}

// Integrity is the dataset-integrity gate's input and outcome.
type Integrity struct {
	OK            bool
	KBCards       int
	Problems      []Problem // the first DefaultMaxProblems, file order
	ProblemsTotal int64
	Unknown       UnknownRetrieved
}

// Result is everything the reports show.
type Result struct {
	K                int
	Total            int64
	WithGold         int64
	WithoutGold      int64
	Precomputed      int64
	Overall          Group
	ByType           []Group // sorted by name
	ByLocale         []Group // sorted by name
	ReferenceLocale  string
	ReferenceHasGold bool
	Deltas           []LocaleDelta // sorted by locale; empty when !ReferenceHasGold
	Integrity        Integrity
	Gates            outcome.Gates // integrity, min_hit, min_recall, non_empty, then each --floor
	UnknownKeys      []KeyCount    // top-level case keys the reader does not know, by name
	Missed           []*CaseResult // the first DefaultMaxMissed, file order
	MissedTotal      int64
	// TypesOmitted and LocalesOmitted count the groups beyond MaxGroups (and
	// their cases), neither computed nor shown; their cases count in Overall.
	TypesOmitted, LocalesOmitted Omitted
}

// MaxGroups is how many type groups and how many locale groups are computed and
// shown: those with the most cases (ties by name), plus the reference locale.
const MaxGroups = 50

// Omitted counts groups beyond MaxGroups and the cases in them.
type Omitted struct {
	Groups int
	Cases  int64
}

// topGroups returns the names of at most MaxGroups groups by case count (ties by
// name; keep is always kept when present), sorted by name, and what is left out.
func topGroups(cases map[string]int64, keep string) ([]string, Omitted) {
	names := make([]string, 0, len(cases))
	for n := range cases {
		names = append(names, n)
	}
	slices.SortFunc(names, func(a, b string) int {
		if a == keep || b == keep {
			return cmpBool(b == keep, a == keep)
		}
		if cases[a] != cases[b] {
			return cmpBool(cases[a] < cases[b], cases[a] > cases[b])
		}
		return strings.Compare(a, b)
	})
	var om Omitted
	if len(names) > MaxGroups {
		for _, n := range names[MaxGroups:] {
			om.Groups++
			om.Cases += cases[n]
		}
		names = names[:MaxGroups]
	}
	slices.Sort(names)
	return names, om
}

// cmpBool is 1 when gt, −1 when lt, else 0.
func cmpBool(gt, lt bool) int {
	switch {
	case gt:
		return 1
	case lt:
		return -1
	}
	return 0
}

// Verdict is the verdict of the gates.
func (r *Result) Verdict() outcome.Status { return r.Gates.Verdict() }

// Failed returns the names of the failed gates.
func (r *Result) Failed() []string { return r.Gates.Failed() }

// ReasonNoGold is why the non_empty gate, and a set floor on the overall group,
// fail when no case carries gold.
var ReasonNoGold = outcome.Clause{Code: outcome.NoGoldScored}

// ReasonAllowedEmpty is the non_empty gate's reason when --allow-empty turns it off.
var ReasonAllowedEmpty = outcome.Clause{Code: outcome.NoGoldScored, Allowed: true}

// ResultContext computes the aggregates and applies the gates. It ends with
// ctx.Err() soon after ctx ends: the bootstrap intervals (metrics.SummarizeContext) take seconds on groups of a
// few thousand cases whose values are mostly distinct (a precomputed score).
func (a *Accumulator) ResultContext(ctx context.Context, cfg Config) (*Result, error) {
	if cfg.Resamples <= 0 {
		cfg.Resamples = metrics.DefaultResamples
	}
	if cfg.Seed == 0 {
		cfg.Seed = metrics.DefaultSeed
	}
	cfg.ReferenceLocale = CanonicalLocale(cfg.ReferenceLocale)
	res := &Result{
		K: cfg.K, Total: a.total, WithGold: a.scored, WithoutGold: a.total - a.scored,
		Precomputed: a.precomputed, ReferenceLocale: cfg.ReferenceLocale,
		Missed: a.missed, MissedTotal: a.missedTotal,
	}
	keys := make([]cellKey, 0, len(a.cells))
	for k, c := range a.cells {
		keys = append(keys, k)
		for i := range c.recent {
			c.recent[i].flush(c.measures[i])
		}
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].typ != keys[j].typ {
			return keys[i].typ < keys[j].typ
		}
		return keys[i].locale < keys[j].locale
	})
	// Cells by type and by locale, and each group's case count, in one pass.
	byType, byLocale := map[string][]cellKey{}, map[string][]cellKey{}
	typeCases, localeCases := map[string]int64{}, map[string]int64{}
	for _, k := range keys {
		byType[k.typ] = append(byType[k.typ], k)
		byLocale[k.locale] = append(byLocale[k.locale], k)
		typeCases[k.typ] += a.cells[k].total
		localeCases[k.locale] += a.cells[k].total
	}
	types, tom := topGroups(typeCases, "")
	locales, lom := topGroups(localeCases, cfg.ReferenceLocale)
	res.TypesOmitted, res.LocalesOmitted = tom, lom
	type pending struct {
		g  *Group
		hs []*metrics.Histogram
		ts []*metrics.ClusterTally
	}
	var todo []pending
	res.ByType = make([]Group, len(types))
	res.ByLocale = make([]Group, len(locales))
	var hs []*metrics.Histogram
	var ts []*metrics.ClusterTally
	res.Overall, hs, ts = a.group("overall", keys, func(cellKey) bool { return true })
	todo = append(todo, pending{&res.Overall, hs, ts})
	all := func(cellKey) bool { return true }
	// A type or a locale whose cells are every cell of the run (a run of one
	// type, or of one locale) has the overall group's histograms and tallies,
	// merged from the same cells in the same order: its summaries are the
	// overall's, copied below rather than bootstrapped again.
	var asOverall []*Group
	for i, t := range types {
		res.ByType[i], hs, ts = a.group(t, byType[t], all)
		if slices.Equal(byType[t], keys) {
			asOverall = append(asOverall, &res.ByType[i])
			continue
		}
		todo = append(todo, pending{&res.ByType[i], hs, ts})
	}
	for i, l := range locales {
		res.ByLocale[i], hs, ts = a.group(l, byLocale[l], all)
		if slices.Equal(byLocale[l], keys) {
			asOverall = append(asOverall, &res.ByLocale[i])
			continue
		}
		todo = append(todo, pending{&res.ByLocale[i], hs, ts})
	}
	// The bootstrap CIs are independent (each from its own seeded generator), so
	// they run in parallel and the result stays deterministic.
	var ms []*Metric
	var hists []*metrics.Histogram
	var tallies []*metrics.ClusterTally
	for _, p := range todo {
		for i := range p.g.Metrics {
			ms = append(ms, &p.g.Metrics[i])
			hists = append(hists, p.hs[i])
			tallies = append(tallies, p.ts[i])
		}
	}
	var wg sync.WaitGroup
	next := make(chan int)
	var errOnce sync.Once
	var ctxErr error
	for range max(1, min(runtime.GOMAXPROCS(0), len(ms))) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				lo, hi := metrics.KeyRange(ms[i].Key)
				sum, err := summarize(ctx, hists[i], cfg.Resamples, cfg.Seed, lo, hi)
				if err != nil {
					errOnce.Do(func() { ctxErr = err })
					continue // the rest end at once: the context has ended
				}
				ms[i].Summary = sum
				if tallies[i].Items() > 0 { // cases in families: the interval over the clusters
					iv := tallies[i].CI95(hists[i], lo, hi).Widen(metrics.Interval{Lo: ms[i].CI95[0], Hi: ms[i].CI95[1]})
					ms[i].CI95, ms[i].Method, ms[i].Unreliable = iv.CI(), iv.Method, iv.Unreliable
					ms[i].Clusters, ms[i].SE = iv.Clusters, iv.SE
				}
			}
		}()
	}
	for i := range ms {
		next <- i
	}
	close(next)
	wg.Wait()
	if ctxErr != nil {
		return nil, ctxErr
	}
	for i, m := range ms {
		m.SD, m.Binary = hists[i].SampleSD(), hists[i].IsBinary()
	}
	for _, g := range asOverall {
		g.Metrics = slices.Clone(res.Overall.Metrics)
	}

	// Locale deltas against the reference locale (indicative only).
	var ref *Group
	for i := range res.ByLocale {
		if res.ByLocale[i].Name == cfg.ReferenceLocale && res.ByLocale[i].N > 0 {
			ref = &res.ByLocale[i]
		}
	}
	res.ReferenceHasGold = ref != nil
	if ref != nil {
		for _, g := range res.ByLocale {
			if g.Name == ref.Name || g.N == 0 {
				continue
			}
			ld := LocaleDelta{Locale: g.Name}
			for _, m := range g.Metrics {
				if rm, ok := ref.Metric(m.Key); ok && m.N > 0 && rm.N > 0 {
					ld.Deltas = append(ld.Deltas, Delta{Key: m.Key, Value: m.Mean - rm.Mean})
				}
			}
			if len(ld.Deltas) > 0 {
				res.Deltas = append(res.Deltas, ld)
			}
		}
	}

	res.Integrity = Integrity{
		OK: a.problemsTotal == 0, KBCards: cfg.KBCards,
		Problems: a.problems, ProblemsTotal: a.problemsTotal,
		Unknown: UnknownRetrieved{Entries: a.unknownEntries, Cases: a.unknownCases, Examples: a.unknownExamples},
	}
	integ := outcome.New("integrity", outcome.Pass)
	integ.N = a.total
	if !res.Integrity.OK {
		integ.Status = outcome.Fail
		integ.Why = []outcome.Clause{{Code: outcome.Unresolved, N: a.problemsTotal}}
	}
	res.Gates = outcome.Gates{
		integ,
		res.floorGate("min_hit", cfg.MinHit, metrics.KeyHit),
		res.floorGate("min_recall", cfg.MinRecall, metrics.KeyRecall),
		res.nonEmptyGate(cfg.AllowEmpty),
	}
	for _, s := range cfg.Floors {
		res.Gates = append(res.Gates, floor.Evaluate(s.Name(), s, res.Observe(s)))
	}
	res.UnknownKeys = a.unknownKeyCounts()
	return res, nil
}

// nonEmptyGate fails when no gold-carrying case was scored (an empty file, a
// file of another harness's shape), unless allowed.
func (r *Result) nonEmptyGate(allow bool) outcome.Gate {
	g := outcome.New("non_empty", outcome.Pass)
	g.Group, g.N = outcome.GroupOverall, r.WithGold
	switch {
	case r.WithGold > 0:
	case allow:
		g.Status, g.Why = outcome.Off, []outcome.Clause{ReasonAllowedEmpty}
	default:
		g.Status, g.Why = outcome.Fail, []outcome.Clause{ReasonNoGold}
	}
	return g
}

// floorGate is a shorthand floor (--min-hit, --min-recall) on the overall mean
// of key: off unless set (with the value it would be compared with), else
// decided as a --floor is.
func (r *Result) floorGate(name string, f Floor, key string) outcome.Gate {
	if f.Set {
		s := floor.Spec{Measure: key, Group: outcome.GroupOverall, Value: f.Value}
		return floor.Evaluate(name, s, r.Observe(s))
	}
	g := outcome.New(name, outcome.Off)
	g.Group, g.Measure = outcome.GroupOverall, key
	if m, ok := r.Overall.Metric(key); ok && m.N > 0 {
		g.Value, g.N = m.Mean, m.N
	}
	return g
}

// GroupNames are the groups of the result as floors name them: overall, then
// type:NAME and locale:TAG sorted.
func (r *Result) GroupNames() []string {
	out := []string{outcome.GroupOverall}
	for _, g := range r.ByType {
		out = append(out, floor.TypePrefix+g.Name)
	}
	for _, g := range r.ByLocale {
		out = append(out, floor.LocalePrefix+g.Name)
	}
	return out
}

// Observe finds the group and measure of floor s in the result.
func (r *Result) Observe(s floor.Spec) floor.Observation {
	var g *Group
	switch {
	case s.Group == outcome.GroupOverall:
		g = &r.Overall
	case strings.HasPrefix(s.Group, floor.TypePrefix):
		g = findGroup(r.ByType, s.Group[len(floor.TypePrefix):])
	case strings.HasPrefix(s.Group, floor.LocalePrefix):
		g = findGroup(r.ByLocale, s.Group[len(floor.LocalePrefix):])
	}
	o := floor.Observation{Label: s.Group}
	if g == nil {
		o.Groups = r.GroupNames()
		return o
	}
	o.Found, o.GroupN = true, g.N
	o.Empty = ReasonNoGold
	o.Absent = outcome.Clause{Code: outcome.NoScore, Measure: s.Measure}
	if s.Group != outcome.GroupOverall {
		o.Empty = outcome.Clause{Code: outcome.NoGoldScored, Name: s.Group}
		o.Absent.Name = s.Group
	}
	if m, ok := g.Metric(s.Measure); ok && m.N > 0 {
		o.N, o.Mean, o.SD, o.Binary = m.N, m.Mean, m.SD, m.Binary
		// Cases in families: the detectable difference from the
		// cluster-robust standard error.
		o.OverClusters(m.Clusters, m.SE)
	}
	return o
}

func findGroup(gs []Group, name string) *Group {
	for i := range gs {
		if gs[i].Name == name {
			return &gs[i]
		}
	}
	return nil
}

// group merges the picked cells into one Group; its Metrics (registered
// measures first, then other keys sorted) get their Summary later from the
// returned histograms.
func (a *Accumulator) group(name string, keys []cellKey, pick func(cellKey) bool) (Group, []*metrics.Histogram, []*metrics.ClusterTally) {
	g := Group{Name: name}
	var measures [metrics.NumCase]*metrics.Histogram
	for i := range measures {
		measures[i] = metrics.NewHistogram()
	}
	extra := map[string]*metrics.Histogram{}
	// The tallies of the cases with a cluster key (nil: none).
	var clus [metrics.NumCase]*metrics.ClusterTally
	extraClus := map[string]*metrics.ClusterTally{}
	mergeTally := func(dst **metrics.ClusterTally, t *metrics.ClusterTally) {
		if t == nil {
			return
		}
		if *dst == nil {
			*dst = metrics.NewClusterTally()
		}
		(*dst).Merge(t)
	}
	for _, k := range keys {
		if !pick(k) {
			continue
		}
		c := a.cells[k]
		g.N += c.scored
		g.WithRelevant += c.withRelevant
		g.WithoutGold += c.total - c.scored
		for i, h := range c.measures {
			measures[i].Merge(h)
		}
		for key, h := range c.extra {
			if extra[key] == nil {
				extra[key] = metrics.NewHistogram()
			}
			extra[key].Merge(h)
		}
		for i, t := range c.clus {
			mergeTally(&clus[i], t)
		}
		for key, t := range c.extraClus {
			d := extraClus[key]
			mergeTally(&d, t)
			extraClus[key] = d
		}
	}
	var hs []*metrics.Histogram
	var ts []*metrics.ClusterTally
	for i, h := range measures {
		if h.N() > 0 {
			g.Metrics = append(g.Metrics, Metric{Key: metrics.CaseKeys[i]})
			hs, ts = append(hs, h), append(ts, clus[i])
		}
	}
	ek := make([]string, 0, len(extra))
	for k := range extra {
		ek = append(ek, k)
	}
	slices.Sort(ek)
	for _, k := range ek {
		g.Metrics = append(g.Metrics, Metric{Key: k})
		hs, ts = append(hs, extra[k]), append(ts, extraClus[k])
	}
	return g, hs, ts
}

package gate

import (
	"fmt"
	"math"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/retrieval-gate/retrieval-gate/internal/metrics"
	"github.com/retrieval-gate/retrieval-gate/internal/outcome"
	"github.com/retrieval-gate/retrieval-gate/internal/report/format"
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
	return Floor{Set: true, Value: v}, nil
}

// Config is what the decisions depend on besides the cases.
type Config struct {
	K               int
	ReferenceLocale string
	MinHit          Floor
	MinRecall       Floor
	KBCards         int
	Resamples       int    // 0: metrics.DefaultResamples
	Seed            uint64 // 0: metrics.DefaultSeed
}

// Metric is one metric's summary in a group.
type Metric struct {
	Key string
	metrics.Summary
}

// Group is the aggregate of a set of cases. N counts the scored (gold-carrying)
// cases; a metric's own N can be smaller only for precomputed scores that lack
// its key. WithoutGold counts the group's cases that carry no scores.
type Group struct {
	Name        string
	N           int64
	WithoutGold int64
	Metrics     []Metric // registered measures first (registry order), then other precomputed keys sorted
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
	Gates            outcome.Gates // integrity, min_hit, min_recall
	Missed           []*CaseResult // the first DefaultMaxMissed, file order
	MissedTotal      int64
}

// Verdict is the verdict of the gates.
func (r *Result) Verdict() outcome.Status { return r.Gates.Verdict() }

// Failed returns the names of the failed gates.
func (r *Result) Failed() []string { return r.Gates.Failed() }

// floorTolerance absorbs floating-point noise when a mean equals its floor.
const floorTolerance = 1e-9

// ReasonNoGold is why a set floor fails when no case carries gold.
const ReasonNoGold = "no gold-carrying cases"

// Result computes the aggregates and applies the gates.
func (a *Accumulator) Result(cfg Config) *Result {
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
	for k := range a.cells {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].typ != keys[j].typ {
			return keys[i].typ < keys[j].typ
		}
		return keys[i].locale < keys[j].locale
	})
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
	type pending struct {
		g  *Group
		hs []*metrics.Histogram
	}
	var todo []pending
	res.ByType = make([]Group, len(types))
	res.ByLocale = make([]Group, len(locales))
	var hs []*metrics.Histogram
	res.Overall, hs = a.group("overall", keys, func(cellKey) bool { return true })
	todo = append(todo, pending{&res.Overall, hs})
	for i, t := range types {
		res.ByType[i], hs = a.group(t, keys, func(k cellKey) bool { return k.typ == t })
		todo = append(todo, pending{&res.ByType[i], hs})
	}
	for i, l := range locales {
		res.ByLocale[i], hs = a.group(l, keys, func(k cellKey) bool { return k.locale == l })
		todo = append(todo, pending{&res.ByLocale[i], hs})
	}
	// The bootstrap CIs are independent (each from its own seeded generator), so
	// they run in parallel and the result stays deterministic.
	var ms []*Metric
	var hists []*metrics.Histogram
	for _, p := range todo {
		for i := range p.g.Metrics {
			ms = append(ms, &p.g.Metrics[i])
			hists = append(hists, p.hs[i])
		}
	}
	var wg sync.WaitGroup
	next := make(chan int)
	for range max(1, min(runtime.GOMAXPROCS(0), len(ms))) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				ms[i].Summary = metrics.Summarize(hists[i], cfg.Resamples, cfg.Seed)
			}
		}()
	}
	for i := range ms {
		next <- i
	}
	close(next)
	wg.Wait()

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
		integ.Reason = fmt.Sprintf("%d gold id(s) do not resolve to a card of the knowledge base", a.problemsTotal)
	}
	res.Gates = outcome.Gates{
		integ,
		floorGate("min_hit", cfg.MinHit, res.Overall, metrics.KeyHit),
		floorGate("min_recall", cfg.MinRecall, res.Overall, metrics.KeyRecall),
	}
	return res
}

// floorGate decides a floor on the overall mean of key: off unless set; set and
// nothing to measure fails with ReasonNoGold (or, when the gold-carrying cases are
// all precomputed without key, with a reason naming the missing score).
func floorGate(name string, f Floor, overall Group, key string) outcome.Gate {
	g := outcome.New(name, outcome.Off)
	g.Group, g.Measure = outcome.GroupOverall, key
	m, ok := overall.Metric(key)
	if ok && m.N > 0 {
		g.Value, g.N = m.Mean, m.N
	}
	if !f.Set {
		return g
	}
	g.Threshold = f.Value
	switch {
	case math.IsNaN(g.Value) && overall.N > 0:
		g.Status, g.Reason = outcome.Fail, fmt.Sprintf("no gold-carrying case has a %s score", key)
	case math.IsNaN(g.Value):
		g.Status, g.Reason = outcome.Fail, ReasonNoGold
	case g.Value+floorTolerance >= f.Value:
		g.Status = outcome.Pass
	default:
		g.Status = outcome.Fail
		v, t := format.Distinct(g.Value, f.Value)
		g.Reason = fmt.Sprintf("overall mean %s is below the floor %s", v, t)
	}
	return g
}

// group merges the picked cells into one Group; its Metrics (registered
// measures first, then other keys sorted) get their Summary later from the
// returned histograms.
func (a *Accumulator) group(name string, keys []cellKey, pick func(cellKey) bool) (Group, []*metrics.Histogram) {
	g := Group{Name: name}
	var measures [metrics.NumCase]*metrics.Histogram
	for i := range measures {
		measures[i] = metrics.NewHistogram()
	}
	extra := map[string]*metrics.Histogram{}
	for _, k := range keys {
		if !pick(k) {
			continue
		}
		c := a.cells[k]
		g.N += c.scored
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
	}
	var hs []*metrics.Histogram
	for i, h := range measures {
		if h.N() > 0 {
			g.Metrics = append(g.Metrics, Metric{Key: metrics.CaseKeys[i]})
			hs = append(hs, h)
		}
	}
	ek := make([]string, 0, len(extra))
	for k := range extra {
		ek = append(ek, k)
	}
	slices.Sort(ek)
	for _, k := range ek {
		g.Metrics = append(g.Metrics, Metric{Key: k})
		hs = append(hs, extra[k])
	}
	return g, hs
}

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
)

// DefaultResamples is the number of bootstrap resamples of every CI.
const DefaultResamples = 10000

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
	Resamples       int    // 0: DefaultResamples
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
	Metrics     []Metric // triad keys first, then other precomputed keys sorted
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

// Gate statuses.
const (
	StatusPass = "pass"
	StatusFail = "fail"
	StatusOff  = "off"
)

// GateResult is one gate's outcome. Value is the overall mean it looked at
// (NaN when there is none); Threshold is meaningful when Floor.Set.
type GateResult struct {
	Name    string
	Status  string
	Floor   Floor
	Value   float64
	Reason  string
	IsFloor bool
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
	Gates            []GateResult
	Verdict          string
	Missed           []*CaseResult // the first DefaultMaxMissed, file order
	MissedTotal      int64
}

// Failed returns the names of the failed gates.
func (r *Result) Failed() []string {
	var out []string
	for _, g := range r.Gates {
		if g.Status == StatusFail {
			out = append(out, g.Name)
		}
	}
	return out
}

// floorTolerance absorbs floating-point noise when a mean equals its floor.
const floorTolerance = 1e-9

// ReasonNoGold is why a set floor fails when no case carries gold.
const ReasonNoGold = "no gold-carrying cases"

// Result computes the aggregates and applies the gates.
func (a *Accumulator) Result(cfg Config) *Result {
	if cfg.Resamples <= 0 {
		cfg.Resamples = DefaultResamples
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
	integ := GateResult{Name: "integrity", Status: StatusPass, Value: math.NaN()}
	if !res.Integrity.OK {
		integ.Status = StatusFail
		integ.Reason = fmt.Sprintf("%d gold id(s) do not resolve to a card of the knowledge base", a.problemsTotal)
	}
	res.Gates = []GateResult{
		integ,
		floorGate("min_hit", cfg.MinHit, res.Overall, metrics.KeyHit),
		floorGate("min_recall", cfg.MinRecall, res.Overall, metrics.KeyRecall),
	}
	res.Verdict = StatusPass
	if len(res.Failed()) > 0 {
		res.Verdict = StatusFail
	}
	return res
}

// floorGate decides a floor on the overall mean of key: off unless set; set and
// nothing to measure fails with ReasonNoGold (or, when the gold-carrying cases are
// all precomputed without key, with a reason naming the missing score).
func floorGate(name string, f Floor, overall Group, key string) GateResult {
	g := GateResult{Name: name, Status: StatusOff, Floor: f, Value: math.NaN(), IsFloor: true}
	m, ok := overall.Metric(key)
	if ok && m.N > 0 {
		g.Value = m.Mean
	}
	if !f.Set {
		return g
	}
	switch {
	case math.IsNaN(g.Value) && overall.N > 0:
		g.Status, g.Reason = StatusFail, fmt.Sprintf("no gold-carrying case has a %s score", key)
	case math.IsNaN(g.Value):
		g.Status, g.Reason = StatusFail, ReasonNoGold
	case g.Value+floorTolerance >= f.Value:
		g.Status = StatusPass
	default:
		g.Status = StatusFail
		g.Reason = fmt.Sprintf("overall mean %.4f is below the floor %.4g", g.Value, f.Value)
	}
	return g
}

// group merges the picked cells into one Group; its Metrics (triad keys first,
// then other keys sorted) get their Summary later from the returned histograms.
func (a *Accumulator) group(name string, keys []cellKey, pick func(cellKey) bool) (Group, []*metrics.Histogram) {
	g := Group{Name: name}
	var triad [3]*metrics.Histogram
	for i := range triad {
		triad[i] = metrics.NewHistogram()
	}
	extra := map[string]*metrics.Histogram{}
	for _, k := range keys {
		if !pick(k) {
			continue
		}
		c := a.cells[k]
		g.N += c.scored
		g.WithoutGold += c.total - c.scored
		for i, h := range c.triad {
			triad[i].Merge(h)
		}
		for key, h := range c.extra {
			if extra[key] == nil {
				extra[key] = metrics.NewHistogram()
			}
			extra[key].Merge(h)
		}
	}
	var hs []*metrics.Histogram
	for i, h := range triad {
		if h.N() > 0 {
			g.Metrics = append(g.Metrics, Metric{Key: metrics.TriadKeys[i]})
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

package baseline

import (
	"context"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/retrieval-gate/retrieval-gate/internal/floor"
	"github.com/retrieval-gate/retrieval-gate/internal/gate"
	"github.com/retrieval-gate/retrieval-gate/internal/input"
	"github.com/retrieval-gate/retrieval-gate/internal/metrics"
	"github.com/retrieval-gate/retrieval-gate/internal/outcome"
)

// Defaults of the comparison.
const (
	DefaultRankDrop = 3   // --rank-drop
	DefaultMaxFlips = 200 // cases kept per flip list and per unpaired list
	Alpha           = 0.05
	StaleAfter      = 7 * 24 * time.Hour
)

// Regression-test modes (--regression-test).
const (
	TestSignificant = "significant" // fail when the drop exceeds the tolerance and the paired test rejects
	TestAny         = "any"         // fail when the drop exceeds the tolerance
)

// Names of the paired tests.
const (
	TestMcNemar       = "mcnemar_exact"
	TestSignFlipExact = "sign_flip_exact"
	TestSignFlipMC    = "sign_flip_randomization"
	// TestNone: every paired difference is 0 (no case changed on the
	// measure): nothing to test, p = 1 (issue 34).
	TestNone = "none"
)

// NoteMethods is a Stat's Note when its interval and its test disagree (the
// interval excludes 0 and the test does not reject, or the reverse): they are
// different procedures; the test decides the 🔻 mark and the gates. It cannot
// happen on a 0/1 measure, whose interval is inverted from its test.
const NoteMethods = "methods"

// Tolerance is a --max-drop-* flag: the absolute drop of the overall mean tolerated.
type Tolerance = gate.Floor

// GateMeasures are the measures a regression gate can be set on, with their gate
// names (max_drop_hit, ...).
var GateMeasures = []struct{ Name, Key string }{
	{"max_drop_hit", metrics.KeyHit},
	{"max_drop_recall", metrics.KeyRecall},
	{"max_drop_ndcg", metrics.KeyNDCG},
}

// Options shape a comparison.
type Options struct {
	K             int    // this run's k
	KBFingerprint string // this run's KB
	RankDrop      int    // 0: DefaultRankDrop
	MaxFlips      int    // 0: DefaultMaxFlips
	MaxDrop       map[string]Tolerance
	Test          string // TestSignificant (default) or TestAny
	Resamples     int    // 0: metrics.DefaultResamples
	Seed          uint64 // 0: metrics.DefaultSeed
	Now           time.Time

	// GroupMaxDrop are the --max-drop MEASURE[@GROUP]=F gates: the tolerated
	// drop of a group's paired mean (groupgates.go).
	GroupMaxDrop floor.List

	// MinRBO and MaxChurn are the churn gates (churn.go): --min-rbo [GROUP=]F
	// on a group's mean RBO (Measure KeyRBO), --max-churn [GROUP=]F on the
	// share of its cases whose top k changed as a set (KeyChurn).
	MinRBO, MaxChurn floor.List
}

// Current is what the join needs of one case of this run besides its scores.
type Current struct {
	IDHash, GoldHash uint64 // IDHash(id), GoldHash(gold)
	// Line is the case's line in its cases file (0: unknown): the join tries
	// the baseline record at the same place first (Baseline.find).
	Line   int
	Ranked bool
	Rank   int
	// HasTop: Top is known without a rank (a retrieval case without gold);
	// Ranked implies it.
	HasTop bool
	Top    []string // the deduplicated top k
	// Keep is set by Prepare: the case may be listed, so query, gold and top
	// k are kept with it.
	Keep bool
	// RBO is the rank-biased overlap of Top with the baseline's top k (set by
	// Prepare or Add), HasRBO when both are known; SameTop when they are equal.
	RBO             float64
	HasRBO, SameTop bool
	// Left is how many entries of the baseline's top k left this run's
	// (metrics.LeftTop), SameSet that both hold the same set (set with RBO).
	Left    int
	SameSet bool
	rboSet  bool
	// Cluster is the case's family (its `cluster` key; "": none): the paired
	// statistics are computed over clusters when cases carry one (clusters.go).
	Cluster string
	rec     int // Prepare's lookup: 1 + the baseline record's index, -1 none, 0 not looked up
}

// Comparer joins this run's cases, in file order, with a loaded baseline.
type Comparer struct {
	b     *Baseline
	opt   Options
	seen  []bool // by baseline record
	cells map[cellKey]*cell

	paired, onlyCur, goldChanged, noGold int64
	missed, found, drops                 flipList
	onlyCurList                          []CaseRef
	goldList                             []goldRef
	ov                                   overlapState
	ch                                   churnState
}

type cellKey struct{ typ, locale string }

type cell struct {
	n    int64
	diff [metrics.NumCase]*metrics.Histogram
	base [metrics.NumCase]float64 // Σ baseline values
	cur  [metrics.NumCase]float64
	// clus: the cell's clusters (cases with a cluster key; nil: none), and
	// clusDiff the differences of those cases (clusters.go).
	clus     map[string]*clusterAcc
	clusDiff [metrics.NumCase]*metrics.Histogram
}

type flipList struct {
	total int64
	items []flipRef
}

type flipRef struct {
	rec  int
	cur  CaseLine
	file string
	rbo  float64 // NaN when unknown
}

type goldRef struct {
	rec  int
	cur  CaseRef
	gold []string
}

// NewComparer starts a comparison with b.
func NewComparer(b *Baseline, opt Options) *Comparer {
	if opt.RankDrop <= 0 {
		opt.RankDrop = DefaultRankDrop
	}
	if opt.MaxFlips <= 0 {
		opt.MaxFlips = DefaultMaxFlips
	}
	if opt.Test == "" {
		opt.Test = TestSignificant
	}
	if opt.Resamples <= 0 {
		opt.Resamples = metrics.DefaultResamples
	}
	if opt.Seed == 0 {
		opt.Seed = metrics.DefaultSeed
	}
	c := &Comparer{b: b, opt: opt, seen: make([]bool, b.recs.n), cells: map[cellKey]*cell{}}
	c.ov.init(opt, b.Source.Header)
	c.ch.init()
	return c
}

var hitIndex = metrics.CaseIndex(metrics.KeyHit)

// flip classifies a paired case: 1 newly missed, 2 newly found, 3 rank drop, 0 none.
func (c *Comparer) flip(rec *record, r *gate.CaseResult, cur *Current) int {
	if rec.hasScore(hitIndex) && r.Has[hitIndex] {
		bh, ch := rec.scores[hitIndex], r.Scores[hitIndex]
		switch {
		case bh == 1 && ch == 0:
			return 1
		case bh == 0 && ch == 1:
			return 2
		}
	}
	if rec.ranked() && cur.Ranked && rec.rank() > 0 && cur.Rank > 0 && cur.Rank-rec.rank() >= c.opt.RankDrop {
		return 3
	}
	return 0
}

// Prepare computes the case's rank-biased overlap with the baseline (cur.RBO)
// and reports whether the case may be listed (a flip, a changed gold set, a case
// only in this run, a case that may be among the most changed), so
// its caller keeps its query, gold and top k. It only reads the comparison
// (the moved list's cut atomically): safe for concurrent use, on the workers.
func (c *Comparer) Prepare(r *gate.CaseResult, cur *Current) bool {
	i := c.b.find(cur.IDHash, cur.Line)
	cur.rec = i + 1
	if i < 0 {
		cur.rec = -1
		return true
	}
	rec := c.b.recs.at(i)
	c.setRBO(rec, cur)
	if rec.gold != cur.GoldHash || rec.scored() != r.Scored {
		return true
	}
	if !r.Scored {
		return c.mayMove(cur) || c.mayChange(cur)
	}
	return c.flip(rec, r, cur) != 0 || c.mayChange(cur)
}

// Add joins one case of this run (file order; duplicate ids were refused before).
// line holds the case's id, query and gold (Scores and Has are taken from r).
// The strings of r, line and cur may view the case reader's block: what Add
// keeps, it copies.
func (c *Comparer) Add(r *gate.CaseResult, line *CaseLine, cur *Current) {
	i := cur.rec - 1 // looked up by Prepare (one random access of the table per case, not two)
	if cur.rec == 0 {
		i = c.b.find(cur.IDHash, cur.Line)
	}
	if i < 0 {
		c.onlyCur++
		if len(c.onlyCurList) < c.opt.MaxFlips {
			c.onlyCurList = append(c.onlyCurList, CaseRef{ID: strings.Clone(r.ID), File: r.File, Line: r.Line})
		}
		return
	}
	c.seen[i] = true
	rec := c.b.recs.at(i)
	c.setRBO(rec, cur)
	c.addChurn(i, r, line, cur)
	if !rec.scored() && !r.Scored {
		c.noGold++
		c.ov.withoutGold.add(cur)
		c.addMoved(i, r, line, cur)
		return
	}
	if rec.gold != cur.GoldHash || rec.scored() != r.Scored {
		c.goldChanged++
		if len(c.goldList) < c.opt.MaxFlips {
			c.goldList = append(c.goldList, goldRef{rec: i, cur: CaseRef{ID: strings.Clone(r.ID), File: r.File, Line: r.Line}, gold: input.CloneStrings(line.Gold)})
		}
		return
	}
	c.paired++
	c.ov.paired.add(cur)
	key := cellKey{r.Type, r.Locale}
	ce := c.cells[key]
	if ce == nil {
		ce = &cell{}
		for m := range ce.diff {
			ce.diff[m] = metrics.NewHistogram()
		}
		c.cells[cellKey{strings.Clone(r.Type), strings.Clone(r.Locale)}] = ce
	}
	ce.n++
	for m := range metrics.NumCase {
		if rec.hasScore(m) && r.Has[m] {
			ce.diff[m].Add(r.Scores[m] - rec.scores[m])
			if cur.Cluster != "" {
				ce.addClustered(cur.Cluster, m, r.Scores[m]-rec.scores[m])
			}
			ce.base[m] += rec.scores[m]
			ce.cur[m] += r.Scores[m]
		}
	}
	var l *flipList
	switch c.flip(rec, r, cur) {
	case 1:
		l = &c.missed
	case 2:
		l = &c.found
	case 3:
		l = &c.drops
	default:
		return
	}
	l.total++
	if len(l.items) < c.opt.MaxFlips {
		kept := CaseLine{ID: strings.Clone(r.ID), Line: r.Line, Locale: strings.Clone(r.Locale), Type: strings.Clone(r.Type),
			Query: strings.Clone(line.Query), Gold: input.CloneStrings(line.Gold), Ranked: cur.Ranked, Rank: cur.Rank, Top: input.CloneStrings(cur.Top)}
		rbo := math.NaN()
		if cur.HasRBO {
			rbo = cur.RBO
		}
		l.items = append(l.items, flipRef{rec: i, cur: kept, file: r.File, rbo: rbo})
	}
}

// CaseRef names a case.
type CaseRef struct {
	ID   string
	File string // "" for a baseline case (its file is the baseline's; a sharded baseline's shard once located: check.Result.LocateBaseline)
	Line int
}

// Flip is a case whose retrieval changed: newly missed, newly found or its first
// gold card ranked lower by at least the rank-drop threshold.
type Flip struct {
	ID, File, Locale, Type, Query string
	Line                          int
	Gold                          []string
	Before, After                 []string // top k of the baseline and of this run (nil when unknown)
	RankBefore, RankAfter         int      // first gold rank; 0: not retrieved or unknown
	Ranked                        bool     // both runs carry ranks and top k
	RBO                           float64  // rank-biased overlap of the two top k; NaN when unknown
}

// GoldChange is a case whose gold set differs between the runs (not paired).
type GoldChange struct {
	CaseRef
	Before, After []string
}

// Stat is one measure's paired comparison in a group.
type Stat struct {
	Key           string
	N             int64
	Base, Cur     float64 // means over the paired cases
	Delta         float64 // mean of (this run − baseline)
	CI95          [2]float64
	CI95Method    string // how CI95 was computed (metrics.Interval.Method): hall-t-betting below metrics.DifferenceReliableMinN pairs of a bounded measure, else hall-t (bounded-wilson-cc when every difference is equal)
	Unreliable    bool   // CI95's method covers less than 0.95 at this n in simulation: below metrics.DifferenceReliableMinN for a measure without a known range only (metrics.Histogram.DifferenceCI95)
	P             float64
	Test          string
	MDD           float64 // smallest |Δ| the paired test detects with power 0.8 at α = 0.05; NaN when none can be, or it cannot be estimated (NoSpread)
	Rejects       bool    // P < Alpha
	Change        string  // "worse" or "better" when Rejects (by the measure's direction), else ""
	Discordant    [2]int64
	HasDiscordant bool
	// Note is NoteMethods when the interval and the test disagree, else "".
	Note string
	// Clusters: the clusters the N cases fall into when the statistics are
	// computed over clusters (cases with a cluster key, clusters.go); 0
	// otherwise.
	Clusters int64
	// NoSpread: the MDD cannot be estimated because the differences do not
	// vary (every one equal to Delta; over clusters, every cluster's mean
	// difference), not because no drop is detectable (MDD NaN).
	NoSpread bool
}

// GroupStats is a group's paired comparison.
type GroupStats struct {
	Name  string
	N     int64 // paired cases
	Stats []Stat
}

// Difference is a setting in which the baseline differs from this run, with
// the two values; what it means for the comparison is the report layer's words
// (checkreport.DifferenceConsequence).
type Difference struct {
	Field          Setting
	Baseline, Ours string
}

// Setting names a setting a Difference is about (its key in the baseline file).
type Setting string

// The settings a baseline can differ in.
const (
	// SettingSchema: the baseline file's schema is a later one this build reads as Schema.
	SettingSchema Setting = "schema"
	// SettingK: the baseline was scored at another k.
	SettingK Setting = "k"
	// SettingKB: the knowledge base's fingerprint differs.
	SettingKB Setting = "kb_fingerprint"
	// SettingFormat: the baseline is a --cases-out file, not a baseline file.
	SettingFormat Setting = "format"
)

// Settings are every Setting.
var Settings = []Setting{SettingSchema, SettingK, SettingKB, SettingFormat}

// Comparison is everything the reports show of a comparison.
type Comparison struct {
	Available bool
	// NoBaseline is why there is no comparison, when !Available.
	NoBaseline *Unavailability

	File, Format, Schema string
	Commit               string
	CreatedAt            time.Time
	Stale                bool
	K                    int
	KBFingerprint        string
	Lacks                []string // what a --cases-out baseline does not carry
	Differences          []Difference
	Source               map[string]string // provenance of a fetched baseline (artifact id, run id, ...)

	BaselineCases                                  int64
	Paired, OnlyBaseline, OnlyCurrent, GoldChanged int64
	NoGold                                         int64
	RankDrop                                       int

	Overall  GroupStats
	ByType   []GroupStats
	ByLocale []GroupStats // indicative only

	NewlyMissed, NewlyFound, RankDrops                []Flip
	NewlyMissedTotal, NewlyFoundTotal, RankDropsTotal int64
	OnlyBaselineList, OnlyCurrentList                 []CaseRef
	GoldChangedList                                   []GoldChange

	// Overlap is the rank-biased overlap of the two runs' top k.
	Overlap Overlap
	// Churn is what changed in the top k of the cases both runs hold, with
	// or without gold (churn.go); ChurnStatus the churn gates' (pass, fail,
	// off: none set).
	Churn       Churn
	ChurnStatus outcome.Status

	Test       string
	Gates      outcome.Gates
	Regression outcome.Status // pass, fail, off
}

// NotInActions is the Unavailability code of --baseline auto outside GitHub
// Actions, where there is no artifact to look up.
const NotInActions = "not_in_actions"

// Unavailability is why there is no baseline to compare with, as data: Code
// is NotInActions or the artifact lookup's reason (ciartifact.Reason), Detail
// the lookup's one-line message about GitHub's answer or the artifact, shown
// as given ("" with NotInActions).
type Unavailability struct {
	Code, Detail string
}

// Unavailable is the comparison when there is no baseline: every regression gate
// that was set is off, its reason why (outcome.NoBaseline).
func Unavailable(why Unavailability, opt Options) *Comparison {
	c := &Comparison{NoBaseline: &why, Test: opt.Test, Regression: outcome.Off, ChurnStatus: outcome.Off}
	for _, gm := range GateMeasures {
		g := outcome.New(gm.Name, outcome.Off)
		g.Group, g.Measure = outcome.GroupOverall, gm.Key
		if t := opt.MaxDrop[gm.Key]; t.Set {
			g.Threshold = t.Value
			g.Why = []outcome.Clause{{Code: outcome.NoBaseline, Name: why.Code, Text: why.Detail}}
		}
		c.Gates = append(c.Gates, g)
	}
	c.Gates = append(c.Gates, unavailableGroupGates(why, opt)...)
	c.Gates = append(c.Gates, unavailableChurnGates(why, opt)...)
	return c
}

// ResultContext finishes the comparison: group statistics, flips with both
// sides' top k, the unpaired lists and the regression gates. It ends with
// ctx.Err() soon after ctx ends: the paired sign-flip tests (pairedStat) take
// seconds on thousands of distinct differences.
func (c *Comparer) ResultContext(ctx context.Context) (*Comparison, error) {
	b, h := c.b, c.b.Source.Header
	out := &Comparison{
		Available: true, File: b.Source.File, Format: b.Source.Format, Schema: Schema,
		BaselineCases: int64(b.recs.n), Paired: c.paired, OnlyCurrent: c.onlyCur,
		GoldChanged: c.goldChanged, NoGold: c.noGold, RankDrop: c.opt.RankDrop, Test: c.opt.Test,
		NewlyMissedTotal: c.missed.total, NewlyFoundTotal: c.found.total, RankDropsTotal: c.drops.total,
		OnlyCurrentList: c.onlyCurList,
	}
	if h != nil {
		out.Commit, out.K, out.KBFingerprint = h.Commit, h.K, h.KBFingerprint
		out.CreatedAt = b.CreatedAt()
		if !out.CreatedAt.IsZero() && !c.opt.Now.IsZero() {
			out.Stale = c.opt.Now.Sub(out.CreatedAt) > StaleAfter
		}
		if b.Source.SchemaRead != "" {
			out.Schema = b.Source.SchemaRead
			out.Differences = append(out.Differences, Difference{SettingSchema, b.Source.SchemaRead, Schema})
		}
		if h.K != c.opt.K {
			out.Differences = append(out.Differences, Difference{SettingK, strconv.Itoa(h.K), strconv.Itoa(c.opt.K)})
		}
		if h.KBFingerprint != c.opt.KBFingerprint {
			out.Differences = append(out.Differences, Difference{SettingKB, h.KBFingerprint, c.opt.KBFingerprint})
		}
	} else {
		out.Schema = ""
		out.Lacks = []string{"k", "kb_fingerprint", "commit", "created_at", "case lines", "ranks", "top k"}
		out.Differences = append(out.Differences, Difference{SettingFormat, FormatCasesOut, FormatBaseline})
	}
	for i := range b.recs.n {
		if !c.seen[i] {
			out.OnlyBaseline++
			if len(out.OnlyBaselineList) < c.opt.MaxFlips {
				d, err := b.detail(i)
				if err != nil {
					return nil, err
				}
				out.OnlyBaselineList = append(out.OnlyBaselineList, CaseRef{ID: d.ID, Line: b.lineOf(i)})
			}
		}
	}
	var err error
	for _, l := range []struct {
		src *flipList
		dst *[]Flip
	}{{&c.missed, &out.NewlyMissed}, {&c.found, &out.NewlyFound}, {&c.drops, &out.RankDrops}} {
		for _, f := range l.src.items {
			d, derr := b.detail(f.rec)
			if derr != nil {
				return nil, derr
			}
			fl := Flip{ID: f.cur.ID, File: f.file, Line: f.cur.Line, Locale: f.cur.Locale, Type: f.cur.Type,
				Query: f.cur.Query, Gold: f.cur.Gold, Ranked: d.Ranked && f.cur.Ranked, RBO: f.rbo}
			if d.Ranked {
				fl.Before, fl.RankBefore = d.Top, d.Rank
			}
			if f.cur.Ranked {
				fl.After, fl.RankAfter = f.cur.Top, f.cur.Rank
			}
			*l.dst = append(*l.dst, fl)
		}
	}
	for _, g := range c.goldList {
		d, derr := b.detail(g.rec)
		if derr != nil {
			return nil, derr
		}
		out.GoldChangedList = append(out.GoldChangedList, GoldChange{CaseRef: g.cur, Before: d.Gold, After: g.gold})
	}
	if out.Overlap, err = c.overlapResult(); err != nil {
		return nil, err
	}
	if out.Churn, err = c.churnResult(); err != nil {
		return nil, err
	}

	keys := make([]cellKey, 0, len(c.cells))
	for k := range c.cells {
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
	if out.Overall, err = c.group(ctx, "overall", keys, func(cellKey) bool { return true }); err != nil {
		return nil, err
	}
	for _, t := range types {
		g, err := c.group(ctx, t, keys, func(k cellKey) bool { return k.typ == t })
		if err != nil {
			return nil, err
		}
		out.ByType = append(out.ByType, g)
	}
	for _, l := range locales {
		g, err := c.group(ctx, l, keys, func(k cellKey) bool { return k.locale == l })
		if err != nil {
			return nil, err
		}
		out.ByLocale = append(out.ByLocale, g)
	}
	out.Gates, out.Regression = c.gates(out.Overall)
	c.groupGates(out) // --max-drop MEASURE@GROUP (groupgates.go)
	c.churnGates(out) // min_rbo, max_churn (churn.go)
	return out, err
}

// group merges the picked cells and computes each measure's paired
// statistics, until ctx ends.
func (c *Comparer) group(ctx context.Context, name string, keys []cellKey, pick func(cellKey) bool) (GroupStats, error) {
	g := GroupStats{Name: name}
	var diff [metrics.NumCase]*metrics.Histogram
	var base, cur [metrics.NumCase]float64
	var clusDiff [metrics.NumCase]*metrics.Histogram
	var clus map[string]*clusterAcc
	for m := range diff {
		diff[m] = metrics.NewHistogram()
		clusDiff[m] = metrics.NewHistogram()
	}
	for _, k := range keys {
		if !pick(k) {
			continue
		}
		ce := c.cells[k]
		g.N += ce.n
		for m := range diff {
			diff[m].Merge(ce.diff[m])
			base[m] += ce.base[m]
			cur[m] += ce.cur[m]
		}
		if ce.clus != nil { // a family may span cells: its parts are summed
			if clus == nil {
				clus = map[string]*clusterAcc{}
			}
			for key, a := range ce.clus {
				b := clus[key]
				if b == nil {
					b = &clusterAcc{}
					clus[key] = b
				}
				for m := range a.sum {
					b.sum[m] += a.sum[m]
					b.n[m] += a.n[m]
				}
			}
			for m := range clusDiff {
				clusDiff[m].Merge(ce.clusDiff[m])
			}
		}
	}
	for m, info := range metrics.CaseMeasures {
		h := diff[m]
		if h.N() == 0 {
			continue
		}
		s, err := pairedStat(ctx, info.Info, h, base[m], cur[m], c.opt.Resamples, c.opt.Seed)
		if err != nil {
			return g, err
		}
		if clus != nil {
			sums, sizes := clusterSums(m, clus, h, clusDiff[m])
			clusterStat(&s, info.Info, h, sums, sizes, c.opt.Resamples, c.opt.Seed)
		}
		g.Stats = append(g.Stats, s)
	}
	return g, nil
}

// pairedStat is the paired comparison of one measure from the histogram of the
// differences (this run − baseline) and the sums of both runs' values: means, the
// mean difference with its 95% interval and the paired test (issue 34):
//   - a 0/1 measure: the exact McNemar test and the interval inverted from it
//     (metrics.McNemarCI95), which excludes 0 exactly when the test rejects;
//     the smallest detectable difference by Connor's formula with the
//     discordant share the difference needs (metrics.MDDMcNemar);
//   - otherwise the exact sign-flip test where the differences share a
//     lattice, else sign-flip randomization, with the interval of the
//     differences (metrics.Histogram.DifferenceCI95: the rule of three when
//     every difference is equal, hall-t-betting below
//     metrics.DifferenceReliableMinN pairs or
//     metrics.DifferenceReliableMinNonzero non-zero differences of a bounded
//     measure, else hall-t) and MDDMean of the sd of the differences; where
//     that interval and the test disagree the Stat says so (NoteMethods: the
//     test decides);
//   - every difference 0: no test (TestNone, p = 1) and the rule of three.
//
// It ends with ctx.Err() soon after ctx ends (the sign-flip randomization,
// metrics.Histogram.SignFlipPContext).
func pairedStat(ctx context.Context, info metrics.Info, h *metrics.Histogram, baseSum, curSum float64, resamples int, seed uint64) (Stat, error) {
	n := h.N()
	s := Stat{Key: info.Key, N: n, Base: baseSum / float64(n), Cur: curSum / float64(n), Delta: h.Mean()}
	span := 1.0
	if info.Scale == metrics.ScaleUnbounded {
		span = math.Inf(1)
	}
	b, cc, binary := h.PairedDiscordant()
	iv := h.DifferenceCI95(-span, span)
	switch {
	case binary && b+cc == 0:
		s.Test, s.P = TestNone, 1
		s.MDD = math.NaN()
		if info.Scale == metrics.ScaleBinary {
			s.Discordant, s.HasDiscordant = [2]int64{0, 0}, true
			s.MDD = metrics.MDDMcNemar(0, n, metrics.DefaultAlpha, metrics.DefaultPower)
		} else {
			s.NoSpread = n >= metrics.McNemarMinPairs
		}
	case binary && info.Scale == metrics.ScaleBinary:
		s.Test, s.P = TestMcNemar, metrics.McNemarExactP(b, cc)
		s.Discordant, s.HasDiscordant = [2]int64{b, cc}, true
		iv = metrics.McNemarCI95(b, cc, n)
		s.MDD = metrics.MDDMcNemar(float64(b+cc)/float64(n), n, metrics.DefaultAlpha, metrics.DefaultPower)
	default:
		p, ok := h.SignFlipExactP()
		s.Test = TestSignFlipExact
		if !ok {
			var err error
			if p, err = h.SignFlipPContext(ctx, resamples, seed); err != nil {
				return s, err
			}
			s.Test = TestSignFlipMC
		}
		s.P = p
		s.MDD, s.NoSpread = signFlipMDD(h.SampleSD(), n, span)
	}
	s.CI95, s.CI95Method, s.Unreliable = iv.CI(), iv.Method, iv.Unreliable
	s.Rejects = s.P < Alpha
	if s.Rejects && s.Delta != 0 {
		if (s.Delta < 0) == info.HigherIsBetter {
			s.Change = "worse"
		} else {
			s.Change = "better"
		}
	}
	if excludes := s.CI95[0] > 0 || s.CI95[1] < 0; excludes != s.Rejects {
		s.Note = NoteMethods
	}
	return s, nil
}

// signFlipMDD is the smallest |Δ| a sign-flip test of n paired differences
// (or of n clusters' sums) with standard deviation sd (over clusters: the
// cluster-robust standard error times √n) detects at metrics.DefaultPower and
// DefaultAlpha, MDDMean; NaN below metrics.McNemarMinPairs, where no sign-flip
// test can reject at 0.05 (its smallest p is 2·½^n: 0.0625 at 5), and beyond
// span, the largest possible mean difference. When the differences do not vary
// (sd 0) it cannot be estimated: NaN with noSpread (the normal-theory formula
// gave 0, "n = 6 paired cases detect drops of 0.000").
func signFlipMDD(sd float64, n int64, span float64) (mdd float64, noSpread bool) {
	switch {
	case n < metrics.McNemarMinPairs || math.IsNaN(sd):
		return math.NaN(), false
	case sd == 0:
		return math.NaN(), true
	}
	mdd = metrics.MDDMean(sd, n, metrics.DefaultAlpha, metrics.DefaultPower)
	if mdd > span { // beyond the largest possible mean difference: nothing is detectable
		return math.NaN(), false
	}
	return mdd, false
}

// gateTolerance absorbs floating-point noise when a drop equals its tolerance.
const gateTolerance = 1e-9

// gates decides the regression gates on the overall paired means.
func (c *Comparer) gates(overall GroupStats) (outcome.Gates, outcome.Status) {
	var gs outcome.Gates
	status := outcome.Off
	for _, gm := range GateMeasures {
		g := outcome.New(gm.Name, outcome.Off)
		g.Group, g.Measure = outcome.GroupOverall, gm.Key
		var st *Stat
		for i := range overall.Stats {
			if overall.Stats[i].Key == gm.Key {
				st = &overall.Stats[i]
			}
		}
		if st != nil {
			g.Value, g.N = -st.Delta, st.N // the drop
		}
		t, set := c.opt.MaxDrop[gm.Key]
		if !set || !t.Set {
			gs = append(gs, g)
			continue
		}
		c.decide(&g, t.Value, st)
		switch {
		case g.Status == outcome.Fail:
			status = outcome.Fail
		case g.Status == outcome.Pass && status == outcome.Off:
			status = outcome.Pass
		}
		gs = append(gs, g)
	}
	return gs, status
}

// Package compare compares retrieval strategies on graded relevance judgments:
// per-query metrics of every run, their means with bootstrap CIs, paired
// comparisons against a baseline (bootstrap CI of the difference, sign-flip
// randomization test, Holm correction), a recommendation and a short diagnosis.
// It reads nothing and writes nothing (dataset reads, report/comparereport
// renders), and it holds no prose: the diagnosis is a list of Findings that the
// renderers put into words.
package compare

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"

	"github.com/retrieval-gate/retrieval-gate/internal/input"
	"github.com/retrieval-gate/retrieval-gate/internal/input/labelfile"
	"github.com/retrieval-gate/retrieval-gate/internal/input/trecfile"
	"github.com/retrieval-gate/retrieval-gate/internal/metrics"
	"github.com/retrieval-gate/retrieval-gate/internal/outcome"
)

// Schema is the JSON schema name of the comparison report.
const Schema = "retrieval-gate/compare@1"

// NoClearWinner is the recommendation when the best two strategies are not
// separated by a significant difference in the primary measure.
const NoClearWinner = "no clear winner"

// Primary is the default primary measure (--primary): the one measure the
// recommendation and the diagnosis rank and test strategies by, pre-declared so
// that its tests are adjusted across strategies only (Holm within its family).
const Primary = metrics.KeyDCG

// Alpha is the significance level, applied after the Holm correction.
const Alpha = 0.05

// Handful is how many best and worst queries are listed per strategy.
const Handful = 5

// Options are the comparison settings (the command's flags).
type Options struct {
	K             int
	Gain          metrics.Gain
	RelevantLevel int
	// RelevantLevelSet says the level was chosen (--relevant-level given): binary
	// qrels (no level above 1) then do not fall back to level 1.
	RelevantLevelSet bool
	Baseline         string // empty: the first run
	Primary          string // a metrics.QueryMeasures key; empty: Primary
	Resamples        int
	Seed             uint64
	Gate             GateOptions // compare as a gate: off unless its Strategy is set
	// JudgedOnly computes every measure on the condensed lists: unjudged
	// documents removed before the cutoff (trec_eval's -J; judged.go).
	JudgedOnly bool
	// HumanSheet, when set, corrects the judge's figures with human labels
	// (compare --human-qrels, ppi.go): Result.Human. Run sets it on its copy
	// from In.HumanQrels; a caller of Run leaves it nil.
	HumanSheet *labelfile.Sheet
	// Clusters gives queries their cluster (compare --clusters, clusters.go):
	// the intervals and paired tests are then computed over clusters. Run sets
	// it on its copy from In.Clusters; nil: every query independent.
	Clusters map[string]string
	// ClustersFile names the clusters file in the reports.
	ClustersFile string
	// Queries says what each query id stands for (compare --queries, the
	// cases; queries.go): its text (the best and worst queries show it), its
	// locale and its cluster, which counts as Clusters' (Clusters wins where
	// it lists the query). Run sets it on its copy from In.Queries; nil: ids
	// alone.
	Queries Queries
	// QueriesFile names the queries file in the reports.
	QueriesFile string
}

// Input is one named run.
type Input struct {
	Name string
	Run  *trecfile.Run
}

// Strategy is the evaluation of one run.
type Strategy struct {
	Name    string
	File    string
	N       int // evaluated queries (judged, with a document of positive gain)
	Missing int // evaluated queries absent from the run (scored 0)
	// RunQueries is the number of queries in the run; NotJudged of them are
	// absent from the qrels and ignored.
	RunQueries, NotJudged int
	// Values holds the per-query metrics, row-major: Values[i*NumGraded+m] for
	// the i-th evaluated query (Result.QueryIDs order) and measure m
	// (metrics.QueryMeasures); NaN where the measure does not count the query (a
	// binary measure on a query without a document at the relevant level).
	Values []float64
	Means  metrics.Graded // each over its measure's queries (MeasureN)
	CI     [metrics.NumGraded]metrics.Interval
	// MeasureN[m] is the number of queries measure m counts for this run:
	// Result.MeasureN[m], less the queries it leaves undefined for this
	// ranking (mean relevance: a top k without a judged result).
	MeasureN [metrics.NumGraded]int
	// Retrieved counts the documents in the top k of the evaluated queries;
	// ByLevel[l] those of relevance l, 0..Result.MaxLevel (unjudged ones
	// included in level 0); Unjudged the unjudged ones (a negative grade is
	// unjudged, judgedRelevance).
	Retrieved int
	ByLevel   []int
	Unjudged  int
	// ByPosition[r] is the mean relevance at rank r+1 over the judged documents
	// there (of the evaluated queries), like mean relevance over judged pairs: an unjudged or missing result is not in it.
	// ByPositionN[r] counts those documents; ByPosition[r] is NaN when it is 0.
	ByPosition  []float64
	ByPositionN []int
	Failed      []string // evaluated queries whose top-1 result has relevance 0 (or is missing), sorted
	Best        []string // highest primary measure first, ties by query id
	Worst       []string // lowest primary measure first, ties by query id
	// ByMeasure[m] are the best and worst queries by measure m
	// (metrics.QueryMeasures; bestworst.go): the primary's are Best and Worst.
	ByMeasure [metrics.NumGraded]Ranked
	// Judged is judged@k, the labelled share of the top k as retrieved (judged.go).
	Judged JudgedAtK
	// topN and topUnjudged are each evaluated query's documents in the top k
	// and the unjudged ones among them, counted by evaluate for judged@k.
	topN, topUnjudged []int32
	// scored is the run as scored (condensed with JudgedOnly) and byQ each
	// qrels query's place in it (-1: absent), kept by evaluate until Run has
	// compared the rankings (sameRankings) and then dropped.
	scored *trecfile.Run
	byQ    []int32
}

// Distribution returns the fractions of the top-k documents at each relevance
// level l (levels[l], 0..len(ByLevel)-1; 0 includes the unjudged and negative
// ones) and the unjudged fraction; all 0 when nothing was retrieved.
func (s *Strategy) Distribution() (levels []float64, unjudged float64) {
	levels = make([]float64, len(s.ByLevel))
	if s.Retrieved == 0 {
		return levels, 0
	}
	for l, c := range s.ByLevel {
		levels[l] = float64(c) / float64(s.Retrieved)
	}
	return levels, float64(s.Unjudged) / float64(s.Retrieved)
}

// Paired is the comparison of one strategy with another on one metric.
type Paired struct {
	Strategy, Baseline string
	Metric             string
	N                  int // queries the measure counts
	// Clusters: the clusters those queries fall into when the statistics are
	// computed over clusters (Options.Clusters); 0 otherwise.
	Clusters    int
	Delta       float64          // mean(strategy − baseline)
	CI          metrics.Interval // paired 95% CI of Delta
	P           float64          // exact (or randomization) p-value, before correction
	PMethod     string           // metrics.PMethod*
	PHolm       float64          // Holm-adjusted within the measure's family (its strategies)
	Primary     bool             // the primary measure's test (else a secondary one)
	Significant bool             // PHolm < Alpha
	// Identical: the two strategies return the same top k on every evaluated
	// query (Result.Identical): Delta is 0, P is 1 with PMethod
	// metrics.PMethodNoDifference, and CI is the rule of three (how large a
	// difference n identical queries still allow).
	Identical bool
	// Note says why the interval and the test disagree (the interval excludes 0
	// and the test is not significant, or the reverse); empty when they agree.
	Note string
}

// Reasons an interval and its test may disagree (Paired.Note).
const (
	// NoteSmallN: the paired interval is marked unreliable (Interval.Unreliable:
	// its method's simulated coverage is below 95% at its n, e.g. hall-t below
	// metrics.DifferenceReliableMinN pairs, or it could not be computed); the
	// test decides.
	NoteSmallN = "small-n"
	// NoteHolm: the unadjusted p is below Alpha; the adjustment across strategies is not.
	NoteHolm = "holm"
	// NoteMethods: the interval and the test are different procedures and differ
	// near the threshold; the test decides.
	NoteMethods = "methods"
	// NoteNoVariation: a corrected difference whose labelled queries do not
	// vary (IsHumanSignFlip(PMethod)): its interval is the rule of three, how
	// far the mean could still be from the estimate after n labelled queries
	// that all agree, and its test the exact sign-flip test of the human
	// differences; the test decides.
	NoteNoVariation = "no-variation"
)

// note is the Note of a test with interval ci: empty when they agree.
func note(p *Paired) string {
	excludes := p.CI.Lo > 0 || p.CI.Hi < 0
	if excludes == p.Significant {
		return ""
	}
	switch {
	case IsHumanSignFlip(p.PMethod):
		return NoteNoVariation
	case p.CI.Unreliable:
		return NoteSmallN
	case excludes && p.P < Alpha:
		return NoteHolm
	}
	return NoteMethods
}

// Result is a whole comparison.
type Result struct {
	Options
	Judged      int      // queries in the qrels
	QueryIDs    []string // evaluated queries (with a relevant document), sorted
	Strategies  []Strategy
	Paired      []Paired
	Recommended string  // a strategy name or NoClearWinner
	Leader      *Paired // best vs runner-up on the primary measure (nil with one strategy)
	// Decision is the one decision the reports give (decision.go): the
	// recommendation, the strategies it keeps, the reranker, the simplest.
	Decision Decision
	Exact    bool // Monte Carlo resampling (false: large-sample approximation)
	Findings []Finding
	// Scenarios are the common scenarios whose rules the comparison meets, each
	// with its numbers (scenarios.go); the recommendation's suggested actions.
	Scenarios    []Scenario
	NotEvaluated int           // judged queries without a document of positive gain, excluded from every mean
	Gates        outcome.Gates // the Gate options' floors and not_beaten; none unless asked
	// MeasureN is each measure's number of queries: the graded measures (DCG,
	// nDCG, mean relevance) count every evaluated query, the binary ones those
	// with a document at the relevant level. A measure over the judged results
	// (metrics.Info.OverJudged: mean relevance) counts, per run, only the queries
	// whose top k has a judged result: Strategy.MeasureN.
	MeasureN [metrics.NumGraded]int
	// InBinary[i] says evaluated query i has a document at the relevant level.
	InBinary []bool
	// MinLevel..MaxLevel is the relevance scale found in the qrels (the lowest and
	// highest relevance judged; MaxLevel is at least 0).
	MinLevel, MaxLevel int
	// LevelFallback: binary qrels under the default level: RelevantLevel was set to 1.
	LevelFallback bool
	// Human is the human correction (Options.HumanSheet; nil without): the
	// recommendation and the gates then use its figures.
	Human   *Human
	human   *humanValues
	primary int // index of Primary in metrics.QueryMeasures
	// identical[a][b] says strategies a and b rank the same top k on every
	// evaluated query (sameRankings).
	identical [][]bool
	// Clusters: the queries' clustering (Options.Clusters, the clusters of
	// Options.Queries; nil without).
	Clusters *Clusters
	// Queries: what each query id stands for (Options.Queries; nil without).
	Queries     Queries
	clusterIdx  []int // cluster of each evaluated query
	numClusters int
}

// Identical reports whether strategies a and b (indexes) return the same top
// k, in the same order, on every evaluated query (a query absent from both
// runs counts as the same): every paired difference of every measure is 0,
// and there is nothing to test.
func (r *Result) Identical(a, b int) bool {
	return a >= 0 && b >= 0 && a < len(r.identical) && b < len(r.identical[a]) && r.identical[a][b]
}

// sameRankings compares the top k the strategies scored on the evaluated
// queries eval (qrels indexes), every pair once.
func sameRankings(ss []Strategy, eval []int, k int) [][]bool {
	top := func(s *Strategy, qi int) []string {
		if s.byQ == nil || s.byQ[qi] < 0 {
			return nil
		}
		docs := s.scored.Queries[s.byQ[qi]].Docs
		return docs[:min(k, len(docs))]
	}
	out := make([][]bool, len(ss))
	for a := range ss {
		out[a] = make([]bool, len(ss))
		out[a][a] = true
	}
	for a := range ss {
		for b := a + 1; b < len(ss); b++ {
			same := true
			for _, qi := range eval {
				if !slices.Equal(top(&ss[a], qi), top(&ss[b], qi)) {
					same = false
					break
				}
			}
			out[a][b], out[b][a] = same, same
		}
	}
	return out
}

// PrimaryIndex is the index of the primary measure in metrics.QueryMeasures.
func (r *Result) PrimaryIndex() int { return r.primary }

// overJudged reports whether measure m is undefined on a query whose top k has
// no judged result (per run: its n, interval and paired tests are per run and
// per pair, statistics.go's sparse pass).
func overJudged(m int) bool { return metrics.QueryMeasures[m].OverJudged }

// zeroOne reports whether measure m's per-query values are 0 or 1 (hit): its
// paired differences are tested by McNemar's exact test, and their interval is
// the one inverted from it (metrics.PairedCI95).
func zeroOne(m int) bool { return metrics.QueryMeasures[m].Scale == metrics.ScaleBinary }

// binaryMeasure reports whether measure m depends on the relevant level (and so
// counts only the queries with a document at that level).
func binaryMeasure(m int) bool {
	return metrics.QueryMeasures[m].Params&metrics.ParamRelevantLevel != 0
}

// Verdict is the verdict of the gates: pass when none was asked for.
func (r *Result) Verdict() outcome.Status { return r.Gates.Verdict() }

// Failed returns the names of the failed gates.
func (r *Result) Failed() []string { return r.Gates.Failed() }

// FindingKind is what a diagnosis finding is about.
type FindingKind int

// The kinds of finding, each with the fields it sets.
const (
	// HybridVsDense: hybrid strategy A against dense (ANN) strategy B, Test = A − B.
	HybridVsDense FindingKind = iota
	// HybridVsLexical: hybrid strategy A against full-text strategy B, Test = A − B.
	HybridVsLexical
	// Reranker: reranked strategy A against the same strategy B without the reranker.
	Reranker
	// MissingQueries: A has no results for Count of the N evaluated queries.
	MissingQueries
)

// Finding is one item of the diagnosis. Strategy kinds are guessed from the
// strategies' names only; the renderers' wording says so.
type Finding struct {
	Kind     FindingKind
	A, B     string // strategy names
	Test     Paired // A − B on the primary measure (HybridVs*, Reranker)
	Count, N int    // MissingQueries (Count of N)
}

// Better reports whether the finding's test says A is significantly above B.
func (f Finding) Better() bool { return f.Test.Significant && f.Test.Delta > 0 }

// Worse reports whether the finding's test says A is significantly below B.
func (f Finding) Worse() bool { return f.Test.Significant && f.Test.Delta < 0 }

// Effect is what a finding's test says A does against B on the primary
// measure (the JSON "effect" of a reranker finding).
type Effect string

// The effects of a finding.
const (
	// EffectHelps: A significantly above B (Finding.Better).
	EffectHelps Effect = "helps"
	// EffectHurts: A significantly below B (Finding.Worse).
	EffectHurts Effect = "hurts"
	// EffectNone: no significant difference.
	EffectNone Effect = "no-significant-change"
)

// Effects are the effects, in the order of their words.
var Effects = []Effect{EffectHelps, EffectHurts, EffectNone}

// Effect is what the finding's test says A does against B.
func (f Finding) Effect() Effect {
	switch {
	case f.Better():
		return EffectHelps
	case f.Worse():
		return EffectHurts
	}
	return EffectNone
}

// N is the number of evaluated queries.
func (r *Result) N() int { return len(r.QueryIDs) }

// StrategyIndex returns the index of the named strategy, or -1.
func (r *Result) StrategyIndex(name string) int {
	for i := range r.Strategies {
		if r.Strategies[i].Name == name {
			return i
		}
	}
	return -1
}

// Compare compares the runs on the qrels (the parsed inputs of Run).
func Compare(q *trecfile.Qrels, runs []Input, opt Options) (*Result, error) {
	if err := checkRuns(len(runs), &opt); err != nil {
		return nil, err
	}
	if opt.Baseline == "" {
		opt.Baseline = runs[0].Name
	}
	res, eval, err := frame(q, opt)
	if err != nil {
		return nil, err
	}
	opt = res.Options
	seen := map[string]bool{}
	for _, in := range runs {
		if seen[in.Name] {
			return nil, fmt.Errorf("duplicate strategy name %q", in.Name)
		}
		seen[in.Name] = true
		s, err := evaluateHoles(q, in, eval, res.InBinary, res.primary, opt)
		if err != nil {
			return nil, err
		}
		res.rankQueries(&s)
		res.Strategies = append(res.Strategies, s)
	}
	if err := res.checkNames(); err != nil {
		return nil, err
	}
	if opt.HumanSheet != nil {
		if err := checkSheet(q, runs, opt.HumanSheet); err != nil {
			return nil, err
		}
	}
	res.cluster(opt)
	res.identical = sameRankings(res.Strategies, eval, opt.K)
	for i := range res.Strategies {
		res.Strategies[i].scored, res.Strategies[i].byQ = nil, nil
	}
	res.statistics()
	if opt.HumanSheet != nil {
		res.correct(q, runs, opt.HumanSheet)
	}
	res.conclude()
	return res, nil
}

// checkRuns checks Compare's arguments before any is read: n runs and the
// options (the baseline defaults to the first run, set by the caller).
func checkRuns(n int, opt *Options) error {
	if n == 0 {
		return fmt.Errorf("no run to compare")
	}
	if opt.K < 1 {
		return fmt.Errorf("k must be at least 1")
	}
	if opt.Primary == "" {
		opt.Primary = Primary
	}
	if metrics.QueryIndex(opt.Primary) < 0 {
		return fmt.Errorf("primary measure %q is not one of %s", opt.Primary, strings.Join(metrics.GradedKeys[:], ", "))
	}
	return nil
}

// frame is the result as far as the qrels give it, before any run is scored:
// the evaluated queries (eval: qrels indexes, by id; Result.QueryIDs), the
// measures' n and the relevance scale; res.Options is opt as applied (the
// level of binary qrels).
func frame(q *trecfile.Qrels, opt Options) (*Result, []int, error) {
	pi := metrics.QueryIndex(opt.Primary)
	res := &Result{Options: opt, Judged: q.NumQueries(), primary: pi}
	// Evaluated queries: judged with at least one document of positive gain, by id.
	var eval []int
	res.MinLevel, _ = q.Scale()
	res.MaxLevel = q.MaxLevel()
	var lv []int
	for i := range q.NumQueries() {
		lv = q.AppendLevels(lv[:0], i)
		if metrics.NumRelevant(lv, 1) > 0 {
			eval = append(eval, i)
		}
	}
	slices.SortFunc(eval, func(a, b int) int { return strings.Compare(q.QueryID(a), q.QueryID(b)) })
	res.NotEvaluated = q.NumQueries() - len(eval)
	if len(eval) == 0 {
		return nil, nil, input.Errorf(q.File, 0, "no judged query has a document of relevance >= 1: nothing to evaluate")
	}
	if res.MaxLevel < opt.RelevantLevel {
		if opt.RelevantLevelSet || res.MaxLevel != 1 {
			return nil, nil, input.Errorf(q.File, 0, "no judged query has a document of relevance >= %d (the highest level is %d): nothing to evaluate", opt.RelevantLevel, res.MaxLevel)
		}
		// Binary qrels under the default level: relevant = rel ≥ 1, said in the reports.
		opt.RelevantLevel = 1
		res.Options.RelevantLevel = 1
		res.LevelFallback = true
	}
	res.QueryIDs = make([]string, len(eval))
	res.InBinary = make([]bool, len(eval))
	nbin := 0
	for i, qi := range eval {
		res.QueryIDs[i] = q.QueryID(qi)
		lv = q.AppendLevels(lv[:0], qi)
		if res.InBinary[i] = metrics.NumRelevant(lv, opt.RelevantLevel) > 0; res.InBinary[i] {
			nbin++
		}
	}
	for m := range metrics.NumGraded {
		res.MeasureN[m] = len(eval)
		if binaryMeasure(m) {
			res.MeasureN[m] = nbin
		}
	}
	return res, eval, nil
}

// checkNames checks that the baseline and the gate's strategy are runs.
func (r *Result) checkNames() error {
	if r.StrategyIndex(r.Baseline) < 0 {
		return fmt.Errorf("baseline %q is not one of the runs", r.Baseline)
	}
	if g := r.Gate.Strategy; g != "" && r.StrategyIndex(g) < 0 {
		return fmt.Errorf("gate strategy %q is not one of the runs", g)
	}
	return nil
}

// cluster clusters the evaluated queries by --clusters or the queries'
// cluster keys (Options.Queries), and keeps the queries' texts.
func (r *Result) cluster(opt Options) {
	if hasClusters(opt.Clusters, opt.Queries) {
		file := opt.ClustersFile
		if opt.Clusters == nil {
			file = opt.QueriesFile
		}
		r.clustering(opt.Clusters, opt.Queries, file)
	}
	r.Queries = opt.Queries
}

// conclude draws the recommendation, the decision, the diagnosis, the
// scenarios and the gates from the statistics.
func (r *Result) conclude() {
	r.recommend()
	r.decide()
	r.diagnose()
	r.scenarios()
	r.bear()
	r.gates()
}

// scoring is one strategy's evaluation under way: score fills the slots of
// each evaluated query (eval order), finish sums them.
type scoring struct {
	q        *trecfile.Qrels
	eval     []int
	inBinary []bool
	primary  int
	opt      Options
	s        *Strategy
	failed   []bool
}

// tally is one goroutine's integer counts of a scoring (summed by finish, so
// the result does not depend on scheduling) and its buffers.
type tally struct {
	missing, unjudged, retrieved int
	byLevel                      []int
	posSum, posN                 []int
	rels                         []int
	unj                          []bool
	lv                           []int
	in                           metrics.QueryInput // GradedAtK's, kept here so that it is not allocated per query
}

func newScoring(q *trecfile.Qrels, eval []int, inBinary []bool, primary int, opt Options, s *Strategy) *scoring {
	const M = metrics.NumGraded
	s.N = len(eval)
	s.Values = make([]float64, len(eval)*M)
	s.topN, s.topUnjudged = make([]int32, len(eval)), make([]int32, len(eval)) // judged@k (judged.go)
	return &scoring{q: q, eval: eval, inBinary: inBinary, primary: primary, opt: opt, s: s,
		failed: make([]bool, len(eval))}
}

func (g *scoring) newTally() *tally {
	k := g.opt.K
	return &tally{posSum: make([]int, k), posN: make([]int, k), byLevel: make([]int, g.q.MaxLevel()+1),
		rels: make([]int, 0, k), unj: make([]bool, 0, k)}
}

// score scores evaluated query i on its ranking docs (present false: the run
// does not have the query).
func (g *scoring) score(c *tally, i int, docs []string, present bool) {
	const M = metrics.NumGraded
	q, s, k, opt := g.q, g.s, g.opt.K, g.opt
	qi := g.eval[i]
	rels, unj := c.rels[:0], c.unj[:0]
	if !present {
		c.missing++
	} else {
		for _, doc := range docs {
			if len(rels) == k {
				break
			}
			rel, judged := judgedRelevance(q, qi, doc)
			if judged {
				c.posSum[len(rels)] += max(rel, 0)
				c.posN[len(rels)]++
			} else {
				c.unjudged++
				s.topUnjudged[i]++
			}
			c.byLevel[max(rel, 0)]++
			rels, unj = append(rels, rel), append(unj, !judged)
		}
	}
	c.rels, c.unj = rels, unj
	c.retrieved += len(rels)
	s.topN[i] = int32(len(rels)) //nolint:gosec // at most k (≤ 1000) results
	c.lv = q.AppendLevels(c.lv[:0], qi)
	c.in = metrics.QueryInput{Rels: rels, Unjudged: unj, Levels: c.lv, K: k, Gain: opt.Gain, RelevantLevel: opt.RelevantLevel}
	m := metrics.GradedAtK(&c.in)
	if !g.inBinary[i] {
		for j := range M {
			if binaryMeasure(j) {
				m[j] = math.NaN()
			}
		}
	}
	copy(s.Values[i*M:], m[:])
	g.failed[i] = len(rels) == 0 || rels[0] <= 0
}

// finish sums the tallies into the strategy's counts, means, best and worst.
func (g *scoring) finish(parts []*tally) {
	const M = metrics.NumGraded
	q, s, k, eval := g.q, g.s, g.opt.K, g.eval
	posSum := make([]int, k)
	s.ByPositionN = make([]int, k)
	s.ByLevel = make([]int, q.MaxLevel()+1)
	for _, c := range parts {
		s.Missing += c.missing
		s.Unjudged += c.unjudged
		s.Retrieved += c.retrieved
		for l, v := range c.byLevel {
			s.ByLevel[l] += v
		}
		for r, v := range c.posSum {
			posSum[r] += v
			s.ByPositionN[r] += c.posN[r]
		}
	}
	for i, f := range g.failed {
		if f {
			s.Failed = append(s.Failed, q.QueryID(eval[i]))
		}
	}
	for m := range M {
		sum, cnt := 0.0, 0
		for i := range eval {
			if v := s.Values[i*M+m]; !math.IsNaN(v) {
				sum += v
				cnt++
			}
		}
		s.Means[m] = sum / float64(cnt) // NaN when no query counts
		s.MeasureN[m] = cnt
	}
	s.ByPosition = make([]float64, k)
	for r := range k {
		s.ByPosition[r] = float64(posSum[r]) / float64(s.ByPositionN[r]) // NaN when none is judged
	}
	s.Best = g.extremes(func(a, b float64) bool { return a > b })
	s.Worst = g.extremes(func(a, b float64) bool { return a < b })
	g.failed = nil
}

// extremes is the ids of the Handful evaluated queries whose primary measure
// comes first by before, ties by query id (eval is sorted by id: the first
// Handful of a stable sort); queries the primary measure does not count are
// not ranked.
func (g *scoring) extremes(before func(a, b float64) bool) []string {
	const M = metrics.NumGraded
	type dq struct {
		v float64
		i int
	}
	top := make([]dq, 0, Handful+1)
	for i := range g.eval {
		v := g.s.Values[i*M+g.primary]
		if math.IsNaN(v) || len(top) == Handful && !before(v, top[len(top)-1].v) {
			continue
		}
		pos := len(top)
		for pos > 0 && before(v, top[pos-1].v) {
			pos--
		}
		top = slices.Insert(top, pos, dq{v, i})
		if len(top) > Handful {
			top = top[:Handful]
		}
	}
	out := make([]string, 0, len(top))
	for _, x := range top {
		out = append(out, g.q.QueryID(g.eval[x.i]))
	}
	return out
}

func evaluate(q *trecfile.Qrels, in Input, eval []int, inBinary []bool, primary int, opt Options) (Strategy, error) {
	run := in.Run
	s := Strategy{Name: in.Name, File: run.File, N: len(eval), RunQueries: len(run.Queries)}
	byQ := make([]int32, q.NumQueries()) // qrels index -> run query, -1 absent
	for i := range byQ {
		byQ[i] = -1
	}
	common := 0
	for j, rq := range run.Queries {
		qi, ok := q.QueryIndex(rq.ID)
		if !ok {
			s.NotJudged++
			continue
		}
		byQ[qi] = int32(j)
		common++
	}
	if common == 0 {
		return s, input.Errorf(run.File, 0, "run %q has no query in common with the qrels %s", in.Name, q.File)
	}
	s.scored, s.byQ = run, byQ
	g := newScoring(q, eval, inBinary, primary, opt, &s)
	// The queries are scored in fixed parts on parallel goroutines; the parts'
	// integer counters are summed afterwards, so the result does not depend on scheduling.
	const parts = 8
	part := make([]*tally, parts)
	var wg sync.WaitGroup
	for p := range parts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := g.newTally()
			part[p] = c
			for i := p * len(eval) / parts; i < (p+1)*len(eval)/parts; i++ {
				if j := byQ[eval[i]]; j < 0 {
					g.score(c, i, nil, false)
				} else {
					g.score(c, i, run.Queries[j].Docs, true)
				}
			}
		}()
	}
	wg.Wait()
	g.finish(part)
	return s, nil
}

// rowGroup is a set of evaluated queries (rows) and the measures that count
// exactly those queries: the graded measures count every evaluated query, the
// binary ones those with a document at the relevant level.
type rowGroup struct {
	rows     []int
	measures []int
}

// groups splits the measures by the queries they count (one group when the two
// sets are equal).
func (r *Result) groups() []rowGroup {
	n := r.N()
	all, bin := make([]int, n), make([]int, 0, n)
	for i := range n {
		all[i] = i
		if r.InBinary[i] {
			bin = append(bin, i)
		}
	}
	var graded, binary []int
	for m := range metrics.NumGraded {
		if overJudged(m) {
			continue // its rows are per run: statistics' sparse pass
		}
		if binaryMeasure(m) && len(bin) < n {
			binary = append(binary, m)
		} else {
			graded = append(graded, m)
		}
	}
	gs := []rowGroup{{all, graded}}
	if len(binary) > 0 {
		gs = append(gs, rowGroup{bin, binary})
	}
	return gs
}

// measureRange is measure m's per-query range for the intervals' widening.
func (r *Result) measureRange(m int) (lo, hi float64) {
	return metrics.QueryRange(metrics.QueryMeasures[m].Info, r.K, r.Gain, max(r.MaxLevel, 1))
}

// pValue is the paired p-value of the differences d: exact (McNemar, or the
// exact sign-flip on their lattice) when cheap; else the Monte Carlo sign-flip
// test below metrics.SaddlepointMinQueries queries within the resampling
// budget; else the saddlepoint approximation (metrics.LargeSampleSignFlipP).
func (r *Result) pValue(d []float64) (float64, string) {
	if p, method, ok := metrics.PairedExactP(d); ok {
		return p, method
	}
	if !metrics.UseLargeSampleP(len(d), r.Resamples) {
		return metrics.SignFlipPValues(d, len(d), 1, r.Resamples, r.Seed)[0], metrics.PMethodRandomization
	}
	return metrics.LargeSampleSignFlipP(d, r.Resamples, r.Seed)
}

// statisticsHook, when set (by a test), is called as the statistics start.
var statisticsHook func()

// statistics fills the CIs of every mean and the paired comparisons against
// the baseline, Holm-adjusted within each measure's family of strategies.
func (r *Result) statistics() {
	if statisticsHook != nil {
		statisticsHook()
	}
	const M = metrics.NumGraded
	S := len(r.Strategies)
	base := r.StrategyIndex(r.Baseline)
	others := make([]int, 0, S-1)
	for i := range r.Strategies {
		if i != base {
			others = append(others, i)
		}
	}
	if r.InBinary == nil { // every query counts for every measure
		r.InBinary = make([]bool, r.N())
		for i := range r.InBinary {
			r.InBinary[i] = true
		}
	}
	r.Exact = metrics.ResamplingIsExact(r.N(), r.Resamples)
	// paired[o*M+m] is strategy others[o] against the baseline on measure m.
	paired := make([]Paired, len(others)*M)
	for _, g := range r.groups() {
		n, G := len(g.rows), len(g.measures)
		if n == 0 {
			continue
		}
		// x: every strategy's values of the group's measures, row-major.
		cols := S * G
		x := make([]float64, n*cols)
		for i, row := range g.rows {
			for s := range r.Strategies {
				for j, m := range g.measures {
					x[i*cols+s*G+j] = r.Strategies[s].Values[row*M+m]
				}
			}
		}
		var sub []int // the rows' clusters (clustered statistics)
		nc := 0
		if r.clustered() {
			sub, nc = r.rowClusters(g.rows)
		}
		var stats [][]float64
		if sub == nil && metrics.ResamplingIsExact(n, r.Resamples) {
			// One index draw per resample for all strategies and measures; the
			// resampled mean of a paired difference is the difference of the means.
			stats = metrics.BootstrapMeans(x, n, cols, r.Resamples, r.Seed)
		}
		col := func(c int) []float64 {
			out := make([]float64, n)
			for i := range n {
				out[i] = x[i*cols+c]
			}
			return out
		}
		rep := func(c int) []float64 {
			if stats == nil {
				return nil
			}
			return slices.Clone(stats[c])
		}
		for s := range r.Strategies {
			for j, m := range g.measures {
				lo, hi := r.measureRange(m)
				if sub != nil {
					r.Strategies[s].CI[m] = clusterMeanCI95(col(s*G+j), sub, nc, lo, hi)
					continue
				}
				r.Strategies[s].CI[m] = metrics.ColumnCI95(col(s*G+j), rep(s*G+j), lo, hi)
			}
		}
		type mcCol struct {
			p *Paired
			d []float64
		}
		var mc []mcCol
		for o, s := range others {
			for j, m := range g.measures {
				a, b := col(s*G+j), col(base*G+j)
				d := make([]float64, n)
				for i := range d {
					d[i] = a[i] - b[i]
				}
				lo, hi := r.measureRange(m)
				pp := &paired[o*M+m]
				*pp = Paired{
					Strategy: r.Strategies[s].Name, Baseline: r.Baseline, Metric: metrics.GradedKeys[m], N: n,
					Delta: r.Strategies[s].Means[m] - r.Strategies[base].Means[m],
					CI:    metrics.PairedCI95(d, hi-lo, zeroOne(m)), Primary: m == r.primary,
					Identical: r.Identical(s, base),
				}
				if sub != nil {
					pp.Clusters = nc
					pp.CI = metrics.ClusterPairedCI95(d, sub, nc, hi-lo)
					pp.P, pp.PMethod = metrics.ClusterPairedP(d, sub, nc, r.Resamples, r.Seed)
					continue
				}
				if p, method, ok := metrics.PairedExactP(d); ok {
					pp.P, pp.PMethod = p, method
				} else {
					mc = append(mc, mcCol{pp, d})
				}
			}
		}
		// The tests without an exact form share one sign vector per resample.
		if len(mc) > 0 && !metrics.UseLargeSampleP(n, r.Resamples) {
			dm := make([]float64, n*len(mc))
			for c, x := range mc {
				for i, v := range x.d {
					dm[i*len(mc)+c] = v
				}
			}
			for c, p := range metrics.SignFlipPValues(dm, n, len(mc), r.Resamples, r.Seed) {
				mc[c].p.P, mc[c].p.PMethod = p, metrics.PMethodRandomization
			}
		} else {
			ds := make([][]float64, len(mc))
			for c, x := range mc {
				ds[c] = x.d
			}
			ps, methods := metrics.LargeSampleSignFlipPs(ds, r.Resamples, r.Seed)
			for c, x := range mc {
				x.p.P, x.p.PMethod = ps[c], methods[c]
			}
		}
	}
	r.sparseStatistics(paired, others, base)
	ps := make([]float64, len(paired))
	family := make([]string, len(paired))
	for i, p := range paired {
		ps[i], family[i] = p.P, p.Metric
	}
	for i, adj := range metrics.HolmWithin(ps, family) {
		p := &paired[i]
		p.PHolm, p.Significant = adj, adj < Alpha
		p.Note = note(p)
	}
	r.Paired = paired
}

// sparseStatistics fills the intervals and the baseline comparisons of the
// measures over the judged results (mean relevance), whose queries differ from
// run to run: each run's interval over the queries it defines (its MeasureN),
// each paired comparison over the queries both runs define (the pairs with a
// hole on either side left out, as a binary measure leaves out the queries
// without a relevant document), unadjusted here; Holm follows in statistics
// with the measure's family as for every measure.
func (r *Result) sparseStatistics(paired []Paired, others []int, base int) {
	const M = metrics.NumGraded
	for m := range M {
		if !overJudged(m) {
			continue
		}
		lo, hi := r.measureRange(m)
		for s := range r.Strategies {
			st := &r.Strategies[s]
			xs := make([]float64, 0, st.MeasureN[m])
			var rows []int
			for i := range r.N() {
				if v := st.Values[i*M+m]; !math.IsNaN(v) {
					xs = append(xs, v)
					rows = append(rows, i)
				}
			}
			if r.clustered() {
				sub, nc := r.rowClusters(rows)
				st.CI[m] = clusterMeanCI95(xs, sub, nc, lo, hi)
				continue
			}
			var rep []float64
			if n := len(xs); n > 0 && metrics.ResamplingIsExact(n, r.Resamples) {
				rep = metrics.BootstrapMeans(xs, n, 1, r.Resamples, r.Seed)[0]
			}
			st.CI[m] = metrics.ColumnCI95(xs, rep, lo, hi)
		}
		for o, s := range others {
			paired[o*M+m] = r.pairOn(s, base, m)
		}
	}
}

// pairOn is the paired comparison of strategies a − b on measure m over the
// queries both define (a binary measure: those at the relevant level; mean
// relevance: those where both top k have a judged result), not adjusted. Delta
// is the mean of those differences: for a measure every run defines on the
// same queries it is the difference of the two means.
func (r *Result) pairOn(a, b, m int) Paired {
	const M = metrics.NumGraded
	A, B := &r.Strategies[a], &r.Strategies[b]
	var d []float64
	var rows []int
	sum := 0.0
	for i := range r.N() {
		x, y := A.Values[i*M+m], B.Values[i*M+m]
		if math.IsNaN(x) || math.IsNaN(y) { // a query either run leaves undefined
			continue
		}
		d = append(d, x-y)
		rows = append(rows, i)
		sum += x - y
	}
	n := len(d)
	out := Paired{Strategy: A.Name, Baseline: B.Name, Metric: metrics.GradedKeys[m], N: n,
		Delta: A.Means[m] - B.Means[m], Primary: m == r.primary, Identical: r.Identical(a, b)}
	if overJudged(m) {
		out.Delta = sum / float64(n) // NaN without a common query
	}
	lo, hi := r.measureRange(m)
	if r.clustered() {
		sub, nc := r.rowClusters(rows)
		out.Clusters = nc
		out.CI = metrics.ClusterPairedCI95(d, sub, nc, hi-lo)
		out.P, out.PMethod = metrics.ClusterPairedP(d, sub, nc, r.Resamples, r.Seed)
		return out
	}
	out.CI = metrics.PairedCI95(d, hi-lo, zeroOne(m))
	out.P, out.PMethod = r.pValue(d)
	return out
}

// pairTest compares strategies a and b (a − b) on metric m. When the pair involves
// the baseline, the Holm-adjusted comparison already made is returned; otherwise a
// new test whose p-value is Holm-adjusted as one more member of the measure's family.
func (r *Result) pairTest(a, b, m int) Paired {
	A, B := &r.Strategies[a], &r.Strategies[b]
	for _, p := range r.Paired {
		if p.Metric != metrics.GradedKeys[m] {
			continue
		}
		if p.Strategy == A.Name && p.Baseline == B.Name {
			return p
		}
		if p.Strategy == B.Name && p.Baseline == A.Name {
			p.Strategy, p.Baseline = A.Name, B.Name
			p.Delta = -p.Delta
			p.CI.Lo, p.CI.Hi = -p.CI.Hi, -p.CI.Lo
			return p
		}
	}
	out := r.pairOn(a, b, m)
	family := make([]float64, 0, len(r.Paired)+1)
	for _, p := range r.Paired {
		if p.Metric == out.Metric {
			family = append(family, p.P)
		}
	}
	family = append(family, out.P)
	out.PHolm = metrics.Holm(family)[len(family)-1]
	out.Significant = out.PHolm < Alpha
	out.Note = note(&out)
	return out
}

// ranked returns the strategy indexes by mean primary measure, best first
// (ties: by name, so that the order of the runs on the command line does not
// pick the best, the runner-up or the simplest contender).
func (r *Result) ranked() []int {
	return r.rankedBy(func(s int) float64 { return r.Strategies[s].Means[r.primary] })
}

// rankedBy returns the strategy indexes by mean(s), highest first, ties by
// name (names are unique): the ranking does not depend on the runs' order.
func (r *Result) rankedBy(mean func(s int) float64) []int {
	idx := make([]int, len(r.Strategies))
	for i := range idx {
		idx[i] = i
	}
	slices.SortFunc(idx, func(a, b int) int {
		if c := cmp.Compare(mean(b), mean(a)); c != 0 {
			return c
		}
		return strings.Compare(r.Strategies[a].Name, r.Strategies[b].Name)
	})
	return idx
}

// recommend picks the best mean primary measure, or NoClearWinner when the
// runner-up is not significantly worse.
func (r *Result) recommend() {
	rk := r.decisionRanked()
	if len(rk) == 1 {
		r.Recommended = r.Strategies[rk[0]].Name
		return
	}
	lead := r.decisionTest(rk[0], rk[1], r.primary)
	r.Leader = &lead
	if lead.Significant && lead.Delta > 0 {
		r.Recommended = r.Strategies[rk[0]].Name
	} else {
		r.Recommended = NoClearWinner
	}
}

// tokens splits a strategy name into lower-case alphanumeric words.
func tokens(name string) []string {
	return strings.FieldsFunc(strings.ToLower(name), func(c rune) bool {
		return !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9')
	})
}

func hasToken(name string, words ...string) bool {
	for _, t := range tokens(name) {
		for _, w := range words {
			if t == w {
				return true
			}
		}
	}
	return false
}

var (
	denseWords   = []string{"ann", "knn", "dense", "vector", "vec", "embedding", "embeddings", "semantic"}
	lexicalWords = []string{"bm25", "lexical", "fulltext", "fts", "keyword", "keywords", "sparse"}
	hybridWords  = []string{"hybrid", "rrf", "fusion"}
	rerankWords  = []string{"rr", "ce", "crossencoder"}
)

// rerankPrefix starts every reranker word: rerank, reranked, reranker, reranking.
const rerankPrefix = "rerank"

func isRerank(name string) bool {
	for _, t := range tokens(name) {
		if strings.HasPrefix(t, rerankPrefix) || slices.Contains(rerankWords, t) {
			return true
		}
	}
	return false
}

// withoutRerank is the name's tokens without the reranker words, joined.
func withoutRerank(name string) string {
	var keep []string
	for _, t := range tokens(name) {
		if strings.HasPrefix(t, rerankPrefix) || slices.Contains(rerankWords, t) || t == "with" || t == "no" || t == "without" {
			continue
		}
		keep = append(keep, t)
	}
	return strings.Join(keep, " ")
}

// diagnose finds what the diagnosis reports. Strategy kinds are guessed from
// their names only.
func (r *Result) diagnose() {
	S := len(r.Strategies)
	add := func(f Finding) { r.Findings = append(r.Findings, f) }
	kind := func(i int, words []string) bool { return hasToken(r.Strategies[i].Name, words...) }
	// Hybrid against dense (ANN) and against lexical, with the same reranking.
	for h := range S {
		if !kind(h, hybridWords) {
			continue
		}
		for o := range S {
			if o == h || kind(o, hybridWords) || isRerank(r.Strategies[o].Name) != isRerank(r.Strategies[h].Name) {
				continue
			}
			f := Finding{A: r.Strategies[h].Name, B: r.Strategies[o].Name}
			switch {
			case kind(o, denseWords):
				f.Kind = HybridVsDense
			case kind(o, lexicalWords):
				f.Kind = HybridVsLexical
			default:
				continue
			}
			f.Test = r.pairTest(h, o, r.primary)
			add(f)
		}
	}
	// A reranked strategy against the same strategy without the reranker.
	for a := range S {
		an := r.Strategies[a].Name
		if !isRerank(an) {
			continue
		}
		for b := range S {
			bn := r.Strategies[b].Name
			if b == a || isRerank(bn) || withoutRerank(an) != withoutRerank(bn) {
				continue
			}
			add(Finding{Kind: Reranker, A: an, B: bn, Test: r.pairTest(a, b, r.primary)})
		}
	}
	// Wide intervals are a scenario (scenarios.go), with the queries to add; few
	// judged documents are the judged@k warning (judged.go).
	// Missing queries.
	for i := range r.Strategies {
		s := &r.Strategies[i]
		if s.Missing > 0 {
			add(Finding{Kind: MissingQueries, A: s.Name, Count: s.Missing, N: r.N()})
		}
	}
}

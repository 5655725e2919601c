package compare

import (
	"math"
	"slices"

	"github.com/retrieval-gate/retrieval-gate/internal/floor"
	"github.com/retrieval-gate/retrieval-gate/internal/input"
	"github.com/retrieval-gate/retrieval-gate/internal/input/labelfile"
	"github.com/retrieval-gate/retrieval-gate/internal/input/trecfile"
	"github.com/retrieval-gate/retrieval-gate/internal/metrics"
)

// PMethodPPI is the p-value method of a human-corrected paired test: the PPI++
// estimate of the mean difference over its standard error, against Student's t
// with n − 1 degrees of freedom (n the human-labelled queries); PMethodPPIJackknife
// when that standard error is the jackknife's (metrics.PPITuned, from 3
// labelled queries), PMethodPPI with the plug-in one below.
const (
	PMethodPPI          = "ppi++-t"
	PMethodPPIJackknife = "ppi++-jackknife-t"
	// PMethodPPIClusterJackknife is the test of a corrected difference over
	// queries in clusters: its standard error the delete-one-cluster
	// jackknife's (metrics.PPIClustered), Student's t on the labelled
	// clusters − 1 degrees of freedom; PMethodPPIStratifiedClusterJackknife
	// when the estimate is stratified by locale too.
	PMethodPPIClusterJackknife           = "ppi++-cluster-jackknife-t"
	PMethodPPIStratifiedClusterJackknife = "ppi++-stratified-cluster-jackknife-t"
	// PMethodHumanSignFlipExact is the test of a corrected difference whose
	// labelled queries leave PPI++ no variation (standard error 0, the
	// estimate not 0): the t statistic has nothing to divide by, so p is
	// the exact sign-flip test of the labelled queries' human paired
	// differences (metrics.PairedExactP; when all n are equal, the sign
	// test, p = 2·0.5^n). PMethodHumanSignFlipRandomization when no exact
	// test is cheap (the Monte Carlo sign-flip test). Over clusters, the
	// test of the clusters' sums of those differences:
	// PMethodHumanClusterSignFlipExact, PMethodHumanClusterSignFlipRandomization.
	PMethodHumanSignFlipExact                = "human-exact-sign-flip"
	PMethodHumanSignFlipRandomization        = "human-sign-flip-randomization"
	PMethodHumanClusterSignFlipExact         = "human-cluster-exact-sign-flip"
	PMethodHumanClusterSignFlipRandomization = "human-cluster-sign-flip-randomization"
)

// IsHumanSignFlip reports whether method is one of the sign-flip tests of
// the human paired differences (a corrected difference without variation).
func IsHumanSignFlip(method string) bool {
	switch method {
	case PMethodHumanSignFlipExact, PMethodHumanSignFlipRandomization, PMethodHumanClusterSignFlipExact, PMethodHumanClusterSignFlipRandomization:
		return true
	}
	return false
}

// Human is the human correction of a comparison (compare --human-qrels): a
// random sample of the queries with every pooled document graded by people
// (judge --human-sample's sheet), and the PPI++ estimates built from it and the
// judge's values of every query. The unit is a query; the estimand is each
// measure's mean over the evaluated queries under human grades.
type Human struct {
	File string
	// N is the number of human-labelled evaluated queries (the human n of the
	// graded measures); MeasureN[m] that of measure m (the binary measures count
	// only the queries with a document at the relevant level in the judge's qrels).
	N        int
	MeasureN [metrics.NumGraded]int
	// Pairs is the number of graded rows used; NotEvaluated the labelled
	// queries that are not evaluated (the judge's qrels give them no relevant
	// document), left out; Unlabelled the sheet's queries without any grade.
	Pairs, NotEvaluated, Unlabelled int
	// Holes counts the top-k documents of the labelled queries, over every
	// strategy, that the sheet does not grade (scored 0 under human grades, as
	// unjudged documents are).
	Holes int
	Bias  Bias
	// Means[s][m] is strategy s's PPI++ estimate of measure m, HumanOnly[s][m]
	// the mean of the human values alone (λ = 0; over clusters, with the
	// delete-one-cluster jackknife's interval).
	Means, HumanOnly [][metrics.NumGraded]metrics.PPI
	// Paired is Result.Paired corrected, in the same order: Delta is the PPI++
	// estimate of the mean difference, CI its interval, P its t-test, PHolm
	// adjusted within each measure's family as the judge-only tests are.
	Paired []Paired
	// Strata: the estimates stratified by locale (strata.go; nil when the
	// queries' locales are not known, or there is one). Means and Paired are
	// then the stratified estimates, and ByLocale[l][s][m] is locale l's own
	// PPI++ estimate of strategy s's measure m (Strata.Locales order).
	Strata   *Strata
	ByLocale [][][metrics.NumGraded]metrics.PPI
	// Clusters is the number of clusters holding a human-labelled evaluated
	// query when the queries come in clusters (Result.Clusters): every
	// corrected interval and test is then computed over the clusters
	// (metrics.PPIClustered; each estimate's PPI.Clusters counts its own
	// measure's labelled clusters); 0 otherwise.
	Clusters int
}

// Bias is the judge's error on the human sample, over the sheet's graded pairs
// that the judge's qrels grade too.
type Bias struct {
	// Confusion[h][j] counts the pairs of human grade h (0..MaxSheetGrade) and
	// judge grade j (0..JudgeMax).
	Confusion [][]int
	N         int     // pairs in Confusion
	Unjudged  int     // graded pairs the judge's qrels do not grade (or grade below 0: unjudged, judgedRelevance)
	MSE       float64 // mean signed error, judge − human; NaN when N = 0
	// ByLevel[h] is the human level h's count and mean signed error (NaN when 0).
	ByLevel []LevelBias
}

// LevelBias is the judge's mean signed error on the pairs a human graded Level.
type LevelBias struct {
	Level, N int
	MSE      float64
}

// humanValues are the per-query measures of the labelled queries under human grades.
type humanValues struct {
	rows   []int                     // evaluated-query indexes (Result.QueryIDs), sorted
	values [][]float64               // [strategy][k*NumGraded+m] for rows[k]
	grades map[string]map[string]int // query -> doc -> grade
	bin    [metrics.NumGraded][]int  // rows the measure counts
	// lab[g] are the indexes into rows of the labelled units of measure group g
	// (0: every evaluated query, 1: those at the relevant level), unl[g] the
	// evaluated-query indexes of the others; y, f, u are split's buffers.
	lab, unl [2][]int
	y, f, u  []float64
	// locale[i] is evaluated query i's index in strata.Locales (nil without
	// strata).
	locale []int
	strata *Strata
	// cluster[i] is evaluated query i's cluster (Result.clusterIdx; nil when
	// the queries are independent), yc and uc split's buffers of the
	// clusters of y and u.
	cluster []int
	yc, uc  []int
}

// group is measure m's group of units in humanValues.lab and unl.
func (r *Result) group(m int) int {
	if binaryMeasure(m) {
		return 1
	}
	return 0
}

// units fills hv.lab and hv.unl.
func (r *Result) units(hv *humanValues) {
	for g := range 2 {
		k := 0
		for i := range r.N() {
			if g == 1 && !r.InBinary[i] {
				continue
			}
			for k < len(hv.rows) && hv.rows[k] < i {
				k++
			}
			if k < len(hv.rows) && hv.rows[k] == i {
				hv.lab[g] = append(hv.lab[g], k)
			} else {
				hv.unl[g] = append(hv.unl[g], i)
			}
		}
	}
	hv.y, hv.f, hv.u = make([]float64, 0, len(hv.rows)), make([]float64, 0, len(hv.rows)), make([]float64, 0, r.N())
	if hv.cluster != nil {
		hv.yc, hv.uc = make([]int, 0, len(hv.rows)), make([]int, 0, r.N())
	}
}

// split gives measure m's labelled units (human value y, judge value f) and
// the judge's values of the others, in hv's buffers: valid until the next call.
// A unit whose value is undefined (NaN: mean relevance on a top k without a
// judged result, under either grades) is left out: the estimand is the mean
// over the queries the measure defines.
//
// With clusters, hv.yc and hv.uc then hold the clusters of y and u.
func (hv *humanValues) split(g int, human func(k int) float64, judge func(i int) float64) (y, f, u []float64) {
	y, f, u = hv.y[:0], hv.f[:0], hv.u[:0]
	yc, uc := hv.yc[:0], hv.uc[:0]
	for _, k := range hv.lab[g] {
		a, b := human(k), judge(hv.rows[k])
		if math.IsNaN(a) || math.IsNaN(b) {
			continue
		}
		y, f = append(y, a), append(f, b)
		if hv.cluster != nil {
			yc = append(yc, hv.cluster[hv.rows[k]])
		}
	}
	for _, i := range hv.unl[g] {
		if v := judge(i); !math.IsNaN(v) {
			u = append(u, v)
			if hv.cluster != nil {
				uc = append(uc, hv.cluster[i])
			}
		}
	}
	hv.y, hv.f, hv.u, hv.yc, hv.uc = y, f, u, yc, uc
	return y, f, u
}

// checkSheet refuses a sheet row whose query is not in the judge's qrels, or
// whose document is neither graded there for that query nor retrieved for it by
// a run: an *input.Error at the row's line.
func checkSheet(q *trecfile.Qrels, runs []Input, sh *labelfile.Sheet) error {
	// The runs' documents are looked up only for the queries of rows the
	// qrels do not judge (usually none).
	want := map[string]bool{}
	idx := queryIndexer(q)
	for _, row := range sh.Rows {
		qi, ok := idx(row.QueryID)
		if !ok {
			want[row.QueryID] = true
			break // the loop below reports the first bad row in file order
		}
		if _, judged := q.Relevance(qi, row.DocID); !judged {
			want[row.QueryID] = true
		}
	}
	if len(want) == 0 {
		return nil
	}
	retrieved := map[string]map[string]bool{}
	for _, in := range runs {
		for _, rq := range in.Run.Queries {
			if !want[rq.ID] {
				continue
			}
			set := retrieved[rq.ID]
			if set == nil {
				set = map[string]bool{}
				retrieved[rq.ID] = set
			}
			for _, d := range rq.Docs {
				set[d] = true
			}
		}
	}
	for _, row := range sh.Rows {
		qi, ok := q.QueryIndex(row.QueryID)
		if !ok {
			return input.Errorf(sh.File, row.Line, "query %q is not in the judge's qrels %s", row.QueryID, q.File)
		}
		if _, judged := q.Relevance(qi, row.DocID); !judged && !retrieved[row.QueryID][row.DocID] {
			return input.Errorf(sh.File, row.Line, "document %q of query %q is neither judged in %s nor retrieved by a run in its top k", row.DocID, row.QueryID, q.File)
		}
	}
	return nil
}

// correct computes r.Human from the sheet (after statistics: it needs the
// judge-only values and paired tests).
func (r *Result) correct(q *trecfile.Qrels, runs []Input, sh *labelfile.Sheet) {
	const M = metrics.NumGraded
	h := &Human{File: sh.File, Unlabelled: len(sh.Unlabelled), Pairs: len(sh.Rows)}
	r.Human = h
	hv := r.humanValues(q, runs, sh, h)
	h.Bias = judgeBias(q, sh)
	S := len(r.Strategies)
	h.Means = make([][M]metrics.PPI, S)
	h.HumanOnly = make([][M]metrics.PPI, S)
	for m := range M {
		h.MeasureN[m] = len(hv.bin[m])
	}
	h.N = len(hv.rows)
	if r.clustered() {
		hv.cluster = r.clusterIdx
		labelled := map[int]bool{}
		for _, i := range hv.rows {
			labelled[hv.cluster[i]] = true
		}
		h.Clusters = len(labelled)
	}
	r.units(hv)
	r.stratify(hv, h)
	if h.Strata != nil {
		h.ByLocale = make([][][M]metrics.PPI, len(h.Strata.Locales))
		for l := range h.ByLocale {
			h.ByLocale[l] = make([][M]metrics.PPI, S)
		}
	}
	for s := range r.Strategies {
		vals := r.Strategies[s].Values
		for m := range M {
			lo, hi := r.measureRange(m)
			human, judge := func(k int) float64 { return hv.values[s][k*M+m] }, func(i int) float64 { return vals[i*M+m] }
			est, locales := hv.stratified(r.group(m), lo, hi, human, judge)
			h.Means[s][m] = est.PPI
			for l, p := range locales {
				h.ByLocale[l][s][m] = p
			}
			y, _, _ := hv.split(r.group(m), human, judge)
			if hv.cluster != nil { // the labelled queries alone, over their clusters (λ = 0: no unlabelled unit)
				h.HumanOnly[s][m] = metrics.PPIClustered([]metrics.PPIStratum{{Y: y, F: y, YC: hv.yc}}).Clip(lo, hi)
			} else {
				h.HumanOnly[s][m] = metrics.HumanOnly(y).Clip(lo, hi)
			}
		}
	}
	h.Paired = make([]Paired, len(r.Paired))
	for i, p := range r.Paired {
		h.Paired[i] = r.correctedPair(hv, r.StrategyIndex(p.Strategy), r.StrategyIndex(p.Baseline), metrics.QueryIndex(p.Metric))
	}
	ps := make([]float64, len(h.Paired))
	family := make([]string, len(h.Paired))
	for i, p := range h.Paired {
		ps[i], family[i] = p.P, p.Metric
	}
	for i, adj := range metrics.HolmWithin(ps, family) {
		p := &h.Paired[i]
		p.PHolm, p.Significant = adj, adj < Alpha
		p.Note = note(p)
	}
	r.human = hv
}

// correctedPair is the PPI++ test of strategy a − b on measure m, unadjusted.
func (r *Result) correctedPair(hv *humanValues, a, b, m int) Paired {
	const M = metrics.NumGraded
	A, B := r.Strategies[a].Values, r.Strategies[b].Values
	ha, hb := hv.values[a], hv.values[b]
	lo, hi := r.measureRange(m)
	// A difference ranges over [−w, w].
	st, _ := hv.stratified(r.group(m), lo-hi, hi-lo, func(k int) float64 { return ha[k*M+m] - hb[k*M+m] }, func(i int) float64 { return A[i*M+m] - B[i*M+m] })
	est := st.PPI
	p := Paired{Strategy: r.Strategies[a].Name, Baseline: r.Strategies[b].Name, Metric: metrics.GradedKeys[m], N: est.N,
		Delta: est.Estimate, CI: est.Interval(), P: est.PValue(), PMethod: PMethodPPI, Primary: m == r.primary,
		Identical: r.Identical(a, b)}
	p.Clusters = est.Clusters
	switch {
	case est.SE == 0 && est.Estimate != 0:
		// No variation left for the t test, yet a difference: the exact
		// test of what people labelled.
		y, _, _ := hv.split(r.group(m), func(k int) float64 { return ha[k*M+m] - hb[k*M+m] }, func(i int) float64 { return A[i*M+m] - B[i*M+m] })
		p.P, p.PMethod = r.humanSignFlip(y, hv.yc)
	case est.SE == 0: // no variation among the labelled differences, and none on average: nothing to test
		p.PMethod = metrics.PMethodNoDifference
	case est.Method == metrics.MethodPPIClusterJackknife:
		p.PMethod = PMethodPPIClusterJackknife
	case est.Method == metrics.MethodPPIStratifiedClusterJackknife:
		p.P, p.PMethod = st.PValue(), PMethodPPIStratifiedClusterJackknife
	case est.Method == metrics.MethodPPIStratified:
		p.P, p.PMethod = st.PValue(), PMethodPPIStratified
	case est.Method == metrics.MethodPPIJackknife:
		p.PMethod = PMethodPPIJackknife
	}
	if math.IsNaN(p.P) { // fewer than 2 labelled queries, or no variation among them: not tested
		p.P = 1
	}
	return p
}

// humanSignFlip is the two-sided sign-flip test of the labelled queries'
// human paired differences d (yc: their clusters, used when the queries
// come in clusters): exact when cheap (metrics.PairedExactP; of the
// clusters' sums over clusters), else Monte Carlo at the resamples and seed
// of the comparison. PMethodNoDifference (p = 1) when every difference, or
// every cluster's sum, is 0.
func (r *Result) humanSignFlip(d []float64, yc []int) (float64, string) {
	exact, random := PMethodHumanSignFlipExact, PMethodHumanSignFlipRandomization
	if r.clustered() {
		d, _ = metrics.ClusterSums(d, yc, r.numClusters)
		exact, random = PMethodHumanClusterSignFlipExact, PMethodHumanClusterSignFlipRandomization
	}
	if p, method, ok := metrics.PairedExactP(d); ok {
		if method == metrics.PMethodNoDifference {
			return p, method
		}
		return p, exact
	}
	return metrics.SignFlipPValues(d, len(d), 1, r.Resamples, r.Seed)[0], random
}

// humanPairTest is pairTest on the corrected figures: the corrected baseline
// comparison when the pair has the baseline, else a new PPI++ test Holm-adjusted
// as one more member of the measure's family.
func (r *Result) humanPairTest(a, b, m int) Paired {
	A, B := r.Strategies[a].Name, r.Strategies[b].Name
	key := metrics.GradedKeys[m]
	for _, p := range r.Human.Paired {
		if p.Metric != key {
			continue
		}
		if p.Strategy == A && p.Baseline == B {
			return p
		}
		if p.Strategy == B && p.Baseline == A {
			p.Strategy, p.Baseline = A, B
			p.Delta = -p.Delta
			p.CI.Lo, p.CI.Hi = -p.CI.Hi, -p.CI.Lo
			return p
		}
	}
	out := r.correctedPair(r.human, a, b, m)
	family := make([]float64, 0, len(r.Human.Paired)+1)
	for _, p := range r.Human.Paired {
		if p.Metric == key {
			family = append(family, p.P)
		}
	}
	family = append(family, out.P)
	out.PHolm = metrics.Holm(family)[len(family)-1]
	out.Significant = out.PHolm < Alpha
	out.Note = note(&out)
	return out
}

// decisionRanked is the strategies by the primary measure as the
// recommendation ranks them: by the corrected means with human labels.
func (r *Result) decisionRanked() []int {
	if r.Human != nil {
		return r.humanRanked()
	}
	return r.ranked()
}

// decisionTest is the paired test the recommendation and not_beaten rest on:
// the corrected one with human labels.
func (r *Result) decisionTest(a, b, m int) Paired {
	if r.Human != nil {
		return r.humanPairTest(a, b, m)
	}
	return r.pairTest(a, b, m)
}

// CorrectedMean is strategy s's mean of measure m as the recommendation and the
// gates use it: the PPI++ estimate with human labels, else the judge's mean.
func (r *Result) CorrectedMean(s, m int) float64 {
	if r.Human != nil {
		return r.Human.Means[s][m].Estimate
	}
	return r.Strategies[s].Means[m]
}

// humanRanked is ranked on the corrected primary measure (ties: by name).
func (r *Result) humanRanked() []int {
	return r.rankedBy(func(s int) float64 { return r.CorrectedMean(s, r.primary) })
}

// humanValues scores every strategy on the labelled evaluated queries under
// the human grades: a top-k document the sheet does not grade counts 0.
func (r *Result) humanValues(q *trecfile.Qrels, runs []Input, sh *labelfile.Sheet, h *Human) *humanValues {
	const M = metrics.NumGraded
	hv := &humanValues{grades: map[string]map[string]int{}}
	var g map[string]int
	prev := ""
	for _, row := range sh.Rows {
		if g == nil || row.QueryID != prev {
			if g = hv.grades[row.QueryID]; g == nil {
				g = make(map[string]int, 32)
				hv.grades[row.QueryID] = g
			}
			prev = row.QueryID
		}
		g[row.DocID] = row.Grade
	}
	evalIdx := make(map[string]int, len(hv.grades))
	for id := range hv.grades {
		if i, ok := slices.BinarySearch(r.QueryIDs, id); ok {
			evalIdx[id] = i
			hv.rows = append(hv.rows, i)
		} else {
			h.NotEvaluated++
		}
	}
	slices.Sort(hv.rows)
	for m := range M {
		for _, i := range hv.rows {
			if !binaryMeasure(m) || r.InBinary[i] {
				hv.bin[m] = append(hv.bin[m], i)
			}
		}
	}
	pos := make(map[int]int, len(hv.rows))
	for k, i := range hv.rows {
		pos[i] = k
	}
	// Each labelled query's human judgments per level (metrics.QueryInput.Levels).
	levels := make([][]int, len(hv.rows))
	for k, i := range hv.rows {
		levels[k] = make([]int, labelfile.MaxSheetGrade+1)
		for _, g := range hv.grades[r.QueryIDs[i]] {
			levels[k][g]++
		}
	}
	hv.values = make([][]float64, len(r.Strategies))
	for s, in := range runs {
		vals := make([]float64, len(hv.rows)*M)
		done := make([]bool, len(hv.rows))
		rels := make([]int, 0, r.K)
		unj := make([]bool, 0, r.K)
		score := func(k int, docs []string) {
			grades := hv.grades[r.QueryIDs[hv.rows[k]]]
			rels, unj = rels[:0], unj[:0]
			for _, d := range docs {
				if len(rels) == r.K {
					break
				}
				g, ok := grades[d]
				if !ok {
					h.Holes++
				}
				rels, unj = append(rels, g), append(unj, !ok)
			}
			gr := metrics.GradedAtK(&metrics.QueryInput{Rels: rels, Unjudged: unj, Levels: levels[k], K: r.K, Gain: r.Gain, RelevantLevel: r.RelevantLevel})
			copy(vals[k*M:], gr[:])
			done[k] = true
		}
		for _, rq := range in.Run.Queries {
			if i, ok := evalIdx[rq.ID]; ok {
				score(pos[i], rq.Docs)
			}
		}
		for k := range done {
			if !done[k] { // absent from the run: nothing retrieved
				score(k, nil)
			}
		}
		hv.values[s] = vals
	}
	return hv
}

// queryIndexer is q.QueryIndex remembering its last answer: a sheet's rows
// come grouped by query.
func queryIndexer(q *trecfile.Qrels) func(id string) (int, bool) {
	last, lastI, lastOK, have := "", 0, false, false
	return func(id string) (int, bool) {
		if !have || id != last {
			lastI, lastOK = q.QueryIndex(id)
			last, have = id, true
		}
		return lastI, lastOK
	}
}

// judgeBias is the judge's confusion with the humans on the sheet's pairs.
func judgeBias(q *trecfile.Qrels, sh *labelfile.Sheet) Bias {
	jmax := max(q.MaxLevel(), labelfile.MaxSheetGrade)
	b := Bias{Confusion: make([][]int, labelfile.MaxSheetGrade+1), ByLevel: make([]LevelBias, labelfile.MaxSheetGrade+1)}
	sums := make([]float64, labelfile.MaxSheetGrade+1)
	for h := range b.Confusion {
		b.Confusion[h] = make([]int, jmax+1)
	}
	total := 0.0
	idx := queryIndexer(q)
	for _, row := range sh.Rows {
		qi, _ := idx(row.QueryID)
		j, judged := judgedRelevance(q, qi, row.DocID) // a negative grade is unjudged
		if !judged {
			b.Unjudged++
			continue
		}
		b.Confusion[row.Grade][j]++
		b.N++
		d := float64(j - row.Grade)
		sums[row.Grade] += d
		total += d
	}
	b.MSE = math.NaN()
	if b.N > 0 {
		b.MSE = total / float64(b.N)
	}
	for h := range b.ByLevel {
		n := 0
		for _, c := range b.Confusion[h] {
			n += c
		}
		b.ByLevel[h] = LevelBias{Level: h, N: n, MSE: math.NaN()}
		if n > 0 {
			b.ByLevel[h].MSE = sums[h] / float64(n)
		}
	}
	return b
}

// correctedObservation puts strategy s's corrected mean of measure m into a
// floor's observation: the PPI++ estimate over the human n, with the standard
// deviation that gives its standard error (SE·√n) for the detectable difference.
func (r *Result) correctedObservation(o *floor.Observation, s, m int) {
	e := r.Human.Means[s][m]
	o.N, o.Mean, o.Binary = int64(e.N), e.Estimate, false
	o.SD = e.SE * math.Sqrt(float64(e.N))
	if e.N == 0 {
		o.N = 0
	}
}

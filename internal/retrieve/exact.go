package retrieve

import (
	"container/heap"
	"context"
	"fmt"
	"hash/fnv"
	"math"

	"github.com/retrieval-gate/retrieval-gate/internal/metrics"
	"github.com/retrieval-gate/retrieval-gate/internal/outcome"
	"github.com/retrieval-gate/retrieval-gate/internal/retrieve/store"
	"github.com/retrieval-gate/retrieval-gate/internal/retrieve/store/memory"
)

// The exact check (retrieve --exact-check, issue 35 item 2): the vector
// store's answers against exact nearest-neighbour search over the same
// embeddings. A store answers from an index that may be approximate (Chroma's
// HNSW); the check reads the store's vectors back (store.Exporter: Chroma's
// records page by page, the memory store its own rows) into an in-process
// exact index (the memory store), runs the checked queries through it with
// the same locale filter, and measures for each query the recall of the
// store's answer against the exact one at the depth the store was asked for
// (the run's k, or max(k, 50) where hybrid fusion or a reranker reads
// deeper): the share of the exact top entries the store returned. A store
// entry counts when its exact similarity reaches the exact list's last one
// (within ExactTie, the float32 arithmetic of another implementation): an
// entry tied with the last exact one is as good as it. An entry of another
// locale than the query's filter never counts (a filter bug), nor one the
// store does not hold.
//
// Which queries: every one (ExactAll), or N of them, the N whose case id has
// the smallest 64-bit FNV-1a hash (ties by line): a uniform sample without
// replacement that needs no count of the cases in advance and is the same on
// every run of the same cases. The store's answers are kept only for the
// queries in the sample so far; the exact searches run once, at the end, for
// the N kept (every query in its window with ExactAll).
//
// A query's exact list is shorter than the depth where fewer records match
// it (the demo's store holds 38 chunks, a dozen a locale, and hybrid asks for
// 50): its recall is then recall at that length, every record it can match.
// The check keeps the shortest and longest exact list (ANNCheck.Measured),
// and the reports name that depth, not the one asked for.
//
// The figure is the mean recall over the checked queries, with its 95%
// interval: the per-query recall is bounded and mostly 1 (an index that
// works), the shape of a paired difference, so the interval is
// metrics.Histogram.DifferenceCI95 of 1 − recall over [0, 1], mapped back,
// its method named. When the cases carry a cluster key (queries in families:
// a card's paraphrases have neighbouring vectors, and an index that loses
// one's neighbours loses the others'), it is computed over the clusters
// (metrics.ClusterTally, a case without a key a cluster of its own), widened
// to the interval over the queries where that reaches further
// (cluster-t-hull), as the churn's figures are. --min-ann-recall F gates on
// it as a floor does: the observed mean against F.

// ExactAll is RunOptions.ExactCheck's value that checks every query.
const ExactAll = -1

// ExactTie is how far below the exact list's last similarity a store entry
// may be and still count as one of the exact top entries (a tie): the cosine
// of the same float32 vectors computed by another implementation (Chroma's
// distance kernels) differs in the sixth or seventh digit.
const ExactTie = 1e-5

// GateMinANNRecall is the name of the --min-ann-recall gate; KeyANNRecall its measure.
const (
	GateMinANNRecall = "min_ann_recall"
	KeyANNRecall     = "ann_recall_at_k"
)

// ANNCheck is the exact check's result.
type ANNCheck struct {
	Depth int // the depth the store was asked for
	// Measured is the shortest and longest exact list of the N queries: the
	// depth the recall is at. Both are Depth unless fewer records match a
	// query (a small store, a locale with few records); {0, 0} when N is 0.
	Measured [2]int
	Sample   int   // the queries asked for (RunOptions.ExactCheck; ExactAll: every one)
	Queries  int64 // queries the run searched
	// N are the checked queries with an exact answer; NoNeighbour the checked
	// queries whose exact answer is empty (no record of their locale, or a zero
	// vector): they have no recall.
	N, NoNeighbour int64
	Perfect        int64 // of the N, queries whose recall is 1
	Recall         float64
	CI95           metrics.Interval
	// Clusters: the clusters the N queries fall into when their cases carry
	// a cluster key (CI95 is then over the clusters); 0 otherwise.
	Clusters int64
	// Export is what reading the store's vectors back cost.
	Export store.ExportCost
	// Gate is min_ann_recall: off unless RunOptions.MinANNRecall is set.
	Gate outcome.Gate
}

// sampled is a query kept for the exact check: its store answer and vector.
type sampled struct {
	key     uint64
	line    int
	vec     []float32
	locale  string
	cluster string // the case's cluster key, "" for none
	ann     []string
}

// before reports whether a comes before b in the sample's order: by key, then line.
func before(a, b *sampled) bool {
	if a.key != b.key {
		return a.key < b.key
	}
	return a.line < b.line
}

// sampleHeap is a max-heap in the sample's order: the root is the first to leave.
type sampleHeap []*sampled

func (h sampleHeap) Len() int           { return len(h) }
func (h sampleHeap) Less(i, j int) bool { return before(h[j], h[i]) }
func (h sampleHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *sampleHeap) Push(x any)        { *h = append(*h, x.(*sampled)) } //nolint:forcetypeassert // container/heap hands back what Push was given
func (h *sampleHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// exactChecker runs the exact check of one run.
type exactChecker struct {
	src     store.Exporter
	n       int // ExactAll or the sample's size
	depth   int
	exact   *memory.Store // the store's vectors, read back at the first query
	cost    store.ExportCost
	queries int64
	kept    sampleHeap
	batch   []*sampled // ExactAll: the window's queries
	misses  *metrics.Histogram
	clus    *metrics.ClusterTally // 1 − recall of the queries with a cluster key (nil until one comes)
	sum     float64
	noNb    int64
	perfect int64
	minLen  int // the shortest and longest exact list so far (0: none yet)
	maxLen  int
	logf    func(string, ...any)
}

func newExactChecker(st store.Store, n, depth int, logf func(string, ...any)) (*exactChecker, error) {
	src, ok := st.(store.Exporter)
	if !ok {
		return nil, fmt.Errorf("the store %s cannot read its vectors back for --exact-check", st.Name())
	}
	return &exactChecker{src: src, n: n, depth: depth, misses: metrics.NewHistogram(), logf: logf}, nil
}

// caseKey is the sampling key of a case id.
func caseKey(id string) uint64 {
	h := fnv.New64a()
	_, _ = h.Write([]byte(id))
	return h.Sum64()
}

// observe takes one query the store answered (in file order).
func (e *exactChecker) observe(ctx context.Context, id, cluster string, line int, q store.Query, hits []store.Hit) error {
	e.queries++
	if e.exact == nil {
		if err := e.load(ctx, len(q.Vector)); err != nil {
			return err
		}
	}
	s := &sampled{key: caseKey(id), line: line, locale: q.Locale, cluster: cluster}
	if e.n != ExactAll && len(e.kept) == e.n && !before(s, e.kept[0]) {
		return nil // not in the sample
	}
	s.vec = append([]float32(nil), q.Vector...)
	s.ann = make([]string, len(hits))
	for i, h := range hits {
		s.ann[i] = h.ID
	}
	if e.n == ExactAll {
		e.batch = append(e.batch, s)
		return nil
	}
	heap.Push(&e.kept, s)
	if len(e.kept) > e.n {
		heap.Pop(&e.kept)
	}
	return nil
}

// flush checks the window's queries (ExactAll).
func (e *exactChecker) flush(ctx context.Context) error {
	if len(e.batch) == 0 {
		return nil
	}
	err := e.check(ctx, e.batch)
	clear(e.batch)
	e.batch = e.batch[:0]
	return err
}

// load reads the store's vectors back into the exact index.
func (e *exactChecker) load(ctx context.Context, dim int) error {
	e.exact = memory.New(0)
	cost, err := e.src.Export(ctx, dim, func(recs []store.Record) error { return e.exact.Add(ctx, recs) })
	e.cost = cost
	if err != nil {
		return fmt.Errorf("exact check: %w", err)
	}
	if cost.Requests > 0 {
		e.logf("exact check: read back %d vectors of dimension %d in %d request(s), %d bytes", cost.Records, dim, cost.Requests, cost.Bytes)
	}
	return nil
}

// check runs the exact search of qs and adds their recalls.
func (e *exactChecker) check(ctx context.Context, qs []*sampled) error {
	sq := make([]store.Query, len(qs))
	for i, s := range qs {
		sq[i] = store.Query{Vector: s.vec, Locale: s.locale}
	}
	exact, err := e.exact.Search(ctx, sq, e.depth)
	if err != nil {
		return fmt.Errorf("exact check: %w", err)
	}
	for i, s := range qs {
		ex := exact[i]
		if len(ex) == 0 {
			e.noNb++
			continue
		}
		if e.minLen == 0 || len(ex) < e.minLen {
			e.minLen = len(ex)
		}
		e.maxLen = max(e.maxLen, len(ex))
		last := ex[len(ex)-1].Score
		seen := make(map[string]bool, len(s.ann))
		found := 0
		for _, id := range s.ann {
			if seen[id] {
				continue
			}
			seen[id] = true
			if sim, ok := e.exact.Similarity(s.vec, id, s.locale); ok && sim >= last-ExactTie {
				found++
			}
		}
		r := float64(min(found, len(ex))) / float64(len(ex))
		e.sum += r
		e.misses.Add(1 - r)
		if s.cluster != "" {
			if e.clus == nil {
				e.clus = metrics.NewClusterTally()
			}
			e.clus.Add(s.cluster, 1-r)
		}
		if r == 1 {
			e.perfect++
		}
	}
	return nil
}

// result finishes the check: the sample's exact searches, the figure and the gate.
func (e *exactChecker) result(ctx context.Context, minRecall float64, gated bool) (*ANNCheck, error) {
	if err := e.flush(ctx); err != nil {
		return nil, err
	}
	if len(e.kept) > 0 {
		if err := e.check(ctx, e.kept); err != nil {
			return nil, err
		}
	}
	n := e.misses.N()
	out := &ANNCheck{Depth: e.depth, Measured: [2]int{e.minLen, e.maxLen}, Sample: e.n, Queries: e.queries, N: n, NoNeighbour: e.noNb, Perfect: e.perfect,
		Recall: math.NaN(), CI95: metrics.Interval{Lo: math.NaN(), Hi: math.NaN()}, Export: e.cost}
	if e.exact != nil {
		_ = e.exact.Close(ctx)
	}
	if n > 0 {
		out.Recall = e.sum / float64(n)
		iv := e.misses.DifferenceCI95(0, 1)
		if e.clus != nil {
			c := e.clus.CI95(e.misses, 0, 1).Widen(iv)
			iv, out.Clusters = c.Interval, c.Clusters
		}
		iv.Lo, iv.Hi = 1-iv.Hi, 1-iv.Lo
		out.CI95 = iv
	}
	out.Gate = annGate(out, minRecall, gated)
	return out, nil
}

// gateTolerance absorbs floating-point noise when the recall equals its floor.
const gateTolerance = 1e-9

// annGate decides min_ann_recall on c.
func annGate(c *ANNCheck, floor float64, set bool) outcome.Gate {
	g := outcome.New(GateMinANNRecall, outcome.Off)
	g.Group, g.Measure, g.N = outcome.GroupOverall, KeyANNRecall, c.N
	if c.N > 0 {
		g.Value = c.Recall
	}
	if !set {
		return g
	}
	g.Threshold = floor
	switch {
	case c.N == 0:
		g.Status = outcome.Fail
		g.Why = []outcome.Clause{{Code: outcome.NoANNQuery, N: c.Queries, M: c.NoNeighbour}}
		return g
	case c.Recall+gateTolerance >= floor:
		g.Status = outcome.Pass
	default:
		g.Status = outcome.Fail
		g.Why = []outcome.Clause{{Code: outcome.ANNRecallBelow, Value: c.Recall, Threshold: floor, N: c.N, M: int64(c.Depth),
			Span: [2]int64{int64(c.Measured[0]), int64(c.Measured[1])}}}
	}
	g.Why = append(g.Why, outcome.Clause{Code: outcome.Interval95, Measure: KeyANNRecall, N: c.N, M: c.Clusters, Lo: c.CI95.Lo, Hi: c.CI95.Hi,
		Test: c.CI95.Method, Threshold: floor, Only: c.CI95.Lo <= floor && floor <= c.CI95.Hi, Unreliable: c.CI95.Unreliable})
	return g
}

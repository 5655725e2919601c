package compare

// Runs scored as they are read. When every run is a TREC run in a regular
// file whose query ids come in increasing byte order (trec_eval's and most
// systems' outputs), Run reads the runs side by side (one goroutine each,
// trecfile.ScanTRECRun), merges them by query id and scores each query as soon
// as its last line is read: what is kept is each evaluated query's values (the
// measures of every run, the counts judged@k needs), not the runs' top k, so
// the memory grows with the number of queries by a few hundred bytes, not with
// the run. Anything else (a run out of order, found at its first query id
// that does not sort after the one before; a cases JSONL; a pipe; --human-qrels,
// whose correction needs the top k of the sheet's queries; an input that
// fails) is read whole as before, from the start: the outputs and the errors
// are the same either way.

import (
	"context"
	"fmt"
	"io"
	"math"
	"runtime"
	"slices"
	"sync"
	"unsafe"

	"github.com/retrieval-gate/retrieval-gate/internal/input"
	"github.com/retrieval-gate/retrieval-gate/internal/input/trecfile"
)

// streamBatch is how many queries a run's reader hands on at a time.
const streamBatch = 1024

// runBatch is a run's queries in file order: each query's id, then its
// documents, best first, as pieces of buf. A batch the merge is done with goes
// back to its reader (runCursor.free), so reading a run allocates nothing per
// query.
type runBatch struct {
	buf   []byte
	ends  []int // end of each piece in buf
	ndocs []int // documents of each query
}

// piece is the text of piece p of b, a view of b.buf valid until b is reused.
func (b *runBatch) piece(p int) string {
	start := 0
	if p > 0 {
		start = b.ends[p-1]
	}
	t := b.buf[start:b.ends[p]]
	return unsafe.String(unsafe.SliceData(t), len(t)) //nolint:gosec // G103: a view of a batch the merge holds; its reader writes it again only after the merge has moved past it (runCursor.free)
}

// runCursor is the merge's position in one run.
type runCursor struct {
	ch    chan *runBatch
	free  chan *runBatch // batches done with, back to the reader
	b     *runBatch
	q     int // query of b
	piece int // first piece of query q
	id    string
	docs  []string
	done  bool
	err   error // the reader's, set before it closes ch
}

// next moves to the run's next query; done when there is none.
func (c *runCursor) next() {
	if c.b != nil {
		c.piece += 1 + c.b.ndocs[c.q]
		c.q++
	}
	for c.b == nil || c.q == len(c.b.ndocs) {
		if c.b != nil {
			select {
			case c.free <- c.b:
			default:
			}
			c.b = nil
		}
		b, ok := <-c.ch
		if !ok {
			c.done, c.b = true, nil
			return
		}
		c.b, c.q, c.piece = b, 0, 0
	}
	b := c.b
	c.id = b.piece(c.piece)
	c.docs = c.docs[:0]
	for p := c.piece + 1; p <= c.piece+b.ndocs[c.q]; p++ {
		c.docs = append(c.docs, b.piece(p))
	}
}

// streamable returns the runs' readers from their start when Run can score
// them as they are read (see above); ok false otherwise.
func streamable(ctx context.Context, in In, o Options) ([]io.Reader, bool) {
	if in.HumanQrels.R != nil || len(in.Runs) == 0 {
		return nil, false
	}
	seen := map[string]bool{}
	rs := make([]io.Reader, len(in.Runs))
	for i, r := range in.Runs {
		if seen[r.Strategy] { // Compare's error, in its order
			return nil, false
		}
		seen[r.Strategy] = true
		sr, ok := trecfile.SequentialTREC(ctx, r.R)
		if !ok {
			return nil, false
		}
		rs[i] = sr
	}
	return rs, true
}

// scanRun reads run r (ScanTRECRun) into batches sent on ch, taken from free
// when the merge has handed one back; the error is ScanTRECRun's or ctx's.
func scanRun(ctx context.Context, r io.Reader, name string, depth int, ch chan<- *runBatch, free <-chan *runBatch) error {
	var b *runBatch
	get := func() {
		select {
		case b = <-free:
			b.buf, b.ends, b.ndocs = b.buf[:0], b.ends[:0], b.ndocs[:0]
		default:
			b = &runBatch{}
		}
	}
	get()
	send := func() error {
		select {
		case ch <- b:
		case <-ctx.Done():
			return ctx.Err()
		}
		get()
		return nil
	}
	err := trecfile.ScanTRECRun(ctx, r, name, depth, func(id []byte, docs [][]byte) error {
		b.buf = append(b.buf, id...)
		b.ends = append(b.ends, len(b.buf))
		for _, d := range docs {
			b.buf = append(b.buf, d...)
			b.ends = append(b.ends, len(b.buf))
		}
		b.ndocs = append(b.ndocs, len(docs))
		if len(b.ndocs) == streamBatch || len(b.buf) >= 1<<20 {
			return send()
		}
		return nil
	})
	if err == nil && len(b.ndocs) > 0 {
		err = send()
	}
	return err
}

// streamed is a comparison whose runs were scored as they were read: the
// result up to its statistics, and the first run without a query in common
// with the qrels (Compare's error, reported after the clusters are read).
type streamed struct {
	res       *Result
	commonErr error
}

// runStreaming reads the qrels (while the runs' readers start) and scores the
// runs as they are read. ok is false when it could not (a run out of order,
// or any error of a run or of Compare's checks before the runs): Run then
// reads the runs whole, with the qrels given back. err is the qrels' or ctx's.
func runStreaming(ctx context.Context, in In, rs []io.Reader, o Options) (st streamed, q *trecfile.Qrels, ok bool, err error) {
	depth := o.K
	if o.JudgedOnly { // the condensed list takes judged documents from below k
		depth = max(o.K, JudgedOnlyDepth)
	}
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	S := len(in.Runs)
	cur := make([]*runCursor, S)
	var wg sync.WaitGroup
	for i, r := range in.Runs {
		c := &runCursor{ch: make(chan *runBatch, 2), free: make(chan *runBatch, 4)}
		cur[i] = c
		wg.Add(1)
		go func() {
			defer wg.Done()
			c.err = scanRun(sctx, rs[i], r.Name, depth, c.ch, c.free)
			close(c.ch)
		}()
	}
	stop := func() {
		cancel()
		for _, c := range cur {
			for range c.ch { // until its reader has stopped
			}
		}
		wg.Wait()
	}
	defer stop()
	q, err = trecfile.ParseQrels(ctx, in.Qrels.R, in.Qrels.Name)
	if err != nil {
		return st, nil, false, fmt.Errorf("failed to read qrels: %w", err)
	}
	if checkRuns(S, &o) != nil {
		return st, q, false, nil
	}
	if o.Baseline == "" {
		o.Baseline = in.Runs[0].Strategy
	}
	res, eval, ferr := frame(q, o)
	if ferr != nil {
		return st, q, false, nil
	}
	m := mergeRuns(q, in, eval, res, res.Options, cur)
	if ctx.Err() != nil {
		return st, q, false, ctx.Err()
	}
	if m == nil {
		return st, q, false, nil
	}
	st.res = res
	for i := range res.Strategies {
		if m.common[i] == 0 {
			st.commonErr = input.Errorf(in.Runs[i].Name, 0, "run %q has no query in common with the qrels %s", res.Strategies[i].Name, q.File)
			break
		}
	}
	res.identical = m.same
	return st, q, true, nil
}

// finish completes a streamed comparison as Compare does after the runs,
// with the options Run read after them (the clusters and the queries).
func (st streamed) finish(o Options) (*Result, error) {
	res := st.res
	if st.commonErr != nil {
		return nil, st.commonErr
	}
	if err := res.checkNames(); err != nil {
		return nil, err
	}
	res.Options.Clusters, res.Options.ClustersFile = o.Clusters, o.ClustersFile
	res.Options.Queries, res.Options.QueriesFile = o.Queries, o.QueriesFile
	res.cluster(res.Options)
	// The qrels, most of what was live while the runs were read, are garbage
	// now: collected before the statistics allocate, their memory is reused
	// instead of the heap growing to twice its size first (GOGC's pacing).
	runtime.GC()
	res.statistics()
	res.conclude()
	return res, nil
}

// merged is what mergeRuns counts beyond the strategies.
type merged struct {
	common []int    // queries of each run in the qrels
	same   [][]bool // Result.identical
}

// mergeRuns reads the runs' queries in id order from their cursors and scores
// each evaluated query of each run, into res.Strategies; nil when a reader
// stopped early (its error says why).
func mergeRuns(q *trecfile.Qrels, in In, eval []int, res *Result, o Options, cur []*runCursor) *merged {
	S := len(cur)
	pos := make([]int32, q.NumQueries()) // qrels index -> evaluated query + 1 (0: not evaluated)
	for i, qi := range eval {
		pos[qi] = int32(i + 1)
	}
	res.Strategies = make([]Strategy, S)
	g := make([]*scoring, S)
	t := make([]*tally, S)
	done := make([][]bool, S)
	var judgedOnly []JudgedAtK
	if o.JudgedOnly {
		judgedOnly = make([]JudgedAtK, S)
	}
	for i, r := range in.Runs {
		res.Strategies[i] = Strategy{Name: r.Strategy, File: r.Name}
		g[i] = newScoring(q, eval, res.InBinary, res.primary, o, &res.Strategies[i])
		t[i] = g[i].newTally()
		done[i] = make([]bool, len(eval))
		if o.JudgedOnly {
			judgedOnly[i].PerQuery = make([]float64, len(eval))
			for e := range eval {
				judgedOnly[i].PerQuery[e] = math.NaN()
			}
		}
	}
	m := &merged{common: make([]int, S), same: make([][]bool, S)}
	for a := range S {
		m.same[a] = make([]bool, S)
		for b := range S {
			m.same[a][b] = true
		}
	}
	// What reading the qrels left (their arrays' growth, the judgments'
	// queries) is collected before the runs are read: the heap then holds the
	// qrels and the queries' slots, not that garbage too, through the merge.
	runtime.GC()
	for _, c := range cur {
		if c.next(); c.done && c.err != nil {
			return nil
		}
	}
	scored := make([][]string, S)
	cond := make([][]string, S)
	var part []int
	for {
		// The smallest id among the runs' current queries, and the runs that have it.
		part = part[:0]
		for r, c := range cur {
			if c.done {
				continue
			}
			if len(part) == 0 || c.id < cur[part[0]].id {
				part = append(part[:0], r)
			} else if c.id == cur[part[0]].id {
				part = append(part, r)
			}
		}
		if len(part) == 0 {
			break
		}
		id := cur[part[0]].id
		qi, judged := q.QueryIndex(id)
		e := -1
		if judged {
			e = int(pos[qi]) - 1
		}
		for r := range S {
			scored[r] = nil
		}
		for _, r := range part {
			s := &res.Strategies[r]
			s.RunQueries++
			if !judged {
				s.NotJudged++
				continue
			}
			m.common[r]++
			if e < 0 {
				continue
			}
			docs := cur[r].docs
			if o.JudgedOnly {
				if len(docs) > 0 {
					top := docs[:min(o.K, len(docs))]
					n := 0
					for _, d := range top {
						if _, ok := judgedRelevance(q, qi, d); ok {
							n++
						}
					}
					judgedOnly[r].PerQuery[e] = float64(n) / float64(len(top))
				}
				cond[r] = cond[r][:0]
				for _, d := range docs {
					if len(cond[r]) == o.K {
						break
					}
					if _, ok := judgedRelevance(q, qi, d); ok {
						cond[r] = append(cond[r], d)
					}
				}
				docs = cond[r]
			}
			g[r].score(t[r], e, docs, true)
			done[r][e] = true
			scored[r] = docs[:min(o.K, len(docs))]
		}
		if e >= 0 {
			for a := range S {
				for b := a + 1; b < S; b++ {
					if m.same[a][b] && !slices.Equal(scored[a], scored[b]) {
						m.same[a][b], m.same[b][a] = false, false
					}
				}
			}
		}
		for _, r := range part {
			if cur[r].next(); cur[r].done && cur[r].err != nil {
				return nil
			}
		}
	}
	for r := range S {
		for e, d := range done[r] {
			if !d {
				g[r].score(t[r], e, nil, false)
			}
		}
		g[r].finish([]*tally{t[r]})
		s := &res.Strategies[r]
		res.rankQueries(s)
		if o.JudgedOnly {
			judgedOnly[r].summarize()
			s.Judged = judgedOnly[r]
		} else {
			s.Judged = judgedFromCounts(s.topN, s.topUnjudged)
		}
		s.topN, s.topUnjudged = nil, nil
	}
	return m
}

package check

// check's comparison with a baseline run: the load, overlapped with the case
// stream, and the per-case hooks of scoreCases.
//
// The load runs on its own goroutine while the cases are scored. Until it has
// finished, a worker keeps every case's detail (query, gold, top k: it cannot
// ask the baseline whether the case may be listed) and emit queues the cases
// in file order (a compact record each, at most maxPending); once the
// baseline is in, the queue is joined first, then every later case at once.
// The result is the same as loading first: the join happens in file order and
// keeping a detail that is not listed changes nothing.

import (
	"context"
	"io"
	"sync/atomic"

	"github.com/retrieval-gate/retrieval-gate/internal/baseline"
	"github.com/retrieval-gate/retrieval-gate/internal/gate"
	"github.com/retrieval-gate/retrieval-gate/internal/input/casefile"
	"github.com/retrieval-gate/retrieval-gate/internal/metrics"
)

// maxPending bounds the cases queued while the baseline loads (about 250
// bytes each, plus the kept detail): 256 Ki cases, ~70 MiB at most. Beyond it
// emit waits for the load, which stalls the stream (the pre-overlap order).
const maxPending = 1 << 18

// baselineRun is the comparison state of one check run.
type baselineRun struct {
	opts   baseline.Options
	unav   string            // why there is no baseline (auto)
	source map[string]string // provenance of a fetched artifact

	// The load: loaded is closed when base, cmp and loadErr are final; ready
	// holds cmp for the workers once it is.
	loading bool
	loaded  chan struct{}
	base    *baseline.Baseline
	cmp     *baseline.Comparer
	loadErr error
	ready   atomic.Pointer[baseline.Comparer]
	joined  bool // emit has seen loaded closed (and drained pending)
	pending []pendingCase

	// --write-baseline: scoreCases renders each case's baseline line.
	write      bool
	body       *asyncWriter
	finishBody func() error
}

// pendingCase is what Comparer.Add needs of a case queued during the load.
type pendingCase struct {
	id, file, typ, locale string
	line                  int
	scored                bool
	scores                [metrics.NumCase]float64
	has                   [metrics.NumCase]bool
	query                 string
	gold                  []string
	cur                   baseline.Current
}

// startLoad loads the baseline from r on its own goroutine.
func (r *baselineRun) startLoad(ctx context.Context, rd io.Reader, name string) {
	r.loading, r.loaded = true, make(chan struct{})
	go func() {
		defer close(r.loaded)
		b, err := baseline.Load(ctx, rd, name, "")
		if err != nil {
			r.loadErr = err
			return
		}
		r.base, r.cmp = b, baseline.NewComparer(b, r.opts)
		r.ready.Store(r.cmp)
	}()
}

// startBody starts the --write-baseline body into w.
func (r *baselineRun) startBody(w io.Writer) {
	r.write = true
	r.body, r.finishBody = newGzipBody(w)
}

// wait waits for the load (if any) and returns its error.
func (r *baselineRun) wait() error {
	if r == nil || !r.loading {
		return nil
	}
	<-r.loaded
	return r.loadErr
}

func (r *baselineRun) close() {
	if r == nil {
		return
	}
	if r.loading {
		<-r.loaded // the goroutine has ended (Load stops on ctx) before the file is closed
	}
	r.base.Close()
}

// prepare fills the comparison fields of it from the case (on a worker). Only a
// case that may be listed keeps its query, gold and top k (copied: cs is reused).
// ranked is the case's deduplicated ranked identities from gate.Scorer.ScoreRanked
// (the whole list: the first gold rank may lie beyond k).
func (r *baselineRun) prepare(cs *casefile.Case, it *caseItem, ranked []string, k int) {
	res := &it.r
	it.cur = baseline.Current{IDHash: baseline.IDHash(cs.ID), GoldHash: baseline.GoldHash(cs.Gold)}
	if res.Scored && !res.Precomputed {
		dedup := ranked
		it.cur.Ranked, it.cur.Rank, it.cur.Top = true, metrics.FirstGoldRank(dedup, cs.Gold), dedup[:min(k, len(dedup))]
	}
	var keep bool
	if c := r.ready.Load(); c != nil {
		keep = c.NeedsDetail(res, &it.cur)
	} else {
		keep = r.loading // not loaded yet: keep it, the join decides later
	}
	if keep || r.write {
		it.line = baseline.CaseLine{ID: cs.ID, Line: cs.Line, Locale: cs.Locale, Type: res.Type, Query: cs.Query,
			Gold: cs.Gold, Scores: res.Scores, Has: res.Has, Ranked: it.cur.Ranked, Rank: it.cur.Rank, Top: it.cur.Top}
	}
	if r.write {
		it.bl = appendBaselineLine(&it.line)
	}
	if keep {
		it.line.Gold = append([]string(nil), it.line.Gold...)
		it.cur.Top = append([]string(nil), it.cur.Top...)
		it.line.Top = it.cur.Top
	} else {
		it.line, it.cur.Top = baseline.CaseLine{}, nil
	}
}

// add joins the case of it (emit, file order, after the accumulator accepted it).
func (r *baselineRun) add(it *caseItem) error {
	if r.loading && !r.joined {
		select {
		case <-r.loaded:
			if err := r.join(); err != nil {
				return err
			}
		default:
			if len(r.pending) < maxPending {
				r.pending = append(r.pending, pendingCase{id: it.r.ID, file: it.r.File, typ: it.r.Type, locale: it.r.Locale,
					line: it.r.Line, scored: it.r.Scored, scores: it.r.Scores, has: it.r.Has,
					query: it.line.Query, gold: it.line.Gold, cur: it.cur})
				return r.writeLine(it)
			}
			<-r.loaded // the queue is full: wait for the load
			if err := r.join(); err != nil {
				return err
			}
		}
	}
	if r.cmp != nil {
		r.cmp.Add(&it.r, &it.line, &it.cur)
	}
	return r.writeLine(it)
}

func (r *baselineRun) writeLine(it *caseItem) error {
	if r.write {
		_, err := r.body.Write(it.bl)
		return err
	}
	return nil
}

// join joins the queued cases once the load has finished.
func (r *baselineRun) join() error {
	r.joined = true
	if r.loadErr != nil {
		return r.loadErr
	}
	var cr gate.CaseResult
	for i := range r.pending {
		p := &r.pending[i]
		cr = gate.CaseResult{ID: p.id, File: p.file, Line: p.line, Type: p.typ, Locale: p.locale,
			Scored: p.scored, Scores: p.scores, Has: p.has}
		line := baseline.CaseLine{Query: p.query, Gold: p.gold}
		r.cmp.Add(&cr, &line, &p.cur)
	}
	r.pending = nil
	return nil
}

// finish ends the stream's side of the comparison: the queued cases are joined
// (a stream shorter than the load) and the --write-baseline body is flushed.
func (r *baselineRun) finish() error {
	if r.loading && !r.joined {
		<-r.loaded
		if err := r.join(); err != nil {
			return err
		}
	}
	if r.write {
		return r.finishBody()
	}
	return nil
}

// result is the comparison (nil without --baseline).
func (r *baselineRun) result() (*baseline.Comparison, error) {
	switch {
	case r == nil:
		return nil, nil
	case r.unav != "":
		return baseline.Unavailable(r.unav, r.opts), nil
	case r.cmp == nil:
		return nil, nil
	}
	c, err := r.cmp.Result()
	if c != nil {
		c.Source = r.source
		if c.Commit == "" && r.source != nil {
			c.Commit = r.source["head_sha"]
		}
	}
	return c, err
}

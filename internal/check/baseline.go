package check

// check's comparison with a baseline run: the load and the per-case hooks of
// scoreCases.
//
// The baseline is loaded before the case stream starts. Overlapping the load
// with the stream was tried (issue 23): every case scored before the load ends
// must then be queued with its detail (query, gold, top k: only the baseline
// tells which cases may be listed), and those strings pin the reader's 1 MiB
// blocks, so a 200k-case run took 2.4x the memory and 1.6x the CPU (see
// BENCHMARKS.md). Instead baseline.Load parses on several goroutines (load.go),
// which shortens the wall time and keeps the memory.

import (
	"context"
	"io"

	"github.com/retrieval-gate/retrieval-gate/internal/baseline"
	"github.com/retrieval-gate/retrieval-gate/internal/input/casefile"
	"github.com/retrieval-gate/retrieval-gate/internal/metrics"
)

// baselineRun is the comparison state of one check run.
type baselineRun struct {
	opts   baseline.Options
	unav   *baseline.Unavailability // why there is no baseline (auto)
	source map[string]string        // provenance of a fetched artifact

	base *baseline.Baseline
	cmp  *baseline.Comparer

	// --write-baseline: scoreCases renders each case's baseline line.
	write      bool
	body       *asyncWriter
	finishBody func() error
}

// load loads the baseline from rd (named name in messages).
func (r *baselineRun) load(ctx context.Context, rd io.Reader, name string) error {
	b, err := baseline.Load(ctx, rd, name, "")
	if err != nil {
		return err
	}
	r.base, r.cmp = b, baseline.NewComparer(b, r.opts)
	return nil
}

// startBody starts the --write-baseline body into w.
func (r *baselineRun) startBody(w io.Writer) {
	r.write = true
	r.body, r.finishBody = newGzipBody(w)
}

func (r *baselineRun) close() {
	if r == nil {
		return
	}
	r.base.Close()
}

// prepare fills the comparison fields of it from the case (on a worker). Only a
// case that may be listed keeps its query, gold and top k (copied: cs is reused).
// ranked is the case's deduplicated ranked identities from gate.Scorer.ScoreRanked
// (the whole list: the first gold rank may lie beyond k).
func (r *baselineRun) prepare(cs *casefile.Case, it *caseItem, ranked []string, k int) {
	res := &it.r
	it.cur = baseline.Current{IDHash: baseline.IDHash(cs.ID), GoldHash: baseline.GoldHash(cs.Gold), Line: cs.Line, Cluster: cs.Cluster}
	switch {
	case res.Precomputed:
	case res.Scored:
		dedup := ranked
		it.cur.Ranked, it.cur.Rank, it.cur.Top = true, metrics.FirstGoldRank(dedup, cs.Gold), dedup[:min(k, len(dedup))]
	default: // a retrieval case without gold: its top k, for the rank-biased overlap
		it.cur.HasTop, it.cur.Top = true, ranked[:min(k, len(ranked))]
	}
	keep := r.cmp != nil && r.cmp.Prepare(res, &it.cur)
	if keep || r.write {
		it.line = baseline.CaseLine{ID: cs.ID, Line: cs.Line, Locale: cs.Locale, Type: res.Type, Query: cs.Query,
			Gold: cs.Gold, Scores: res.Scores, Has: res.Has, Ranked: it.cur.Ranked, Rank: it.cur.Rank,
			HasTop: it.cur.HasTop, Top: it.cur.Top}
	}
	if r.write {
		it.bl, it.blChunk = appendBaselineLine(&it.line)
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
	if r.cmp != nil {
		r.cmp.Add(&it.r, &it.line, &it.cur)
	}
	if r.write {
		_, err := r.body.Write(it.bl)
		it.bl = nil
		it.blChunk.release() // copied into the body's buffer
		return err
	}
	return nil
}

// finish flushes the --write-baseline body.
func (r *baselineRun) finish() error {
	if r.write {
		return r.finishBody()
	}
	return nil
}

// result is the comparison (nil without --baseline).
func (r *baselineRun) result(ctx context.Context) (*baseline.Comparison, error) {
	switch {
	case r == nil:
		return nil, nil
	case r.unav != nil:
		return baseline.Unavailable(*r.unav, r.opts), nil
	case r.cmp == nil:
		return nil, nil
	}
	c, err := r.cmp.ResultContext(ctx)
	if c != nil {
		c.Source = r.source
		if c.Commit == "" && r.source != nil {
			c.Commit = r.source["head_sha"]
		}
	}
	return c, err
}

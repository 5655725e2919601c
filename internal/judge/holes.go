package judge

import (
	"context"
	"strings"

	"github.com/retrieval-gate/retrieval-gate/internal/input/trecfile"
)

// Holes: a judge run on a pull request asks only for the pairs nobody has
// labelled yet, neither in the cache nor in the qrels given (--known-qrels).

// KnownLabel is a pool pair labelled in the known qrels: it is not judged, and
// its label is written to the qrels as given.
type KnownLabel struct {
	QueryID, DocID string
	Relevance      int
}

// HoleStats count the pool's pairs by where their label comes from. Pool is
// every pair of the pool; Known those labelled in the known qrels (not
// judged); Cached those whose every judgment came from the cache; New those
// with at least one judgment asked of the judge in this run (the holes),
// answered or not. Pool = Known + Cached + New.
type HoleStats struct {
	Pool   int
	Known  int
	Cached int
	New    int
}

// splitKnown removes from pairs those labelled in the known qrels (nil: none)
// and returns the pairs to judge and the known labels, both in pool order.
func splitKnown(pairs []Pair, known *trecfile.Qrels) (judge []Pair, labels []KnownLabel) {
	if known == nil {
		return pairs, nil
	}
	judge = pairs[:0:0]
	for _, p := range pairs {
		if qi, ok := known.QueryIndex(p.QueryID); ok {
			if rel, ok := known.Relevance(qi, p.DocID); ok {
				labels = append(labels, KnownLabel{QueryID: p.QueryID, DocID: p.DocID, Relevance: rel})
				continue
			}
		}
		judge = append(judge, p)
	}
	return judge, labels
}

// readKnown reads the known qrels (TREC or JSONL, as compare reads them); R
// nil is none.
func readKnown(ctx context.Context, known Reader) (*trecfile.Qrels, error) {
	if known.R == nil {
		return nil, nil
	}
	return trecfile.ParseQrels(ctx, known.R, known.Name)
}

// Holes counts the result's pairs by where their labels come from.
func (res *Result) Holes() HoleStats {
	h := HoleStats{Known: len(res.Known), Pool: len(res.Known) + len(res.Pairs)}
	for _, gs := range res.Grades {
		fromCache := true
		for _, j := range gs {
			fromCache = fromCache && j.Cached
		}
		if fromCache {
			h.Cached++
		} else {
			h.New++
		}
	}
	return h
}

// poolLess orders pairs as the pool does: by query id, then document id.
func poolLess(q1, d1, q2, d2 string) bool {
	if c := strings.Compare(q1, q2); c != 0 {
		return c < 0
	}
	return d1 < d2
}

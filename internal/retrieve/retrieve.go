// Package retrieve runs live retrieval over a knowledge base: chunks are embedded
// and indexed in a vector store (memory or chroma) and in a BM25 index, and each
// query is answered by the dense ranking, the lexical ranking, or their reciprocal
// rank fusion, optionally reranked by a cross-encoder.
//
// Sub-packages hold one idea each: chunk (splitting), text (terms), embed
// (embedders), store (+ memory, chroma), bm25, fusion (RRF), rerank (TEI client),
// httpretry (model-server HTTP), jsonobj (editing case lines in place).
package retrieve

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"

	"github.com/retrieval-gate/retrieval-gate/internal/gate"
	"github.com/retrieval-gate/retrieval-gate/internal/retrieve/bm25"
	"github.com/retrieval-gate/retrieval-gate/internal/retrieve/chunk"
	"github.com/retrieval-gate/retrieval-gate/internal/retrieve/embed"
	"github.com/retrieval-gate/retrieval-gate/internal/retrieve/fusion"
	"github.com/retrieval-gate/retrieval-gate/internal/retrieve/internal/topk"
	"github.com/retrieval-gate/retrieval-gate/internal/retrieve/store"
	"github.com/retrieval-gate/retrieval-gate/internal/retrieve/text"
)

// Strategies.
const (
	Dense   = "dense"
	Lexical = "lexical"
	Hybrid  = "hybrid"
)

// Strategies lists the valid --strategy values.
var Strategies = []string{Dense, Lexical, Hybrid}

// MinDepth is the number of candidates each ranking contributes to fusion and
// reranking (or k, when larger).
const MinDepth = 50

// IngestBatch is the number of chunks embedded and added per step of an ingest.
const IngestBatch = 256

// Reranker scores texts against a query (higher is better).
type Reranker interface {
	Scores(ctx context.Context, query string, texts []string) ([]float64, error)
}

// Options configure an Index.
type Options struct {
	Strategy   string
	K          int
	AllLocales bool
	Reranker   Reranker // optional
	// Progress, when set, is called during ingest with chunks done and total.
	Progress func(done, total int)
	// releaseTexts, when set, is called with n once the first n chunks are
	// indexed (embedded and counted): their texts are not read again.
	releaseTexts func(n int)
}

// Index answers queries over chunks.
type Index struct {
	chunks []chunk.Chunk
	byID   map[string]int
	emb    embed.Embedder // nil for lexical
	st     store.Store    // nil for lexical
	bm     *bm25.Index    // nil for dense
	opt    Options
	exact  *exactChecker // the exact check of a run (nil: none)
}

// Close returns the memory the index holds outside the Go heap (the lexical
// postings) to the system; a lexical search after finds nothing. The store is
// the caller's to close.
func (ix *Index) Close() {
	if ix.bm != nil {
		ix.bm.Close()
	}
}

// Fingerprint identifies an index's content: the chunks (ids, parents, locales,
// texts: hence the KB and chunking), the chunking parameters and the embedder.
func Fingerprint(chunks []chunk.Chunk, p chunk.Params, emb embed.Embedder) string {
	h := sha256.New()
	fmt.Fprintf(h, "retrieval-gate-index-v1\n%s\n%s\n", p, emb.Fingerprint())
	for _, c := range chunks {
		_, _ = io.WriteString(h, c.ID+"\x00"+c.ParentID+"\x00"+c.Locale+"\x00"+c.Text+"\x00")
	}
	return hex.EncodeToString(h.Sum(nil))[:32]
}

// Build prepares the index. For dense and hybrid it embeds the chunks and adds
// them to st, unless ready says st already holds them (a reused collection).
// emb and st may be nil for the lexical strategy.
func Build(ctx context.Context, chunks []chunk.Chunk, emb embed.Embedder, st store.Store, ready bool, opt Options) (*Index, error) {
	if opt.K <= 0 {
		return nil, fmt.Errorf("k must be at least 1")
	}
	chunks = canonicalLocales(chunks)
	ix := &Index{chunks: chunks, byID: make(map[string]int, len(chunks)), opt: opt}
	for i, c := range chunks {
		ix.byID[c.ID] = i
	}
	switch opt.Strategy {
	case Dense, Hybrid, Lexical:
	default:
		return nil, fmt.Errorf("unknown strategy %q", opt.Strategy)
	}
	if opt.Strategy != Dense {
		var buf []byte
		ix.bm = bm25.NewFunc(len(chunks), func(d int, emit func([]byte)) {
			buf = text.Each(chunks[d].Text, buf, emit)
		})
		// Ties at the cut are kept by chunk id, as the output orders them.
		chunkIDs := make([]string, len(chunks))
		for i, c := range chunks {
			chunkIDs[i] = c.ID
		}
		ix.bm.SetTieRanks(topk.Ranks(chunkIDs))
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	release := func(n int) {
		if opt.releaseTexts != nil {
			opt.releaseTexts(n)
		}
	}
	if opt.Strategy == Lexical {
		release(len(chunks))
		return ix, nil
	}
	if emb == nil || st == nil {
		return nil, fmt.Errorf("strategy %s needs an embedder and a store", opt.Strategy)
	}
	ix.emb, ix.st = emb, st
	if ready {
		release(len(chunks))
		if opt.Progress != nil {
			opt.Progress(len(chunks), len(chunks))
		}
		return ix, nil
	}
	// The store is sized once for every chunk when the dimension is known (the
	// vectors are never copied to grow), and an embedder that can writes the
	// vectors straight into the store's rows (no vector per chunk to collect).
	rs, reserves := st.(store.Reserver)
	filler, fills := st.(store.Filler)
	into, _ := emb.(embed.IntoEmbedder)
	reserved := false
	if reserves && into != nil {
		if err := rs.Reserve(len(chunks), into.Dim()); err != nil {
			return nil, err
		}
		reserved = true
	}
	direct := fills && into != nil && reserved
	for start := 0; start < len(chunks); start += IngestBatch {
		part := chunks[start:min(start+IngestBatch, len(chunks))]
		texts := make([]string, len(part))
		recs := make([]store.Record, len(part))
		for i, c := range part {
			texts[i] = c.Text
			recs[i] = store.Record{ID: c.ID, ParentID: c.ParentID, Locale: c.Locale, Text: c.Text}
		}
		if direct {
			var embErr error
			err := filler.AddFilled(ctx, recs, func(dst []float32) error {
				embErr = into.EmbedDocumentsInto(ctx, texts, dst)
				return embErr
			})
			if embErr != nil {
				return nil, fmt.Errorf("failed to embed chunks: %w", embErr)
			}
			if err != nil {
				return nil, err
			}
		} else {
			vecs, err := emb.EmbedDocuments(ctx, texts)
			if err != nil {
				return nil, fmt.Errorf("failed to embed chunks: %w", err)
			}
			if reserves && !reserved && len(vecs) > 0 && len(vecs[0]) > 0 {
				// The dimension is known from the first batch.
				if err := rs.Reserve(len(chunks)-start, len(vecs[0])); err != nil {
					return nil, err
				}
				reserved = true
			}
			for i := range recs {
				recs[i].Vector = vecs[i]
			}
			if err := st.Add(ctx, recs); err != nil {
				return nil, err
			}
		}
		// The batch's strings are the chunks' texts, whose memory release may
		// free: none is kept past the batch.
		clear(texts)
		clear(recs)
		release(start + len(part))
		if opt.Progress != nil {
			opt.Progress(start+len(part), len(chunks))
		}
	}
	return ix, nil
}

// Query is one case's question.
type Query struct {
	Text string
	// Locale is searched alone unless Options.AllLocales; "" searches all. It
	// matches the chunks' locales in canonical case (canonicalLocale).
	Locale string
}

// Result is one retrieved chunk.
type Result struct {
	ID       string  // chunk id
	ParentID string  // card id
	Score    float64 // of the last stage: cosine (dense), BM25 (lexical), RRF (hybrid) or the reranker's; rounded to ScoreDigits
}

// ScoreDigits is the number of significant digits a result's score is rounded to.
const ScoreDigits = topk.Digits

// RoundScore rounds s to ScoreDigits significant digits (as strconv's 'g' format
// prints it), the value Search returns and the output shows.
func RoundScore(s float64) float64 {
	return topk.Round(s) // ±Inf and NaN kept as they are
}

// roundAndOrder rounds every score to ScoreDigits significant digits and orders
// the results by rounded score, best first, then by chunk id, so that the order
// is a function of what the output shows: two scores that differ only beyond
// the printed digits are a tie, and ties never depend on a store's or a
// server's internal order.
func roundAndOrder(rs []Result) {
	for i := range rs {
		rs[i].Score = RoundScore(rs[i].Score)
	}
	sort.SliceStable(rs, func(a, b int) bool {
		if rs[a].Score != rs[b].Score {
			return rs[a].Score > rs[b].Score
		}
		return rs[a].ID < rs[b].ID
	})
}

// cutRounded returns the first n of rs, which is ordered by score, best first,
// as roundAndOrder would order them: the results whose score rounds as the
// n-th one's (a run of rs, rounding being monotone) are kept by id. Only that
// run is rounded; the order is the final sort's.
func cutRounded(rs []Result, n int) []Result {
	if len(rs) <= n || n <= 0 {
		return rs
	}
	r := RoundScore(rs[n-1].Score)
	lo, hi := n-1, n
	for lo > 0 && RoundScore(rs[lo-1].Score) == r {
		lo--
	}
	for hi < len(rs) && RoundScore(rs[hi].Score) == r {
		hi++
	}
	if hi > n {
		run := rs[lo:hi]
		sort.Slice(run, func(a, b int) bool { return run[a].ID < run[b].ID })
	}
	return rs[:n]
}

// Search answers a batch of queries, up to K results each, best first: by score
// rounded to ScoreDigits significant digits, then by chunk id.
func (ix *Index) Search(ctx context.Context, qs []Query) ([][]Result, error) {
	return ix.search(ctx, qs, nil)
}

// Depth is how many results the index asks its stages for: k, or max(k,
// MinDepth) when hybrid fusion or a reranker reads deeper.
func (ix *Index) Depth() int {
	if ix.opt.Strategy == Hybrid || ix.opt.Reranker != nil {
		return max(ix.opt.K, MinDepth)
	}
	return ix.opt.K
}

// search is Search; observe, when set, receives each query's store query
// and the store's answer (the exact check).
func (ix *Index) search(ctx context.Context, qs []Query, observe func(i int, q store.Query, hits []store.Hit) error) ([][]Result, error) {
	k := ix.opt.K
	depth := ix.Depth()
	var dense [][]store.Hit
	if ix.opt.Strategy != Lexical {
		texts := make([]string, len(qs))
		for i, q := range qs {
			texts[i] = q.Text
		}
		vecs, err := ix.emb.EmbedQueries(ctx, texts)
		if err != nil {
			return nil, fmt.Errorf("failed to embed queries: %w", err)
		}
		sq := make([]store.Query, len(qs))
		for i, q := range qs {
			sq[i] = store.Query{Vector: vecs[i], Locale: ix.locale(q)}
		}
		dense, err = ix.st.Search(ctx, sq, depth)
		if err != nil {
			return nil, err
		}
		if observe != nil {
			for i := range sq {
				if err := observe(i, sq[i], dense[i]); err != nil {
					return nil, err
				}
			}
		}
	}
	out := make([][]Result, len(qs))
	for i, q := range qs {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		var cands []Result
		switch ix.opt.Strategy {
		case Dense:
			cands = ix.fromHits(dense[i])
		case Lexical:
			cands = ix.lexical(q, depth)
		case Hybrid:
			lex := ix.lexical(q, depth)
			den := ix.fromHits(dense[i])
			// Each ranking is fused in its output order (ties by id).
			roundAndOrder(lex)
			roundAndOrder(den)
			fused := fusion.RRF(ids(den), ids(lex))
			cands = make([]Result, len(fused))
			for j, f := range fused {
				cands[j] = Result{ID: f.ID, ParentID: ix.chunks[ix.byID[f.ID]].ParentID, Score: f.Score}
			}
			// The fused list is cut in the output's order: a chunk that
			// would come first there is never cut for another.
			cands = cutRounded(cands, depth)
		}
		if len(cands) > depth {
			cands = cands[:depth]
		}
		if ix.opt.Reranker != nil && len(cands) > 0 {
			var err error
			if cands, err = ix.rerank(ctx, q.Text, cands); err != nil {
				if ctx.Err() != nil {
					return nil, err
				}
				return nil, &QueryError{Query: i, Err: err}
			}
		}
		roundAndOrder(cands)
		if len(cands) > k {
			cands = cands[:k]
		}
		out[i] = cands
	}
	return out, nil
}

// QueryError is a failure of one query of a batch (its reranking): Query is
// its index in the batch, which RetrieveCases names by its case.
type QueryError struct {
	Query int
	Err   error
}

func (e *QueryError) Error() string { return fmt.Sprintf("query %d of the batch: %v", e.Query, e.Err) }

func (e *QueryError) Unwrap() error { return e.Err }

func (ix *Index) locale(q Query) string {
	if ix.opt.AllLocales {
		return ""
	}
	return canonicalLocale(q.Locale)
}

// canonicalLocale is the locale a chunk is filed under and a query searches:
// the BCP 47 tag in its canonical case, as check groups the cases
// (gate.CanonicalLocale: "pt-br" and "pt_BR" are "pt-BR"), and "" for none.
func canonicalLocale(l string) string {
	if strings.TrimSpace(l) == "" {
		return ""
	}
	return gate.CanonicalLocale(l)
}

// canonicalLocales returns chunks with every locale canonical
// (canonicalLocale): chunks itself when they are, else a copy.
func canonicalLocales(chunks []chunk.Chunk) []chunk.Chunk {
	copied := false
	for i, c := range chunks {
		l := canonicalLocale(c.Locale)
		if l == c.Locale {
			continue
		}
		if !copied {
			chunks, copied = slices.Clone(chunks), true
		}
		chunks[i].Locale = l
	}
	return chunks
}

func (ix *Index) lexical(q Query, depth int) []Result {
	loc := ix.locale(q)
	var keep func(int) bool
	if loc != "" {
		keep = func(d int) bool { return ix.chunks[d].Locale == loc }
	}
	hits := ix.bm.Search(text.Tokens(q.Text), depth, keep)
	out := make([]Result, len(hits))
	for i, h := range hits {
		c := ix.chunks[h.Doc]
		out[i] = Result{ID: c.ID, ParentID: c.ParentID, Score: h.Score}
	}
	return out
}

// fromHits maps store hits to results, dropping ids the KB does not have (a
// reused collection never has them; a foreign one might).
func (ix *Index) fromHits(hits []store.Hit) []Result {
	out := make([]Result, 0, len(hits))
	for _, h := range hits {
		i, ok := ix.byID[h.ID]
		if !ok {
			continue
		}
		out = append(out, Result{ID: h.ID, ParentID: ix.chunks[i].ParentID, Score: h.Score})
	}
	return out
}

func (ix *Index) rerank(ctx context.Context, query string, cands []Result) ([]Result, error) {
	texts := make([]string, len(cands))
	for i, c := range cands {
		texts[i] = ix.chunks[ix.byID[c.ID]].Text
	}
	scores, err := ix.opt.Reranker.Scores(ctx, query, texts)
	if err != nil {
		return nil, err
	}
	out := make([]Result, len(cands))
	copy(out, cands)
	for i := range out {
		out[i].Score = scores[i]
	}
	sort.SliceStable(out, func(a, b int) bool { return out[a].Score > out[b].Score })
	return out, nil
}

func ids(rs []Result) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = r.ID
	}
	return out
}

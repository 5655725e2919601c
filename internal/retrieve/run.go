package retrieve

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/retrieval-gate/retrieval-gate/internal/format"
	"github.com/retrieval-gate/retrieval-gate/internal/gate"
	"github.com/retrieval-gate/retrieval-gate/internal/httpretry"
	"github.com/retrieval-gate/retrieval-gate/internal/input"
	"github.com/retrieval-gate/retrieval-gate/internal/input/casefile"
	"github.com/retrieval-gate/retrieval-gate/internal/input/kbfile"
	"github.com/retrieval-gate/retrieval-gate/internal/option"
	"github.com/retrieval-gate/retrieval-gate/internal/retrieve/chunk"
	"github.com/retrieval-gate/retrieval-gate/internal/retrieve/embed"
	"github.com/retrieval-gate/retrieval-gate/internal/retrieve/jsonobj"
	"github.com/retrieval-gate/retrieval-gate/internal/retrieve/rerank"
	"github.com/retrieval-gate/retrieval-gate/internal/retrieve/store"
)

// CaseWindow is the number of cases whose queries are embedded and searched
// together (one batch of requests to the embedder and the store).
const CaseWindow = 256

// In is what a retrieval run reads and writes: the knowledge base, the cases
// whose queries are run, and where the cases go with `retrieved` filled.
type In struct {
	// KB is the knowledge base the front end loaded (kbfile.Load), named in
	// messages by its Path. Run only reads it: the caller may share it (gate.Live
	// checks against it while retrieve indexes it; evaluate's stages all read
	// one). Run keeps no reference to it once its cards are split, so a caller
	// that keeps none either lets the collector take it before the vectors are
	// made.
	KB        *kbfile.KB
	Cases     io.Reader // cases JSONL
	CasesName string    // the cases' name in messages (a path, or "stdin")
	Out       io.Writer // each case, every byte kept, `retrieved` and `retrieval` set
	OutName   string    // Out's name in messages
	// CleanupFailed, when set, is told the error of the store's cleanup (a
	// temporary collection that could not be deleted), which Run reports as
	// a warning (RunOptions.Logf) and does not turn into its own error: the
	// output stands.
	CleanupFailed func(error)
}

// RunOptions are the options of a retrieval run (the retrieve command, each
// retrieve stage of evaluate, gate.Live), resolved before the run (Resolve):
// every setting a value. Store and Embedder are names from the registries
// (store.Lookup, embed.Lookup).
type RunOptions struct {
	Strategy   string
	K          int
	AllLocales bool
	Store      string
	StoreURL   string // the store's server ("" for an in-process store)
	Collection string // a kept, reused collection of the store ("" temporary)
	// The store's tenant, database, API key (a secret) and token header (""
	// the store's default). CreateDatabase creates a missing tenant or database.
	StoreTenant, StoreDatabase, StoreAPIKey, StoreTokenHeader string
	CreateDatabase                                            bool
	Embedder                                                  string
	EmbedderURL, EmbedderModel                                string
	EmbedderAPIKey                                            string // the embedder's key (a secret; "" none)
	RerankURL                                                 string // a TEI /rerank server; "" does not rerank
	// ExactCheck checks the store's answers against exact search over its
	// vectors (exact.go): 0 off, N the sample of N queries, ExactAll every
	// query. MinANNRecall gates the recall when MinANNRecallSet.
	ExactCheck      int
	MinANNRecall    float64
	MinANNRecallSet bool
	// FromEnv names, for each setting Resolve took from the environment's
	// values, the variable it came from (by option: "chroma-api-key":
	// "CHROMA_API_KEY"): a refusal names the variable, and a command line
	// written for the run (evaluate's stages) leaves it to the environment.
	FromEnv map[string]string
	// Logf, when set, receives the run's log lines (warnings, what was opened,
	// what was indexed), without a trailing newline.
	Logf func(format string, args ...any)
	// Progress, when set, is called during ingest with chunks done and total.
	Progress func(done, total int)
}

// RunResult says what a retrieval run did.
type RunResult struct {
	Cases, Chunks, Cards int
	// Strategy, Store and Embedder as recorded in each case's "retrieval"
	// (a lexical run uses neither store nor embedder: "none").
	Strategy, Store, Embedder string
	K                         int
	// ANN is the exact check (nil without RunOptions.ExactCheck).
	ANN *ANNCheck
}

// optionError is an option refused once the run has started, as an
// *option.Error, so a caller names the option as the user gave it: the
// embedder's URL by its option; the model and the reranker's URL, whose
// refusals name their flag themselves, as err's message alone.
func optionError(name string, err error) error {
	if name == "embedder-url" {
		return option.Invalid(name, err)
	}
	return &option.Error{Option: name, Parts: []any{err}, Err: err}
}

// Run indexes the KB with the strategy, store and embedder of o, and writes
// each case of in.Cases to in.Out with its `retrieved` list: in windows of
// CaseWindow cases, every other byte of a case kept. It opens no file: the
// front end loads the KB and opens the cases and the output.
func Run(ctx context.Context, in In, o RunOptions) (res *RunResult, err error) {
	logf := o.Logf
	if logf == nil {
		logf = func(string, ...any) {}
	}
	kb := in.KB
	if kb == nil {
		return nil, errors.New("retrieve: In.KB is nil")
	}
	in.KB = nil // this copy of in holds it no longer: see kb = nil below
	kbPath := kb.Path
	kb.WarnSkipped(logf)
	params := chunk.Params{}
	// The chunks carry every card's text, outside the heap: the cards are not
	// kept beside them, and, when the caller keeps no reference to the KB, the
	// memory the loading used goes back to the system before the vectors take
	// theirs.
	nCards := kb.Len()
	// Each step before the embedding (which watches ctx) takes about 0.3 s a
	// 100,000 cards and does not: the context is checked between them, and
	// while the cards are split.
	texts, err := splitCards(ctx, kb, params)
	defer texts.release(len(texts.chunks))
	chunks := texts.chunks
	kb = nil
	if err != nil {
		return nil, err
	}
	debug.FreeOSMemory()
	if len(chunks) == 0 {
		return nil, input.Errorf(kbPath, 0, "knowledge base has no text to retrieve (every card is empty)")
	}
	opt := Options{Strategy: o.Strategy, K: o.K, AllLocales: o.AllLocales, Progress: o.Progress}
	if o.RerankURL != "" {
		rr, err := rerank.New(o.RerankURL, nil, httpretry.DefaultPolicy)
		if err != nil {
			return nil, optionError("rerank-url", err)
		}
		opt.Reranker = rr
	} else {
		// Only the reranker reads a chunk's text once it is indexed.
		opt.releaseTexts = texts.release
	}
	res = &RunResult{Chunks: len(chunks), Cards: nCards, Strategy: o.Strategy, Store: o.Store, Embedder: o.Embedder, K: o.K}
	var (
		emb   embed.Embedder
		st    store.Store
		ready bool
	)
	if o.Strategy == Lexical {
		// BM25 needs neither vectors nor a store.
		res.Store, res.Embedder = "none", "none"
	} else {
		if emb, err = newEmbedder(&o, chunks); err != nil {
			return nil, err
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		kind, err := store.Lookup(o.Store)
		if err != nil {
			return nil, err
		}
		cfg := o.StoreConfig(kind)
		cfg.Chunks, cfg.Fingerprint = len(chunks), Fingerprint(chunks, params, emb)
		for _, c := range chunks {
			cfg.MaxIDBytes = max(cfg.MaxIDBytes, len(c.ID))
		}
		op, err := kind.Open(ctx, cfg)
		if err != nil {
			return nil, err
		}
		st, ready = op.Store, op.Ready
		if op.Notice != "" {
			logf("%s", op.Notice)
		}
		defer func() {
			// A failed cleanup (e.g. the server went away) does not undo a
			// written output; it is reported, not turned into a failure.
			if cerr := st.Close(ctx); cerr != nil {
				logf("warning: %v", cerr)
				if in.CleanupFailed != nil {
					in.CleanupFailed(cerr)
				}
			} else if op.Closed != "" {
				logf("%s", op.Closed)
			}
		}()
	}
	start := time.Now()
	ix, err := Build(ctx, chunks, emb, st, ready, opt)
	if err != nil {
		return nil, err
	}
	defer ix.Close()
	logf("%d chunks from %d cards indexed in %s (strategy %s, store %s, embedder %s)",
		len(chunks), nCards, time.Since(start).Round(time.Millisecond), res.Strategy, res.Store, res.Embedder)
	if o.ExactCheck != 0 {
		if ix.exact, err = newExactChecker(st, o.ExactCheck, ix.Depth(), logf); err != nil {
			return nil, optionError("exact-check", err)
		}
	}
	if res.Cases, err = ix.runCases(ctx, in, res); err != nil {
		return nil, err
	}
	if ix.exact != nil {
		if res.ANN, err = ix.exact.result(ctx, o.MinANNRecall, o.MinANNRecallSet); err != nil {
			return nil, err
		}
	}
	return res, nil
}

// newEmbedder builds the embedder of o from the registry.
func newEmbedder(o *RunOptions, chunks []chunk.Chunk) (embed.Embedder, error) {
	kind, err := embed.Lookup(o.Embedder)
	if err != nil {
		return nil, err
	}
	texts := make([]string, len(chunks))
	for i, c := range chunks {
		texts[i] = c.Text
	}
	e, err := kind.New(o.embedConfig(texts))
	if err != nil {
		return nil, embedderError(err)
	}
	return e, nil
}

// RetrievalJSON is the "retrieval" object, keys in the contract's order.
func (r *RunResult) RetrievalJSON() []byte {
	b := []byte(`{"strategy": `)
	b = format.AppendJSONString(b, r.Strategy)
	b = append(b, `, "store": `...)
	b = format.AppendJSONString(b, r.Store)
	b = append(b, `, "embedder": `...)
	b = format.AppendJSONString(b, r.Embedder)
	b = append(b, `, "k": `...)
	b = strconv.AppendInt(b, int64(r.K), 10)
	return append(b, '}')
}

// pendingCase is a case waiting for its window to be searched.
type pendingCase struct {
	raw []byte
	q   Query
	id  string // the case's id: the exact check's sampling key, and a failed query's name
	// cluster is the case's cluster key, for the exact check's interval.
	cluster string
	file    string
	line    int
}

// runCases streams the cases in windows of CaseWindow and writes each one with
// `retrieved` and `retrieval` set and every other byte kept.
func (ix *Index) runCases(ctx context.Context, in In, meta *RunResult) (int, error) {
	return ix.RetrieveCases(ctx, in.Cases, in.CasesName, meta.RetrievalJSON(), func(line []byte) error {
		if _, err := in.Out.Write(line); err != nil {
			return fmt.Errorf("failed to write %s: %w", in.OutName, err)
		}
		return nil
	})
}

// RetrieveCases streams the cases of r (named name in messages) in windows of
// CaseWindow, searches each window's queries, and hands write each case's line
// (with its newline) with `retrieved` and `retrieval` (metaJSON) set and every
// other byte kept, in file order; it returns how many cases it wrote. The one
// case loop of retrieve and of the public gate.Live.
func (ix *Index) RetrieveCases(ctx context.Context, r io.Reader, name string, metaJSON []byte, write func(line []byte) error) (int, error) {
	total := 0
	var win []pendingCase
	flush := func() error {
		if len(win) == 0 {
			return nil
		}
		qs := make([]Query, len(win))
		for i, p := range win {
			qs[i] = p.q
		}
		var observe func(int, store.Query, []store.Hit) error
		if ix.exact != nil {
			observe = func(i int, q store.Query, hits []store.Hit) error {
				return ix.exact.observe(ctx, win[i].id, win[i].cluster, win[i].line, q, hits)
			}
		}
		res, err := ix.search(ctx, qs, observe)
		if qe := (*QueryError)(nil); errors.As(err, &qe) {
			p := win[qe.Query]
			return fmt.Errorf("case %q (%s:%d): %w", p.id, p.file, p.line, qe.Err)
		}
		if err != nil {
			return err
		}
		if ix.exact != nil {
			if err := ix.exact.flush(ctx); err != nil {
				return err
			}
		}
		for i, p := range win {
			line, err := jsonobj.Set(p.raw, []jsonobj.Member{
				{Key: "retrieved", Value: RetrievedJSON(res[i])},
				{Key: "retrieval", Value: metaJSON},
			})
			if err != nil {
				return input.Errorf(p.file, p.line, "cannot rewrite the case: %v", err)
			}
			if err := write(append(line, '\n')); err != nil {
				return err
			}
		}
		total += len(win)
		win = win[:0]
		return nil
	}
	// A case id twice is the error check reports (its duplicate-id log): the
	// earliest duplicate once the stream ends, whichever way it ends.
	var ids gate.CaseIDs
	defer ids.Close()
	err := casefile.StreamCases(ctx, r, name, func(cs *casefile.Case) error {
		if err := ids.Add(cs.ID, cs.Line, cs.File); err != nil {
			return err
		}
		if strings.TrimSpace(cs.Query) == "" {
			return input.Errorf(cs.File, cs.Line, "case %q has no \"query\" to retrieve for", cs.ID)
		}
		if cs.Scores != nil {
			return input.Errorf(cs.File, cs.Line, "case %q carries precomputed \"scores\"; a retrieved list would conflict with them", cs.ID)
		}
		p := pendingCase{raw: slices.Clone(cs.Raw), q: Query{Text: cs.Query, Locale: cs.Locale}, id: strings.Clone(cs.ID), file: cs.File, line: cs.Line}
		if ix.exact != nil {
			p.cluster = strings.Clone(cs.Cluster)
		}
		win = append(win, p)
		if len(win) >= CaseWindow {
			return flush()
		}
		return nil
	})
	if derr := ids.Duplicate(); derr != nil {
		err = derr
	}
	if err != nil {
		return total, err
	}
	return total, flush()
}

// RetrievedJSON renders results as [{"id": chunk, "parent_id": card, "score": s}],
// scores with ScoreDigits significant digits (Search has rounded them), ids as
// JSON strings (a card id may hold any character the KB's JSON allows; Go's
// quoting would write \x7f or \a, which JSON does not have).
func RetrievedJSON(rs []Result) []byte {
	b := []byte{'['}
	for i, r := range rs {
		if i > 0 {
			b = append(b, ", "...)
		}
		b = append(b, `{"id": `...)
		b = format.AppendJSONString(b, r.ID)
		b = append(b, `, "parent_id": `...)
		b = format.AppendJSONString(b, r.ParentID)
		b = append(b, `, "score": `...)
		b = strconv.AppendFloat(b, r.Score, 'g', ScoreDigits, 64)
		b = append(b, '}')
	}
	return append(b, ']')
}

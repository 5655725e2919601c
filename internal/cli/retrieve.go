package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"

	"github.com/retrieval-gate/retrieval-gate/internal/atomicfile"
	"github.com/retrieval-gate/retrieval-gate/internal/format"
	"github.com/retrieval-gate/retrieval-gate/internal/httpretry"
	"github.com/retrieval-gate/retrieval-gate/internal/input"
	"github.com/retrieval-gate/retrieval-gate/internal/input/casefile"
	"github.com/retrieval-gate/retrieval-gate/internal/input/kbfile"
	"github.com/retrieval-gate/retrieval-gate/internal/publish"
	"github.com/retrieval-gate/retrieval-gate/internal/retrieve"
	"github.com/retrieval-gate/retrieval-gate/internal/retrieve/chunk"
	"github.com/retrieval-gate/retrieval-gate/internal/retrieve/embed"
	"github.com/retrieval-gate/retrieval-gate/internal/retrieve/jsonobj"
	"github.com/retrieval-gate/retrieval-gate/internal/retrieve/rerank"
	"github.com/retrieval-gate/retrieval-gate/internal/retrieve/store"
	"github.com/retrieval-gate/retrieval-gate/internal/retrieve/store/chroma"
	"github.com/retrieval-gate/retrieval-gate/internal/retrieve/store/memory"
)

// RetrieveCommand is `retrieval-gate retrieve`: run the cases' queries live
// against the KB and write the cases with their `retrieved` lists filled.
type RetrieveCommand struct{}

func (c *RetrieveCommand) Name() string { return "retrieve" }
func (c *RetrieveCommand) Synopsis() string {
	return "run the cases' queries against the KB (memory or Chroma) and fill `retrieved`"
}

// retrieveOptions are the parsed and validated flags of retrieve.
type retrieveOptions struct {
	kb, cases, out                     string
	store, chromaURL, collection       string
	embedder, embedderURL, embedderMdl string
	strategy, rerankURL                string
	k                                  int
	allLocales                         bool
	src                                *sources // where the values came from, for newEmbedder's refusals
}

// stores and embedders are the names --store and --embedder take.
var (
	stores    = []string{"memory", "chroma"}
	embedders = []string{"hash", "openai", "ollama"}
)

// caseWindow is the number of cases whose queries are embedded and searched
// together (one batch of requests to the embedder and the store).
const caseWindow = 256

// retrieveInputs are retrieve's Action inputs.
var retrieveInputs = actionInputs{
	"kb": "", "cases": "", "out": "", "store": "", "chroma-url": "", "collection": "", "embedder": "", "embedder-url": "",
	"embedder-model": "", "strategy": "", "rerank-url": "", "k": "", "all-locales": "",
}

func (c *RetrieveCommand) parse(env *Env, args []string) (*retrieveOptions, error) {
	fs := newFlagSet(env, "retrieve")
	o := &retrieveOptions{}
	fs.StringVar(&o.kb, "kb", "", "knowledge base: JSONL file of cards or directory of Markdown cards (required)")
	fs.StringVar(&o.cases, "cases", "", "cases JSONL whose queries are run (required; - reads standard input)")
	fs.StringVar(&o.out, "out", "", "write the cases with `retrieved` filled to `FILE` (required)")
	fs.StringVar(&o.store, "store", "memory", "vector store: memory (in-process exact search) or chroma")
	fs.StringVar(&o.chromaURL, "chroma-url", "", "Chroma server `URL` (v2 API); implies --store chroma (default $CHROMA_URL when --store chroma)")
	fs.StringVar(&o.collection, "collection", "", "Chroma collection to keep and reuse while its fingerprint matches (default: a temporary one)")
	fs.StringVar(&o.embedder, "embedder", "hash", "embedder: hash (built-in, lexical), openai (any OpenAI-compatible /v1/embeddings) or ollama")
	fs.StringVar(&o.embedderURL, "embedder-url", "", "embedding server `URL` (openai: default https://api.openai.com/v1; ollama: default http://127.0.0.1:11434)")
	fs.StringVar(&o.embedderMdl, "embedder-model", "", "embedding model name (required for ollama and api.openai.com)")
	fs.StringVar(&o.strategy, "strategy", retrieve.Hybrid, "dense, lexical (BM25) or hybrid (reciprocal rank fusion of both)")
	fs.StringVar(&o.rerankURL, "rerank-url", "", "cross-encoder reranker speaking the TEI /rerank protocol (optional)")
	fs.IntVar(&o.k, "k", 10, "chunks kept per case (≥ 1)")
	fs.BoolVar(&o.allLocales, "all-locales", false, "search every locale (default: a case with a locale searches only cards of that locale)")
	src, err := parseFlags(fs, env, args, retrieveInputs)
	if err != nil {
		return nil, err
	}
	o.src = src
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	for _, req := range []struct{ name, v string }{{"kb", o.kb}, {"cases", o.cases}, {"out", o.out}} {
		if req.v == "" {
			return nil, usagef("retrieve: --%s is required", req.name)
		}
	}
	if err := refuseOverwrite("retrieve", src, []file{{"cases", o.cases}, {"kb", o.kb}}, []file{{"out", o.out}}); err != nil {
		return nil, err
	}
	if o.k < 1 {
		return nil, src.refuse("retrieve", "k", "must be at least 1")
	}
	if !slices.Contains(retrieve.Strategies, o.strategy) {
		return nil, src.refuse("retrieve", "strategy", "must be dense, lexical or hybrid")
	}
	if !slices.Contains(embedders, o.embedder) {
		return nil, src.refuse("retrieve", "embedder", "must be hash, openai or ollama")
	}
	if set["chroma-url"] && o.chromaURL != "" {
		if set["store"] && o.store != "chroma" {
			return nil, usagef("retrieve: %s implies --store chroma, but %s", src.name("chroma-url"), src.quoted("store", o.store))
		}
		o.store = "chroma"
	}
	switch o.store {
	case "memory":
		if o.collection != "" {
			return nil, usagef("retrieve: %s needs --store chroma", src.name("collection"))
		}
	case "chroma":
		if o.chromaURL == "" {
			o.chromaURL = env.Getenv("CHROMA_URL")
		}
		if o.chromaURL == "" {
			return nil, usagef("retrieve: %s chroma needs %s or $CHROMA_URL", src.name("store"), src.name("chroma-url"))
		}
	default:
		return nil, src.refuse("retrieve", "store", "must be memory or chroma")
	}
	return o, nil
}

func (c *RetrieveCommand) Run(ctx context.Context, f *Factory, args []string) error {
	o, err := c.parse(f.Env, args)
	if err != nil {
		return err
	}
	err = c.run(ctx, f, o)
	if errors.Is(err, context.Canceled) {
		return fmt.Errorf("retrieve: interrupted, nothing written: %w", err)
	}
	return err
}

func (c *RetrieveCommand) run(ctx context.Context, f *Factory, o *retrieveOptions) error {
	env := f.Env
	// The output is created (as a temporary file) first: an unwritable --out
	// fails before the knowledge base is loaded and indexed.
	outs := atomicfile.NewSet()
	defer outs.Abort()
	out, err := outs.Add(o.out)
	if err != nil {
		return err
	}
	kb, err := kbfile.Load(ctx, o.kb)
	if err != nil {
		return err
	}
	for _, s := range kb.Skipped {
		fmt.Fprintf(env.Stderr, "retrieve: warning: knowledge base: skipped %s\n", s)
	}
	params := chunk.Params{}
	chunks := chunk.Split(kb.Cards, params)
	if len(chunks) == 0 {
		return input.Errorf(o.kb, 0, "knowledge base has no text to retrieve (every card is empty)")
	}

	opt := retrieve.Options{Strategy: o.strategy, K: o.k, AllLocales: o.allLocales}
	if o.rerankURL != "" {
		rr, err := rerank.New(o.rerankURL, nil, httpretry.DefaultPolicy)
		if err != nil {
			return usagef("retrieve: %v", err)
		}
		opt.Reranker = rr
	}
	meta := retrievalMeta{strategy: o.strategy, store: o.store, embedder: o.embedder, k: o.k}
	var (
		emb     embed.Embedder
		st      store.Store
		ready   bool
		tmpName string // a temporary Chroma collection, deleted by st.Close
	)
	if o.strategy == retrieve.Lexical {
		// BM25 needs neither vectors nor a store.
		meta.store, meta.embedder = "none", "none"
	} else {
		if emb, err = newEmbedder(env, o, chunks); err != nil {
			return err
		}
		switch o.store {
		case "memory":
			st = memory.New(0)
		case "chroma":
			cs, rdy, err := chroma.Open(ctx, chroma.Config{
				URL: o.chromaURL, Collection: o.collection, Chunks: len(chunks),
				Fingerprint: retrieve.Fingerprint(chunks, params, emb),
			})
			if err != nil {
				return err
			}
			st, ready = cs, rdy
			switch {
			case cs.Temporary():
				tmpName = cs.Collection()
				fmt.Fprintf(env.Stderr, "retrieve: chroma %s: temporary collection %s (deleted at exit)\n", o.chromaURL, cs.Collection())
			case rdy:
				fmt.Fprintf(env.Stderr, "retrieve: chroma %s: reusing collection %s (fingerprint matches)\n", o.chromaURL, cs.Collection())
			default:
				fmt.Fprintf(env.Stderr, "retrieve: chroma %s: (re)building collection %s\n", o.chromaURL, cs.Collection())
			}
		}
		defer func() {
			// A failed cleanup (e.g. the server went away) does not undo a
			// written output; it is reported, not turned into a failure.
			if cerr := st.Close(ctx); cerr != nil {
				fmt.Fprintf(env.Stderr, "retrieve: warning: %v\n", cerr)
			} else if tmpName != "" {
				fmt.Fprintf(env.Stderr, "retrieve: temporary collection %s deleted\n", tmpName)
			}
		}()
	}

	prog := newProgress(f, "retrieve: indexing chunks", len(chunks))
	opt.Progress = prog.update
	start := time.Now()
	ix, err := retrieve.Build(ctx, chunks, emb, st, ready, opt)
	prog.finish()
	if err != nil {
		return err
	}
	fmt.Fprintf(env.Stderr, "retrieve: %d chunks from %d cards indexed in %s (strategy %s, store %s, embedder %s)\n",
		len(chunks), kb.Len(), time.Since(start).Round(time.Millisecond), meta.strategy, meta.store, meta.embedder)

	n, err := c.runCases(ctx, env, o, ix, meta, out)
	if err != nil {
		return err
	}
	if err := outs.Commit(); err != nil {
		return err
	}
	fmt.Fprintf(env.Stderr, "retrieve: %d cases written to %s\n", n, format.SanitizeText(o.out))
	if f.staged {
		return nil // evaluate's outputs and job summary say what its stages did
	}
	pub := pathOutputs(map[string]string{"out": o.out})
	pub.Outputs["cases"] = strconv.Itoa(n)
	pub.Outputs["strategy"] = meta.strategy
	pub.Mode = publish.ModeNever
	pub.Markdown = fmt.Sprintf("**retrieval-gate retrieve**: %d cases retrieved from %d chunks of %d cards (strategy %s, store %s, embedder %s, k = %d), written to %s.\n",
		n, len(chunks), kb.Len(), meta.strategy, meta.store, meta.embedder, o.k, format.EscapeMarkdown(o.out))
	f.Publisher().Publish(ctx, pub)
	return nil
}

func newEmbedder(env *Env, o *retrieveOptions, chunks []chunk.Chunk) (embed.Embedder, error) {
	switch o.embedder {
	case "hash":
		texts := make([]string, len(chunks))
		for i, c := range chunks {
			texts[i] = c.Text
		}
		return embed.NewHash(embed.DefaultHashDim, texts), nil
	case "openai":
		url := o.embedderURL
		if url == "" {
			url = "https://api.openai.com/v1"
		}
		if strings.Contains(url, "api.openai.com") && o.embedderMdl == "" {
			return nil, usagef("retrieve: %s openai against api.openai.com needs %s (e.g. text-embedding-3-small)", o.src.name("embedder"), o.src.name("embedder-model"))
		}
		e, err := embed.NewOpenAI(embed.OpenAIConfig{URL: url, Model: o.embedderMdl, APIKey: env.Getenv("OPENAI_API_KEY")})
		if err != nil {
			return nil, o.src.refuseErr("retrieve", "embedder-url", err)
		}
		return e, nil
	default: // ollama
		e, err := embed.NewOllama(embed.OllamaConfig{URL: o.embedderURL, Model: o.embedderMdl})
		if err != nil {
			return nil, usagef("retrieve: %v", err)
		}
		return e, nil
	}
}

type retrievalMeta struct {
	strategy, store, embedder string
	k                         int
}

// json is the "retrieval" object, keys in the contract's order.
func (m retrievalMeta) json() []byte {
	b := []byte(`{"strategy": `)
	b = strconv.AppendQuote(b, m.strategy)
	b = append(b, `, "store": `...)
	b = strconv.AppendQuote(b, m.store)
	b = append(b, `, "embedder": `...)
	b = strconv.AppendQuote(b, m.embedder)
	b = append(b, `, "k": `...)
	b = strconv.AppendInt(b, int64(m.k), 10)
	return append(b, '}')
}

// pendingCase is a case waiting for its window to be searched.
type pendingCase struct {
	raw  []byte
	q    retrieve.Query
	file string
	line int
}

// runCases streams the cases in windows of caseWindow and writes each one to w
// with `retrieved` and `retrieval` set and every other byte kept.
func (c *RetrieveCommand) runCases(ctx context.Context, env *Env, o *retrieveOptions, ix *retrieve.Index, meta retrievalMeta, w io.Writer) (int, error) {
	var in io.Reader = env.Stdin
	name := "stdin"
	if o.cases != "-" {
		f, err := input.Open(ctx, o.cases)
		if err != nil {
			return 0, fmt.Errorf("failed to read cases: %w", err)
		}
		defer f.Close()
		in, name = f, o.cases
	}
	metaJSON := meta.json()
	total := 0
	err := func() error {
		var win []pendingCase
		flush := func() error {
			if len(win) == 0 {
				return nil
			}
			qs := make([]retrieve.Query, len(win))
			for i, p := range win {
				qs[i] = p.q
			}
			res, err := ix.Search(ctx, qs)
			if err != nil {
				return err
			}
			for i, p := range win {
				line, err := jsonobj.Set(p.raw, []jsonobj.Member{
					{Key: "retrieved", Value: retrievedJSON(res[i])},
					{Key: "retrieval", Value: metaJSON},
				})
				if err != nil {
					return input.Errorf(p.file, p.line, "cannot rewrite the case: %v", err)
				}
				line = append(line, '\n')
				if _, err := w.Write(line); err != nil {
					return fmt.Errorf("failed to write %s: %w", o.out, err)
				}
			}
			total += len(win)
			win = win[:0]
			return nil
		}
		err := casefile.StreamCases(ctx, in, name, func(cs *casefile.Case) error {
			if strings.TrimSpace(cs.Query) == "" {
				return input.Errorf(cs.File, cs.Line, "case %q has no \"query\" to retrieve for", cs.ID)
			}
			if cs.Scores != nil {
				return input.Errorf(cs.File, cs.Line, "case %q carries precomputed \"scores\"; a retrieved list would conflict with them", cs.ID)
			}
			win = append(win, pendingCase{raw: slices.Clone(cs.Raw), q: retrieve.Query{Text: cs.Query, Locale: cs.Locale}, file: cs.File, line: cs.Line})
			if len(win) >= caseWindow {
				return flush()
			}
			return nil
		})
		if err != nil {
			return err
		}
		return flush()
	}()
	return total, err
}

// retrievedJSON renders results as [{"id": chunk, "parent_id": card, "score": s}],
// scores with retrieve.ScoreDigits significant digits (Search has rounded them).
func retrievedJSON(rs []retrieve.Result) []byte {
	b := []byte{'['}
	for i, r := range rs {
		if i > 0 {
			b = append(b, ", "...)
		}
		b = append(b, `{"id": `...)
		b = strconv.AppendQuote(b, r.ID)
		b = append(b, `, "parent_id": `...)
		b = strconv.AppendQuote(b, r.ParentID)
		b = append(b, `, "score": `...)
		b = strconv.AppendFloat(b, r.Score, 'g', retrieve.ScoreDigits, 64)
		b = append(b, '}')
	}
	return append(b, ']')
}

// progress reports ingest progress on stderr: a bar on a terminal, otherwise a
// plain line at most every 5 seconds (CI logs) and one at the end.
type progress struct {
	w     io.Writer
	label string
	total int
	bar   *progressbar.ProgressBar
	last  time.Time
	done  int
}

func newProgress(fac *Factory, label string, total int) *progress {
	p := &progress{w: fac.Env.Stderr, label: label, total: total, last: time.Now()}
	// The bar (a fixed label and numbers) goes to the terminal itself.
	if f, ok := fac.rawStderr.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		p.bar = progressbar.NewOptions(total,
			progressbar.OptionSetWriter(f),
			progressbar.OptionSetDescription(label),
			progressbar.OptionShowCount(),
			progressbar.OptionSetPredictTime(true),
			progressbar.OptionClearOnFinish(),
			progressbar.OptionThrottle(100*time.Millisecond),
		)
	}
	return p
}

func (p *progress) update(done, total int) {
	p.done = done
	if p.bar != nil {
		_ = p.bar.Set(done)
		return
	}
	if time.Since(p.last) >= 5*time.Second && done < total {
		fmt.Fprintf(p.w, "%s: %d/%d (%d%%)\n", p.label, done, total, 100*done/max(total, 1))
		p.last = time.Now()
	}
}

func (p *progress) finish() {
	if p.bar != nil {
		_ = p.bar.Finish()
	}
}

package gate

import (
	"cmp"
	"context"
	"errors"
	"io"

	"github.com/retrieval-gate/retrieval-gate/internal/guard"
	"github.com/retrieval-gate/retrieval-gate/internal/input"
	"github.com/retrieval-gate/retrieval-gate/internal/retrieve"
)

// Strategy is how Live retrieves (`retrieve --strategy`).
type Strategy string

// The strategies.
const (
	StrategyDense   Strategy = "dense"   // the embedder's vectors, nearest first
	StrategyLexical Strategy = "lexical" // BM25 over the chunks; no store, no embedder
	StrategyHybrid  Strategy = "hybrid"  // reciprocal rank fusion (k = 60) of both
)

// Store names a registered store (`retrieve --store`): the built-in ones, or
// any other name a store registers.
type Store string

// The built-in stores.
const (
	StoreMemory Store = "memory" // in process, exact search
	StoreChroma Store = "chroma" // a Chroma server (v2 API) at LiveOptions.StoreURL
)

// Embedder names a registered embedder (`retrieve --embedder`): the built-in
// ones, or any other name an embedder registers.
type Embedder string

// The built-in embedders.
const (
	// EmbedderHash is built in: deterministic feature hashing of the terms,
	// lexical, not semantic; it needs no server.
	EmbedderHash Embedder = "hash"
	// EmbedderOpenAI is any OpenAI-compatible /v1/embeddings server at
	// LiveOptions.EmbedderURL, by default OpenAI's (which needs
	// EmbedderModel), with EmbedderAPIKey as its bearer token.
	EmbedderOpenAI Embedder = "openai"
	// EmbedderOllama is Ollama's /api/embed at EmbedderURL (default
	// http://127.0.0.1:11434); it needs EmbedderModel.
	EmbedderOllama Embedder = "ollama"
)

// LiveOptions are the settings of Live: what `retrieval-gate retrieve` and then
// `retrieval-gate check` take, each field the counterpart of a retrieve flag.
// The zero value is retrieve's defaults (Resolve gives them). Nothing is read
// from the environment: a store's URL or an API key is passed here.
type LiveOptions struct {
	// KB is the knowledge base's path (a JSONL file or a directory of Markdown
	// cards); Cases the cases whose queries are run (their gold is checked).
	KB    string
	Cases io.Reader
	// Strategy is StrategyDense, StrategyLexical or StrategyHybrid; ""
	// means StrategyHybrid, the default of `retrieve`.
	Strategy Strategy
	// Retrieve is the number of chunks retrieved per case (`retrieve --k`);
	// 0 means 10.
	Retrieve int
	// AllLocales searches every card for every case (`retrieve
	// --all-locales`); false searches a case with a locale in its locale's
	// cards only.
	AllLocales bool
	// RerankURL is a cross-encoder reranker's server, speaking the TEI
	// /rerank protocol (`retrieve --rerank-url`): the candidates of the
	// strategy are reordered by its scores; "" does not rerank.
	RerankURL string
	// Store is the store the knowledge base is indexed in: "" means
	// StoreMemory, or StoreChroma when StoreURL is set. A store with a server
	// takes its URL (`--chroma-url`), a kept Collection ("" a temporary one,
	// deleted at the end), a tenant, a database, an API key and the header it
	// travels in (each "" the store's default) and CreateDatabase (create a
	// missing tenant and database): `retrieve --collection`,
	// `--chroma-tenant`, `--chroma-database`, `--chroma-api-key`,
	// `--chroma-token-header`, `--chroma-create-database`.
	Store                                                     Store
	StoreURL, Collection                                      string
	StoreTenant, StoreDatabase, StoreAPIKey, StoreTokenHeader string
	CreateDatabase                                            bool
	// Embedder is the embedder of the dense and hybrid strategies: "" means
	// EmbedderHash. EmbedderURL, EmbedderModel and EmbedderAPIKey are passed
	// to it (`retrieve --embedder-url`, `--embedder-model`; the CLI reads the
	// key from the variable the embedder names, OPENAI_API_KEY for openai).
	Embedder                                   Embedder
	EmbedderURL, EmbedderModel, EmbedderAPIKey string
	// Check are the options of the check of the retrieved cases.
	Check Options
}

// Resolve is the options Live runs with: each zero value given its default
// (StrategyHybrid, Retrieve 10, StoreMemory, or StoreChroma when only
// StoreURL is given, EmbedderHash, Check.ReferenceLocale "en", a given one
// in its canonical case), and each setting checked against the registered
// stores and embedders (the openai embedder at OpenAI's URL needs
// EmbedderModel; a malformed Check.ReferenceLocale), as `retrieval-gate retrieve`
// and `check` resolve their flags: the same function, so the same defaults and
// refusals. Live calls it first; an error names the field.
func (o LiveOptions) Resolve() (LiveOptions, error) {
	ro, err := o.resolve()
	return ro, guard.Error(err)
}

// resolve is Resolve but for the guard on its error's text.
func (o LiveOptions) resolve() (LiveOptions, error) {
	r, err := o.retrieval()
	if err != nil {
		return o, err
	}
	co, err := o.Check.internal()
	if err != nil {
		return o, err
	}
	o.Strategy, o.Retrieve, o.Store, o.StoreURL, o.Embedder = Strategy(r.Strategy), r.K, Store(r.Store), r.StoreURL, Embedder(r.Embedder)
	o.Check.ReferenceLocale = co.ReferenceLocale
	return o, nil
}

// retrieval is o's retrieval options, resolved as the CLI resolves retrieve's
// (retrieve's Resolve: the same defaults and registries), with no environment.
func (o *LiveOptions) retrieval() (retrieve.RunOptions, error) {
	r := retrieve.RunOptions{Strategy: string(o.Strategy), K: o.Retrieve, AllLocales: o.AllLocales, RerankURL: o.RerankURL,
		Store: string(o.Store), StoreURL: o.StoreURL, Collection: o.Collection,
		StoreTenant: o.StoreTenant, StoreDatabase: o.StoreDatabase, StoreAPIKey: o.StoreAPIKey, StoreTokenHeader: o.StoreTokenHeader,
		CreateDatabase: o.CreateDatabase, Embedder: string(o.Embedder), EmbedderURL: o.EmbedderURL, EmbedderModel: o.EmbedderModel,
		EmbedderAPIKey: o.EmbedderAPIKey}
	if err := r.Resolve(nil, o.Store != ""); err != nil {
		return r, optionError(err)
	}
	return r, nil
}

// Live is the live gate (see the package documentation): it indexes the
// knowledge base and runs the cases' queries, as `retrieval-gate retrieve --kb
// KB --cases CASES` does with the same options, then checks the retrieved
// cases against the same knowledge base as Check does, streaming one into the
// other. Each case with a locale searches only the cards of its locale (the
// tags compared in canonical case, as Check groups them: "pt-br" searches the
// "pt-BR" cards). The report is the one of `retrieve` followed by `check` (the
// cases' file name is the Cases reader's Name(), else "stdin"). A temporary
// collection of a store with a server is deleted at the end, also after an
// error or once ctx is cancelled (the delete then has until 0.75 s after
// ctx's end). A delete that fails may leave the collection on the server, and
// Live returns a *CleanupError that names it: with the Report when the run itself ended (the
// report is complete, its verdict stands), joined to the run's error when
// the run failed; errors.As tells it apart.
func Live(ctx context.Context, o LiveOptions) (*Report, error) {
	rep, err := live(ctx, o)
	return rep, guard.Error(err)
}

// live is Live but for the guard on its error's text.
func live(ctx context.Context, o LiveOptions) (*Report, error) {
	if input.IsNil(o.Cases) {
		return nil, errors.New("gate: LiveOptions.Cases is nil")
	}
	if o.KB == "" {
		return nil, errors.New("gate: LiveOptions.KB is empty: the knowledge base's path is required")
	}
	ro, err := o.retrieval() // before any work
	if err != nil {
		return nil, err
	}
	if _, err := o.Check.internal(); err != nil {
		return nil, err
	}
	kb, err := LoadKB(ctx, o.KB)
	if err != nil {
		return nil, err
	}
	name := readerName(o.Cases)
	// The retrieved cases stream into the check through a pipe.
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	var cleanup error // read once done has been received
	go func() {
		in := retrieve.In{KB: kb.kb, Cases: o.Cases, CasesName: name, Out: pw, OutName: "the check's input",
			CleanupFailed: func(err error) { cleanup = &CleanupError{Err: err} }}
		_, err := retrieve.Run(ctx, in, ro)
		_ = pw.CloseWithError(err) // always nil
		done <- err
	}()
	rep, err := Check(ctx, namedReader{pr, name}, kb, o.Check)
	_ = pr.CloseWithError(errCheckEnded) // unblocks the writer after an early error (always nil)
	if rerr := <-done; rerr != nil && !errors.Is(rerr, errCheckEnded) {
		return nil, withCleanup(optionError(rerr), cleanup) // the retrieval's error is the cause
	}
	return rep, withCleanup(err, cleanup)
}

// withCleanup is the run's error err with the cleanup's joined to it (each
// of them alone when the other is nil).
func withCleanup(err, cleanup error) error {
	if err == nil || cleanup == nil {
		return cmp.Or(err, cleanup)
	}
	return errors.Join(err, cleanup)
}

// CleanupError is the failure of Live's cleanup: the temporary collection it
// created in a store with a server could not be deleted, and may be left there
// (Err names it and the command that deletes it). Live returns it with a
// complete Report when the run ended, joined to the run's error when the run
// failed.
type CleanupError struct {
	Err error
}

// Error is the cleanup's error; a zero (or nil) CleanupError's says that a
// cleanup failed, naming nothing.
func (e *CleanupError) Error() string {
	if e == nil || e.Err == nil {
		return "gate: cleanup: a temporary collection was not deleted"
	}
	return "gate: cleanup: " + e.Err.Error()
}

// Unwrap is Err (nil for a nil CleanupError).
func (e *CleanupError) Unwrap() error {
	if e == nil {
		return nil
	}
	return e.Err
}

// errCheckEnded stops the retrieval when Check has stopped reading.
var errCheckEnded = errors.New("gate: check ended")

type namedReader struct {
	io.Reader
	name string
}

func (n namedReader) Name() string { return n.name }

// readerName is the name of r in messages and reports: its Name() when it has
// one, else "stdin".
func readerName(r io.Reader) string {
	if n, ok := r.(interface{ Name() string }); ok && n.Name() != "" {
		return n.Name()
	}
	return "stdin"
}

package gate

import (
	"context"
	"errors"
	"io"

	"github.com/retrieval-gate/retrieval-gate/internal/retrieve"
)

// LiveOptions are the settings of Live: what `retrieval-gate retrieve` and then
// `retrieval-gate check` take, each field the counterpart of a retrieve flag.
// The zero value is retrieve's defaults. Nothing is read from the environment:
// a store's URL or an API key is passed here.
type LiveOptions struct {
	// KB is the knowledge base's path (a JSONL file or a directory of Markdown
	// cards); Cases the cases whose queries are run (their gold is checked).
	KB    string
	Cases io.Reader
	// Strategy is "dense", "lexical" (BM25) or "hybrid" (reciprocal rank
	// fusion of both); "" means "hybrid", the default of `retrieve`.
	Strategy string
	// Retrieve is the number of chunks retrieved per case (`retrieve --k`);
	// 0 means 10.
	Retrieve int
	// Store is a registered store, by the name `retrieve --store` takes:
	// "memory" (in process; the default) or "chroma" (a Chroma server, v2 API,
	// at StoreURL; the default when only StoreURL is given). A store with a
	// server takes its URL, a kept Collection ("" a temporary one, deleted at
	// the end), a tenant, a database, an API key and the header it travels in
	// (each "" the store's default), and CreateDatabase: `retrieve
	// --chroma-url`, `--collection`, `--chroma-tenant`, `--chroma-database`,
	// `--chroma-api-key`, `--chroma-token-header`, `--chroma-create-database`.
	Store                                                     string
	StoreURL, Collection                                      string
	StoreTenant, StoreDatabase, StoreAPIKey, StoreTokenHeader string
	CreateDatabase                                            bool
	// Embedder is a registered embedder, by the name `retrieve --embedder`
	// takes: "hash" (built in, deterministic, lexical; the default), "openai"
	// (an OpenAI-compatible /v1/embeddings at EmbedderURL, by default
	// OpenAI's, which needs EmbedderModel) or "ollama". EmbedderURL,
	// EmbedderModel and EmbedderAPIKey are passed to it.
	Embedder, EmbedderURL, EmbedderModel, EmbedderAPIKey string
	// Check are the options of the check of the retrieved cases.
	Check Options
}

// Resolve is the options Live runs with: each zero value given its default
// (Strategy "hybrid", Retrieve 10, Store "memory", or "chroma" when only
// StoreURL is given, Embedder "hash", Check.ReferenceLocale "en"), and each
// setting checked against the registered stores and embedders (the openai
// embedder at OpenAI's URL needs EmbedderModel), as `retrieval-gate retrieve`
// and `check` resolve their flags: the same function, so the same defaults and
// refusals. Live calls it first; an error names the field.
func (o LiveOptions) Resolve() (LiveOptions, error) {
	r, err := o.retrieval()
	if err != nil {
		return o, err
	}
	co, err := o.Check.internal()
	if err != nil {
		return o, err
	}
	o.Strategy, o.Retrieve, o.Store, o.StoreURL, o.Embedder = r.Strategy, r.K, r.Store, r.StoreURL, r.Embedder
	o.Check.ReferenceLocale = co.ReferenceLocale
	return o, nil
}

// retrieval is o's retrieval options, resolved as the CLI resolves retrieve's
// (retrieve's Resolve: the same defaults and registries), with no environment.
func (o *LiveOptions) retrieval() (retrieve.RunOptions, error) {
	r := retrieve.RunOptions{Strategy: o.Strategy, K: o.Retrieve, Store: o.Store, StoreURL: o.StoreURL, Collection: o.Collection,
		StoreTenant: o.StoreTenant, StoreDatabase: o.StoreDatabase, StoreAPIKey: o.StoreAPIKey, StoreTokenHeader: o.StoreTokenHeader,
		CreateDatabase: o.CreateDatabase, Embedder: o.Embedder, EmbedderURL: o.EmbedderURL, EmbedderModel: o.EmbedderModel,
		EmbedderAPIKey: o.EmbedderAPIKey}
	if err := r.Resolve(nil, o.Store != ""); err != nil {
		return r, optionError(err)
	}
	return r, nil
}

// Live runs the cases' queries against the knowledge base, as `retrieval-gate
// retrieve --kb KB --cases CASES` does, then checks the retrieved cases against
// the same knowledge base as Check does: the live gate (ADR-0023). Each case
// locale searches only the cards of its locale. The report is the one of
// `retrieve` followed by `check --json` (the cases' file name is the Cases
// reader's Name(), else "stdin").
func Live(ctx context.Context, o LiveOptions) (*Report, error) {
	if o.Cases == nil {
		return nil, errors.New("gate: LiveOptions.Cases is nil")
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
	go func() {
		_, err := retrieve.Run(ctx, retrieve.In{KB: o.KB, Cases: o.Cases, CasesName: name, Out: pw, OutName: "the check's input"}, ro)
		_ = pw.CloseWithError(err) // always nil
		done <- err
	}()
	rep, err := Check(ctx, namedReader{pr, name}, kb, o.Check)
	_ = pr.CloseWithError(errCheckEnded) // unblocks the writer after an early error (always nil)
	if rerr := <-done; rerr != nil && !errors.Is(rerr, errCheckEnded) {
		return nil, optionError(rerr) // the retrieval's error is the cause
	}
	return rep, err
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

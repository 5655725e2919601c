package gate

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/retrieval-gate/retrieval-gate/internal/input"
	"github.com/retrieval-gate/retrieval-gate/internal/retrieve"
	"github.com/retrieval-gate/retrieval-gate/internal/retrieve/chunk"
	"github.com/retrieval-gate/retrieval-gate/internal/retrieve/embed"
	"github.com/retrieval-gate/retrieval-gate/internal/retrieve/store"
	"github.com/retrieval-gate/retrieval-gate/internal/retrieve/store/chroma"
	"github.com/retrieval-gate/retrieval-gate/internal/retrieve/store/memory"
)

// LiveOptions are the settings of Live: what `retrieval-gate retrieve` and then
// `retrieval-gate check` take. Nothing is read from the environment: a Chroma
// URL or an API key is passed here.
type LiveOptions struct {
	// KB is the knowledge base's path (a JSONL file or a directory of Markdown
	// cards); Cases the cases whose queries are run (their gold is checked).
	KB    string
	Cases io.Reader
	// Strategy is "dense", "lexical" (BM25) or "hybrid" (reciprocal rank
	// fusion of both); "" means "hybrid", the default of `retrieve`.
	Strategy string
	// ChromaURL is a Chroma server (v2 API) to index the KB in, in a temporary
	// collection deleted at the end; "" uses the embedded in-memory store.
	ChromaURL string
	// Embedder is "hash" (built-in, deterministic, lexical; the default when
	// ""), "openai" (an OpenAI-compatible /v1/embeddings at EmbedderURL) or
	// "ollama"; EmbedderModel and EmbedderAPIKey are passed to it.
	Embedder, EmbedderURL, EmbedderModel, EmbedderAPIKey string
	// Retrieve is the number of chunks retrieved per case (`retrieve --k`);
	// 0 means 10.
	Retrieve int
	// Check are the options of the check of the retrieved cases.
	Check Options
}

// Live runs the cases' queries against the knowledge base, as `retrieval-gate
// retrieve --kb KB --cases CASES` does, then checks the retrieved cases against
// the same knowledge base with Check: ADR-0023's live gate. Each case locale
// searches only the cards of its locale. The report is the one of `retrieve`
// followed by `check --json` (the cases' file name is the Cases reader's
// Name(), else "stdin").
func Live(ctx context.Context, o LiveOptions) (*Report, error) {
	if o.Cases == nil {
		return nil, errors.New("gate: LiveOptions.Cases is nil")
	}
	strategy := o.Strategy
	if strategy == "" {
		strategy = retrieve.Hybrid
	}
	if !slices.Contains(retrieve.Strategies, strategy) {
		return nil, fmt.Errorf("gate: strategy %q: must be dense, lexical or hybrid", o.Strategy)
	}
	k := o.Retrieve
	if k == 0 {
		k = 10
	}
	if k < 1 {
		return nil, fmt.Errorf("gate: Retrieve must be at least 1, got %d", o.Retrieve)
	}
	if _, err := o.Check.internal(); err != nil { // before any work
		return nil, err
	}
	kb, err := LoadKB(ctx, o.KB)
	if err != nil {
		return nil, err
	}
	chunks := chunk.Split(kb.kb.Cards, chunk.Params{})
	if len(chunks) == 0 {
		return nil, input.Errorf(o.KB, 0, "knowledge base has no text to retrieve (every card is empty)")
	}
	meta := []string{strategy, "memory", o.Embedder}
	if meta[2] == "" {
		meta[2] = "hash"
	}
	if o.ChromaURL != "" {
		meta[1] = "chroma"
	}
	var (
		emb embed.Embedder
		st  store.Store
	)
	if strategy == retrieve.Lexical {
		meta[1], meta[2] = "none", "none"
	} else {
		if emb, err = newEmbedder(meta[2], o, chunks); err != nil {
			return nil, err
		}
		if o.ChromaURL == "" {
			st = memory.New(0)
		} else {
			cs, _, err := chroma.Open(ctx, chroma.Config{URL: o.ChromaURL, Chunks: len(chunks),
				Fingerprint: retrieve.Fingerprint(chunks, chunk.Params{}, emb)})
			if err != nil {
				return nil, err
			}
			st = cs
		}
		defer func() {
			// A failed cleanup (the server went away) leaves a temporary collection
			// behind; the report stands, as with `retrieve`, which warns.
			_ = st.Close(context.WithoutCancel(ctx))
		}()
	}
	ix, err := retrieve.Build(ctx, chunks, emb, st, false, retrieve.Options{Strategy: strategy, K: k})
	if err != nil {
		return nil, err
	}
	name := "stdin"
	if n, ok := o.Cases.(interface{ Name() string }); ok && n.Name() != "" {
		name = n.Name()
	}
	metaJSON := (&retrieve.RunResult{Strategy: meta[0], Store: meta[1], Embedder: meta[2], K: k}).RetrievalJSON()

	// The retrieved cases stream into Check through a pipe.
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		_, err := ix.RetrieveCases(ctx, o.Cases, name, metaJSON, func(line []byte) error {
			_, err := pw.Write(line)
			return err
		})
		_ = pw.CloseWithError(err) // always nil
		done <- err
	}()
	rep, err := Check(ctx, namedReader{pr, name}, kb, o.Check)
	_ = pr.CloseWithError(errCheckEnded) // unblocks the writer after an early error (always nil)
	if rerr := <-done; rerr != nil && !errors.Is(rerr, errCheckEnded) {
		return nil, rerr // the retrieval's error is the cause
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

func newEmbedder(name string, o LiveOptions, chunks []chunk.Chunk) (embed.Embedder, error) {
	switch name {
	case "hash":
		texts := make([]string, len(chunks))
		for i, c := range chunks {
			texts[i] = c.Text
		}
		return embed.NewHash(embed.DefaultHashDim, texts), nil
	case "openai":
		return embed.NewOpenAI(embed.OpenAIConfig{URL: o.EmbedderURL, Model: o.EmbedderModel, APIKey: o.EmbedderAPIKey})
	case "ollama":
		return embed.NewOllama(embed.OllamaConfig{URL: o.EmbedderURL, Model: o.EmbedderModel})
	}
	return nil, fmt.Errorf("gate: embedder %q: must be hash, openai or ollama", name)
}

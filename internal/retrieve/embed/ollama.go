package embed

import (
	"context"
	"fmt"
	"net/http"

	"github.com/amikos-tech/chroma-go/pkg/embeddings"
	chromaollama "github.com/amikos-tech/chroma-go/pkg/embeddings/ollama"

	"github.com/retrieval-gate/retrieval-gate/internal/httpretry"
)

// Ollama embeds through chroma-go's Ollama embedding function (POST /api/embed),
// with our batching, bounded concurrency and retrying HTTP transport.
type Ollama struct {
	url, model string
	ef         *chromaollama.OllamaEmbeddingFunction
	batching   Batching
}

// OllamaConfig configures NewOllama.
type OllamaConfig struct {
	URL   string // default http://127.0.0.1:11434
	Model string // required, e.g. "nomic-embed-text"
	Batching
	HTTP *http.Client // nil means httpretry.NewHTTPClient with the default policy
}

// NewOllama returns the embedder.
func NewOllama(cfg OllamaConfig) (*Ollama, error) {
	if cfg.URL == "" {
		cfg.URL = "http://127.0.0.1:11434"
	}
	if cfg.Model == "" {
		return nil, fmt.Errorf("the ollama embedder needs --embedder-model (e.g. nomic-embed-text)")
	}
	hc := cfg.HTTP
	if hc == nil {
		hc = httpretry.NewHTTPClient(&httpretry.Transport{Policy: httpretry.DefaultPolicy})
	}
	ef, err := chromaollama.NewOllamaEmbeddingFunction(
		chromaollama.WithBaseURL(cfg.URL),
		chromaollama.WithModel(embeddings.EmbeddingModel(cfg.Model)),
		func(c *chromaollama.OllamaClient) error { c.Client = hc; return nil },
	)
	if err != nil {
		return nil, fmt.Errorf("ollama embedder: %w", err)
	}
	return &Ollama{url: cfg.URL, model: cfg.Model, ef: ef, batching: cfg.Batching}, nil
}

func (o *Ollama) Name() string { return "ollama" }

func (o *Ollama) Fingerprint() string { return fmt.Sprintf("ollama:url=%s:model=%s", o.url, o.model) }

func (o *Ollama) EmbedDocuments(ctx context.Context, texts []string) ([][]float32, error) {
	return o.batching.run(ctx, texts, o.batch)
}

func (o *Ollama) EmbedQueries(ctx context.Context, texts []string) ([][]float32, error) {
	return o.batching.run(ctx, texts, o.batch)
}

func (o *Ollama) batch(ctx context.Context, texts []string) ([][]float32, error) {
	embs, err := o.ef.EmbedDocuments(ctx, texts)
	if err != nil {
		return nil, fmt.Errorf("ollama embedder at %s: %w", o.url, err)
	}
	out := make([][]float32, len(embs))
	for i, e := range embs {
		out[i] = e.ContentAsFloat32()
	}
	return out, nil
}

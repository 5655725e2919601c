package embed

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/amikos-tech/chroma-go/pkg/embeddings"
	chromaollama "github.com/amikos-tech/chroma-go/pkg/embeddings/ollama"

	"github.com/retrieval-gate/retrieval-gate/internal/retrieve/httpretry"
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
	HTTP *http.Client // nil means one with RetryTransport
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
		hc = &http.Client{Transport: &RetryTransport{}}
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

// RetryTransport retries a request on 429, 5xx and connection errors with the
// policy of httpretry (used under chroma-go's embedding functions, which do not
// retry). Requests must have GetBody when they carry a body (http.NewRequest sets
// it for in-memory bodies).
type RetryTransport struct {
	Base   http.RoundTripper
	Policy httpretry.Policy
}

func (t *RetryTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	base := t.Base
	if base == nil {
		base = http.DefaultTransport
	}
	p := t.Policy
	if p.Attempts < 1 {
		p = httpretry.DefaultPolicy
	}
	var lastErr error
	for attempt := 1; ; attempt++ {
		r := req
		if attempt > 1 && req.Body != nil {
			if req.GetBody == nil {
				return nil, lastErr
			}
			b, err := req.GetBody()
			if err != nil {
				return nil, err
			}
			r = req.Clone(req.Context())
			r.Body = b
		}
		resp, err := base.RoundTrip(r)
		if err == nil && resp.StatusCode != http.StatusTooManyRequests && resp.StatusCode < 500 {
			return resp, nil
		}
		if attempt >= p.Attempts {
			if err != nil {
				return nil, fmt.Errorf("unreachable after %d attempt(s): %w", attempt, err)
			}
			return resp, nil
		}
		if err == nil {
			_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
			resp.Body.Close()
			lastErr = fmt.Errorf("HTTP %d", resp.StatusCode)
		} else {
			lastErr = err
		}
		d := min(p.BaseDelay<<(attempt-1), p.MaxDelay)
		select {
		case <-req.Context().Done():
			return nil, req.Context().Err()
		case <-time.After(d):
		}
	}
}

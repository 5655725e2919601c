package embed

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/retrieval-gate/retrieval-gate/internal/httpretry"
)

// Ollama embeds through Ollama's native API (POST /api/embed {"model","input":[...]}
// -> {"embeddings":[[...]]}), with our batching, bounded concurrency and retrying
// HTTP transport.
type Ollama struct {
	url, model string
	http       *http.Client
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
	if !strings.HasPrefix(cfg.URL, "http://") && !strings.HasPrefix(cfg.URL, "https://") {
		return nil, fmt.Errorf("ollama embedder: server URL %q must start with http:// or https://", httpretry.RedactURL(cfg.URL))
	}
	return &Ollama{url: cfg.URL, model: cfg.Model, http: hc, batching: cfg.Batching}, nil
}

func (o *Ollama) Name() string { return "ollama" }

func (o *Ollama) Fingerprint() string {
	return fmt.Sprintf("ollama:url=%s:model=%s", httpretry.RedactURL(o.url), o.model)
}

func (o *Ollama) EmbedDocuments(ctx context.Context, texts []string) ([][]float32, error) {
	return o.batching.run(ctx, texts, o.batch)
}

func (o *Ollama) EmbedQueries(ctx context.Context, texts []string) ([][]float32, error) {
	return o.batching.run(ctx, texts, o.batch)
}

func (o *Ollama) batch(ctx context.Context, texts []string) ([][]float32, error) {
	body, err := json.Marshal(struct {
		Model string   `json:"model"`
		Input []string `json:"input"`
	}{o.model, texts})
	if err != nil {
		return nil, err
	}
	u := strings.TrimRight(o.url, "/") + "/api/embed"
	limit := httpretry.EmbedAnswerCap(len(texts))
	req, err := http.NewRequestWithContext(httpretry.WithMaxBody(ctx, limit), http.MethodPost, u, bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("ollama embedder at %s: %w", httpretry.RedactURL(o.url), httpretry.RedactErr(err, httpretry.URLSecrets(o.url)...))
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := o.http.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("ollama embedder at %s: %w", httpretry.RedactURL(o.url), httpretry.RedactErr(err, httpretry.URLSecrets(o.url)...))
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		msg, _ := httpretry.ReadSnippet(resp.Body, 4<<10)
		return nil, fmt.Errorf("ollama embedder at %s: HTTP %d: %s", httpretry.RedactURL(o.url), resp.StatusCode, httpretry.RedactText(strings.TrimSpace(string(msg)), httpretry.URLSecrets(o.url)...))
	}
	data, err := httpretry.ReadAnswer(ctx, resp.Body, resp.ContentLength, limit, "ollama embedder at "+httpretry.RedactURL(o.url))
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("ollama embedder at %s: reading the response: %w", httpretry.RedactURL(o.url), err)
	}
	var out struct {
		Embeddings [][]float32 `json:"embeddings"`
	}
	if err := httpretry.UnmarshalAnswer(data, &out); err != nil {
		return nil, fmt.Errorf("ollama embedder at %s: malformed response: %w", httpretry.RedactURL(o.url), httpretry.RedactErr(err, httpretry.URLSecrets(o.url)...))
	}
	if len(out.Embeddings) != len(texts) {
		return nil, fmt.Errorf("ollama embedder at %s: %d embeddings for %d texts", httpretry.RedactURL(o.url), len(out.Embeddings), len(texts))
	}
	return out.Embeddings, nil
}

package embed

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sort"

	"github.com/retrieval-gate/retrieval-gate/internal/httpretry"
)

// OpenAI is a client of any OpenAI-compatible embeddings endpoint (OpenAI, TEI,
// vLLM, Ollama's /v1, LiteLLM...). It is our own small client rather than
// chroma-go's openai embedding function because that one accepts only OpenAI's
// three model names, requires HTTPS and a key, and ignores the `index` of the
// returned items.
type OpenAI struct {
	url      string // full .../embeddings URL
	model    string
	client   *httpretry.Client
	batching Batching
}

// OpenAIConfig configures NewOpenAI.
type OpenAIConfig struct {
	// URL is the server: ".../v1/embeddings", ".../v1" or a bare base URL
	// ("http://host:8080", "/v1/embeddings" is appended).
	URL    string
	Model  string // sent as "model" when set (TEI serves one model and ignores it)
	APIKey string // sent as "Authorization: Bearer"; never logged
	Batching
	HTTP   *http.Client
	Policy httpretry.Policy
}

// NewOpenAI returns the client.
func NewOpenAI(cfg OpenAIConfig) (*OpenAI, error) {
	u, err := httpretry.EndpointURL(cfg.URL, "/v1", "/embeddings")
	if err != nil {
		return nil, err
	}
	c := &httpretry.Client{HTTP: cfg.HTTP, Policy: cfg.Policy, Header: http.Header{}, Secrets: []string{cfg.APIKey},
		MaxAnswer: httpretry.EmbedAnswerCap(cfg.Batching.size())}
	if cfg.APIKey != "" {
		c.Header.Set("Authorization", "Bearer "+cfg.APIKey)
	}
	return &OpenAI{url: u, model: cfg.Model, client: c, batching: cfg.Batching}, nil
}

func (o *OpenAI) Name() string { return "openai" }

func (o *OpenAI) Fingerprint() string { return fmt.Sprintf("openai:url=%s:model=%s", o.url, o.model) }

func (o *OpenAI) EmbedDocuments(ctx context.Context, texts []string) ([][]float32, error) {
	return o.batching.run(ctx, texts, o.batch)
}

func (o *OpenAI) EmbedQueries(ctx context.Context, texts []string) ([][]float32, error) {
	return o.batching.run(ctx, texts, o.batch)
}

type openAIRequest struct {
	Model string   `json:"model,omitempty"`
	Input []string `json:"input"`
}

type openAIResponse struct {
	Data []struct {
		Index     int       `json:"index"`
		Embedding []float32 `json:"embedding"`
	} `json:"data"`
}

func (o *OpenAI) batch(ctx context.Context, texts []string) ([][]float32, error) {
	body, err := json.Marshal(openAIRequest{Model: o.model, Input: texts})
	if err != nil {
		return nil, err
	}
	data, err := o.client.Post(ctx, o.url, body)
	if err != nil {
		return nil, fmt.Errorf("embedding server: %w", err)
	}
	var resp openAIResponse
	if err := httpretry.UnmarshalAnswer(data, &resp); err != nil {
		return nil, fmt.Errorf("embedding server %s: malformed response: %w", httpretry.RedactURL(o.url), err)
	}
	sort.SliceStable(resp.Data, func(i, j int) bool { return resp.Data[i].Index < resp.Data[j].Index })
	out := make([][]float32, len(resp.Data))
	for i, d := range resp.Data {
		if d.Index != i {
			return nil, fmt.Errorf("embedding server %s: response indexes are not 0..%d", httpretry.RedactURL(o.url), len(texts)-1)
		}
		out[i] = d.Embedding
	}
	return out, nil
}

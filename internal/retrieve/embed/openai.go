package embed

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/retrieval-gate/retrieval-gate/internal/httpretry"
	"github.com/retrieval-gate/retrieval-gate/internal/retrieve/internal/batchanswer"
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
	// limit is the server's batch limit once a 413 stated one lower than
	// the batching's size (TEI's --max-client-batch-size below 32): the texts
	// of a batch are then sent that many a request.
	limit batchanswer.Limit
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
		Index     *int      `json:"index"`
		Embedding []float32 `json:"embedding"`
	} `json:"data"`
}

// batch embeds one batch of texts, in requests of at most the server's
// stated limit (a 413 "batch size 32 > maximum allowed batch size 8" sends
// the same texts again, 8 a request, and so are the batches after it).
func (o *OpenAI) batch(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	err := o.limit.Split(len(texts), len(texts), func(start, end int) error {
		return o.post(ctx, texts[start:end], out[start:end], batchanswer.Sent(start, end, len(texts)))
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// post sends texts in one request and sets out[i] to the vector of text i,
// placed by its item's index; sent names the texts in an error.
func (o *OpenAI) post(ctx context.Context, texts []string, out [][]float32, sent string) error {
	body, err := json.Marshal(openAIRequest{Model: o.model, Input: texts})
	if err != nil {
		return err
	}
	data, err := o.client.Post(ctx, o.url, body)
	if err != nil {
		return fmt.Errorf("embedding server: %w", err)
	}
	var resp openAIResponse
	if err := httpretry.UnmarshalAnswer(data, &resp); err != nil {
		return fmt.Errorf("embedding server %s: malformed response: %w", httpretry.RedactURL(o.url), err)
	}
	items := resp.Data
	_, err = batchanswer.Place(len(texts), len(items), func(k int) *int { return items[k].Index }, func(k, i int) error {
		if items[k].Embedding == nil { // an empty one is the batching's to name
			return fmt.Errorf("item %d (index %d) has no \"embedding\"", k, i)
		}
		out[i] = items[k].Embedding
		return nil
	})
	if err != nil {
		return fmt.Errorf("embedding server %s: malformed response to %s: %w", httpretry.RedactURL(o.url), sent, err)
	}
	return nil
}

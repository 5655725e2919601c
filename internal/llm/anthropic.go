package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
)

// Anthropic's Message Batches API, as its documentation describes it
// ("Anthropic API reference, Message Batches: Create, Retrieve, Results" and
// the guide "Batch processing", docs.anthropic.com / platform.claude.com, as
// of 2026; the Messages API reference for the params, output_config.format
// (structured outputs) and usage):
//
//	POST {base}/v1/messages/batches {"requests": [{"custom_id", "params"}]}
//	    -> a Message Batch: {"id", "type": "message_batch", "processing_status":
//	       "in_progress" | "canceling" | "ended", "request_counts": {"processing",
//	       "succeeded", "errored", "canceled", "expired"}, "created_at",
//	       "expires_at", "ended_at", "results_url"}
//	GET  {base}/v1/messages/batches/{id}         -> the Message Batch
//	GET  results_url (.../v1/messages/batches/{id}/results) -> JSON Lines,
//	    {"custom_id", "result": {"type": "succeeded", "message": Message} |
//	    {"type": "errored", "error": {"type": "error", "error": {"type",
//	    "message"}}} | {"type": "canceled"} | {"type": "expired"}}
//
// Every call sends x-api-key and anthropic-version (AnthropicVersion). A batch
// holds at most 100,000 requests (or 256 MB) and ends within 24 hours: the
// requests still processing then are "expired" in its results, which are
// kept 29 days. custom_id is 1-64 characters of [a-zA-Z0-9_-] (the judge's
// 64 hex digits fit). A batch has no validation status of its own: a refused
// request body is a 400 at creation.

// AnthropicVersion is the anthropic-version header every call sends.
const AnthropicVersion = "2023-06-01"

// AnthropicURL is the API's base URL, the default of --judge-url with
// --batch-api anthropic.
const AnthropicURL = "https://api.anthropic.com"

// AnthropicMaxRequests and AnthropicMaxBytes bound one Message Batch (the
// documented limits: 100,000 requests or 256 MB, whichever comes first).
const (
	AnthropicMaxRequests = 100_000
	AnthropicMaxBytes    = 256 << 20
)

// AnthropicMaxTokens is the max_tokens of a judge request (required by the
// Messages API; an answer is a sentence and a score).
const AnthropicMaxTokens = 1024

// AnthropicBatchClient speaks the Message Batches API.
type AnthropicBatchClient struct{ restClient }

// NewAnthropicBatchClient is a client of the Message Batches API at rawURL
// (the base URL, with or without /v1; "" is AnthropicURL) with the API key.
func NewAnthropicBatchClient(rawURL, apiKey string, hc *http.Client) (*AnthropicBatchClient, error) {
	base, err := baseURL(rawURL, AnthropicURL, "/v1")
	if err != nil {
		return nil, err
	}
	h := http.Header{"Anthropic-Version": {AnthropicVersion}}
	if apiKey != "" {
		h.Set("X-Api-Key", apiKey)
	}
	return &AnthropicBatchClient{restClient{base: base, redactor: newRedactor(base, apiKey), header: h, http: hc, Policy: defaultPolicy(), Transfer: TransferPolicy}}, nil
}

// Provider is "anthropic".
func (c *AnthropicBatchClient) Provider() string { return ProviderAnthropic }

// anthropicBatch is a Message Batch object.
type anthropicBatch struct {
	ID               string `json:"id"`
	Type             string `json:"type"`
	ProcessingStatus string `json:"processing_status"`
	RequestCounts    struct {
		Processing int64 `json:"processing"`
		Succeeded  int64 `json:"succeeded"`
		Errored    int64 `json:"errored"`
		Canceled   int64 `json:"canceled"`
		Expired    int64 `json:"expired"`
	} `json:"request_counts"`
	ResultsURL *string `json:"results_url"`
}

func (b *anthropicBatch) job() (*BatchJob, error) {
	if b.ID == "" {
		return nil, errors.New("the message batch has no id")
	}
	rc := b.RequestCounts
	j := &BatchJob{ID: b.ID, Status: b.ProcessingStatus, Terminal: b.ProcessingStatus == "ended",
		Counts: RequestCounts{Total: rc.Processing + rc.Succeeded + rc.Errored + rc.Canceled + rc.Expired, Completed: rc.Succeeded,
			Failed: rc.Errored, Canceled: rc.Canceled, Expired: rc.Expired}}
	if j.Terminal && b.ResultsURL != nil && *b.ResultsURL != "" {
		j.Results = []ResultSource{{What: "results", Ref: *b.ResultsURL}}
	}
	return j, nil
}

// Submit creates a batch of the request lines of the file at path, each a
// {"custom_id", "params"} object: the body {"requests": [...]} is streamed
// from the file (one call).
func (c *AnthropicBatchClient) Submit(ctx context.Context, path string, n int64) (*BatchJob, error) {
	if n > AnthropicMaxRequests {
		return nil, fmt.Errorf("a Message Batch holds at most %d requests and this one has %d: send it in parts with --max-requests %d (each run sends the next part; the cache keeps the answers)", AnthropicMaxRequests, n, AnthropicMaxRequests)
	}
	if st, err := os.Stat(path); err == nil && st.Size() > AnthropicMaxBytes-64<<10 {
		return nil, fmt.Errorf("a Message Batch is at most 256 MB and this one's requests are %d bytes: send it in parts with --max-requests", st.Size())
	}
	u := c.base + "/v1/messages/batches"
	// Not retried unless the server provably did not act on it (creating):
	// a retry after a 5xx could be a second paid batch.
	resp, err := c.send(ctx, creating(c.Transfer), http.MethodPost, u, jsonArrayBody(path, `{"requests":[`, `]}`, nil), nil)
	if err != nil {
		return nil, fmt.Errorf("creating the message batch: %w", mayExist(err, ProviderAnthropic, u))
	}
	defer resp.Body.Close()
	var b anthropicBatch
	if err := c.decode(ctx, resp, u, &b); err != nil {
		return nil, mayExist(err, ProviderAnthropic, u)
	}
	j, err := b.job()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", u, err)
	}
	j.SubmitCalls = 1
	return j.redacted(c.Redact), nil
}

// Get retrieves a Message Batch.
func (c *AnthropicBatchClient) Get(ctx context.Context, id string) (*BatchJob, error) {
	u := c.base + "/v1/messages/batches/" + url.PathEscape(id)
	var b anthropicBatch
	if err := c.do(ctx, http.MethodGet, u, nil, &b); err != nil {
		return nil, err
	}
	j, err := b.job()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", u, err)
	}
	return j.redacted(c.Redact), nil
}

// Download streams the batch's results (its results_url; a relative one is
// resolved against the base URL) as they are: JSON Lines.
func (c *AnthropicBatchClient) Download(ctx context.Context, _ *BatchJob, src ResultSource, limit int64, w func() (io.Writer, error)) error {
	u := src.Ref
	if strings.HasPrefix(u, "/") {
		u = c.base + u
	}
	return c.download(ctx, u, limit, w)
}

// AnthropicParams is the params of one Messages request for a batch line:
// model, max_tokens (r.MaxTokens, else AnthropicMaxTokens), temperature 0,
// the system message as "system", the other messages as they are, and with
// r.Schema structured output: output_config.format {"type": "json_schema",
// "schema"} (the Messages API's structured outputs; the answer is then the
// JSON text of the first content block).
func AnthropicParams(model string, r Request) ([]byte, error) {
	type message struct {
		Role    string `json:"role"`
		Content string `json:"content"`
	}
	p := struct {
		Model        string    `json:"model"`
		MaxTokens    int       `json:"max_tokens"`
		Temperature  float64   `json:"temperature"`
		System       string    `json:"system,omitempty"`
		Messages     []message `json:"messages"`
		OutputConfig *struct {
			Format struct {
				Type   string          `json:"type"`
				Schema json.RawMessage `json:"schema"`
			} `json:"format"`
		} `json:"output_config,omitempty"`
	}{Model: model, MaxTokens: r.MaxTokens, Messages: []message{}}
	if p.MaxTokens == 0 {
		p.MaxTokens = AnthropicMaxTokens
	}
	for _, m := range r.Messages {
		if m.Role == "system" {
			p.System += m.Content
			continue
		}
		p.Messages = append(p.Messages, message(m))
	}
	if r.Schema != nil {
		p.OutputConfig = &struct {
			Format struct {
				Type   string          `json:"type"`
				Schema json.RawMessage `json:"schema"`
			} `json:"format"`
		}{}
		p.OutputConfig.Format.Type, p.OutputConfig.Format.Schema = "json_schema", r.Schema.Schema
	}
	return json.Marshal(p)
}

// ParseAnthropicMessage reads a Message (a succeeded result's "message"): its
// text blocks joined are the content; usage's input_tokens,
// cache_creation_input_tokens and cache_read_input_tokens are the prompt
// tokens (every input token, however billed), output_tokens the completion.
func ParseAnthropicMessage(data []byte) (*Response, error) {
	var m struct {
		Type    string `json:"type"`
		Model   string `json:"model"`
		Content []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
		StopReason string `json:"stop_reason"`
		Usage      *struct {
			InputTokens              int64 `json:"input_tokens"`
			OutputTokens             int64 `json:"output_tokens"`
			CacheCreationInputTokens int64 `json:"cache_creation_input_tokens"`
			CacheReadInputTokens     int64 `json:"cache_read_input_tokens"`
		} `json:"usage"`
	}
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("malformed message: %w", err)
	}
	if m.Type != "message" || m.Content == nil {
		return nil, errors.New(`not a message (type "message" with content)`)
	}
	out := &Response{FinishReason: m.StopReason, Model: m.Model}
	for _, c := range m.Content {
		if c.Type == "text" {
			out.Content += c.Text
		}
	}
	if u := m.Usage; u != nil {
		out.Usage = Usage{PromptTokens: u.InputTokens + u.CacheCreationInputTokens + u.CacheReadInputTokens, CompletionTokens: u.OutputTokens}
		out.HasUsage = true
	}
	return out, nil
}

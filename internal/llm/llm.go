// Package llm is a client of OpenAI-compatible chat-completions servers (OpenAI,
// vLLM, llama.cpp's llama-server, Ollama's /v1, LiteLLM...): temperature 0,
// optional structured output (response_format json_schema), token accounting from
// `usage`, retries with Retry-After on 429 and 5xx (through httpretry), bounded
// concurrency and a total request budget. An answer is at most
// httpretry.MaxAnswer (4 MiB) and all answers read at once share
// httpretry.MaxInFlight (64 MiB), whatever the concurrency. The API key is
// sent as a bearer token and never appears in an error message.
package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/retrieval-gate/retrieval-gate/internal/httpretry"
)

// APIKeyEnv is the environment variable holding the API key of the chat server.
// When it is unset, OPENAIKeyEnv is used. Local servers (vLLM, llama-server,
// Ollama) need none. The front end reads them (this package reads no
// environment: Config.APIKey is the key).
const (
	APIKeyEnv    = "RETRIEVAL_GATE_LLM_API_KEY"
	OpenAIKeyEnv = "OPENAI_API_KEY"
)

// EndpointURL completes a user-given server URL into the chat-completions URL:
// ".../v1/chat/completions" is kept, ".../v1" gets "/chat/completions", anything
// else (a bare "http://host:port") gets "/v1/chat/completions". So vLLM
// (http://host:8000), llama-server (http://host:8080), Ollama
// (http://host:11434 or .../v1) and OpenAI (https://api.openai.com/v1) all work
// with the URL their documentation gives.
func EndpointURL(raw string) (string, error) {
	return httpretry.EndpointURL(raw, "/v1", "/chat/completions")
}

// Config configures New.
type Config struct {
	URL    string // see EndpointURL
	Model  string // sent as "model" when set (llama-server serves one model and ignores it)
	APIKey string // sent as "Authorization: Bearer"; never in an error
	// Concurrency bounds the requests in flight (default 4).
	Concurrency int
	// MaxRequests is the total number of chat-completion calls allowed (0: no
	// limit). Retries of a 429/5xx inside one call are not counted separately.
	MaxRequests int64
	HTTP        *http.Client
	Policy      httpretry.Policy
	// Sleep replaces the wait between HTTP attempts (tests).
	Sleep func(ctx context.Context, d time.Duration) error
}

// Client sends chat-completion requests to one server. It is safe for
// concurrent use.
type Client struct {
	url, model string
	redactor   *httpretry.Redactor // of the API key and the URL's credentials
	http       *httpretry.Client
	sem        chan struct{}
	budget     int64
	calls      atomic.Int64
}

// ErrBudget is returned by Complete once MaxRequests calls have been made.
var ErrBudget = errors.New("request budget (--max-requests) exhausted")

// New returns a client.
func New(cfg Config) (*Client, error) {
	u, err := EndpointURL(cfg.URL)
	if err != nil {
		return nil, err
	}
	n := cfg.Concurrency
	if n <= 0 {
		n = 4
	}
	hc := &httpretry.Client{HTTP: cfg.HTTP, Policy: cfg.Policy, Header: http.Header{}, Sleep: cfg.Sleep, MaxAnswer: httpretry.MaxAnswer}
	if cfg.APIKey != "" {
		hc.Header.Set("Authorization", "Bearer "+cfg.APIKey)
	}
	return &Client{url: u, model: cfg.Model, redactor: newRedactor(u, cfg.APIKey), http: hc, sem: make(chan struct{}, n), budget: cfg.MaxRequests}, nil
}

// URL is the chat-completions endpoint.
func (c *Client) URL() string { return c.url }

// Model is the model name sent (may be empty).
func (c *Client) Model() string { return c.model }

// Calls is the number of chat-completion calls made so far.
func (c *Client) Calls() int64 { return c.calls.Load() }

// Message is one chat message.
type Message struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// Schema asks for structured output: response_format {"type": "json_schema",
// "json_schema": {"name", "schema", "strict": true}}.
type Schema struct {
	Name   string
	Schema json.RawMessage
}

// Request is one chat completion.
type Request struct {
	Messages  []Message
	Schema    *Schema // nil: plain text
	MaxTokens int     // 0: the server's default
}

// Usage is the token accounting of one response.
type Usage struct {
	PromptTokens     int64 `json:"prompt_tokens"`
	CompletionTokens int64 `json:"completion_tokens"`
}

// Response is the first choice of a completion.
type Response struct {
	Content      string
	FinishReason string
	Model        string // as the server reports it
	Usage        Usage
	HasUsage     bool // false when the server sent no `usage`
}

// APIError is a final non-2xx answer, with the OpenAI error body
// {"error": {"message", "type", "code"}} decoded when present.
type APIError struct {
	URL      string
	Status   int
	Message  string
	Type     string
	Code     string
	Param    string
	Attempts int
}

func (e *APIError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s answered HTTP %d", httpretry.RedactURL(e.URL), e.Status)
	if e.Attempts > 1 {
		fmt.Fprintf(&b, " after %d attempts", e.Attempts)
	}
	b.WriteString(": ")
	b.WriteString(e.Message)
	if e.Type != "" || e.Code != "" {
		fmt.Fprintf(&b, " (type %q, code %q)", e.Type, e.Code)
	}
	return b.String()
}

// RejectsResponseFormat reports whether the server refused the request because
// of response_format (a 400/422 naming it), the sign that it does not support
// structured output.
func (e *APIError) RejectsResponseFormat() bool {
	if e.Status != http.StatusBadRequest && e.Status != http.StatusUnprocessableEntity {
		return false
	}
	return e.Param == "response_format" || strings.Contains(e.Message, "response_format") || strings.Contains(e.Message, "json_schema")
}

type wireRequest struct {
	Model          string          `json:"model,omitempty"`
	Messages       []Message       `json:"messages"`
	Temperature    float64         `json:"temperature"`
	MaxTokens      int             `json:"max_tokens,omitempty"`
	ResponseFormat *responseFormat `json:"response_format,omitempty"`
}

type responseFormat struct {
	Type       string      `json:"type"`
	JSONSchema *jsonSchema `json:"json_schema,omitempty"`
}

type jsonSchema struct {
	Name   string          `json:"name"`
	Schema json.RawMessage `json:"schema"`
	Strict bool            `json:"strict"`
}

type wireResponse struct {
	Model   string `json:"model"`
	Choices []struct {
		Message struct {
			Content *string `json:"content"`
		} `json:"message"`
		FinishReason string `json:"finish_reason"`
	} `json:"choices"`
	Usage *Usage `json:"usage"`
}

type wireError struct {
	Error *struct {
		Message string          `json:"message"`
		Type    string          `json:"type"`
		Param   json.RawMessage `json:"param"`
		Code    json.RawMessage `json:"code"`
	} `json:"error"`
}

// Complete sends one request (temperature 0) and returns the first choice. It
// waits for a concurrency slot, fails with ErrBudget once the budget is spent,
// and returns an *APIError for a final non-2xx answer.
func (c *Client) Complete(ctx context.Context, r Request) (*Response, error) {
	if n := c.calls.Add(1); c.budget > 0 && n > c.budget {
		c.calls.Add(-1)
		return nil, ErrBudget
	}
	select {
	case c.sem <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	defer func() { <-c.sem }()

	body, err := RequestBody(c.model, r)
	if err != nil {
		return nil, err
	}
	data, err := c.http.Post(ctx, c.url, body)
	if err != nil {
		return nil, c.clean(err)
	}
	out, err := ParseResponse(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", c.url, err)
	}
	return out, nil
}

// RequestBody is the JSON body of one chat completion of model (omitted when
// empty) at temperature 0: what Complete posts, and the "body" of a Batch API
// request line.
func RequestBody(model string, r Request) ([]byte, error) {
	wr := wireRequest{Model: model, Messages: r.Messages, Temperature: 0, MaxTokens: r.MaxTokens}
	if r.Schema != nil {
		wr.ResponseFormat = &responseFormat{Type: "json_schema", JSONSchema: &jsonSchema{Name: r.Schema.Name, Schema: r.Schema.Schema, Strict: true}}
	}
	return json.Marshal(wr)
}

// ParseResponse reads a chat-completion body (a 2xx answer, or the
// response.body of a Batch API output line) and returns its first choice. A
// body with two keys that differ only in case is malformed (CheckFoldedKeys).
func ParseResponse(data []byte) (*Response, error) {
	var resp wireResponse
	if err := CheckFoldedKeys(data); err != nil {
		return nil, fmt.Errorf("malformed chat-completions response: %w", err)
	}
	if err := json.Unmarshal(data, &resp); err != nil {
		return nil, fmt.Errorf("malformed chat-completions response: %w", err)
	}
	if len(resp.Choices) == 0 {
		return nil, errors.New("chat-completions response has no choices")
	}
	ch := resp.Choices[0]
	out := &Response{FinishReason: ch.FinishReason, Model: resp.Model}
	if ch.Message.Content != nil {
		out.Content = *ch.Message.Content
	}
	if resp.Usage != nil {
		out.Usage, out.HasUsage = *resp.Usage, true
	}
	return out, nil
}

// clean turns an httpretry error into an *APIError (status errors) or a plain
// error, with the API key removed from any text the server echoed back.
func (c *Client) clean(err error) error {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	var se *httpretry.StatusError
	if !errors.As(err, &se) {
		if msg := err.Error(); c.Redact(msg) != msg {
			return errors.New(c.Redact(msg))
		}
		return err // its type kept (*httpretry.TooLargeError, *httpretry.RateLimitError)
	}
	ae := &APIError{URL: c.url, Status: se.Status, Attempts: se.Attempts, Message: se.Body}
	var we wireError
	if json.Unmarshal([]byte(se.Body), &we) == nil && we.Error != nil {
		ae.Message = we.Error.Message
		ae.Type = we.Error.Type
		ae.Code = rawString(we.Error.Code)
		ae.Param = rawString(we.Error.Param)
	}
	ae.Message, ae.Type, ae.Code, ae.Param = c.Redact(ae.Message), c.Redact(ae.Type), c.Redact(ae.Code), c.Redact(ae.Param)
	return ae
}

// rawString renders a JSON string, number or null (OpenAI sends codes as
// strings, vLLM as numbers) as text; null is "".
func rawString(r json.RawMessage) string {
	var s string
	if json.Unmarshal(r, &s) == nil {
		return s
	}
	t := strings.TrimSpace(string(r))
	if t == "null" {
		return ""
	}
	return t
}

// Redact removes the API key and the credentials of the server's URL from s
// (any 8 characters of them in a row), and every credential of a known shape
// or in a URL (httpretry.RedactText): from the errors the server wrote, and
// from what a caller shows of its answers (judge's reasons).
func (c *Client) Redact(s string) string { return c.redactor.Text(s) }

// Redactor is the redaction of the texts a model or its server wrote that a
// run keeps (judge's reasons and the answers it quotes, generate's queries):
// the client's own Redact first, when it has one (*Client and every BatchService:
// its key and its URL's credentials; a library caller may give the client a
// key and the run no secrets), then httpretry.RedactText with secrets (the
// process's keys and tokens, the credentials of the URLs it was given),
// prepared once for the run (httpretry.Redactor: each of a batch's 100,000
// texts costs one pass over its bytes). A model, or a server standing in for
// one, may echo the key it was called with.
func Redactor(client any, secrets []string) func(string) string {
	r := httpretry.NewRedactor(secrets...)
	if c, ok := client.(interface{ Redact(s string) string }); ok {
		return func(s string) string { return r.Text(c.Redact(s)) }
	}
	return r.Text
}

// newRedactor is the redaction of a client's secrets: its API key and the
// credentials of its server's URL (httpretry.URLSecrets), prepared once.
func newRedactor(url, key string) *httpretry.Redactor {
	return httpretry.NewRedactor(append(httpretry.URLSecrets(url), key)...)
}

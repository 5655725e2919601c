package llm

import (
	"strings"
	"time"

	"github.com/retrieval-gate/retrieval-gate/internal/option"
)

// Server is one chat server as a command's options give it (the judge's or
// the generator's): its URL and model, the requests in flight at once and the
// budget of requests (0: no limit).
type Server struct {
	URL, Model  string
	Concurrency int
	MaxRequests int64
}

// Validate checks the server's options; role names its flags (--ROLE-url,
// --ROLE-model).
func (s Server) Validate(role string) error {
	if s.URL == "" {
		return option.Required(role+"-url", "")
	}
	if _, err := EndpointURL(s.URL); err != nil {
		return option.Invalid(role+"-url", err)
	}
	if strings.Contains(s.URL, "api.openai.com") && s.Model == "" {
		return option.Conflict(option.Name(role+"-url"), " api.openai.com needs ", option.Name(role+"-model"), " (e.g. gpt-4o-mini)")
	}
	if s.Concurrency < 1 || s.Concurrency > 256 {
		return option.Refuse("concurrency", "must be between 1 and 256")
	}
	return s.ValidateBudget()
}

// ValidateBudget checks the budget of requests alone (the batch file modes
// ask no server).
func (s Server) ValidateBudget() error {
	if s.MaxRequests < 0 {
		return option.Refuse("max-requests", "must be 0 (no limit) or more")
	}
	return nil
}

// Client is the server's client with the API key the front end resolved ("":
// none).
func (s Server) Client(apiKey string) (*Client, error) {
	return New(Config{URL: s.URL, Model: s.Model, APIKey: apiKey, Concurrency: s.Concurrency, MaxRequests: s.MaxRequests})
}

// BatchClient is the server's Batch API client with the API key the front end
// resolved.
func (s Server) BatchClient(apiKey string) (*BatchClient, error) {
	return NewBatchClient(Config{URL: s.URL, APIKey: apiKey})
}

// PollFrom is the backoff of a batch's status polls from a first wait of
// initial (--batch-poll): 1.5× longer each time, at most a minute.
func PollFrom(initial time.Duration) PollPolicy {
	return PollPolicy{Initial: initial, Max: max(initial, time.Minute)}
}

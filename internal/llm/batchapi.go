package llm

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/retrieval-gate/retrieval-gate/internal/httpretry"
)

// The batch providers a judge can submit to (judge --batch-api). Each has its
// own request and result formats, statuses, expiry and partial results; each
// is a BatchService:
//
//   - ProviderOpenAI: the OpenAI Batch API (files and batches; batch.go),
//     also what vLLM's file mode reads and writes;
//   - ProviderAnthropic: Anthropic's Message Batches API (anthropic.go);
//   - ProviderGemini: the Gemini API's batch mode (gemini.go).
const (
	ProviderOpenAI    = "openai"
	ProviderAnthropic = "anthropic"
	ProviderGemini    = "gemini"
)

// Providers are the batch providers, in the order the docs list them.
var Providers = []string{ProviderOpenAI, ProviderAnthropic, ProviderGemini}

// ProviderKeyEnv are the environment variables holding each provider's API
// key, in the order they are tried after APIKeyEnv (the front end reads
// them: no package but internal/cli reads the environment).
var ProviderKeyEnv = map[string][]string{
	ProviderOpenAI:    {OpenAIKeyEnv},
	ProviderAnthropic: {"ANTHROPIC_API_KEY"},
	ProviderGemini:    {"GEMINI_API_KEY", "GOOGLE_API_KEY"},
}

// BatchService is one provider's batch API as a judge run uses it: submit a
// file of request lines (in the provider's request-line format), retrieve the
// batch until it ends, download its results.
type BatchService interface {
	// Provider is one of Providers.
	Provider() string
	// Submit creates a batch of the n request lines of the file at path and
	// returns it (uploading the file first where the provider needs it).
	Submit(ctx context.Context, path string, n int64) (*BatchJob, error)
	// Get retrieves the batch id.
	Get(ctx context.Context, id string) (*BatchJob, error)
	// Download streams one result source of an ended batch to the writer w
	// gives (a fresh one for each attempt), at most limit bytes: a longer
	// answer is an *httpretry.TooLargeError. What it writes is JSON Lines, one
	// result record a line, in the provider's result format.
	Download(ctx context.Context, job *BatchJob, src ResultSource, limit int64, w func() (io.Writer, error)) error
	// Redact removes the client's secrets (its API key, the credentials of
	// its URL) and every credential of a known shape (httpretry.RedactText)
	// from s, as its own errors are: for text of the provider's results (a
	// request's error) that a caller shows.
	Redact(s string) string
}

// BatchJob is a batch as a provider reports it, in the terms the judge needs.
type BatchJob struct {
	ID string
	// InputRef is the uploaded input file ("" when the requests were sent
	// inline).
	InputRef string
	// Status is the provider's own status word (completed, ended,
	// BATCH_STATE_SUCCEEDED...); Terminal says it will change no more, Failed
	// that it ended without any result (the input was refused), with
	// ErrorText.
	Status    string
	Terminal  bool
	Failed    bool
	ErrorText string
	// Counts are the provider's request counts, normalised.
	Counts RequestCounts
	// Results are where the answers of an ended batch are (none: no answer).
	Results []ResultSource
	// SubmitCalls is the number of HTTP calls Submit made (uploads and the
	// creation; 0 on a batch retrieved by Get).
	SubmitCalls int64
}

// redacted is j with redact applied to the words the server wrote into it
// (its status, its error): a server may echo the key there too.
func (j *BatchJob) redacted(redact func(string) string) *BatchJob {
	j.Status, j.ErrorText = redact(j.Status), redact(j.ErrorText)
	return j
}

// ResultSource is one place a batch's results are: an output or error file
// (OpenAI), the results URL (Anthropic), a responses file or the batch's
// inline responses (Gemini).
type ResultSource struct {
	What string // "output", "error", "results", "responses", "inline": in messages
	Ref  string // a file id, a URL or a resource name
}

// CallCounts are the HTTP calls a batch took, by kind (HTTP retries of a 429
// or 5xx are not counted).
type CallCounts struct {
	Submit   int64 `json:"submit"`
	Poll     int64 `json:"poll"`
	Download int64 `json:"download"`
}

// Total is every call.
func (c CallCounts) Total() int64 { return c.Submit + c.Poll + c.Download }

// WaitJob retrieves batch id from svc until it reaches a terminal status,
// waiting between retrievals with p's backoff; status sees every batch
// retrieved and polls counts the retrievals. The wait ends as soon as ctx is
// done.
func WaitJob(ctx context.Context, svc BatchService, id string, p PollPolicy, status func(*BatchJob), polls *int64) (*BatchJob, error) {
	d := p.Initial
	if d <= 0 {
		d = DefaultPoll.Initial
	}
	for {
		j, err := svc.Get(ctx, id)
		if polls != nil {
			*polls++
		}
		if err != nil {
			return nil, err
		}
		if status != nil {
			status(j)
		}
		if j.Terminal {
			return j, nil
		}
		if err := httpretry.Sleep(ctx, d); err != nil {
			return nil, err
		}
		d = min(d*3/2, max(p.Max, p.Initial))
	}
}

// Provider is the OpenAI Batch API's name.
func (c *BatchClient) Provider() string { return ProviderOpenAI }

// Submit uploads the requests file (purpose batch) and creates a batch of it
// (two calls).
func (c *BatchClient) Submit(ctx context.Context, path string, _ int64) (*BatchJob, error) {
	fileID, err := c.UploadFile(ctx, path)
	if err != nil {
		return nil, fmt.Errorf("uploading the requests: %w", err)
	}
	b, err := c.CreateBatch(ctx, fileID, map[string]string{"tool": "retrieval-gate"})
	if err != nil {
		return nil, fmt.Errorf("creating the batch: %w", err)
	}
	j := b.job().redacted(c.Redact)
	j.InputRef, j.SubmitCalls = fileID, 2
	return j, nil
}

// Get retrieves a batch.
func (c *BatchClient) Get(ctx context.Context, id string) (*BatchJob, error) {
	b, err := c.GetBatch(ctx, id)
	if err != nil {
		return nil, err
	}
	return b.job().redacted(c.Redact), nil
}

// job is the batch object as a BatchJob: completed, expired and cancelled
// batches have their output and error files (an expired or cancelled one
// holds the requests answered before it ended); a failed one (its input did
// not validate) has none.
func (b *Batch) job() *BatchJob {
	j := &BatchJob{ID: b.ID, InputRef: b.InputFileID, Status: b.Status, Terminal: BatchTerminal(b.Status), Failed: b.Status == BatchFailed,
		ErrorText: b.ErrorText(), Counts: b.RequestCounts}
	if j.Terminal && !j.Failed {
		if b.OutputFileID != "" {
			j.Results = append(j.Results, ResultSource{What: "output", Ref: b.OutputFileID})
		}
		if b.ErrorFileID != "" {
			j.Results = append(j.Results, ResultSource{What: "error", Ref: b.ErrorFileID})
		}
	}
	return j
}

// Download streams an output or error file, at most limit bytes.
func (c *BatchClient) Download(ctx context.Context, _ *BatchJob, src ResultSource, limit int64, w func() (io.Writer, error)) error {
	return c.DownloadFile(ctx, src.Ref, limit, w)
}

// capWriter fails a write past limit bytes with an *httpretry.TooLargeError:
// a download stops at its cap.
type capWriter struct {
	w           io.Writer
	left, limit int64
	url         string
}

func (c *capWriter) Write(p []byte) (int, error) {
	if int64(len(p)) > c.left {
		n, _ := c.w.Write(p[:c.left])
		c.left -= int64(n)
		return n, &httpretry.TooLargeError{URL: c.url, Cap: c.limit}
	}
	n, err := c.w.Write(p)
	c.left -= int64(n)
	return n, err
}

// download streams the body of a GET of u (a results file or URL) through c
// to the writer w gives, at most limit bytes. A non-2xx answer is an
// *APIError with its message.
func download(ctx context.Context, hc *http.Client, u string, limit int64, w func() (io.Writer, error), statusErr func(*http.Response, string) error, clean func(error) error) error {
	resp, err := openDownload(ctx, hc, u, limit, statusErr, clean)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	dst, err := w()
	if err != nil {
		return err
	}
	if _, err := io.Copy(&capWriter{w: dst, left: limit, limit: limit, url: u}, resp.Body); err != nil {
		return downloadReadError(ctx, u, err, clean)
	}
	return nil
}

// openDownload sends a GET of u whose answer may be at most limit bytes and
// returns its 2xx answer, for the caller to read (downloadReadError words
// what goes wrong then) and close. A non-2xx answer is an *APIError with its
// message; an answer that declares more than limit bytes a
// *httpretry.TooLargeError.
func openDownload(ctx context.Context, hc *http.Client, u string, limit int64, statusErr func(*http.Response, string) error, clean func(error) error) (*http.Response, error) {
	// The transport bounds the answer at limit, not at an answer's MaxAnswer.
	req, err := http.NewRequestWithContext(httpretry.WithMaxBody(ctx, limit), http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	resp, err := hc.Do(req)
	if err != nil {
		var tl *httpretry.TooLargeError
		if errors.As(err, &tl) && ctx.Err() == nil {
			return nil, tl
		}
		return nil, clean(err)
	}
	if resp.StatusCode/100 != 2 {
		defer resp.Body.Close()
		return nil, statusErr(resp, u)
	}
	if resp.ContentLength > limit {
		resp.Body.Close()
		return nil, &httpretry.TooLargeError{URL: u, Cap: limit}
	}
	return resp, nil
}

// downloadReadError is the error of reading the answer of a download of u:
// a *httpretry.TooLargeError as it is, any other as cleaned.
func downloadReadError(ctx context.Context, u string, err error, clean func(error) error) error {
	var tl *httpretry.TooLargeError
	if errors.As(err, &tl) && ctx.Err() == nil {
		return tl
	}
	return clean(fmt.Errorf("%s: reading the results: %w", u, err))
}

// baseURL is a provider's base URL from --judge-url: the scheme, host and any
// path prefix, without a trailing slash or the given version suffixes (so
// "https://api.anthropic.com/v1" and "https://api.anthropic.com" are the same
// server); empty is def.
func baseURL(raw, def string, versions ...string) (string, error) {
	if raw == "" {
		raw = def
	}
	u := strings.TrimRight(raw, "/")
	for _, v := range versions {
		u = strings.TrimSuffix(u, v)
	}
	if _, err := EndpointURL(u); err != nil {
		return "", err
	}
	return strings.TrimRight(u, "/"), nil
}

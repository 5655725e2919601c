package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"time"

	"github.com/retrieval-gate/retrieval-gate/internal/httpretry"
)

// Batch statuses (the batch object's "status").
const (
	BatchValidating = "validating"
	BatchFailed     = "failed"
	BatchInProgress = "in_progress"
	BatchFinalizing = "finalizing"
	BatchCompleted  = "completed"
	BatchExpired    = "expired"
	BatchCancelling = "cancelling"
	BatchCancelled  = "cancelled"
)

// BatchTerminal reports whether a batch in status s will change no more.
func BatchTerminal(s string) bool {
	return s == BatchCompleted || s == BatchFailed || s == BatchExpired || s == BatchCancelled
}

// RequestCounts is a batch object's request_counts (OpenAI), or another
// provider's counts normalised: Completed the requests answered, Failed those
// that errored, Canceled and Expired those a cancelled or expired batch left
// unanswered where the provider counts them (Anthropic).
type RequestCounts struct {
	Total     int64 `json:"total"`
	Completed int64 `json:"completed"`
	Failed    int64 `json:"failed"`
	Canceled  int64 `json:"canceled,omitempty"`
	Expired   int64 `json:"expired,omitempty"`
}

// BatchError is one entry of a batch object's errors.data (why a batch failed
// validation).
type BatchError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	Param   string `json:"param"`
	Line    *int   `json:"line"`
}

// Batch is the batch object of the Batch API.
type Batch struct {
	ID               string `json:"id"`
	Object           string `json:"object"`
	Endpoint         string `json:"endpoint"`
	InputFileID      string `json:"input_file_id"`
	CompletionWindow string `json:"completion_window"`
	Status           string `json:"status"`
	OutputFileID     string `json:"output_file_id"`
	ErrorFileID      string `json:"error_file_id"`
	Errors           *struct {
		Data BatchErrors `json:"data"`
	} `json:"errors"`
	RequestCounts RequestCounts `json:"request_counts"`
}

// MaxBatchErrors is how many of a batch's errors are kept and named
// (ErrorText); the others are counted. A batch that fails validation lists an
// error per bad line of its requests file: a file of a million bad lines is a
// list of a million errors, which the message of a failed batch does not
// repeat (a 4 MiB list held whole took 380 MB and made a 4 MB message).
const MaxBatchErrors = 10

// BatchErrors is a batch object's errors.data as it is kept: its first
// MaxBatchErrors entries (First) and how many more it listed (More). Every
// entry is decoded as a BatchError, so an entry of another type is an error
// wherever it is, as before.
type BatchErrors struct {
	First []BatchError
	More  int
}

// UnmarshalJSON decodes a list of errors, keeping the first MaxBatchErrors.
func (l *BatchErrors) UnmarshalJSON(b []byte) error {
	*l = BatchErrors{}
	if string(bytes.TrimSpace(b)) == "null" {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	if t, err := dec.Token(); err != nil {
		return err
	} else if d, ok := t.(json.Delim); !ok || d != '[' {
		return &json.UnmarshalTypeError{Value: "non-array", Type: reflect.TypeFor[[]BatchError](), Field: "errors.data"}
	}
	var e BatchError // one for all: a new one each was an allocation an entry
	for dec.More() {
		e = BatchError{}
		if err := dec.Decode(&e); err != nil {
			return err
		}
		if len(l.First) < MaxBatchErrors {
			l.First = append(l.First, e)
		} else {
			l.More++
		}
	}
	_, err := dec.Token() // ']'
	return err
}

// ErrorText is the batch's errors.data as one line ("" when none): the first
// MaxBatchErrors, then how many more there were.
func (b *Batch) ErrorText() string {
	if b.Errors == nil {
		return ""
	}
	var parts []string
	for _, e := range b.Errors.Data.First {
		s := e.Code + ": " + e.Message
		if e.Line != nil {
			s = fmt.Sprintf("line %d: %s", *e.Line, s)
		}
		parts = append(parts, s)
	}
	if more := b.Errors.Data.More; more > 0 {
		parts = append(parts, fmt.Sprintf("and %d more", more))
	}
	return strings.Join(parts, "; ")
}

// BatchClient speaks the Batch API of an OpenAI-compatible server: files
// (upload with purpose "batch", content download) and batches (create,
// retrieve, cancel). Uploads and downloads stream: neither holds the file in
// memory. The API key is sent as a bearer token to the server's origin only
// and never appears in an error.
type BatchClient struct {
	base     string // ".../v1"
	key      string
	redactor *httpretry.Redactor // of the API key and the URL's credentials
	http     *http.Client
	// Policy bounds each API call (the JSON calls); transfers have Transfer.
	Policy, Transfer httpretry.Policy
}

// TransferPolicy is the policy of an upload or download: 3 attempts of up to
// an hour each (a 200 MB file over a slow link).
var TransferPolicy = httpretry.Policy{Attempts: 3, BaseDelay: time.Second, MaxDelay: 8 * time.Second, Timeout: time.Hour, Budget: 3*time.Hour + time.Minute}

// NewBatchClient returns a client of the server of cfg.URL (any form
// EndpointURL takes: the Batch API lives beside chat/completions, under /v1).
func NewBatchClient(cfg Config) (*BatchClient, error) {
	u, err := EndpointURL(cfg.URL)
	if err != nil {
		return nil, err
	}
	base := strings.TrimSuffix(u, "/chat/completions")
	c := &BatchClient{base: base, key: cfg.APIKey, redactor: newRedactor(base, cfg.APIKey), Policy: cfg.Policy, Transfer: TransferPolicy}
	if c.Policy.Attempts == 0 {
		c.Policy = httpretry.DefaultPolicy
	}
	c.http = cfg.HTTP
	return c, nil
}

func (c *BatchClient) client(p httpretry.Policy) *http.Client {
	var base http.RoundTripper
	if c.http != nil {
		base = c.http.Transport
	}
	t := &httpretry.Transport{Base: base, Policy: p, Origin: httpretry.Origin(c.base), MaxBody: httpretry.MaxAnswer}
	if c.key != "" {
		t.Credentials = http.Header{"Authorization": {"Bearer " + c.key}}
	}
	return httpretry.NewHTTPClient(t)
}

// do sends one request and decodes a 2xx JSON answer into out; any other
// answer is an *APIError.
func (c *BatchClient) do(ctx context.Context, p httpretry.Policy, method, path string, body []byte, out any) error {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, rd)
	if err != nil {
		return err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
		req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
	}
	resp, err := c.client(p).Do(req)
	if err != nil {
		return c.sendError(ctx, err)
	}
	defer resp.Body.Close()
	return c.decode(ctx, resp, c.base+path, out)
}

func (c *BatchClient) decode(ctx context.Context, resp *http.Response, u string, out any) error {
	if resp.StatusCode/100 != 2 {
		return c.statusError(resp, u)
	}
	data, err := httpretry.ReadAnswer(ctx, resp.Body, resp.ContentLength, httpretry.MaxAnswer, u)
	if tl := (*httpretry.TooLargeError)(nil); errors.As(err, &tl) && ctx.Err() == nil {
		return tl
	}
	if err != nil {
		return c.clean(ctx, err)
	}
	return unmarshalAnswer(data, u, out)
}

func (c *BatchClient) statusError(resp *http.Response, u string) error {
	data, _ := httpretry.ReadSnippet(resp.Body, 64<<10)
	// Redacted as received, before its fields are decoded: the key may be
	// echoed, escaped, in any of them.
	data = []byte(c.Redact(string(data)))
	ae := &APIError{URL: u, Status: resp.StatusCode, Message: strings.TrimSpace(string(data))}
	var we wireError
	if json.Unmarshal(data, &we) == nil && we.Error != nil {
		ae.Message, ae.Type, ae.Code, ae.Param = we.Error.Message, we.Error.Type, rawString(we.Error.Code), rawString(we.Error.Param)
	}
	ae.Message, ae.Code = c.Redact(ae.Message), c.Redact(ae.Code)
	return ae
}

// sendError is the error of a request that got no answer, cleaned, and a
// *notActedError when the server provably did not act on it.
func (c *BatchClient) sendError(ctx context.Context, err error) error {
	cerr := c.clean(ctx, err)
	if ctx.Err() == nil && notActed(err) {
		return &notActedError{cerr}
	}
	return cerr
}

func (c *BatchClient) clean(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return errors.New(c.Redact(err.Error()))
}

// Redact removes the API key and the credentials of the server's URL from s
// (any 8 characters of them in a row), and every credential of a known shape
// or in a URL (httpretry.RedactText).
func (c *BatchClient) Redact(s string) string {
	return c.redactor.Text(s)
}

// File is the file object of the Files API.
type File struct {
	ID       string `json:"id"`
	Object   string `json:"object"`
	Bytes    int64  `json:"bytes"`
	Filename string `json:"filename"`
	Purpose  string `json:"purpose"`
}

// UploadFile uploads the file at path to /v1/files with purpose "batch", as
// multipart/form-data streamed from the file through a pipe (the file is
// never in memory), and returns its id.
func (c *BatchClient) UploadFile(ctx context.Context, path string) (string, error) {
	boundary := multipart.NewWriter(io.Discard).Boundary() // one boundary for every attempt
	open := func() (io.ReadCloser, string, error) {
		f, err := os.Open(path)
		if err != nil {
			return nil, "", err
		}
		pr, pw := io.Pipe()
		mw := multipart.NewWriter(pw)
		if err := mw.SetBoundary(boundary); err != nil {
			f.Close()
			return nil, "", err
		}
		go func() {
			err := mw.WriteField("purpose", "batch")
			if err == nil {
				var part io.Writer
				if part, err = mw.CreateFormFile("file", filepath.Base(path)); err == nil {
					_, err = io.Copy(part, f)
				}
			}
			if err == nil {
				err = mw.Close()
			}
			f.Close()
			_ = pw.CloseWithError(err)
		}()
		return pr, mw.FormDataContentType(), nil
	}
	body, ctype, err := open()
	if err != nil {
		return "", err
	}
	u := c.base + "/files"
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, body)
	if err != nil {
		_ = body.Close()
		return "", err
	}
	req.Header.Set("Content-Type", ctype)
	req.GetBody = func() (io.ReadCloser, error) {
		b, _, err := open()
		return b, err
	}
	resp, err := c.client(creating(c.Transfer)).Do(req)
	if err != nil {
		return "", c.sendError(ctx, err)
	}
	defer resp.Body.Close()
	var f File
	if err := c.decode(ctx, resp, u, &f); err != nil {
		return "", err
	}
	if f.ID == "" {
		return "", fmt.Errorf("%s: the uploaded file has no id", u)
	}
	return f.ID, nil
}

// CreateBatch creates a batch of the uploaded file for /v1/chat/completions
// with completion window 24h. The POST is not retried unless the server
// provably did not act on it (creating); a failure that leaves the batch's
// creation unknown is a *BatchMayExistError.
func (c *BatchClient) CreateBatch(ctx context.Context, inputFileID string, metadata map[string]string) (*Batch, error) {
	body, err := json.Marshal(map[string]any{"input_file_id": inputFileID, "endpoint": "/v1/chat/completions", "completion_window": "24h", "metadata": metadata})
	if err != nil {
		return nil, err
	}
	var b Batch
	if err := c.do(ctx, creating(c.Policy), http.MethodPost, "/batches", body, &b); err != nil {
		return nil, mayExist(err, ProviderOpenAI, c.base+"/batches")
	}
	if b.ID == "" {
		return nil, fmt.Errorf("%s/batches: the batch has no id", c.base)
	}
	return &b, nil
}

// GetBatch retrieves a batch.
func (c *BatchClient) GetBatch(ctx context.Context, id string) (*Batch, error) {
	var b Batch
	if err := c.do(ctx, c.Policy, http.MethodGet, "/batches/"+url.PathEscape(id), nil, &b); err != nil {
		return nil, err
	}
	return &b, nil
}

// DownloadFile streams the content of file id (/v1/files/{id}/content) to w,
// at most limit bytes: a longer file stops the download there with an
// *httpretry.TooLargeError. A retried download starts again from the start: w
// must be rewound by the caller, so DownloadFile takes a function giving a
// fresh writer.
func (c *BatchClient) DownloadFile(ctx context.Context, id string, limit int64, w func() (io.Writer, error)) error {
	u := c.base + "/files/" + url.PathEscape(id) + "/content"
	req, err := http.NewRequestWithContext(httpretry.WithMaxBody(ctx, limit), http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	resp, err := c.client(c.Transfer).Do(req)
	if err != nil {
		return c.clean(ctx, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return c.statusError(resp, u)
	}
	dst, err := w()
	if err != nil {
		return err
	}
	if _, err := io.Copy(dst, httpretry.LimitBody(resp.Body, resp.ContentLength, limit, u)); err != nil {
		if tl := (*httpretry.TooLargeError)(nil); errors.As(err, &tl) && ctx.Err() == nil {
			return tl
		}
		return c.clean(ctx, fmt.Errorf("%s: reading the file: %w", u, err))
	}
	return nil
}

// PollPolicy is the backoff between two retrievals of a batch: Initial,
// multiplied by 1.5 each time up to Max.
type PollPolicy struct {
	Initial, Max time.Duration
}

// DefaultPoll polls after 5 s, then less often up to once a minute.
var DefaultPoll = PollPolicy{Initial: 5 * time.Second, Max: time.Minute}

// WaitBatch retrieves batch id until it reaches a terminal status (completed,
// failed, expired or cancelled), waiting between retrievals with p's backoff;
// status, when set, sees every batch object retrieved. The wait ends as soon
// as ctx is done.
func (c *BatchClient) WaitBatch(ctx context.Context, id string, p PollPolicy, status func(*Batch)) (*Batch, error) {
	d := p.Initial
	if d <= 0 {
		d = DefaultPoll.Initial
	}
	for {
		b, err := c.GetBatch(ctx, id)
		if err != nil {
			return nil, err
		}
		if status != nil {
			status(b)
		}
		if BatchTerminal(b.Status) {
			return b, nil
		}
		if err := httpretry.Sleep(ctx, d); err != nil {
			return nil, err
		}
		d = min(d*3/2, max(p.Max, p.Initial))
	}
}

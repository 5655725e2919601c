package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"

	"github.com/retrieval-gate/retrieval-gate/internal/httpretry"
)

// The Gemini API's batch mode, as its documentation describes it ("Gemini
// API, Batch API guide (batch mode)" and the reference "Batch mode:
// models.batchGenerateContent, batches.get", ai.google.dev, as of 2026; the
// reference of GenerateContentRequest, GenerationConfig (responseMimeType,
// responseJsonSchema) and UsageMetadata; "Files API: resumable upload"):
//
//	POST {base}/v1beta/models/{model}:batchGenerateContent
//	    {"batch": {"display_name", "input_config": {"requests": {"requests":
//	    [{"request": GenerateContentRequest, "metadata": {"key"}}]}}}}  (inline,
//	    a request under 20 MB in all), or "input_config": {"file_name":
//	    "files/ID"} (a JSON Lines file of {"key", "request"} lines, uploaded
//	    first) -> a long-running operation {"name": "batches/ID", "metadata":
//	    GenerateContentBatch {"state", "batchStats"...}}
//	GET  {base}/v1beta/batches/ID -> the operation: "done", "metadata.state"
//	    BATCH_STATE_PENDING | RUNNING | SUCCEEDED | FAILED | CANCELLED | EXPIRED
//	    (the SDKs name them JOB_STATE_*: both are read), "error" (a
//	    google.rpc.Status) when it failed, and "response" with
//	    "inlinedResponses": {"inlinedResponses": [{"metadata": {"key"},
//	    "response": GenerateContentResponse} | {"metadata", "error": Status}]}
//	    or "responsesFile": "files/ID"
//	GET  {base}/download/v1beta/files/ID:download?alt=media -> the responses
//	    file, JSON Lines of {"key", "response"} or {"key", "error"}
//	POST {base}/upload/v1beta/files (X-Goog-Upload-Protocol: resumable,
//	    command start) -> X-Goog-Upload-URL; POST that URL (command "upload,
//	    finalize") with the bytes -> {"file": {"name": "files/ID"}}
//
// The key goes in x-goog-api-key. A batch not done within 48 hours expires
// (EXPIRED, no responses). Whether a cancelled batch keeps the responses it
// had is not documented: any responses its operation holds are used.

// GeminiURL is the API's base URL, the default of --judge-url with
// --batch-api gemini.
const GeminiURL = "https://generativelanguage.googleapis.com"

// GeminiInlineLimit is the largest requests file sent inline: the documented
// bound on the whole request is 20 MB; a larger file is uploaded.
const GeminiInlineLimit = 20_000_000 - 64<<10

// GeminiOperationCap bounds a batch's operation as Get reads it: a finished
// inline batch's holds all its responses. Get reads it as it arrives and
// holds none of them (readGeminiOperation; one value at a time, at most
// GeminiValueCap), so this cap bounds the time an endless answer takes, not
// memory: 1 GiB, fifty times the requests' bound (GeminiInlineLimit). The
// responses are Download's to bound (its limit, a bound for each request).
const GeminiOperationCap = 1 << 30

// GeminiBatchClient speaks the Gemini API's batch mode for one model.
type GeminiBatchClient struct {
	restClient
	model string // "models/NAME"
	// InlineLimit is the largest requests file sent inline (default
	// GeminiInlineLimit); a larger one is uploaded as a file.
	InlineLimit int64
}

// NewGeminiBatchClient is a client of the batch mode at rawURL (the base URL,
// with or without /v1beta; "" is GeminiURL) for model (with or without its
// "models/" prefix), with the API key.
func NewGeminiBatchClient(rawURL, model, apiKey string, hc *http.Client) (*GeminiBatchClient, error) {
	base, err := baseURL(rawURL, GeminiURL, "/v1beta")
	if err != nil {
		return nil, err
	}
	if model == "" {
		return nil, errors.New("the Gemini batch mode needs a model")
	}
	h := http.Header{}
	if apiKey != "" {
		h.Set("X-Goog-Api-Key", apiKey)
	}
	return &GeminiBatchClient{restClient: restClient{base: base, redactor: newRedactor(base, apiKey), header: h, http: hc, Policy: defaultPolicy(), Transfer: TransferPolicy},
		model: "models/" + strings.TrimPrefix(model, "models/"), InlineLimit: GeminiInlineLimit}, nil
}

// Provider is "gemini".
func (c *GeminiBatchClient) Provider() string { return ProviderGemini }

// geminiOperation is the long-running operation of a batch.
type geminiOperation struct {
	Name     string `json:"name"`
	Done     bool   `json:"done"`
	Metadata struct {
		Name       string `json:"name"`
		State      string `json:"state"`
		BatchStats struct {
			RequestCount           flexInt `json:"requestCount"`
			SuccessfulRequestCount flexInt `json:"successfulRequestCount"`
			FailedRequestCount     flexInt `json:"failedRequestCount"`
			PendingRequestCount    flexInt `json:"pendingRequestCount"`
		} `json:"batchStats"`
		Output *geminiOutput `json:"output"`
	} `json:"metadata"`
	Error *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
	Response *geminiOutput `json:"response"`
}

type geminiOutput struct {
	ResponsesFile    string      `json:"responsesFile"`
	InlinedResponses jsonPresent `json:"inlinedResponses"`
}

// jsonPresent is whether a value is there and not null; its bytes are not
// kept (a finished inline batch's inlinedResponses hold every response: Get
// only needs to know they are there).
type jsonPresent bool

func (p *jsonPresent) UnmarshalJSON(b []byte) error {
	*p = string(b) != "null"
	return nil
}

// flexInt is an int64 written as a JSON number or, as proto3 JSON writes
// int64, a string.
type flexInt int64

func (f *flexInt) UnmarshalJSON(b []byte) error {
	s := strings.Trim(string(b), `"`)
	if s == "" || s == "null" {
		*f = 0
		return nil
	}
	n, err := strconv.ParseInt(s, 10, 64)
	*f = flexInt(n)
	return err
}

// geminiState is a batch state without its BATCH_STATE_ or JOB_STATE_ prefix.
func geminiState(s string) string {
	return strings.TrimPrefix(strings.TrimPrefix(s, "BATCH_STATE_"), "JOB_STATE_")
}

func (op *geminiOperation) job() (*BatchJob, error) {
	id := op.Name
	if id == "" {
		id = op.Metadata.Name
	}
	if id == "" {
		return nil, errors.New("the batch operation has no name")
	}
	st := geminiState(op.Metadata.State)
	bs := op.Metadata.BatchStats
	j := &BatchJob{ID: id, Status: op.Metadata.State,
		Counts: RequestCounts{Total: int64(bs.RequestCount), Completed: int64(bs.SuccessfulRequestCount), Failed: int64(bs.FailedRequestCount)}}
	switch st {
	case "SUCCEEDED", "FAILED", "CANCELLED", "EXPIRED":
		j.Terminal = true
	}
	if op.Done && op.Error != nil {
		j.Terminal = true
	}
	if j.Status == "" && op.Done {
		j.Status = "done"
	}
	if st == "FAILED" || (op.Done && op.Error != nil && op.Response == nil) {
		j.Failed = true
		if op.Error != nil {
			j.ErrorText = strings.TrimSpace(fmt.Sprintf("%d: %s", op.Error.Code, op.Error.Message))
		}
		return j, nil
	}
	if !j.Terminal {
		return j, nil
	}
	out := op.Response
	if out == nil {
		out = op.Metadata.Output
	}
	if out != nil {
		switch {
		case out.ResponsesFile != "":
			j.Results = []ResultSource{{What: "responses", Ref: out.ResponsesFile}}
		case bool(out.InlinedResponses):
			j.Results = []ResultSource{{What: "inline", Ref: id}}
		}
	}
	return j, nil
}

// Submit creates a batch of the request lines of the file at path, each a
// {"key", "request"} object: inline (one call) when the file is at most
// InlineLimit bytes, else the file is uploaded (two calls) and the batch
// created of it (one call).
func (c *GeminiBatchClient) Submit(ctx context.Context, path string, _ int64) (*BatchJob, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	u := c.base + "/v1beta/" + c.model + ":batchGenerateContent"
	var body func() (io.ReadCloser, error)
	calls := int64(1)
	input := ""
	if st.Size() <= c.InlineLimit {
		body = jsonArrayBody(path, `{"batch":{"display_name":"retrieval-gate","input_config":{"requests":{"requests":[`, `]}}}}`, geminiInline)
	} else {
		if input, err = c.upload(ctx, path, st.Size()); err != nil {
			return nil, fmt.Errorf("uploading the requests: %w", err)
		}
		calls += 2
		b, err := json.Marshal(map[string]any{"batch": map[string]any{"display_name": "retrieval-gate", "input_config": map[string]string{"file_name": input}}})
		if err != nil {
			return nil, err
		}
		body = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(b)), nil }
	}
	// Not retried unless the server provably did not act on it (creating):
	// a retry after a 5xx could be a second paid batch.
	list := c.base + "/v1beta/batches"
	resp, err := c.send(ctx, creating(c.Transfer), http.MethodPost, u, body, nil)
	if err != nil {
		return nil, fmt.Errorf("creating the batch: %w", mayExist(err, ProviderGemini, list))
	}
	defer resp.Body.Close()
	var op geminiOperation
	if err := c.decode(ctx, resp, u, &op); err != nil {
		return nil, mayExist(err, ProviderGemini, list)
	}
	j, err := op.job()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", u, err)
	}
	j.InputRef, j.SubmitCalls = input, calls
	return j.redacted(c.Redact), nil
}

// geminiInline turns a request line {"key", "request"} into an inline request
// {"request", "metadata": {"key"}}.
func geminiInline(line []byte) ([]byte, error) {
	var l struct {
		Key     string          `json:"key"`
		Request json.RawMessage `json:"request"`
	}
	if err := json.Unmarshal(line, &l); err != nil || l.Key == "" || len(l.Request) == 0 {
		return nil, errors.New(`a Gemini request line is {"key", "request"}`)
	}
	return json.Marshal(map[string]any{"request": l.Request, "metadata": map[string]string{"key": l.Key}})
}

// upload sends the file at path with the resumable upload protocol (start,
// then upload and finalize) and returns its name ("files/ID").
func (c *GeminiBatchClient) upload(ctx context.Context, path string, size int64) (string, error) {
	u := c.base + "/upload/v1beta/files"
	meta := []byte(`{"file":{"display_name":"retrieval-gate-requests"}}`)
	resp, err := c.send(ctx, creating(c.Policy), http.MethodPost, u, func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(meta)), nil },
		http.Header{"X-Goog-Upload-Protocol": {"resumable"}, "X-Goog-Upload-Command": {"start"},
			"X-Goog-Upload-Header-Content-Length": {strconv.FormatInt(size, 10)}, "X-Goog-Upload-Header-Content-Type": {"application/jsonl"}})
	if err != nil {
		return "", err
	}
	upload := resp.Header.Get("X-Goog-Upload-Url")
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	if upload == "" {
		return "", fmt.Errorf("%s: no X-Goog-Upload-URL in the answer", u)
	}
	open := func() (io.ReadCloser, error) { return os.Open(path) }
	resp, err = c.send(ctx, creating(c.Transfer), http.MethodPost, upload, open,
		http.Header{"X-Goog-Upload-Offset": {"0"}, "X-Goog-Upload-Command": {"upload, finalize"}, "Content-Type": {"application/jsonl"}})
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	var f struct {
		File struct {
			Name string `json:"name"`
		} `json:"file"`
	}
	if err := c.decode(ctx, resp, upload, &f); err != nil {
		return "", err
	}
	if f.File.Name == "" {
		return "", fmt.Errorf("%s: the uploaded file has no name", upload)
	}
	return f.File.Name, nil
}

// Get retrieves a batch's operation.
func (c *GeminiBatchClient) Get(ctx context.Context, id string) (*BatchJob, error) {
	u := c.base + "/v1beta/" + strings.TrimPrefix(id, "/")
	// A finished inline batch's operation holds every response: it may be
	// larger than an ordinary answer (GeminiOperationCap).
	resp, err := c.send(httpretry.WithMaxBody(ctx, GeminiOperationCap), c.Policy, http.MethodGet, u, nil, nil)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	// Read as it arrives (readGeminiOperation): the inline responses are
	// left out, never held.
	var op geminiOperation
	err = readGeminiOperation(httpretry.LimitBody(io.NopCloser(resp.Body), resp.ContentLength, GeminiOperationCap, u), &op, GeminiValueCap)
	var re *readError
	var tl *valueTooLongError
	switch {
	case errors.As(err, &tl):
		return nil, fmt.Errorf("%s: %w", u, err)
	case errors.As(err, &re):
		return nil, c.clean(ctx, re.err)
	case err != nil:
		return nil, fmt.Errorf("%s: malformed answer: %w", u, err)
	}
	j, err := op.job()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", u, err)
	}
	return j.redacted(c.Redact), nil
}

// Download streams the responses file, or the inline responses of the batch's
// operation (retrieved again, up to limit bytes) as JSON Lines of {"key",
// "response"} or {"key", "error"}: the file's format. The operation is
// converted as it arrives (geminiInlined), never whole in memory.
func (c *GeminiBatchClient) Download(ctx context.Context, job *BatchJob, src ResultSource, limit int64, w func() (io.Writer, error)) error {
	if src.What != "inline" {
		return c.download(ctx, c.base+"/download/v1beta/"+src.Ref+":download?alt=media", limit, w)
	}
	u := c.base + "/v1beta/" + strings.TrimPrefix(src.Ref, "/")
	clean := func(err error) error { return c.clean(ctx, err) }
	resp, err := openDownload(ctx, c.client(c.Transfer), u, limit, c.statusError, clean)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	err = geminiInlined(httpretry.LimitBody(resp.Body, resp.ContentLength, limit, u), w)
	var re *readError
	var we *writeError
	var tl *valueTooLongError
	switch {
	case errors.As(err, &tl):
		return fmt.Errorf("%s: %w", u, err)
	case errors.As(err, &re):
		return downloadReadError(ctx, u, re.err, clean)
	case errors.As(err, &we):
		return we.err
	case err != nil:
		return fmt.Errorf("%s: %w", u, err)
	}
	return nil
}

// GeminiRequest is the GenerateContentRequest of one judge request for a batch
// line: the model ("models/NAME"), the system message as systemInstruction,
// the others as contents (assistant as "model"), and generationConfig with
// temperature 0 (and r.MaxTokens as maxOutputTokens) and, with r.Schema,
// structured output: responseMimeType "application/json" and
// responseJsonSchema (the schema as JSON Schema).
func GeminiRequest(model string, r Request) ([]byte, error) {
	type part struct {
		Text string `json:"text"`
	}
	type content struct {
		Role  string `json:"role,omitempty"`
		Parts []part `json:"parts"`
	}
	type genConfig struct {
		Temperature        float64         `json:"temperature"`
		MaxOutputTokens    int             `json:"maxOutputTokens,omitempty"`
		ResponseMimeType   string          `json:"responseMimeType,omitempty"`
		ResponseJSONSchema json.RawMessage `json:"responseJsonSchema,omitempty"`
	}
	req := struct {
		Model             string    `json:"model,omitempty"`
		SystemInstruction *content  `json:"systemInstruction,omitempty"`
		Contents          []content `json:"contents"`
		GenerationConfig  genConfig `json:"generationConfig"`
	}{Contents: []content{}, GenerationConfig: genConfig{MaxOutputTokens: r.MaxTokens}}
	if model != "" {
		req.Model = "models/" + strings.TrimPrefix(model, "models/")
	}
	for _, m := range r.Messages {
		switch m.Role {
		case "system":
			req.SystemInstruction = &content{Parts: []part{{m.Content}}}
		case "assistant":
			req.Contents = append(req.Contents, content{Role: "model", Parts: []part{{m.Content}}})
		default:
			req.Contents = append(req.Contents, content{Role: "user", Parts: []part{{m.Content}}})
		}
	}
	if r.Schema != nil {
		req.GenerationConfig.ResponseMimeType, req.GenerationConfig.ResponseJSONSchema = "application/json", r.Schema.Schema
	}
	return json.Marshal(req)
}

// ErrNoCandidates is a GenerateContentResponse without a candidate (a prompt
// the API blocked: promptFeedback.blockReason).
var ErrNoCandidates = errors.New("no candidates")

// ParseGeminiResponse reads a GenerateContentResponse: the text parts of the
// first candidate (thought parts left out) are the content; usageMetadata's
// promptTokenCount the prompt tokens, candidatesTokenCount plus
// thoughtsTokenCount (thinking is billed as output) the completion. A
// response without a candidate is ErrNoCandidates with the block reason.
func ParseGeminiResponse(data []byte) (*Response, error) {
	var g struct {
		Candidates []struct {
			Content struct {
				Parts []struct {
					Text    string `json:"text"`
					Thought bool   `json:"thought"`
				} `json:"parts"`
			} `json:"content"`
			FinishReason string `json:"finishReason"`
		} `json:"candidates"`
		PromptFeedback *struct {
			BlockReason string `json:"blockReason"`
		} `json:"promptFeedback"`
		UsageMetadata *struct {
			PromptTokenCount     int64 `json:"promptTokenCount"`
			CandidatesTokenCount int64 `json:"candidatesTokenCount"`
			ThoughtsTokenCount   int64 `json:"thoughtsTokenCount"`
		} `json:"usageMetadata"`
		ModelVersion string `json:"modelVersion"`
	}
	if err := json.Unmarshal(data, &g); err != nil {
		return nil, fmt.Errorf("malformed GenerateContentResponse: %w", err)
	}
	if len(g.Candidates) == 0 {
		if g.PromptFeedback != nil && g.PromptFeedback.BlockReason != "" {
			return nil, fmt.Errorf("%w (blocked: %s)", ErrNoCandidates, g.PromptFeedback.BlockReason)
		}
		return nil, ErrNoCandidates
	}
	c := g.Candidates[0]
	out := &Response{FinishReason: c.FinishReason, Model: g.ModelVersion}
	for _, p := range c.Content.Parts {
		if !p.Thought {
			out.Content += p.Text
		}
	}
	if u := g.UsageMetadata; u != nil {
		out.Usage = Usage{PromptTokens: u.PromptTokenCount, CompletionTokens: u.CandidatesTokenCount + u.ThoughtsTokenCount}
		out.HasUsage = true
	}
	return out, nil
}

package judge

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/retrieval-gate/retrieval-gate/internal/httpretry"
	"github.com/retrieval-gate/retrieval-gate/internal/input"
	"github.com/retrieval-gate/retrieval-gate/internal/input/jsonpos"
	"github.com/retrieval-gate/retrieval-gate/internal/llm"
)

// BatchEndpoint is the url of every request line and the endpoint of a batch.
const BatchEndpoint = "/v1/chat/completions"

// Causes of an unjudged answer in batch mode (besides CauseUnparseable,
// CauseOutOfRange and CauseBudget).
const (
	// CauseBatchFailed: the request's output line carries an error or a
	// non-200 status_code (the error file's lines, a request the engine refused).
	CauseBatchFailed = "batch_failed"
	// CauseBatchMissing: the request was in the batch but no output or error
	// line answers it (an expired or cancelled batch's unfinished requests).
	CauseBatchMissing = "batch_missing"
)

// MaxResultLine bounds one line of a batch results file: a chat completion of
// at most httpretry.MaxAnswer and its envelope.
const MaxResultLine = httpretry.MaxAnswer + 64<<10

// BatchStats are what a batch run reports: its throughput and what it
// answered. Counts are judgments ((pair, repeat) requests).
type BatchStats struct {
	Mode string // "api" (the Batch API) or "file" (--batch-in)
	// Provider is the batch API (llm.Providers) whose formats were spoken.
	Provider    string
	BatchID     string
	InputFileID string
	Status      string // the batch's final status (api)
	Resumed     bool   // the batch was submitted by an earlier run
	// Submitted is the number of request lines of the batch; Answered those
	// with a 200 chat completion, Failed those with an error, Missing those
	// without any line.
	Submitted int64
	Answered  int64
	Failed    int64
	Missing   int64
	// New is the valid judgments the batch added to the cache; Cached the
	// judgments that were in the cache before; Reused the judgments not sent
	// because an earlier pair of the pool has the same prompt (one request
	// line answers both: a batch's custom_ids are unique).
	New    int64
	Cached int64
	Reused int64
	// WaitSeconds is the wall time from submission (or resumption) to the
	// results (api: submitting, polling, downloading); PairsPerSecond is New
	// over it (nil when either is 0).
	WaitSeconds    float64
	PairsPerSecond *float64
	// RequestCounts are the batch object's request_counts (api).
	RequestCounts *llm.RequestCounts
	// Calls are the HTTP calls the batch took (api): submitting (uploads and
	// the creation), polling, downloading the results.
	Calls *llm.CallCounts
}

// batchJob is one batch over a pool: which (pair, repeat) are cached, which
// are sent (in pool order, up to the budget), and the outcomes read back.
type batchJob struct {
	pairs    []Pair
	opt      Options
	provider string // the request and result formats (llm.Providers; "" is OpenAI's)
	budget   int64  // request lines allowed (0: no limit)
	// owner is each pair's prompt owner (promptOwners): only owners are sent.
	owner []int
	// cached marks the judgments in the cache when the job was planned.
	cached   [][]bool
	sent     [][]bool
	nSent    int64
	outcomes map[int]outcome // task index (pair*repeat+rep) -> outcome
	// redact removes the secrets from the texts of a result (its error,
	// the model's reason, an unreadable answer) and from the reasons read
	// from the cache (llm.Redactor).
	redact func(string) string
}

type outcome struct {
	j         Judgment
	pt, ct    int64
	answered  bool
	hasAnswer bool
	missing   bool // the provider says it was never processed
}

func newBatchJob(pairs []Pair, opt Options, budget int64, provider string) *batchJob {
	if opt.Repeat < 1 {
		opt.Repeat = 1
	}
	if opt.Format != FormatText {
		opt.Format = FormatJSON
	}
	b := &batchJob{pairs: pairs, opt: opt, provider: provider, budget: budget, owner: promptOwners(pairs), cached: make([][]bool, len(pairs)), sent: make([][]bool, len(pairs)), outcomes: map[int]outcome{}}
	for i, p := range pairs {
		b.cached[i] = make([]bool, opt.Repeat)
		b.sent[i] = make([]bool, opt.Repeat)
		if b.owner[i] != i {
			continue // its owner's request line answers it
		}
		for rep := range opt.Repeat {
			if _, ok := opt.Cache.Get(b.key(p, rep)); ok {
				b.cached[i][rep] = true
				continue
			}
			if budget > 0 && b.nSent >= budget {
				continue
			}
			b.sent[i][rep] = true
			b.nSent++
		}
	}
	return b
}

func (b *batchJob) key(p Pair, rep int) string {
	return CacheKey(b.opt.Prompt.Hash, b.opt.Model, p.Query, p.Document, rep)
}

// write writes the request lines of the job (see WriteBatchRequests).
func (b *batchJob) write(w io.Writer) (int64, error) {
	var n int64
	enc := newRequestEncoder(w, b.opt, b.provider)
	for i, p := range b.pairs {
		for rep := range b.opt.Repeat {
			if !b.sent[i][rep] {
				continue
			}
			if err := enc.encode(b.key(p, rep), p); err != nil {
				return n, err
			}
			n++
		}
	}
	return n, enc.flush()
}

// requestEncoder writes batch request lines one at a time, in the format of
// its provider: only the line being written is in memory.
//
//   - OpenAI: {"custom_id", "method": "POST", "url": "/v1/chat/completions",
//     "body": a chat completion};
//   - Anthropic: {"custom_id", "params": a Messages request} (an element of
//     the Message Batch's requests);
//   - Gemini: {"key", "request": a GenerateContentRequest} (a line of the
//     batch mode's input file).
type requestEncoder struct {
	bw       *bufio.Writer
	opt      Options
	provider string
	schema   *llm.Schema
}

func newRequestEncoder(w io.Writer, opt Options, provider string) *requestEncoder {
	e := &requestEncoder{bw: bufio.NewWriterSize(w, 64<<10), opt: opt, provider: provider}
	if opt.Format != FormatText {
		e.schema = &llm.Schema{Name: "relevance_judgment", Schema: []byte(answerSchema)}
	}
	return e
}

type requestLine struct {
	CustomID string          `json:"custom_id"`
	Method   string          `json:"method"`
	URL      string          `json:"url"`
	Body     json.RawMessage `json:"body"`
}

func (e *requestEncoder) encode(customID string, p Pair) error {
	format := FormatJSON
	if e.schema == nil {
		format = FormatText
	}
	req := llm.Request{Messages: e.opt.Prompt.Messages(p.Query, p.Document, format), Schema: e.schema}
	var line []byte
	var err error
	switch e.provider {
	case llm.ProviderAnthropic:
		var params []byte
		if params, err = llm.AnthropicParams(e.opt.Model, req); err == nil {
			line, err = json.Marshal(struct {
				CustomID string          `json:"custom_id"`
				Params   json.RawMessage `json:"params"`
			}{customID, params})
		}
	case llm.ProviderGemini:
		var body []byte
		if body, err = llm.GeminiRequest(e.opt.Model, req); err == nil {
			line, err = json.Marshal(struct {
				Key     string          `json:"key"`
				Request json.RawMessage `json:"request"`
			}{customID, body})
		}
	default:
		var body []byte
		if body, err = llm.RequestBody(e.opt.Model, req); err == nil {
			line, err = json.Marshal(requestLine{CustomID: customID, Method: "POST", URL: BatchEndpoint, Body: body})
		}
	}
	if err != nil {
		return err
	}
	if _, err := e.bw.Write(line); err != nil {
		return err
	}
	return e.bw.WriteByte('\n')
}

func (e *requestEncoder) flush() error { return e.bw.Flush() }

// resultLine is one line of a Batch API output or error file.
type resultLine struct {
	ID       string          `json:"id"`
	CustomID *string         `json:"custom_id"`
	Response json.RawMessage `json:"response"`
	Error    json.RawMessage `json:"error"`
}

type resultResponse struct {
	StatusCode *int            `json:"status_code"`
	RequestID  string          `json:"request_id"`
	Body       json.RawMessage `json:"body"`
}

type resultError struct {
	Code    json.RawMessage `json:"code"`
	Message string          `json:"message"`
}

// BatchResult is one parsed line of a results file.
type BatchResult struct {
	CustomID string
	// Status is response.status_code (0 when response is null).
	Status int
	// Completion is the chat completion of a 200 response; nil otherwise.
	Completion *llm.Response
	// Err is the failure of a line without a 200 response: the line's error
	// (code: message) or the response body's error message.
	Err string
	// Missing says the provider reports the request as never processed (an
	// Anthropic result of type canceled or expired): not answered, not
	// failed; a rerun sends it again.
	Missing bool
}

// ParseBatchResult reads one line of a Batch API output or error file:
// {"id", "custom_id", "response": {"status_code", "request_id", "body"} or
// null, "error": {"code", "message"} or null}. A line with a repeated key,
// without custom_id, with neither response nor error, or whose 200 response
// body is not a chat completion is malformed (the error says what is wrong).
func ParseBatchResult(line []byte) (BatchResult, error) {
	var sc jsonpos.Scanner
	if err := sc.Check(line); err != nil {
		var se *jsonpos.SyntaxError
		if errors.As(err, &se) && se.NotSyntax() {
			return BatchResult{}, errors.New(se.Describe())
		}
		return BatchResult{}, errors.New("not a JSON object")
	}
	if err := llm.CheckFoldedKeys(line); err != nil {
		return BatchResult{}, err
	}
	var rl resultLine
	if err := json.Unmarshal(line, &rl); err != nil {
		return BatchResult{}, fmt.Errorf("not a batch output line: %v", jsonErrText(err))
	}
	if rl.CustomID == nil || *rl.CustomID == "" {
		return BatchResult{}, errors.New("no custom_id")
	}
	r := BatchResult{CustomID: *rl.CustomID}
	hasResp := len(rl.Response) > 0 && string(rl.Response) != "null"
	hasErr := len(rl.Error) > 0 && string(rl.Error) != "null"
	if !hasResp && !hasErr {
		return BatchResult{}, errors.New("neither a response nor an error")
	}
	if hasErr {
		var e resultError
		if err := json.Unmarshal(rl.Error, &e); err != nil {
			return BatchResult{}, fmt.Errorf("error is not {\"code\", \"message\"}: %v", jsonErrText(err))
		}
		// "code: message", or whichever of the two the line has; a line
		// with neither ({"error": {}}) is still an error, and says so.
		r.Err = cmp.Or(errText(rawText(e.Code), e.Message), "error with no code or message")
	}
	if hasResp {
		var resp resultResponse
		if err := json.Unmarshal(rl.Response, &resp); err != nil {
			return BatchResult{}, fmt.Errorf("response is not {\"status_code\", \"request_id\", \"body\"}: %v", jsonErrText(err))
		}
		if resp.StatusCode == nil {
			return BatchResult{}, errors.New("response has no status_code")
		}
		r.Status = *resp.StatusCode
		if r.Status == 200 && !hasErr {
			c, err := llm.ParseResponse(resp.Body)
			if err != nil {
				return BatchResult{}, fmt.Errorf("response.body: %w", err)
			}
			r.Completion = c
		} else if r.Err == "" {
			r.Err = "HTTP " + strconv.Itoa(r.Status)
			var we struct {
				Error *resultError `json:"error"`
			}
			if json.Unmarshal(resp.Body, &we) == nil && we.Error != nil {
				r.Err += ": " + we.Error.Message
			}
		}
	}
	return r, nil
}

func jsonErrText(err error) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return fmt.Sprintf("%s is a JSON %s", te.Field, te.Value)
	}
	return err.Error()
}

func rawText(r json.RawMessage) string {
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

// readResults reads a results file (output or error file, or a --batch-in
// file) into the job's outcomes. Every line is checked before any is used: a
// malformed line, an unknown or repeated custom_id is an *input.Error at its
// line, and the job is left as it was.
func (b *batchJob) readResults(ctx context.Context, r io.Reader, name string) error {
	index := make(map[[32]byte]int, b.nSent)
	for i, p := range b.pairs {
		if b.owner[i] != i {
			continue
		}
		for rep := range b.opt.Repeat {
			var k [32]byte
			if _, err := hex.Decode(k[:], []byte(b.key(p, rep))); err != nil {
				return err
			}
			index[k] = i*b.opt.Repeat + rep
		}
	}
	got := map[int]outcome{}
	br := bufio.NewReaderSize(input.Reader(ctx, r), 1<<20)
	for n := 1; ; n++ {
		if n&1023 == 0 {
			if err := ctx.Err(); err != nil {
				return err // a regular file is read as it is: only this check stops it
			}
		}
		line, err := readLine(br, name, n, MaxResultLine, "a batch output line")
		if n == 1 {
			line = input.TrimBOM(line) // as every reader drops it
		}
		if len(bytes.TrimSpace(line)) > 0 {
			res, perr := parseResult(b.provider, bytes.TrimSpace(line))
			if perr != nil {
				return input.Errorf(name, n, "%v", perr)
			}
			var k [32]byte
			task, ok := -1, false
			if len(res.CustomID) == 64 {
				if _, herr := hex.Decode(k[:], []byte(res.CustomID)); herr == nil {
					task, ok = index[k]
				}
			}
			if !ok {
				return input.Errorf(name, n, "unknown custom_id %s: no pair of this pool, model and prompt has it", quoteSnippet(res.CustomID))
			}
			if _, dup := got[task]; dup || b.outcomes[task].hasAnswer {
				return input.Errorf(name, n, "custom_id %s answered twice", quoteSnippet(res.CustomID))
			}
			got[task] = b.outcome(res)
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			var ie *input.Error
			if errors.As(err, &ie) {
				return err
			}
			return fmt.Errorf("failed to read %s: %w", name, err)
		}
	}
	for t, o := range got {
		b.outcomes[t] = o
	}
	return nil
}

func (b *batchJob) outcome(r BatchResult) outcome {
	o := outcome{hasAnswer: true}
	// The provider's words, for the report: redacted before they are cut
	// (shorten), so that no piece of a secret is left at the cut.
	if r.Err != "" {
		r.Err = b.redact(r.Err)
	}
	if r.Missing {
		o.missing = true
		o.j = Judgment{Cause: CauseBatchMissing, Detail: shorten("the batch reports it " + r.Err + " (a rerun submits it again)")}
		return o
	}
	if r.Completion == nil {
		o.j = Judgment{Cause: CauseBatchFailed, Detail: shorten(r.Err)}
		return o
	}
	o.answered = true
	o.pt, o.ct = r.Completion.Usage.PromptTokens, r.Completion.Usage.CompletionTokens
	if !r.Completion.HasUsage {
		o.pt, o.ct = -1, -1
	}
	g, reason, err := parseAnswer(r.Completion.Content, b.redact)
	var ae *AnswerError
	switch {
	case err == nil:
		o.j = Judgment{Grade: g, Valid: true, Reason: reason}
	case errors.As(err, &ae):
		o.j = Judgment{Cause: ae.Cause, Detail: ae.Detail}
	default:
		o.j = Judgment{Cause: CauseUnparseable, Detail: b.redact(err.Error())}
	}
	return o
}

// readLine is bufio.Reader.ReadBytes('\n') with the line capped at limit
// bytes: a longer line is an *input.Error at line n of file.
func readLine(br *bufio.Reader, file string, n, limit int, what string) ([]byte, error) {
	var long []byte
	for {
		b, err := br.ReadSlice('\n')
		if !errors.Is(err, bufio.ErrBufferFull) && long == nil {
			return append([]byte(nil), b...), err
		}
		long = append(long, b...)
		if len(long) > limit+1 {
			return nil, input.Errorf(file, n, "line longer than %d bytes: not %s", limit, what)
		}
		if !errors.Is(err, bufio.ErrBufferFull) {
			return long, err
		}
	}
}

// result puts the valid outcomes in the cache and builds the Result: cached
// judgments, the batch's answers, and the unjudged (over budget, failed,
// missing, unparseable) with their causes.
func (b *batchJob) result(st *BatchStats) (*Result, error) {
	res := &Result{Pairs: b.pairs, Grades: make([][]Judgment, len(b.pairs)), Repeat: b.opt.Repeat, Model: b.opt.Model, Prompt: b.opt.Prompt, Format: b.opt.Format}
	st.Submitted = b.nSent
	for i, p := range b.pairs {
		res.Grades[i] = make([]Judgment, b.opt.Repeat)
		if b.owner[i] != i {
			continue // shareOwners below
		}
		for rep := range b.opt.Repeat {
			key := b.key(p, rep)
			if b.cached[i][rep] {
				e, _ := b.opt.Cache.Get(key)
				res.Grades[i][rep] = Judgment{Grade: e.Grade, Valid: true, Reason: b.redact(e.Reason), Cached: true}
				res.Cached++
				st.Cached++
				continue
			}
			if !b.sent[i][rep] {
				res.Grades[i][rep] = Judgment{Cause: CauseBudget, Detail: "the request budget (--max-requests) was spent"}
				continue
			}
			o, ok := b.outcomes[i*b.opt.Repeat+rep]
			if ok && o.missing {
				st.Missing++
				res.Grades[i][rep] = o.j
				continue
			}
			if !ok {
				st.Missing++
				res.Grades[i][rep] = Judgment{Cause: CauseBatchMissing, Detail: "no output or error line for this request (the batch ended before it; a rerun submits it again)"}
				continue
			}
			if o.answered {
				st.Answered++
				if o.pt < 0 {
					res.ResponsesWithoutUsage++
				} else {
					res.PromptTokens += o.pt
					res.CompletionTokens += o.ct
				}
			} else {
				st.Failed++
			}
			res.Grades[i][rep] = o.j
			if o.j.Valid {
				st.New++
				e := Entry{Key: key, Grade: o.j.Grade, Reason: o.j.Reason, Model: b.opt.Model, PromptHash: b.opt.Prompt.Hash,
					Repeat: rep, AnswerFormat: b.opt.Format, PromptTokens: max(o.pt, 0), CompletionTokens: max(o.ct, 0)}
				if err := b.opt.Cache.Put(e); err != nil {
					return nil, err
				}
			}
		}
	}
	cached := res.Cached
	res.shareOwners(b.owner)
	st.Cached += res.Cached - cached
	st.Reused = res.Reused
	res.Requests = b.nSent
	if st.WaitSeconds > 0 && st.New > 0 {
		v := float64(st.New) / st.WaitSeconds
		st.PairsPerSecond = &v
	}
	res.Batch = st
	return res, nil
}

// reused is the number of judgments of pairs that are not their prompt's
// owner (answered by the owner's request line, or cached with it).
func (b *batchJob) reused() int64 {
	var n int64
	for i, o := range b.owner {
		if o != i {
			n += int64(b.opt.Repeat)
		}
	}
	return n
}

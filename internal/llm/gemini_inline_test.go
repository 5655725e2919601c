package llm_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/internal/httpretry"
	"github.com/retrieval-gate/retrieval-gate/internal/llm"
	"github.com/retrieval-gate/retrieval-gate/internal/racetest"
)

// inlineOp is an operation whose response holds the given inline responses.
func inlineOp(items ...string) string {
	return `{"name":"batches/1","done":true,"metadata":{"state":"BATCH_STATE_SUCCEEDED"},"response":{"@type":"x","inlinedResponses":{"inlinedResponses":[` +
		strings.Join(items, ",") + `]}}}`
}

// toJSONL is GeminiInlinedToJSONL's output, a fresh buffer for each call of
// its writer; calls counts them.
func toJSONL(op string) (out string, calls int, err error) {
	var buf bytes.Buffer
	err = llm.GeminiInlinedToJSONL(strings.NewReader(op), func() (io.Writer, error) {
		calls++
		buf.Reset()
		return &buf, nil
	})
	return buf.String(), calls, err
}

// TestGeminiInlinedMatchesReference: the streaming reader writes the lines
// the whole reader wrote, or fails with its error, on operations of each
// shape: the precedence of response over metadata.output whichever comes
// first, nulls, repeated keys, values of the wrong type on the path, bad inline
// responses, syntax errors, nesting at encoding/json's bound.
func TestGeminiInlinedMatchesReference(t *testing.T) {
	item := `{"metadata":{"key":"k1"},"response":{"candidates":[{"content":{"parts":[{"text":"{\"score\": 2}"}]}}]}}`
	errItem := `{"metadata":{"key":"k2"},"error":{"code":13,"message":"internal"}}`
	mOut := func(items string) string {
		return `"metadata":{"state":"BATCH_STATE_SUCCEEDED","output":{"inlinedResponses":{"inlinedResponses":[` + items + `]}}}`
	}
	resp := func(items string) string {
		return `"response":{"inlinedResponses":{"inlinedResponses":[` + items + `]}}`
	}
	deep := func(n int) string { return strings.Repeat("[", n) + strings.Repeat("]", n) }
	tests := []struct {
		name, op string
		want     string // the lines, or the error
		fails    bool
	}{
		{name: "response", op: inlineOp(item, errItem),
			want: `{"key":"k1","response":{"candidates":[{"content":{"parts":[{"text":"{\"score\": 2}"}]}}]}}` + "\n" + `{"error":{"code":13,"message":"internal"},"key":"k2"}` + "\n"},
		{name: "metadata.output", op: `{` + mOut(errItem) + `}`, want: `{"error":{"code":13,"message":"internal"},"key":"k2"}` + "\n"},
		{name: "response after metadata.output wins", op: `{` + mOut(errItem) + `,` + resp(item) + `}`,
			want: `{"key":"k1","response":{"candidates":[{"content":{"parts":[{"text":"{\"score\": 2}"}]}}]}}` + "\n"},
		{name: "response before metadata.output wins", op: `{` + resp(errItem) + `,` + mOut(item) + `}`, want: `{"error":{"code":13,"message":"internal"},"key":"k2"}` + "\n"},
		{name: "an empty response after metadata.output", op: `{` + mOut(item) + `,"response":{"inlinedResponses":{}}}`, want: ""},
		{name: "a response without inline responses", op: `{` + mOut(errItem) + `,"response":{"responsesFile":"files/1"}}`, want: `{"error":{"code":13,"message":"internal"},"key":"k2"}` + "\n"},
		{name: "a null response", op: `{"response":null,` + mOut(errItem) + `}`, want: `{"error":{"code":13,"message":"internal"},"key":"k2"}` + "\n"},
		{name: "metadata.output's bad responses unread", op: `{` + resp("") + `,` + mOut(`5,{"metadata":{"key":7}}`) + `}`, want: ""},
		{name: "a null inline response", op: inlineOp(`null`), want: `{"key":""}` + "\n"},
		{name: "keys folded as encoding/json folds them", op: `{"RESPONSE":{"InlinedResponses":{"inlinedresponses":[{"Metadata":{"KEY":"k"},"Response":1,"ERROR":2}]}}}`, want: `{"error":2,"key":"k","response":1}` + "\n"},
		{name: "escaped as encoding/json escapes", op: inlineOp(`{"metadata":{"key":"<a&b>"},"response":{"t":"\u2028 <b>","n":1.50, "s" : [ 1 , 2 ] }}`),
			want: `{"key":"\u003ca\u0026b\u003e","response":{"t":"\u2028 \u003cb\u003e","n":1.50,"s":[1,2]}}` + "\n"},
		{name: "white space", op: " \n\t{ \"response\" : { \"inlinedResponses\" : { \"inlinedResponses\" : [ {\"metadata\":{\"key\":\"a\"}} , {\"metadata\":{\"key\":\"b\"}} ] } } } \r\n", want: `{"key":"a"}` + "\n" + `{"key":"b"}` + "\n"},
		{name: "other fields skipped", op: `{"name":"b","done":true,"x":[{"a":[1,{"b":null}]},"s",-1e400,true],` + resp(item) + `,"z":{}}`, want: `{"key":"k1","response":{"candidates":[{"content":{"parts":[{"text":"{\"score\": 2}"}]}}]}}` + "\n"},
		{name: "no inlinedResponses", op: `{"response":{"responsesFile":"files/1"}}`, fails: true},
		{name: "null", op: `null`, fails: true},
		{name: "an array", op: `[]`, fails: true},
		{name: "response a number", op: `{"response":5}`, fails: true},
		{name: "inlinedResponses a string", op: `{"response":{"inlinedResponses":"x"}}`, fails: true},
		{name: "the responses an object", op: `{"response":{"inlinedResponses":{"inlinedResponses":{}}}}`, fails: true},
		{name: "metadata an array", op: `{"metadata":[],` + resp(item) + `}`, fails: true},
		{name: "metadata.output true", op: `{"metadata":{"output":true}}`, fails: true},
		{name: "a type error before a bad response", op: `{` + resp(`{"metadata":{"key":5}}`) + `,"metadata":{"output":[]}}`, fails: true},
		{name: "a key not a string", op: inlineOp(item, `{"metadata":{"key":5}}`), fails: true},
		{name: "a response not an object", op: inlineOp(`[]`), fails: true},
		{name: "a response's key twice", op: inlineOp(`{"metadata":{"key":"a","key":"b"}}`), fails: true},
		{name: "a response's key folded", op: inlineOp(`{"metadata":{"key":"a"},"Metadata":{}}`), fails: true},
		{name: "the operation's key folded", op: `{"Name":"a","name":"b",` + resp(item) + `}`, fails: true},
		{name: "folded in metadata.output's unread responses", op: `{` + resp(item) + `,` + mOut(`{"a":1,"A":2}`) + `}`, fails: true},
		{name: "a bad response before a folded key", op: `{` + resp(`{"metadata":{"key":5}}`) + `,"x":{"a":1,"A":2}}`, fails: true},
		{name: "response twice, the second null", op: `{` + resp(`5`) + `,"response":null}`, fails: true},
		{name: "response twice, merged", op: `{` + resp(`5`) + `,"response":{"x":1}}`, fails: true},
		{name: "metadata.output's lines lost to a response set and unset", op: `{` + mOut(item) + `,"response":{"inlinedResponses":{}},"Response":null}`, fails: true},
		{name: "truncated", op: inlineOp(item)[:60], fails: true},
		{name: "truncated in a literal", op: inlineOp(`{"metadata":{"key":"a"},"response":tr`), fails: true},
		{name: "truncated in a number", op: `{"x":1.`, fails: true},
		{name: "truncated after a number", op: `{"x":1`, fails: true},
		{name: "empty", op: ``, fails: true},
		{name: "trailing text", op: inlineOp(item) + ` {}`, fails: true},
		{name: "no comma between responses", op: inlineOp(item + ` ` + item), fails: true},
		{name: "no key", op: `{5:1}`, fails: true},
		{name: "a comma before a brace", op: `{"a":1,}`, fails: true},
		{name: "a bad response then a syntax error", op: inlineOp(`{"metadata":{"key":5}}`) + `x`, fails: true},
		{name: "a control character", op: inlineOp(`{"metadata":{"key":"a` + "\x01" + `"}}`), fails: true},
		{name: "a response nested to the bound", op: inlineOp(`{"metadata":{"key":"a"},"response":` + deep(maxDepthInResponse) + `}`),
			want: `{"key":"a","response":` + deep(maxDepthInResponse) + `}` + "\n"},
		{name: "a response nested past the bound", op: inlineOp(`{"metadata":{"key":"a"},"response":` + deep(maxDepthInResponse+1) + `}`), fails: true},
		{name: "a response truncated past the bound", op: `{"response":{"inlinedResponses":{"inlinedResponses":[{"response":` + strings.Repeat("[", maxDepthInResponse+1), fails: true},
		{name: "a field nested to the bound", op: `{"x":` + deep(9999) + `,` + resp(item) + `}`, want: `{"key":"k1","response":{"candidates":[{"content":{"parts":[{"text":"{\"score\": 2}"}]}}]}}` + "\n"},
		{name: "a field nested past the bound", op: `{"x":` + deep(10000) + `}`, fails: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var ref bytes.Buffer
			refErr := geminiInlinedReference(strings.NewReader(tt.op), &ref)
			out, _, err := toJSONL(tt.op)
			if tt.fails {
				require.Error(t, refErr, "the case fails")
				require.Error(t, err)
				assert.Equal(t, refErr.Error(), err.Error())
				return
			}
			require.NoError(t, refErr)
			require.NoError(t, err)
			assert.Equal(t, tt.want, ref.String(), "the reference")
			assert.Equal(t, tt.want, out)
		})
	}
}

// maxDepthInResponse is the deepest a response's "response" may nest in
// inlineOp: encoding/json's bound (10000) less the 5 containers around it.
const maxDepthInResponse = 10000 - 5

// TestGeminiInlinedErrors: the words of the errors, the same as the whole
// reader's (TestGeminiInlinedMatchesReference).
func TestGeminiInlinedErrors(t *testing.T) {
	tests := []struct{ name, op, want string }{
		{"no inlinedResponses", `{"response":{"responsesFile":"files/1"}}`, "the batch operation has no inlinedResponses"},
		{"truncated", inlineOp(`{"metadata":{"key":"a"}}`)[:70], "malformed batch operation: unexpected end of JSON input"},
		{"trailing", inlineOp() + "]", "malformed batch operation: invalid character ']' after top-level value"},
		{"no comma", inlineOp(`1 2`), "malformed batch operation: invalid character '2' after array element"},
		{"no key", `{5:1}`, "malformed batch operation: invalid character '5' looking for beginning of object key string"},
		{"in a literal", `{"x":nul`, "malformed batch operation: invalid character ' ' in literal null (expecting 'l')"},
		{"wrong type", `{"response":{"inlinedResponses":{"inlinedResponses":{}}}}`, "malformed batch operation: json: cannot unmarshal object into Go struct field .response.inlinedResponses.inlinedResponses of type []json.RawMessage"},
		{"a response's key", inlineOp(`{"metadata":{"key":"a"}}`, `{"metadata":{"key":5}}`), "inline response 2: json: cannot unmarshal number into Go struct field .metadata.key of type string"},
		{"a response's folded keys", inlineOp(`{"metadata":{"key":"a","KEY":"b"}}`), `inline response 1: key "KEY" repeats key "key" (keys that differ only in case are one field)`},
		{"the operation's repeated key", `{"name":"a","name":"b","response":{"inlinedResponses":{}}}`, `malformed batch operation: duplicate key "name"`},
		{"deep", `{"x":` + strings.Repeat("[", 10000), "malformed batch operation: invalid character '[' exceeded max depth"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := toJSONL(tt.op)
			require.EqualError(t, err, tt.want)
		})
	}
}

// TestGeminiInlinedStartsAnew: metadata.output's lines, written as they are
// read, are dropped for a fresh writer when a response's inline responses
// follow them; a response's own are written once.
func TestGeminiInlinedStartsAnew(t *testing.T) {
	m := `"metadata":{"output":{"inlinedResponses":{"inlinedResponses":[{"metadata":{"key":"m"}}]}}}`
	r := `"response":{"inlinedResponses":{"inlinedResponses":[{"metadata":{"key":"r"}}]}}`
	tests := []struct {
		name, op, want string
		calls          int
	}{
		{"response only", `{` + r + `}`, `{"key":"r"}` + "\n", 1},
		{"metadata.output only", `{` + m + `}`, `{"key":"m"}` + "\n", 1},
		{"response first", `{` + r + `,` + m + `}`, `{"key":"r"}` + "\n", 1},
		{"metadata.output first", `{` + m + `,` + r + `}`, `{"key":"r"}` + "\n", 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, calls, err := toJSONL(tt.op)
			require.NoError(t, err)
			assert.Equal(t, tt.want, out)
			assert.Equal(t, tt.calls, calls, "calls of the writer")
		})
	}
}

// TestGeminiDownloadInline: Download converts the operation as it arrives; a
// reading that fails is the download's error (not the text's), an operation
// longer than the limit a *httpretry.TooLargeError, a malformed one names its
// URL.
func TestGeminiDownloadInline(t *testing.T) {
	op := inlineOp(`{"metadata":{"key":"a"},"response":{"x":1}}`, `{"metadata":{"key":"b"},"error":{"code":13}}`)
	tests := []struct {
		name  string
		serve func(w http.ResponseWriter)
		limit int64
		want  string
		err   string
	}{
		{name: "converted", serve: func(w http.ResponseWriter) { _, _ = io.WriteString(w, op) }, limit: 1 << 20,
			want: `{"key":"a","response":{"x":1}}` + "\n" + `{"error":{"code":13},"key":"b"}` + "\n"},
		{name: "malformed", serve: func(w http.ResponseWriter) { _, _ = io.WriteString(w, op+"x") }, limit: 1 << 20,
			err: "/v1beta/batches/1: malformed batch operation: invalid character 'x' after top-level value"},
		{name: "cut short", serve: func(w http.ResponseWriter) {
			w.Header().Set("Content-Length", strconv.Itoa(len(op)))
			_, _ = io.WriteString(w, op[:len(op)/2])
		}, limit: 1 << 20, err: "/v1beta/batches/1: reading the results: unexpected EOF"},
		{name: "longer than the limit", serve: func(w http.ResponseWriter) { _, _ = io.WriteString(w, op) }, limit: int64(len(op) - 10), err: "the answer is longer than"},
		{name: "longer than the limit, malformed first", serve: func(w http.ResponseWriter) { _, _ = io.WriteString(w, "]"+op) }, limit: int64(len(op) - 10), err: "the answer is longer than"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				assert.Equal(t, "/v1beta/batches/1", r.URL.Path)
				w.Header().Set("Content-Type", "application/json")
				tt.serve(w)
			}))
			defer srv.Close()
			c, err := llm.NewGeminiBatchClient(srv.URL, "m", "", nil)
			require.NoError(t, err)
			c.Transfer.Attempts = 1
			var buf bytes.Buffer
			err = c.Download(context.Background(), nil, llm.ResultSource{What: "inline", Ref: "batches/1"}, tt.limit,
				func() (io.Writer, error) { buf.Reset(); return &buf, nil })
			if tt.err != "" {
				require.ErrorContains(t, err, tt.err)
				if strings.Contains(tt.err, "longer") {
					var tl *httpretry.TooLargeError
					require.ErrorAs(t, err, &tl)
				}
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, buf.String())
		})
	}
}

// TestGeminiGetInline: Get finds a finished batch's inline responses (or its
// responses file) without keeping them: null is none.
func TestGeminiGetInline(t *testing.T) {
	tests := []struct {
		name, out string
		want      []llm.ResultSource
	}{
		{"inline", `"response":{"inlinedResponses":{"inlinedResponses":[{"metadata":{"key":"a"}}]}}`, []llm.ResultSource{{What: "inline", Ref: "batches/1"}}},
		{"inline, empty", `"response":{"inlinedResponses":{}}`, []llm.ResultSource{{What: "inline", Ref: "batches/1"}}},
		{"null", `"response":{"inlinedResponses":null}`, nil},
		{"a file", `"response":{"responsesFile":"files/r"}`, []llm.ResultSource{{What: "responses", Ref: "files/r"}}},
		{"metadata.output", `"metadata":{"state":"BATCH_STATE_SUCCEEDED","output":{"inlinedResponses":{"inlinedResponses":[]}}}`, []llm.ResultSource{{What: "inline", Ref: "batches/1"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body := `{"name":"batches/1","done":true,"metadata":{"state":"BATCH_STATE_SUCCEEDED"},` + tt.out + `}`
			if strings.HasPrefix(tt.out, `"metadata"`) {
				body = `{"name":"batches/1","done":true,` + tt.out + `}`
			}
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, body) }))
			defer srv.Close()
			c, err := llm.NewGeminiBatchClient(srv.URL, "m", "", nil)
			require.NoError(t, err)
			j, err := c.Get(context.Background(), "batches/1")
			require.NoError(t, err)
			assert.True(t, j.Terminal)
			assert.Equal(t, tt.want, j.Results)
		})
	}
}

// memItem is the i-th inline response of a large operation: a judge's answer
// with its usage, about 500 bytes.
func memItem(i int) string {
	return `{"metadata":{"key":"q` + strconv.Itoa(i) + `"},"response":{"candidates":[{"content":{"parts":[{"text":"{\"relevant\": true, \"score\": 3, \"reason\": \"The passage states the answer directly: the <b>retention</b> period is 30 days & the policy applies to every workspace; it names the owner and the exception for archived projects.\"}"}],"role":"model"},"finishReason":"STOP","index":0}],"usageMetadata":{"promptTokenCount":812,"candidatesTokenCount":95,"totalTokenCount":907},"modelVersion":"gemini-2.5-flash"}}`
}

// opReader makes an operation of n inline responses as it is read (the
// operation is never whole in memory), and samples the heap while it does.
type opReader struct {
	n, next int
	pending []byte
	read    int64
	peak    *heapPeak
}

func (o *opReader) Read(p []byte) (int, error) {
	for len(o.pending) == 0 {
		switch {
		case o.next == 0:
			o.pending = []byte(`{"name":"batches/1","done":true,"metadata":{"state":"BATCH_STATE_SUCCEEDED"},"response":{"@type":"x","inlinedResponses":{"inlinedResponses":[` + memItem(0))
		case o.next < o.n:
			o.pending = []byte("," + memItem(o.next))
		case o.next == o.n:
			o.pending = []byte(`]}}}`)
		default:
			return 0, io.EOF
		}
		o.next++
	}
	n := copy(p, o.pending)
	o.pending = o.pending[n:]
	o.read += int64(n)
	o.peak.sample(int64(n))
	return n, nil
}

// heapPeak is the largest heap (runtime.MemStats.HeapAlloc, live and not yet
// collected) seen, sampled every 256 KiB of bytes read or written.
type heapPeak struct {
	since, max uint64
}

func (h *heapPeak) sample(n int64) {
	if h.since += uint64(n); h.since < 256<<10 {
		return
	}
	h.since = 0
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	h.max = max(h.max, ms.HeapAlloc)
}

// sampledWriter counts the lines written and keeps the first and the end of
// the last, sampling the heap.
type sampledWriter struct {
	lines       int
	first, tail []byte
	peak        *heapPeak
}

func (w *sampledWriter) Write(p []byte) (int, error) {
	w.lines += bytes.Count(p, []byte{'\n'})
	if len(w.first) == 0 || !bytes.Contains(w.first, []byte{'\n'}) {
		w.first = append(w.first, p[:min(len(p), 4096)]...)
	}
	w.tail = append(w.tail, p...)
	w.tail = w.tail[max(0, len(w.tail)-4096):]
	w.peak.sample(int64(len(p)))
	return len(p), nil
}

// TestGeminiInlinedMemory: converting a 40 MB operation of 80,000 inline
// responses holds about one of them, not the operation: the heap stays under
// a quarter of the operation's size all along. The whole reader held the
// operation three times over (its bytes, its responses, its lines), more than
// 120 MB.
func TestGeminiInlinedMemory(t *testing.T) {
	racetest.Skip(t, "hundreds of megabytes through one goroutine, the heap measured")
	if testing.Short() {
		t.Skip("40 MB of JSON")
	}
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	const n = 80_000
	peak := &heapPeak{}
	src := &opReader{n: n, peak: peak}
	dst := &sampledWriter{peak: peak}
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	base := ms.HeapAlloc
	err := llm.GeminiInlinedToJSONL(src, func() (io.Writer, error) { return dst, nil })
	require.NoError(t, err)
	require.Greater(t, src.read, int64(39_000_000), "the operation's size")
	assert.Equal(t, n, dst.lines)
	grew := int64(peak.max) - int64(base)
	t.Logf("operation %d bytes, heap grew at most %d bytes", src.read, grew)
	assert.Less(t, grew, src.read/4, "the heap grew with the operation")

	// The lines are the responses file's: the first and the last as the
	// whole reader writes them.
	var want bytes.Buffer
	require.NoError(t, geminiInlinedReference(strings.NewReader(inlineOp(memItem(0), memItem(n-1))), &want))
	lines := strings.SplitAfter(want.String(), "\n")
	assert.True(t, strings.HasPrefix(string(dst.first), lines[0]), "the first line")
	assert.True(t, strings.HasSuffix(string(dst.tail), lines[1]), "the last line")
}

// TestGeminiGetMemory: Get of a finished inline batch's 40 MB operation of
// 80,000 inline responses (the stand-in serves it as it makes it) finds its
// inline responses without holding them: the heap stays under a quarter of
// the operation's size all along. Read whole, the operation grew the heap by
// more than its size (its bytes, as read into a growing buffer).
func TestGeminiGetMemory(t *testing.T) {
	racetest.Skip(t, "hundreds of megabytes through one goroutine, the heap measured")
	if testing.Short() {
		t.Skip("40 MB of JSON")
	}
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	const n = 80_000
	peak := &heapPeak{}
	src := &opReader{n: n, peak: peak}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		assert.Equal(t, "/v1beta/batches/1", r.URL.Path)
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.Copy(w, src)
	}))
	defer srv.Close()
	c, err := llm.NewGeminiBatchClient(srv.URL, "m", "", nil)
	require.NoError(t, err)
	c.Policy.Attempts = 1
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	base := ms.HeapAlloc
	j, err := c.Get(context.Background(), "batches/1")
	peak.since = 256 << 10
	peak.sample(0) // once more at the end, the operation read
	require.NoError(t, err)
	require.Greater(t, src.read, int64(39_000_000), "the operation's size")
	assert.True(t, j.Terminal)
	assert.Equal(t, "BATCH_STATE_SUCCEEDED", j.Status)
	assert.Equal(t, []llm.ResultSource{{What: "inline", Ref: "batches/1"}}, j.Results)
	grew := int64(peak.max) - int64(base)
	t.Logf("operation %d bytes, heap grew at most %d bytes", src.read, grew)
	assert.Less(t, grew, src.read/4, "the heap grew with the operation")
}

// TestGeminiGetOverTheOldCap: an operation longer than Get's old cap on what
// it read whole (twice the inline requests' bound) is read: Get holds none
// of its responses, and it must not refuse what Download reads.
func TestGeminiGetOverTheOldCap(t *testing.T) {
	racetest.Skip(t, "hundreds of megabytes through one goroutine, the heap measured")
	if testing.Short() {
		t.Skip("45 MB of JSON")
	}
	src := &opReader{n: 90_000, peak: &heapPeak{}}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = io.Copy(w, src) }))
	defer srv.Close()
	c, err := llm.NewGeminiBatchClient(srv.URL, "m", "", nil)
	require.NoError(t, err)
	c.Policy.Attempts = 1
	j, err := c.Get(context.Background(), "batches/1")
	require.NoError(t, err)
	require.Greater(t, src.read, int64(2*llm.GeminiInlineLimit), "the operation's size")
	assert.Equal(t, []llm.ResultSource{{What: "inline", Ref: "batches/1"}}, j.Results)
}

// keysObject is a JSON object of n keys "k0", "k1", ..., each 0.
func keysObject(n int) string {
	var b strings.Builder
	b.WriteString("{")
	for i := range n {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString(`"k` + strconv.Itoa(i) + `":0`)
	}
	return b.String() + "}"
}

// TestGeminiInlinedKeysCap: an object around the inline responses holds at
// most 65,536 keys (what reading the operation keeps are the keys of the
// objects open); an inline response is bounded by its bytes alone.
func TestGeminiInlinedKeysCap(t *testing.T) {
	_, _, err := toJSONL(`{"x":` + keysObject(65_536) + `,"response":{"inlinedResponses":{}}}`)
	require.NoError(t, err)
	_, _, err = toJSONL(`{"x":` + keysObject(65_537) + `,"response":{"inlinedResponses":{}}}`)
	require.EqualError(t, err, "malformed batch operation: an object of more than 65,536 keys around the inline responses (the cap on what reading it may hold)")
	out, _, err := toJSONL(inlineOp(`{"metadata":{"key":"a"},"response":` + keysObject(100_000) + `}`))
	require.NoError(t, err)
	assert.Equal(t, 1, strings.Count(out, "\n"))
}

// TestGeminiKeysCapBothReadings: the cap on the keys of an object around the
// inline responses holds in both readings of an operation (one key step,
// objectKey), each error in its own words: Get's reading says what is wrong
// and Get that the answer is malformed; Download's reading says that the
// operation is. One key under the cap is read.
func TestGeminiKeysCapBothReadings(t *testing.T) {
	const capMsg = "an object of more than 65,536 keys around the inline responses (the cap on what reading it may hold)"
	for _, tc := range []struct {
		name string
		keys int
		get  string // Get's error after its URL, "" none
		down string // Download's error after its URL, "" none
	}{
		{"at the cap", 65_536, "", ""},
		{"past the cap", 65_537, ": malformed answer: " + capMsg, ": malformed batch operation: " + capMsg},
	} {
		t.Run(tc.name, func(t *testing.T) {
			body := `{"name":"batches/1","done":true,"metadata":{"state":"BATCH_STATE_SUCCEEDED","x":` + keysObject(tc.keys) + `},"response":{"inlinedResponses":{"inlinedResponses":[]}}}`
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, body) }))
			defer srv.Close()
			c, err := llm.NewGeminiBatchClient(srv.URL, "m", "", nil)
			require.NoError(t, err)
			j, err := c.Get(context.Background(), "batches/1")
			if tc.get == "" {
				require.NoError(t, err)
				assert.Equal(t, []llm.ResultSource{{What: "inline", Ref: "batches/1"}}, j.Results)
			} else {
				require.EqualError(t, err, srv.URL+"/v1beta/batches/1"+tc.get)
			}
			var out bytes.Buffer
			err = c.Download(context.Background(), &llm.BatchJob{ID: "batches/1"}, llm.ResultSource{What: "inline", Ref: "batches/1"}, 64<<20,
				func() (io.Writer, error) { out.Reset(); return &out, nil })
			if tc.down == "" {
				require.NoError(t, err)
				assert.Empty(t, out.String())
			} else {
				require.EqualError(t, err, srv.URL+"/v1beta/batches/1"+tc.down)
			}
		})
	}
}

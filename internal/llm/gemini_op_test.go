package llm

import (
	"errors"
	"io"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
	"testing/iotest"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/internal/httpretry"
	"github.com/retrieval-gate/retrieval-gate/internal/racetest"
)

// wholeOperation is Get's reading of an operation as it was before it read
// it as a stream: the whole text decoded (UnmarshalAnswer). readGeminiOperation
// is held to it.
func wholeOperation(data string) (*geminiOperation, error) {
	var op geminiOperation
	if err := httpretry.UnmarshalAnswer([]byte(data), &op); err != nil {
		return nil, err
	}
	return &op, nil
}

func streamedOperation(data string) (*geminiOperation, error) {
	var op geminiOperation
	// One byte a read: every token split across reads.
	if err := readGeminiOperation(iotest.OneByteReader(strings.NewReader(data)), &op, GeminiValueCap); err != nil {
		return nil, err
	}
	return &op, nil
}

// sameOperation fails t unless the streaming reading of data gives what the
// whole one gave: the same operation, or the same error. One difference: a
// repeated key after a syntax error, which the whole reading found first (it
// looked for repeated keys before it decoded), is the syntax error now (the
// stream ends there); both are malformed. And a repeated key of invalid
// UTF-8 is quoted as decoded.
func sameOperation(t *testing.T, data string) {
	t.Helper()
	want, wantErr := wholeOperation(data)
	got, err := streamedOperation(data)
	if wantErr != nil {
		require.Error(t, err, "the whole reading failed: %v", wantErr)
		if isRepeatedKey(wantErr) && !isRepeatedKey(err) {
			return // a repeated key after a syntax error
		}
		if !utf8.ValidString(data) {
			return // a repeated key of invalid UTF-8 is quoted decoded (U+FFFD), as Download quotes it
		}
		assert.Equal(t, wantErr.Error(), err.Error())
		return
	}
	require.NoError(t, err)
	assert.Equal(t, want, got)
}

// isRepeatedKey reports whether err is CheckFoldedKeys's.
func isRepeatedKey(err error) bool {
	return strings.HasPrefix(err.Error(), "duplicate key ") || strings.Contains(err.Error(), " (keys that differ only in case are one field)")
}

// TestReadGeminiOperationMatchesWhole: reading the operation as a stream
// gives the operation (or the error) that decoding it whole gave, on
// operations of each shape: pending, finished with a file, with inline
// responses (null, empty, of any type), the fields' names in any case,
// values of the wrong type, repeated keys anywhere (in an inline response
// too), syntax errors (in an inline response too), nesting at encoding/json's
// bound.
func TestReadGeminiOperationMatchesWhole(t *testing.T) {
	item := `{"metadata":{"key":"k1"},"response":{"candidates":[{"content":{"parts":[{"text":"{\"score\": 2}"}]}}]}}`
	inline := func(items string) string {
		return `{"name":"batches/1","done":true,"metadata":{"state":"BATCH_STATE_SUCCEEDED","batchStats":{"requestCount":"2","successfulRequestCount":2}},"response":{"@type":"x","inlinedResponses":{"inlinedResponses":[` + items + `]}}}`
	}
	deep := func(n int) string { return strings.Repeat("[", n) + strings.Repeat("]", n) }
	for _, op := range []string{
		`{"name":"batches/1","metadata":{"name":"batches/1","state":"BATCH_STATE_PENDING","model":"models/m","inputConfig":{"requests":{"requests":[{"request":{},"metadata":{"key":"a"}}]}}}}`,
		`{"name":"batches/1","done":true,"metadata":{"state":"BATCH_STATE_SUCCEEDED"},"response":{"responsesFile":"files/r"}}`,
		`{"name":"batches/1","done":true,"metadata":{"state":"BATCH_STATE_FAILED"},"error":{"code":3,"message":"bad \u003cinput\u003e","details":[{"@type":"x"}]}}`,
		inline(item + `,` + item),
		inline(``),
		`{"name":"b","done":true,"response":{"inlinedResponses":null}}`,
		`{"name":"b","done":true,"response":{"inlinedResponses":{}}}`,
		`{"name":"b","done":true,"response":{"inlinedResponses":5}}`,
		`{"name":"b","done":true,"response":{"inlinedResponses":[1,{"a":2}]}}`,
		`{"name":"b","done":true,"response":{"inlinedResponses":{"inlinedResponses":{"a":[1]}}}}`,
		`{"name":"b","done":true,"metadata":{"state":"JOB_STATE_SUCCEEDED","output":{"inlinedResponses":{"inlinedResponses":[` + item + `]}}}}`,
		`{"NAME":"b","Done":true,"METADATA":{"State":"BATCH_STATE_SUCCEEDED","OUTPUT":{"ResponsesFile":"files/x"}}}`,
		`{"name":"b","done":true,"response":{"inlinedResponses":{"INLINEDRESPONSES":[` + item + `]}}}`,
		`{"name":"b","done":"yes"}`,
		`{"name":5}`,
		`{"name":{"a":[1,2]}}`,
		`{"name":"b","metadata":[1,2]}`,
		`{"name":"b","metadata":"x"}`,
		`{"name":"b","metadata":{"batchStats":{"requestCount":"x"}}}`,
		`{"name":"b","metadata":{"batchStats":{"requestCount":true}}}`,
		`{"name":"b","response":7}`,
		`{"name":"b","response":[]}`,
		`{"name":"b","error":"x"}`,
		`{"name":"b","error":{"code":"5"}}`,
		`[]`,
		`5`,
		`"x"`,
		`null`,
		`{}`,
		``,
		` `,
		`{"name":"a","Name":"b"}`,
		`{"name":"a","x":{"y":1,"Y":2}}`,
		inline(`{"metadata":{"key":"a","KEY":"b"}}`),
		inline(`{"metadata":{"key":"a","KEY":"b"}}`) + `x`,
		`{"a":1,"A":2,"x":]`,
		`{"x":], "a":1,"A":2}`,
		`{"name":{"k":1,"K":2}}`,
		inline(item) + ` {}`,
		inline(item + ` ` + item),
		inline(`{"metadata":`),
		inline(item)[:40],
		`{"name":"b","response":{"inlinedResponses":{"inlinedResponses":[tru]}}}`,
		`{"name":"b","x":1.}`,
		`{"name":"b","x":1`,
		`{"name":"b",}`,
		`{5:1}`,
		`{"name":"a` + "\x01" + `"}`,
		`{"name":"` + "\xff" + `"}`,
		`{"x":` + deep(9999) + `}`,
		`{"x":` + deep(10000) + `}`,
		`{"name":` + deep(9999) + `}`,
		`{"name":` + deep(10000) + `}`,
		inline(deep(9996)),
		inline(deep(9997)),
		`{"response":{"inlinedResponses":{"inlinedResponses":[` + strings.Repeat("[", 10000),
	} {
		t.Run(op[:min(len(op), 60)], func(t *testing.T) { sameOperation(t, op) })
	}
}

// FuzzReadGeminiOperation holds readGeminiOperation to the whole reading
// (sameOperation).
func FuzzReadGeminiOperation(f *testing.F) {
	for _, s := range []string{
		`{"name":"batches/1","done":true,"metadata":{"state":"BATCH_STATE_SUCCEEDED","batchStats":{"requestCount":"2"}},"response":{"inlinedResponses":{"inlinedResponses":[{"metadata":{"key":"a"}}]}}}`,
		`{"name":"b","metadata":{"output":{"responsesFile":"files/1"}},"error":{"code":1,"message":"m"}}`,
		`{"NAME":"b","response":{"INLINEDRESPONSES":null}}`,
		`{"name":"a","Name":"b"}`,
		`{"name":[1,{"a":2}],"x":"y"}`,
		`[]`,
		``,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data string) { sameOperation(t, data) })
}

// TestReadGeminiOperationReadError: an error of reading the operation is the
// reading's, before any of its text.
func TestReadGeminiOperationReadError(t *testing.T) {
	boom := errors.New("boom")
	for _, op := range []string{`{"name":"b","done":true`, `{"name":]`, `{"a":1,"A":2`} {
		var got geminiOperation
		err := readGeminiOperation(iotest.DataErrReader(iotest.TimeoutReader(strings.NewReader(op))), &got, GeminiValueCap)
		var re *readError
		if assert.ErrorAs(t, err, &re, op) {
			assert.Equal(t, iotest.ErrTimeout, re.err)
		}
		err = readGeminiOperation(&failAfter{data: op, err: boom}, &got, GeminiValueCap)
		if assert.ErrorAs(t, err, &re, op) {
			assert.Equal(t, boom, re.err)
		}
	}
}

// failAfter reads data, then fails with err.
type failAfter struct {
	data string
	err  error
}

func (f *failAfter) Read(p []byte) (int, error) {
	if f.data == "" {
		return 0, f.err
	}
	n := copy(p, f.data)
	f.data = f.data[n:]
	return n, nil
}

// zeros is an endless reader of '0's.
type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = '0'
	}
	return len(p), nil
}

// countingReader counts the bytes read through it and samples the heap
// every MiB: the largest HeapAlloc seen is peak.
type countingReader struct {
	r          io.Reader
	n, since   int64
	peak, base uint64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	if c.since += int64(n); c.since >= 1<<20 {
		c.since = 0
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		c.peak = max(c.peak, ms.HeapAlloc)
	}
	return n, err
}

// TestReadGeminiOperationValueCap: a value of the operation (an inline
// response, or a field Get keeps) is read up to GeminiValueCap bytes: a
// 256 MiB one (inside a 1 GiB operation, under GeminiOperationCap) is
// refused once little more than the cap was read, the heap bounded by a few
// times the cap; one under the cap is read.
func TestReadGeminiOperationValueCap(t *testing.T) {
	racetest.Skip(t, "hundreds of megabytes through one goroutine, the heap measured")
	const huge = 256 << 20
	inline := `{"name":"b","done":true,"response":{"inlinedResponses":{"inlinedResponses":[{"metadata":{"key":"a"}},{"metadata":{"key":"b"},"response":{"text":"`
	for _, tc := range []struct {
		name, head, tail string
		size             int64
		ok               bool
	}{
		{"an inline response over the cap", inline, `"}}]}}}`, huge, false},
		{"a field over the cap", `{"done":true,"name":"`, `"}`, huge, false},
		{"a field left out over the cap", `{"done":true,"x":"`, `"}`, huge, false},
		{"an inline response under the cap", inline, `"}}]}}}`, GeminiValueCap - 1024, true},
		{"a field under the cap", `{"done":true,"name":"`, `"}`, GeminiValueCap - 1024, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			defer debug.SetGCPercent(debug.SetGCPercent(100))
			runtime.GC()
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			src := &countingReader{r: io.MultiReader(strings.NewReader(tc.head), io.LimitReader(zeros{}, tc.size), strings.NewReader(tc.tail)), base: ms.HeapAlloc}
			var op geminiOperation
			err := readGeminiOperation(src, &op, GeminiValueCap)
			grew := int64(src.peak) - int64(src.base)
			t.Logf("read %d bytes, heap grew at most %d bytes", src.n, grew)
			if tc.ok {
				require.NoError(t, err)
				assert.True(t, op.Done)
				return
			}
			var tl *valueTooLongError
			require.ErrorAs(t, err, &tl)
			assert.Equal(t, "a value of the batch operation (an inline response, or a field of the batch) is longer than 16 MiB: refused, the cap on what reading it may hold", err.Error())
			assert.Less(t, src.n, int64(GeminiValueCap+64<<10), "read on past the cap")
			assert.Less(t, grew, int64(3*GeminiValueCap), "the heap grew with the value")
		})
	}
}

// Download's reader holds one inline response, and no more than
// GeminiValueCap bytes of it, as Get's does: a response (or any value of the
// operation) over the cap is refused after about the cap is read, the heap
// not growing with it; one under the cap is written.
func TestGeminiInlinedValueCap(t *testing.T) {
	racetest.Skip(t, "hundreds of megabytes through one goroutine, the heap measured")
	const huge = 256 << 20
	// The decoder's 25 MB buffers, freed and returned, so that the memory
	// tests after this one measure from a heap of the usual size.
	defer debug.FreeOSMemory()
	inline := `{"name":"b","done":true,"response":{"inlinedResponses":{"inlinedResponses":[{"metadata":{"key":"a"},"response":{"text":"x"}},{"metadata":{"key":"b"},"response":{"text":"`
	for _, tc := range []struct {
		name, head, tail string
		size             int64
		ok               bool
	}{
		{"an inline response over the cap", inline, `"}}]}}}`, huge, false},
		{"a field left out over the cap", `{"done":true,"x":"`, `","response":{"inlinedResponses":{"inlinedResponses":[]}}}`, huge, false},
		{"an inline response under the cap", inline, `"}}]}}}`, GeminiValueCap - 1024, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			defer debug.SetGCPercent(debug.SetGCPercent(100))
			runtime.GC()
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			src := &countingReader{r: io.MultiReader(strings.NewReader(tc.head), io.LimitReader(zeros{}, tc.size), strings.NewReader(tc.tail)), base: ms.HeapAlloc}
			var out discardCounter
			err := geminiInlined(src, func() (io.Writer, error) { return &out, nil })
			grew := int64(src.peak) - int64(src.base)
			t.Logf("read %d bytes, heap grew at most %d bytes, wrote %d", src.n, grew, out.n)
			if tc.ok {
				require.NoError(t, err)
				assert.Greater(t, out.n, int64(GeminiValueCap-1024))
				return
			}
			var tl *valueTooLongError
			require.ErrorAs(t, err, &tl)
			assert.Less(t, src.n, int64(GeminiValueCap+64<<10), "read on past the cap")
			assert.Less(t, grew, int64(3*GeminiValueCap), "the heap grew with the value")
		})
	}
}

// discardCounter counts what is written to it and keeps none of it.
type discardCounter struct{ n int64 }

func (w *discardCounter) Write(p []byte) (int, error) {
	w.n += int64(len(p))
	return len(p), nil
}

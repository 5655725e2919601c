package llm_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/internal/input/jsonpos"
	"github.com/retrieval-gate/retrieval-gate/internal/llm"
)

func TestCheckFoldedKeys(t *testing.T) {
	for _, tt := range []struct {
		in, err string
	}{
		{`{"custom_id":"a","CUSTOM_ID":"b"}`, `key "CUSTOM_ID" repeats key "custom_id"`},
		{`{"custom_id":"a","cuſtom_id":"b"}`, `key "cuſtom_id" repeats key "custom_id"`},            // ſ folds to s
		{`{"a":{"x":1,"b":[{"k":1},{"q":2,"K":3,"Q":4}]}}`, `key "Q" repeats key "q"`},              // nested, in an array
		{`{"a":[1,{"y":2}],"b":{"c":{}},"A":0}`, `key "A" repeats key "a"`},                         // after nested values
		{`{"choices":[],"usage":null,"Choices":[1]}`, `key "Choices" repeats key "choices"`},        // after a null
		{`[{"k":1,"K":2}]`, `key "K" repeats key "k"`},                                              // an array at the top
		{`{"k":1,"K":2}` + strings.Repeat(" ", 3), `key "K" repeats key "k"`},                       // trailing space
		{`{"` + strings.Repeat("x", 90) + `":1,"` + strings.Repeat("X", 90) + `":2}`, `…" repeats`}, // cut at 80 runes
		{`{"\u0063ustom_id":1,"CUSTOM_ID":2}`, `key "CUSTOM_ID" repeats key "custom_id"`},           // an escaped key, decoded
		{`{"a\"b":1,"x":[],"A\"B":2}`, `key "A\"B" repeats key "a\"b"`},                             // an escaped quote
		{`{"\u0061":1,"a":2}`, `duplicate key "a"`},                                                 // the same key, once escaped
		{manyKeys(20, `"K3":0`), `key "K3" repeats key "k3"`},                                       // past the pairwise bound: the map
		{manyKeys(20, `"k19":0`), `duplicate key "k19"`},
		{manyKeys(40, `"x":{"k1":1,"K1":2}`), `key "K1" repeats key "k1"`}, // nested in a large object
		{manyKeys(40, `"x":{"k1":1}`), ""},
		{`{"custom_id":"a","result":{"custom_id":"x"},"Custom":1}`, ""}, // one key per object
		{`{"k":1,"k":2}`, `duplicate key "k"`},                          // as the line readers word it
		{`{"k":{"K":1},"q":[{"K":1},{"K":2}]}`, ""},
		{`{"a":{"B":1},"b":2,"c":[{"D":1}],"d":3}`, ""}, // an inner object's keys are not its outer one's
		{`{"a":1,`, ""}, // not JSON: the decoder words it
		{``, ""},
		{`"K"`, ""},
	} {
		err := llm.CheckFoldedKeys([]byte(tt.in))
		if tt.err == "" {
			require.NoError(t, err, tt.in)
			continue
		}
		require.Error(t, err, tt.in)
		assert.Contains(t, err.Error(), tt.err, tt.in)
		if !strings.HasPrefix(tt.err, "duplicate") {
			assert.Contains(t, err.Error(), "(keys that differ only in case are one field)", tt.in)
		}
	}
}

// manyKeys is an object of the keys k0 … k(n-1), then last.
func manyKeys(n int, last string) string {
	var b strings.Builder
	b.WriteString("{")
	for i := range n {
		fmt.Fprintf(&b, `"k%d":%d,`, i, i)
	}
	return b.String() + last + "}"
}

// FuzzCheckFoldedKeys: CheckFoldedKeys refuses JSON text exactly when one of
// its objects has two keys equal under strings.EqualFold (the same key twice
// included), as found
// by a reference that reads the text with jsonpos's parser (not encoding/json's
// tokenizer) and compares every pair of an object's keys.
func FuzzCheckFoldedKeys(f *testing.F) {
	for _, s := range []string{`{"a":1,"A":2}`, `{"a":{"b":1,"B":2}}`, `[{"k":[{"s":1,"ſ":2}]}]`, `{"a":1,"b":2}`, `{"K":1,"K":2}`,
		`{"a":[{"x":1},{"X":1}],"A":[]}`, `{"é":1,"É":2}`, `{"k":"K","q":{"k":1}}`, `not json`, manyKeys(20, `"K7":[{"a":1,"A":2}]`), `{"\u0041":1,"a":2}`, `{"a":{"B":1},"b":2}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		got := llm.CheckFoldedKeys(b)
		var p jsonpos.Parser
		v, err := p.Parse(b, 1, 0)
		if err != nil || !json.Valid(b) {
			return // not JSON (or beyond the reference): nothing to compare
		}
		want := foldedPair(v)
		if (got != nil) != want {
			t.Fatalf("%q: CheckFoldedKeys %v, the reference finds a folded pair: %v", b, got, want)
		}
	})
}

// foldedPair reports whether an object of v has two keys equal under
// strings.EqualFold.
func foldedPair(v *jsonpos.Value) bool {
	for i, a := range v.Members {
		for _, b := range v.Members[:i] {
			if strings.EqualFold(a.Key, b.Key) {
				return true
			}
		}
	}
	for _, m := range v.Members {
		if foldedPair(m.Value) {
			return true
		}
	}
	for _, e := range v.Elems {
		if foldedPair(e) {
			return true
		}
	}
	return false
}

// An online chat completion with two keys that differ only in case is refused
// as a batch result line is (encoding/json would have read the second): the
// same answer gives the same judgment whichever way it came.
func TestCompleteRefusesFoldedKeys(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"model":"m","choices":[{"index":0,"finish_reason":"stop","message":{"role":"assistant","content":"{\"score\":3}","CONTENT":"{\"score\":0}"}}]}`))
	}))
	defer srv.Close()
	c, err := llm.New(llm.Config{URL: srv.URL, Model: "m"})
	require.NoError(t, err)
	_, err = c.Complete(context.Background(), llm.Request{Messages: []llm.Message{{Role: "user", Content: judgePrompt}}})
	require.Error(t, err)
	assert.Contains(t, err.Error(), `key "CONTENT" repeats key "content"`)
}

// The batch APIs' answers are read by the same rule: OpenAI's file and batch
// objects, Anthropic's and Gemini's batch objects, and Gemini's inlined
// responses, whose key was read as the last spelling ("KEY") before.
func TestBatchAnswersRefuseFoldedKeys(t *testing.T) {
	ctx := context.Background()
	answer := func(body string) *httptest.Server {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(body))
		}))
		t.Cleanup(srv.Close)
		return srv
	}

	oa := answer(`{"id":"batch_1","object":"batch","status":"completed","STATUS":"in_progress"}`)
	c, err := llm.NewBatchClient(llm.Config{URL: oa.URL})
	require.NoError(t, err)
	_, err = c.GetBatch(ctx, "batch_1")
	require.ErrorContains(t, err, `malformed answer: key "STATUS" repeats key "status"`)

	an := answer(`{"id":"msgbatch_1","type":"message_batch","processing_status":"ended","Processing_Status":"in_progress"}`)
	ac, err := llm.NewAnthropicBatchClient(an.URL, "", nil)
	require.NoError(t, err)
	_, err = ac.Get(ctx, "msgbatch_1")
	require.ErrorContains(t, err, `malformed answer: key "Processing_Status" repeats key "processing_status"`)

	ge := answer(`{"name":"batches/1","metadata":{"state":"BATCH_STATE_SUCCEEDED","State":"BATCH_STATE_RUNNING"}}`)
	gc, err := llm.NewGeminiBatchClient(ge.URL, "m", "", nil)
	require.NoError(t, err)
	_, err = gc.Get(ctx, "batches/1")
	require.ErrorContains(t, err, `malformed answer: key "State" repeats key "state"`)

	var out strings.Builder
	err = llm.GeminiInlinedToJSONL(strings.NewReader(`{"response":{"inlinedResponses":{"inlinedResponses":[`+
		`{"metadata":{"key":"a","KEY":"b"},"response":{}}]}}}`), func() (io.Writer, error) { out.Reset(); return &out, nil })
	require.ErrorContains(t, err, `inline response 1: key "KEY" repeats key "key"`)
	assert.Empty(t, out.String())
}

// BenchmarkCheckFoldedKeys: one result line of an OpenAI batch (about 700
// bytes), as judge --batch-in checks each.
func BenchmarkCheckFoldedKeys(b *testing.B) {
	line := []byte(`{"id":"batch_req_123","custom_id":"0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef","response":{"status_code":200,"request_id":"req_abc","body":{"id":"chatcmpl-1","object":"chat.completion","created":1761955200,"model":"gpt-4o-mini","choices":[{"index":0,"message":{"role":"assistant","content":"{\"reason\": \"The document answers the question directly: it describes how to reset the password step by step.\", \"score\": 3}"},"logprobs":null,"finish_reason":"stop"}],"usage":{"prompt_tokens":812,"completion_tokens":31,"total_tokens":843}}},"error":null}`)
	b.SetBytes(int64(len(line)))
	for b.Loop() {
		if err := llm.CheckFoldedKeys(line); err != nil {
			b.Fatal(err)
		}
	}
}

package llm_test

import (
	"bufio"
	"bytes"
	"io"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/internal/input/jsonpos/jsontest"
	"github.com/retrieval-gate/retrieval-gate/internal/llm"
)

// FuzzGeminiInlinedToJSONL holds the reading of a Gemini batch operation's
// inline responses, which reads the operation as a stream, to the reader it
// replaced, which read it whole (geminiInlinedReference): the same lines, the
// same error; and to a reader written apart from both (jsontest.Strict and
// the documented path: response.inlinedResponses.inlinedResponses, else
// metadata.output.inlinedResponses.inlinedResponses): an operation with two
// keys that differ only in case anywhere is refused (docs/judge.md: the batch
// APIs' own answers are read by the rule of the result lines); an accepted one
// gives one line per inline response, in order, with its metadata.key and
// the same response and error values.
func FuzzGeminiInlinedToJSONL(f *testing.F) {
	for _, s := range []string{
		`{"name":"batches/1","response":{"@type":"x","inlinedResponses":{"inlinedResponses":[{"metadata":{"key":"k1"},"response":{"candidates":[]}},{"metadata":{"key":"k2"},"error":{"code":13}}]}}}`,
		`{"metadata":{"output":{"inlinedResponses":{"inlinedResponses":[{"metadata":{"key":"k"},"response":{"a":1.50}}]}}}}`,
		`{"response":{"inlinedResponses":{"inlinedResponses":[{"metadata":{"key":"a"}}]}},"RESPONSE":{"inlinedResponses":{"inlinedResponses":[{"metadata":{"key":"b"}}]}}}`,
		`{"response":{"inlinedResponses":{"inlinedResponses":[{"metadata":{"key":"a","KEY":"b"}}]}}}`,
		`{"response":null}`,
		`{"response":{"inlinedResponses":{"inlinedResponses":[{"metadata":{"key":5}}]}}}`,
		`[]`,
		`{"metadata":{"output":{"inlinedResponses":{"inlinedResponses":[{"metadata":{"key":"m"}}]}}},"response":{"inlinedResponses":{"inlinedResponses":[{"metadata":{"key":"r"},"error":{"code":4}}]}}}`,
		`{"metadata":{"output":{"inlinedResponses":{"inlinedResponses":[{"metadata":{"key":"m"}}]}}},"response":{"inlinedResponses":{}}}`,
		`{"metadata":{"output":{"inlinedResponses":{"inlinedResponses":[{"metadata":{"key":"m"}}]}}},"response":{"responsesFile":"files/1"}}`,
		`{"response":{"inlinedResponses":{"inlinedResponses":[{"metadata":{"key":"r"}}]}},"response":null,"metadata":{"output":{"inlinedResponses":{"inlinedResponses":[5]}}}}`,
		`{"metadata":{"output":{"inlinedResponses":{"inlinedResponses":[{"metadata":{"key":"<&>"},"response":{"t":"  <b>"}}]}}}}`,
		`{"response":{"inlinedResponses":{"inlinedResponses":{}}}}`,
		`{"response":{"inlinedResponses":{"inlinedResponses":[1 2]}}}`,
		`{"response":{"inlinedResponses":{"inlinedResponses":[{"metadata":{"key":"a"}}]}}} x`,
		`{1}`,
		`{"response":{"inlinedResponses":{"inlinedResponses":[{"metadata":{"key":"a"}}`,
		``,
		`null`,
	} {
		f.Add([]byte(s))
	}
	field := func(x any, name string) any {
		obj, _ := x.(map[string]any)
		for k, y := range obj {
			if strings.EqualFold(k, name) {
				return y
			}
		}
		return nil
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var out, ref bytes.Buffer
		err := llm.GeminiInlinedToJSONL(bytes.NewReader(data), func() (io.Writer, error) { out.Reset(); return &out, nil })
		refErr := geminiInlinedReference(bytes.NewReader(data), &ref)
		if refErr != nil {
			require.Error(t, err, "accepted %q, which the whole reader refused: %v", data, refErr)
			if utf8.Valid(data) {
				// A repeated key of invalid UTF-8 is quoted decoded (U+FFFD),
				// where the whole reader quoted its bytes.
				require.Equal(t, refErr.Error(), err.Error(), "%q", data)
			}
		} else {
			require.NoError(t, err, "%q", data)
			require.Equal(t, ref.String(), out.String(), "%q", data)
		}
		v, ok := jsontest.Strict(data)
		if !ok {
			require.Error(t, err, "accepted %q", data)
			return
		}
		if err != nil {
			return // a shape or a type the reader does not check: the client may refuse it
		}
		var items []any
		if r := field(field(v, "response"), "inlinedResponses"); r != nil {
			items, _ = field(r, "inlinedResponses").([]any)
		} else {
			if m, isObj := field(field(field(v, "metadata"), "output"), "inlinedResponses").(map[string]any); isObj {
				items, _ = field(m, "inlinedResponses").([]any)
			}
		}
		sc := bufio.NewScanner(&out)
		n := 0
		for sc.Scan() {
			require.Less(t, n, len(items), "more lines than inline responses: %q", data)
			line, ok := jsontest.Strict(sc.Bytes())
			require.True(t, ok, "line %q", sc.Bytes())
			key, _ := field(field(items[n], "metadata"), "key").(string)
			require.Equal(t, key, field(line, "key"))
			for _, k := range []string{"response", "error"} {
				if want := field(items[n], k); want != nil {
					require.Equal(t, want, field(line, k), "%s of %q", k, data)
				}
			}
			n++
		}
		require.Equal(t, len(items), n, "%q", data)
	})
}

// An operation with "response" and "RESPONSE" holds two sets of inline
// responses: encoding/json read the last. It is malformed, as an inline
// response with folded keys already was (docs/judge.md).
func TestGeminiInlinedRefusesFoldedKeys(t *testing.T) {
	op := `{"response":{"inlinedResponses":{"inlinedResponses":[{"metadata":{"key":"a"}}]}},"RESPONSE":{"inlinedResponses":{"inlinedResponses":[{"metadata":{"key":"b"}}]}}}`
	err := llm.GeminiInlinedToJSONL(strings.NewReader(op), func() (io.Writer, error) { return io.Discard, nil })
	require.ErrorContains(t, err, "malformed batch operation")
}

package importer

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/internal/input/trecfile"
)

// Issue 20 item 12: detection reads the first record's keys, not its first
// line whole, so a first record longer than the 64 KiB Detect sees is detected
// by its keys (it was "not a promptfoo results file").
func TestDetectLongFirstRecord(t *testing.T) {
	long := strings.Repeat("x", 100<<10)
	for _, tc := range []struct{ name, in, want string }{
		{"ragas JSONL", `{"user_input": "q", "retrieved_contexts": ["` + long + `"], "retrieved_context_ids": ["d1"]}` + "\n", "ragas"},
		// Fresh variants: the array form, with the long member first, and
		// an ir_datasets docs line with a long text.
		{"ragas array", `[{"retrieved_contexts": ["` + long + `"], "user_input": "q", "retrieved_context_ids": ["d1"]}]`, ""},
		{"ragas array, short key first", `[{"user_input": "q", "retrieved_contexts": ["` + long + `"], "retrieved_context_ids": ["d1"]}]`, "ragas"},
		{"irds docs", `{"doc_id": "d1", "text": "` + long + `"}` + "\n", "irds-docs"},
		{"promptfoo, one line", `{"evalId": "e", "results": {"results": [{"vars": {"query": "` + long + `"}}]}}`, "promptfoo"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			head := []byte(tc.in)[:min(len(tc.in), peekSize)]
			f, why := Detect(head)
			if tc.want == "" {
				require.Nil(t, f)
				assert.Equal(t, `a JSON array whose first record's keys in the first 64 KiB (retrieved_contexts) include no "user_input" (ragas)`, why)
				return
			}
			require.NotNil(t, f, why)
			assert.Equal(t, tc.want, f.Name)
		})
	}
	// The whole conversion, detected from the head.
	in := `{"user_input": "q", "retrieved_contexts": ["` + long + `"], "retrieved_context_ids": ["d1"]}` + "\n"
	var out bytes.Buffer
	f, st, err := Convert(context.Background(), strings.NewReader(in), "in", &out, nil, Options{})
	require.NoError(t, err)
	assert.Equal(t, "ragas", f.Name)
	assert.Equal(t, 1, st.Records)
}

// The "no known format" message is the same on every run (it listed 8 keys of a
// map in its random order) and says how many keys it left out.
func TestDetectMessageDeterministic(t *testing.T) {
	var b strings.Builder
	b.WriteString("{")
	for i := range 12 {
		fmt.Fprintf(&b, `"k%02d": %d, `, 11-i, i)
	}
	b.WriteString(`"a b": 1}`)
	want := `JSONL whose keys ("a b", k00, k01, k02, k03, k04, k05, k06 and 5 more) match no known format`
	for range 50 {
		f, why := Detect([]byte(b.String()))
		require.Nil(t, f)
		require.Equal(t, want, why)
	}
	// A multi-line document without "results": its keys, not "JSONL".
	_, why := Detect([]byte("{\n  \"evalId\": \"x\",\n  \"config\": {}\n}\n"))
	assert.Equal(t, `a JSON document whose keys (config, evalId) match no known format (a promptfoo results file has "results")`, why)
	_, why = Detect([]byte("{\"a\": 1,\n"))
	assert.Equal(t, `JSON that is not valid or ends early, after the keys (a)`, why)
}

// A relevance is read as compare's JSON qrels read it: an integral number in
// any spelling is that integer, a fraction is not an integer, and an integer
// too large for any reader is out of range (it was "must be an integer").
func TestIRDSRelevanceNumbers(t *testing.T) {
	f, _ := Lookup("irds-qrels")
	for _, tc := range []struct{ rel, want, err string }{
		{"2", "2", ""},
		{"2.0", "2", ""},
		{"2e0", "2", ""},
		{"20E-1", "2", ""},
		{"-0.0", "0", ""},
		{"-1", "-1", ""},
		{"300", "127", ""}, // clamped, as documented
		{"-1e3", "-128", ""},
		{"2.5", "", `in:1: "relevance" must be an integer, got 2.5`},
		{`"2"`, "", `in:1: "relevance" must be an integer, got a string`},
		{"true", "", `in:1: "relevance" must be an integer, got a boolean`},
		{"99999999999999999999", "", `in:1: "relevance" 99999999999999999999 is out of range (an integer within ±9223372036854775807)`},
		{"-99999999999999999999", "", `in:1: "relevance" -99999999999999999999 is out of range`},
		{"1e400", "", `in:1: "relevance" 1e400 is out of range`},
		{"9.3e18", "", `in:1: "relevance" 9.3e18 is out of range`},
	} {
		t.Run(tc.rel, func(t *testing.T) {
			in := `{"query_id": "q1", "doc_id": "d1", "relevance": ` + tc.rel + "}\n"
			var out bytes.Buffer
			_, _, err := Convert(context.Background(), strings.NewReader(in), "in", &out, f, Options{})
			if tc.err != "" {
				require.ErrorContains(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, "q1 0 d1 "+tc.want+"\n", out.String())
			// compare's own JSON qrels agree on every value in its range.
			if tc.want == "127" || tc.want == "-128" {
				return
			}
			q, err := trecfile.ParseQrels(context.Background(), strings.NewReader(in), "in")
			require.NoError(t, err)
			i, _ := q.QueryIndex("q1")
			rel, ok := q.Relevance(i, "d1")
			require.True(t, ok)
			assert.Equal(t, tc.want, fmt.Sprint(rel))
		})
	}
	// The text formats: a huge integer column is out of range, precisely.
	for _, tc := range []struct{ format, in, err string }{
		{"trec-qrels", "q1 0 d1 99999999999999999999\n", `in:1: relevance 99999999999999999999 is out of range`},
		{"msmarco-qrels", "q1\t0\td1\t-99999999999999999999\n", `in:1: relevance -99999999999999999999 is out of range`},
		{"beir-qrels", "query-id\tcorpus-id\tscore\nq1\td1\t99999999999999999999\n", `in:2: score 99999999999999999999 is out of range`},
		{"msmarco-run", "q1\td1\t99999999999\n", `in:1: rank 99999999999 is out of range (a rank from 1 to 2147483647)`},
		{"trec-qrels", "q1 0 d1 2.5\n", `in:1: relevance "2.5" is not an integer`},
	} {
		f, _ := Lookup(tc.format)
		_, _, err := Convert(context.Background(), strings.NewReader(tc.in), "in", &bytes.Buffer{}, f, Options{})
		require.ErrorContains(t, err, tc.err, tc.format)
	}
	// Detection takes a huge integer column for what it is, so the converter
	// gives the precise message.
	_, _, err := Convert(context.Background(), strings.NewReader("q1 0 d1 99999999999999999999\n"), "in", &bytes.Buffer{}, nil, Options{})
	require.ErrorContains(t, err, "is out of range")
}

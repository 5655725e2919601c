package importer

import (
	"bytes"
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// BEIR results JSON: ranked by score (ties by docid descending, as trec_eval
// ranks), the scores as written, the file's query order.
func TestBEIRResults(t *testing.T) {
	in := "\ufeff{\"q1\": {\"b\": 1, \"a\": 1, \"c\": 2.50}, \"q0\": {\"x\": -1e-3}, \"q2\": {}}"
	var out bytes.Buffer
	f, st, err := Convert(context.Background(), strings.NewReader(in), "in", &out, nil, Options{RunTag: "bm25"})
	require.NoError(t, err)
	assert.Equal(t, "beir-results", f.Name)
	assert.Equal(t, Stats{Records: 4}, st)
	assert.Equal(t, "q1 Q0 c 1 2.50 bm25\nq1 Q0 b 2 1 bm25\nq1 Q0 a 3 1 bm25\nq0 Q0 x 1 -1e-3 bm25\n", out.String())
	checkOutput(t, KindRun, out.Bytes())
}

func TestBEIRResultsErrors(t *testing.T) {
	for _, tt := range []struct{ name, in, want string }{
		{"not an object", `["q1"]`, "in:1: want the BEIR results"},
		{"query not an object", "{\n\"q1\": {\"a\": 1},\n\"q2\": 7\n}", `in:3: query "q2": want an object {"docid": score}, got a number`},
		{"score not a number", "{\"q1\": {\n  \"a\": 1,\n  \"b\": \"high\"\n}}", `in:3: query "q1": the score of document "b" must be a number, got a string`},
		{"score out of range", "{\"q1\": {\"a\": 1e999}}", `in:1: query "q1": the score 1e999 of document "a" is out of range`},
		{"repeated query", "{\"q1\": {\"a\": 1},\n\"q1\": {\"b\": 1}}", `in:2: duplicate key "q1"`},
		{"repeated document", "{\"q1\": {\"a\": 1,\n \"a\": 2}}", `in:2: duplicate key "a"`},
		{"space in query id", `{"q 1": {"a": 1}}`, `in:1: query id "q 1" contains whitespace`},
		{"query id like JSON", `{"{q": {"a": 1}}`, `in:1: query id "{q" starts with '{'`},
		{"space in document id", "{\"q1\": {\n\"a b\": 1}}", `in:2: query "q1": document id "a b" is empty or contains whitespace`},
		{"empty document id", `{"q1": {"": 1}}`, `in:1: query "q1": document id "" is empty`},
		{"truncated", "{\"q1\": {\"a\": 1},\n", "in:2: unexpected end of the JSON document"},
		{"data after", "{\"q1\": {\"a\": 1}}\n{\"q2\": {\"a\": 1}}\n", "in:2: data after the BEIR results object"},
		{"no documents", `{"q1": {}}`, "in: no ranked documents in the input (read as beir-results)"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			format, ok := Lookup("beir-results")
			require.True(t, ok)
			var out bytes.Buffer
			_, _, err := Convert(context.Background(), strings.NewReader(tt.in), "in", &out, format, Options{LineAt: LineAt(strings.NewReader(tt.in))})
			require.Error(t, err)
			require.ErrorAs(t, err, new(*Error))
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}

// One query's object is a record: past the cap the converter stops, at that
// query's line, without reading the rest of it into memory.
func TestBEIRResultsRecordCap(t *testing.T) {
	saved := maxBEIRQuery
	maxBEIRQuery = 1 << 20
	t.Cleanup(func() { maxBEIRQuery = saved })
	format, _ := Lookup("beir-results")
	small := "{\"q1\": {\"a\": 1},\n"
	for _, tt := range []struct{ name, in string }{
		{"many documents", small + "\"q2\": {" + strings.Repeat(`"d": 1, `, 200<<10) + "\"e\": 1}}"},
		{"one long id", small + "\"q2\": {\"" + strings.Repeat("d", 2<<20) + "\": 1}}"},
		{"one long query id", small + "\"" + strings.Repeat("q", 2<<20) + "\": {\"a\": 1}}"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			_, _, err := Convert(context.Background(), strings.NewReader(tt.in), "in", &out, format, Options{LineAt: LineAt(strings.NewReader(tt.in))})
			require.Error(t, err)
			assert.Equal(t, "in:2: one query's results are larger than 1 MiB (the limit of one record)", err.Error())
		})
	}
	// Under the cap, each query on its own is fine however long the file.
	var b strings.Builder
	b.WriteString("{")
	for i := range 2000 {
		if i > 0 {
			b.WriteString(",\n")
		}
		b.WriteString(`"q` + strings.Repeat("x", 100) + strconv.Itoa(i) + `": {"d1": 1, "d2": 2}`)
	}
	b.WriteString("}")
	var out bytes.Buffer
	_, st, err := Convert(context.Background(), strings.NewReader(b.String()), "in", &out, format, Options{})
	require.NoError(t, err)
	assert.Equal(t, 4000, st.Records)
}

func FuzzBEIRResults(f *testing.F) {
	fuzzFormat(f, "beir-results", "@beir-results.json", `{"q": {"d": 1e999, "e": -0}}`, "{\"q\": {\"d\": 1, \"d\": 2}}")
}

// Detection: the shape {qid: {docid: number}}, on one line or indented; a
// promptfoo file or a JSON line of another format is not taken for it.
func TestDetectBEIRResults(t *testing.T) {
	for in, want := range map[string]string{
		`{"q1": {"d1": 1.5, "d2": 1}, "q2": {"d3": 0}}`:                       "beir-results",
		"{\n    \"1\": {\n        \"31715818\": 0.72,\n":                      "beir-results", // the head of a large indented file
		`{"query_id": "1", "doc_id": "d", "score": 2}`:                        "irds-scoreddocs",
		"{\n  \"scores\": {\"a\": 1},\n  \"results\": {\"results\": []}\n}\n": "promptfoo",
	} {
		f, why := Detect([]byte(in))
		if assert.NotNil(t, f, "%s: %s", in, why) {
			assert.Equal(t, want, f.Name, in)
		}
	}
	for _, in := range []string{`{"q1": {}}`, `{"q1": {"d": "1"}}`, `{"q1": [1]}`} {
		f, _ := Detect([]byte(in))
		if f != nil {
			assert.NotEqual(t, "beir-results", f.Name, in)
		}
	}
}

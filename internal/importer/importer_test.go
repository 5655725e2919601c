package importer

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/internal/input/casefile"
	"github.com/retrieval-gate/retrieval-gate/internal/input/inputtest"
	"github.com/retrieval-gate/retrieval-gate/internal/input/kbfile"
	"github.com/retrieval-gate/retrieval-gate/internal/input/trecfile"
)

var update = flag.Bool("update", false, "rewrite the expected outputs under testdata/formats")

const formatsDir = "../../testdata/formats"

// checkOutput parses a conversion's output with the reader of the project that
// consumes it, so every output is one check or compare accepts.
func checkOutput(t *testing.T, kind Kind, out []byte) {
	t.Helper()
	ctx := context.Background()
	switch kind {
	case KindQrels:
		_, err := trecfile.ParseQrels(ctx, bytes.NewReader(out), "out")
		require.NoError(t, err, "%s", out)
	case KindRun:
		_, err := trecfile.ParseTRECRun(ctx, bytes.NewReader(out), "out", 100)
		require.NoError(t, err, "%s", out)
	case KindCases:
		require.NoError(t, casefile.StreamCases(ctx, bytes.NewReader(out), "out", func(*casefile.Case) error { return nil }), "%s", out)
	case KindKB:
		p := filepath.Join(t.TempDir(), "kb.jsonl")
		require.NoError(t, os.WriteFile(p, out, 0o644))
		_, err := kbfile.Load(ctx, p)
		require.NoError(t, err, "%s", out)
	default:
		t.Fatalf("unknown kind %q", kind)
	}
}

// Each fixture is a small file in the exact format users bring; it is detected,
// converted (chunk ids "card#chunk-N" mapped to cards with ParentSep "#"), and the
// output is compared with the expected file (-update rewrites it) and read back by
// the project's own parsers.
func TestFixtures(t *testing.T) {
	for _, tt := range []struct {
		file, format string
		kind         Kind
		records      int
		low, high    int
	}{
		{"beir-qrels.tsv", "beir-qrels", KindQrels, 3, 0, 0},
		{"beir-results.json", "beir-results", KindRun, 6, 0, 0},
		{"msmarco-run.tsv", "msmarco-run", KindRun, 5, 0, 0},
		{"msmarco-qrels.tsv", "msmarco-qrels", KindQrels, 2, 0, 0},
		{"trec-qrels-graded.txt", "trec-qrels", KindQrels, 8, 1, 1},
		{"irds-qrels.jsonl", "irds-qrels", KindQrels, 3, 0, 0},
		{"irds-scoreddocs.jsonl", "irds-scoreddocs", KindRun, 3, 0, 0},
		{"irds-docs.jsonl", "irds-docs", KindKB, 2, 0, 0},
		{"ragas.jsonl", "ragas", KindCases, 2, 0, 0},
		{"ragas.json", "ragas", KindCases, 2, 0, 0},
		{"promptfoo-results.json", "promptfoo", KindCases, 2, 0, 0},
		{"retrieved-gold.csv", "csv", KindCases, 3, 0, 0},
	} {
		t.Run(tt.file, func(t *testing.T) {
			path := filepath.Join(formatsDir, tt.file)
			in, err := os.ReadFile(path)
			require.NoError(t, err)
			var out bytes.Buffer
			f, st, err := Convert(context.Background(), bytes.NewReader(in), tt.file, &out, nil, Options{ParentSep: "#"})
			require.NoError(t, err)
			require.Equal(t, tt.format, f.Name, "detected format")
			assert.Equal(t, tt.kind, f.Kind)
			assert.Equal(t, Stats{Records: tt.records, ClampedLow: tt.low, ClampedHigh: tt.high}, st)
			checkOutput(t, f.Kind, out.Bytes())

			// The explicit format gives the same output.
			var again bytes.Buffer
			_, _, err = Convert(context.Background(), bytes.NewReader(in), tt.file, &again, f, Options{ParentSep: "#"})
			require.NoError(t, err)
			assert.Equal(t, out.String(), again.String())

			want := filepath.Join(formatsDir, "converted", tt.file+"."+string(f.Kind))
			if *update {
				require.NoError(t, os.MkdirAll(filepath.Dir(want), 0o755))
				require.NoError(t, os.WriteFile(want, out.Bytes(), 0o644))
			}
			exp, err := os.ReadFile(want)
			require.NoError(t, err, "run go test -update to create it")
			assert.Equal(t, string(exp), out.String())
		})
	}
}

// Bad inputs: file:line and what is wrong.
func TestErrors(t *testing.T) {
	for _, tt := range []struct {
		name, format, in, want string
	}{
		{"beir no header", "beir-qrels", "q1\td1\t1\n", "in:1: BEIR qrels start with the tab-separated header"},
		{"beir score", "beir-qrels", "query-id\tcorpus-id\tscore\nq1\td1\tx\n", `in:2: score "x" is not an integer`},
		{"beir columns", "beir-qrels", "query-id\tcorpus-id\tscore\n\nq1\td1\n", "in:3: want 3 tab-separated columns"},
		{"beir space in id", "beir-qrels", "query-id\tcorpus-id\tscore\nq 1\td1\t1\n", `in:2: query-id "q 1" contains whitespace`},
		{"trec fields", "trec-qrels", "q1 0 d1 1\nq1 0 d2\n", `in:2: want 4 fields "qid iter docid rel", got 3`},
		{"trec rel", "trec-qrels", "q1 0 d1 high\n", `in:1: relevance "high" is not an integer`},
		// The qrels and run readers take a first line starting with '{' for JSON lines.
		{"trec qid like JSON", "trec-qrels", "{ 0 0 0\n", `in:1: qid "{" starts with '{': a TREC file whose first line starts with '{' is read as JSON lines`},
		{"beir qid like JSON", "beir-qrels", "query-id\tcorpus-id\tscore\n{q\td1\t1\n", `in:2: query-id "{q" starts with '{'`},
		{"msmarco qid like JSON", "msmarco-run", "{1\t2\t1\n", `in:1: qid "{1" starts with '{'`},
		{"irds qid like JSON", "irds-scoreddocs", `{"query_id": "{1", "doc_id": "2", "score": 1}`, `in:1: query_id "{1" starts with '{'`},
		{"msmarco rank", "msmarco-run", "1\t2\t0\n", `in:1: rank "0" is not a positive integer`},
		{"msmarco fields", "msmarco-run", "1\t2\t1\t9\n", "in:1: want 3 fields"},
		{"irds json", "irds-qrels", "{\"query_id\": \"1\", \"doc_id\": \"2\", \"relevance\": 1}\n{oops\n", "in:2: invalid JSON"},
		{"irds rel", "irds-qrels", `{"query_id": "1", "doc_id": "2", "relevance": 1.5}`, `in:1: "relevance" must be an integer, got 1.5`},
		{"irds no score", "irds-scoreddocs", `{"query_id": "1", "doc_id": "2"}`, `in:1: scored document has no "score"`},
		{"irds array line", "irds-qrels", `[1, 2]`, "in:1: want a JSON object per line, got an array"},
		{"ragas texts only", "ragas", `{"user_input": "q", "retrieved_contexts": ["text"]}`, `in:1: has "retrieved_contexts" (texts) but no "retrieved_context_ids"`},
		{"ragas no query", "ragas", "{\"user_input\": \"q\", \"retrieved_context_ids\": []}\n{\"retrieved_context_ids\": [\"a\"]}\n", `in:2: no "user_input"`},
		{"ragas ids type", "ragas", `{"user_input": "q", "retrieved_context_ids": [{"id": 1}]}`, `in:1: "retrieved_context_ids"[0] must be a string, got an object`},
		{"ragas dup id", "ragas", "{\"id\": \"a\", \"user_input\": \"q\"}\n{\"id\": \"a\", \"user_input\": \"q\"}\n", `in:2: duplicate case id "a" (first at line 1)`},
		{"ragas array element", "ragas", "[\n  {\"user_input\": \"q\"},\n  {\"user_input\": true, \"x\": 1}\n]\n", `in:3: record 2: "user_input" must be a string`},
		{"ragas array syntax", "ragas", "[\n  {\"user_input\": \"q\"},\n  {\"user_input\" \"q\"}\n]\n", "in:3: invalid JSON"},
		{"ragas array truncated", "ragas", "[\n  {\"user_input\": \"q\"},\n", "in:3: unexpected end of the JSON document"},
		{"promptfoo no results", "promptfoo", `{"evalId": "x", "config": {}}`, `in:1: the promptfoo file has no "results"`},
		{"promptfoo no query", "promptfoo", "{\"results\": {\"version\": 3, \"results\": [\n{\"testIdx\": 0, \"vars\": {\"q\": \"x\"}}]}}", "in:2: results[0]: vars has none of query, question, user_input"},
		{"promptfoo no ids", "promptfoo", "{\"results\": {\"results\": [\n{\"testIdx\": 0, \"vars\": {\"query\": \"x\"}, \"response\": {\"output\": \"plain text\"}}]}}", "in:2: results[0]: no retrieved ids"},
		{"promptfoo providers", "promptfoo", "{\"results\": {\"results\": [\n" +
			`{"testIdx": 0, "vars": {"query": "x"}, "provider": {"id": "a"}, "response": {"output": ["d"]}},` + "\n" +
			`{"testIdx": 0, "vars": {"query": "x"}, "provider": {"id": "b"}, "response": {"output": ["d"]}}]}}`,
			`in:3: results[1]: the file holds results of several providers ("a", "b"): pick one with --provider`},
		// One rule for duplicate keys in every JSON input (encoding/json let the last one win).
		{"irds dup key", "irds-qrels", "{\"query_id\": \"1\", \"doc_id\": \"2\", \"relevance\": 1}\n{\"query_id\": \"1\", \"doc_id\": \"2\", \"doc_id\": \"3\", \"relevance\": 1}\n", `in:2: duplicate key "doc_id" at column 34`},
		{"irds docs dup key", "irds-docs", `{"doc_id": "a", "text": "x", "text": "y"}`, `in:1: duplicate key "text" at column 30`},
		{"ragas dup key", "ragas", `{"user_input": "q", "user_input": "r"}`, `in:1: duplicate key "user_input" at column 21`},
		{"ragas array dup key", "ragas", "[\n  {\"user_input\": \"q\"},\n  {\"user_input\": \"q\",\n   \"retrieved_context_ids\": [], \"retrieved_context_ids\": [\"a\"]}\n]\n", `in:4: duplicate key "retrieved_context_ids"`},
		{"promptfoo dup in a result", "promptfoo", "{\"results\": {\"results\": [\n{\"testIdx\": 0, \"vars\": {\"query\": \"x\", \"query\": \"y\"}, \"response\": {\"output\": [\"d\"]}}]}}", `in:2: duplicate key "query"`},
		{"promptfoo dup results", "promptfoo", "{\"results\": {\"results\": [\n{\"testIdx\": 0, \"vars\": {\"query\": \"x\"}, \"response\": {\"output\": [\"d\"]}}]},\n\"results\": {}}", `in:3: duplicate key "results"`},
		{"promptfoo dup in summary", "promptfoo", "{\"results\": {\"version\": 3,\n\"version\": 4, \"results\": []}}", `in:2: duplicate key "version"`},
		{"promptfoo dup before results", "promptfoo", "{\"config\": {\"a\": 1,\n\"a\": 2}, \"results\": []}", `in:2: duplicate key "a"`},
		// A second document after the first was dropped silently (2 cases, not 4, exit 0).
		{"ragas array then another", "ragas", "[{\"user_input\": \"q\"}]\n[{\"user_input\": \"r\"}]\n", "in:2: data after the dataset's JSON array"},
		{"promptfoo then another", "promptfoo", "{\"results\": []}\n{\"results\": []}\n", "in:2: data after the promptfoo file's object"},
		{"csv no query", "csv", "id,retrieved\n1,a\n", "in:1: the header has no query column"},
		{"csv width", "csv", "query,retrieved\nq,a\nq,a,b\n", "in:3: wrong number of fields"},
		{"csv list", "csv", "query,retrieved\nq,[a\n", `in:2: column "retrieved": not a JSON array of strings`},
		{"csv empty", "csv", "", "in: empty CSV"},
		// A column given twice was read from its first copy, the other ignored (exit 0).
		{"csv query twice", "csv", "query,retrieved,query\nq,a,r\n", `in:1: columns 1 ("query") and 3 ("query") both give the query: keep one`},
		{"csv query and question", "csv", "question,retrieved,Query\nq,a,r\n", `in:1: columns 1 ("question") and 3 ("Query") both give the query: keep one`},
		{"csv id twice", "csv", "id,query,retrieved,case_id\n1,q,a,2\n", `in:1: columns 1 ("id") and 4 ("case_id") both give the id: keep one`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f, ok := Lookup(tt.format)
			require.True(t, ok)
			opt := Options{LineAt: LineAt(strings.NewReader(tt.in))}
			var out bytes.Buffer
			_, _, err := Convert(context.Background(), strings.NewReader(tt.in), "in", &out, f, opt)
			require.Error(t, err)
			var ie *Error
			require.ErrorAs(t, err, &ie)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}

// promptfoo: --provider picks one provider's results out of several.
func TestPromptfooProvider(t *testing.T) {
	in := `{"results": {"results": [
{"testIdx": 0, "vars": {"query": "x"}, "provider": {"id": "openai:a", "label": "dense"}, "response": {"output": [{"id": "d1"}]}},
{"testIdx": 0, "vars": {"query": "x"}, "provider": {"id": "openai:b", "label": "hybrid"}, "response": {"output": ["d2"]}}]}}`
	f, _ := Lookup("promptfoo")
	for prov, want := range map[string]string{"hybrid": `"d2"`, "openai:a": `"d1"`} {
		var out bytes.Buffer
		_, st, err := Convert(context.Background(), strings.NewReader(in), "in", &out, f, Options{Provider: prov})
		require.NoError(t, err)
		assert.Equal(t, 1, st.Records)
		assert.Equal(t, `{"id":"test-0","query":"x","retrieved":[`+want+"]}\n", out.String())
	}
}

func TestDetectFailures(t *testing.T) {
	for in, want := range map[string]string{
		"":                     "the input is empty",
		"\n\n":                 "the input is empty",
		"q1 Q0 d1 1 2.5 run\n": "already a TREC run",
		`{"id": "a", "query": "q", "retrieved": []}`: "already a cases JSONL file",
		`{"foo": 1}`:    "JSONL whose keys (foo) match no known format",
		"[1, 2]":        "a JSON array whose first element is not an object",
		"hello world\n": "matches no known format",
	} {
		f, why := Detect([]byte(in))
		assert.Nil(t, f, in)
		assert.Contains(t, why, want, in)
	}
	_, _, err := Convert(context.Background(), strings.NewReader("hello\n"), "in", &bytes.Buffer{}, nil, Options{})
	assert.ErrorContains(t, err, "in: cannot detect the format: the first line \"hello\" matches no known format; pass --format (one of beir-qrels, beir-results, csv,")
}

// ParentRegexp derives the cards with the first capture group (and wins over
// ParentSep); an id it does not match keeps no parent_id.
func TestParentRegexpOption(t *testing.T) {
	in := "id,query,retrieved\nq1,a query,card-12-chunk-3|loose\n"
	var out bytes.Buffer
	opt := Options{ParentSep: "-", ParentRegexp: regexp.MustCompile(`^(.+)-chunk-\d+$`)}
	_, st, err := Convert(context.Background(), strings.NewReader(in), "in.csv", &out, nil, opt)
	require.NoError(t, err)
	assert.Equal(t, 1, st.Records)
	assert.JSONEq(t, `{"id":"q1","query":"a query","retrieved":[{"id":"card-12-chunk-3","parent_id":"card-12"},"loose"]}`, out.String())
}

// failingWriter accepts n bytes, then fails every write.
type failingWriter struct {
	n   int
	err error
}

func (w *failingWriter) Write(p []byte) (int, error) {
	if len(p) > w.n {
		k := w.n
		w.n = 0
		return k, w.err
	}
	w.n -= len(p)
	return len(p), nil
}

// A write error (a full disk) is returned as it is, and the conversion stops
// there instead of reading the rest of the input, for each kind of writer.
func TestWriteErrorStops(t *testing.T) {
	errFull := errors.New("disk full")
	for _, tt := range []struct {
		format string
		line   func(i int) string
	}{
		{"beir-qrels", func(i int) string { return fmt.Sprintf("q%d\td%d\t1\n", i, i) }},
		{"msmarco-run", func(i int) string { return fmt.Sprintf("q%d\td%d\t1\n", i, i) }},
		{"irds-scoreddocs", func(i int) string { return fmt.Sprintf(`{"query_id":"q%d","doc_id":"d%d","score":1.5}`+"\n", i, i) }},
		{"csv", func(i int) string { return fmt.Sprintf("q%d,query %d,d%d\n", i, i, i) }},
	} {
		t.Run(tt.format, func(t *testing.T) {
			var in strings.Builder
			switch tt.format {
			case "beir-qrels":
				in.WriteString("query-id\tcorpus-id\tscore\n")
			case "csv":
				in.WriteString("id,query,retrieved\n")
			}
			for i := 0; in.Len() < 4<<20; i++ {
				in.WriteString(tt.line(i))
			}
			f, ok := Lookup(tt.format)
			require.True(t, ok)
			r := &inputtest.CountingReader{R: strings.NewReader(in.String())}
			_, _, err := Convert(context.Background(), r, "in", &failingWriter{n: 1000, err: errFull}, f, Options{})
			require.ErrorIs(t, err, errFull)
			assert.Less(t, r.N, int64(in.Len()/4), "the conversion went on reading after the write failed")
		})
	}
}

func TestSplitList(t *testing.T) {
	for _, tt := range []struct {
		in, sep string
		want    []string
	}{
		{"", "", nil},
		{"a", "", []string{"a"}},
		{" a | b |", "", []string{"a", "b"}},
		{`["a|b", "c"]`, "", []string{"a|b", "c"}},
		{"a;b", ";", []string{"a", "b"}},
	} {
		got, err := splitList(tt.in, tt.sep)
		require.NoError(t, err)
		assert.Equal(t, tt.want, got, tt.in)
	}
}

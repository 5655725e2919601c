package importer

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fuzzFormat fuzzes one converter: it never panics, every error is an *Error
// (file:line), and every output it accepts is read back by the project's parsers.
func fuzzFormat(f *testing.F, name string, seeds ...string) {
	format, ok := Lookup(name)
	if !ok {
		f.Fatalf("no format %q", name)
	}
	for _, s := range seeds {
		if strings.HasPrefix(s, "@") {
			b, err := os.ReadFile(filepath.Join(formatsDir, s[1:]))
			if err != nil {
				f.Fatal(err)
			}
			s = string(b)
		}
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		var out bytes.Buffer
		opt := Options{ParentSep: "#", LineAt: LineAt(bytes.NewReader(in))}
		_, _, err := Convert(context.Background(), bytes.NewReader(in), "in", &out, format, opt)
		if err != nil {
			if !errors.As(err, new(*Error)) {
				t.Fatalf("error is not an input error: %T %v", err, err)
			}
			return
		}
		checkOutput(t, format.Kind, out.Bytes())
	})
}

func FuzzBEIRQrels(f *testing.F) {
	fuzzFormat(f, "beir-qrels", "@beir-qrels.tsv", "query-id\tcorpus-id\tscore\nq\td\t-7\n")
}

func FuzzTRECQrels(f *testing.F) {
	fuzzFormat(f, "trec-qrels", "@trec-qrels-graded.txt", "@msmarco-qrels.tsv", "q 0 d 99999999999999999999\n")
}

func FuzzMSMARCORun(f *testing.F) {
	fuzzFormat(f, "msmarco-run", "@msmarco-run.tsv", "1 2 3\n1 2 3\n")
}

func FuzzIRDSQrels(f *testing.F) {
	fuzzFormat(f, "irds-qrels", "@irds-qrels.jsonl", `{"query_id": 1, "doc_id": "a b", "relevance": 1}`)
}

func FuzzIRDSScoredDocs(f *testing.F) {
	fuzzFormat(f, "irds-scoreddocs", "@irds-scoreddocs.jsonl", `{"query_id": "1", "doc_id": "2", "score": 1e999}`)
}

func FuzzIRDSDocs(f *testing.F) {
	fuzzFormat(f, "irds-docs", "@irds-docs.jsonl", `{"doc_id": "1", "text": null}`)
}

func FuzzRagas(f *testing.F) {
	fuzzFormat(f, "ragas", "@ragas.jsonl", "@ragas.json", `[{"user_input": "q", "retrieved_context_ids": ["#"]}]`)
}

func FuzzPromptfoo(f *testing.F) {
	fuzzFormat(f, "promptfoo", "@promptfoo-results.json", `{"results": [{"testIdx": 1, "vars": {"query": "q"}, "response": {"output": "[1]"}}]}`)
}

func FuzzCSV(f *testing.F) {
	fuzzFormat(f, "csv", "@retrieved-gold.csv", "query,retrieved\n\"q\",\"[\"\"a\"\"]\"\n")
}

// Detect never panics, and a detected format converts its own seed.
func FuzzDetect(f *testing.F) {
	entries, err := os.ReadDir(formatsDir)
	if err != nil {
		f.Fatal(err)
	}
	for _, e := range entries {
		if b, err := os.ReadFile(filepath.Join(formatsDir, e.Name())); err == nil {
			f.Add(b)
		}
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		if format, why := Detect(in); format == nil && why == "" {
			t.Fatal("no format and no reason")
		}
	})
}

package cli

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Issue 32 item 10: a file given where another kind is wanted says what it is
// and what takes it; a file of the right kind with an error keeps its error.
func TestFileMistakes(t *testing.T) {
	root := repoRoot(t)
	demo := filepath.Join(root, "testdata", "demo")
	formats := filepath.Join(root, "testdata", "formats")
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte(body), 0o644))
		return p
	}
	plainCSV := write("plain.csv", "a,b\n1,2\n")
	badCase := write("bad.jsonl", `{"id": "q1", "query": "x", "must_cite_one_of": ["a"], "retrieved": [1]}`+"\n")
	history := write("history.jsonl", `{"schema": "retrieval-gate/history@1", "command": "check"}`+"\n")
	kbJSONL := write("kb.jsonl", `{"id": "a", "title": "t", "text": "x"}`+"\n")
	for _, tt := range []struct {
		name string
		args []string
		want string // stderr's message, after "retrieval-gate: "
	}{
		{"a CSV to --cases", []string{"check", "--cases", filepath.Join(formats, "retrieved-gold.csv"), "--kb", filepath.Join(demo, "kb")},
			filepath.Join(formats, "retrieved-gold.csv") + ":1: not cases JSONL but CSV with a header (import format csv): convert it with `retrieval-gate import --in " + filepath.Join(formats, "retrieved-gold.csv") + " --out cases.jsonl`, then give --cases cases.jsonl (docs/import.md)"},
		{"a CSV without a query column", []string{"check", "--cases", plainCSV, "--kb", filepath.Join(demo, "kb")},
			plainCSV + ":1: not cases JSONL but a CSV file (malformed JSON: unexpected character 'a' looking for a value at column 1): `retrieval-gate import --in " + plainCSV + " --out cases.jsonl` converts a CSV whose header has a query column (and retrieved, gold), docs/import.md"},
		{"a CSV to retrieve --cases", []string{"retrieve", "--cases", filepath.Join(formats, "retrieved-gold.csv"), "--kb", filepath.Join(demo, "kb"), "--out", filepath.Join(dir, "run.jsonl")},
			filepath.Join(formats, "retrieved-gold.csv") + ":1: not cases JSONL but CSV with a header (import format csv)"},
		{"qrels to --cases", []string{"check", "--cases", filepath.Join(formats, "trec-qrels-graded.txt"), "--kb", filepath.Join(demo, "kb")},
			filepath.Join(formats, "trec-qrels-graded.txt") + ":1: not cases JSONL but relevance judgments, TREC qrels (import format trec-qrels): compare --qrels reads judgments"},
		{"a run to --cases", []string{"check", "--cases", filepath.Join(formats, "msmarco-run.tsv"), "--kb", filepath.Join(demo, "kb")},
			filepath.Join(formats, "msmarco-run.tsv") + ":1: not cases JSONL but a ranked run, MS MARCO run (import format msmarco-run): compare --run reads runs"},
		{"a KB to --cases", []string{"check", "--cases", kbJSONL, "--kb", kbJSONL + "x"}, ""},
		{"a case with an error keeps its error", []string{"check", "--cases", badCase, "--kb", kbJSONL},
			badCase + ":1: retrieved[0] must be a card id string or an object, got number"},
		{"a cases file to --kb", []string{"check", "--cases", filepath.Join(demo, "cases.jsonl"), "--kb", filepath.Join(demo, "cases.jsonl")},
			filepath.Join(demo, "cases.jsonl") + `:1: looks like a cases file (a "query" and no "text" or "title"), not a knowledge base: a KB is cards {"id", "locale", "title", "text"}, one per line, or a directory of Markdown cards`},
		{"a cases file to report --from", []string{"report", "--from", filepath.Join(demo, "cases.jsonl")},
			filepath.Join(demo, "cases.jsonl") + `:1: a cases file (JSONL, one case per line, with "query"), not a saved --json report (report --from renders the --json file of check, compare or calibrate); check --cases and retrieve --cases read it`},
		{"a baseline to report --from", []string{"report", "--from", filepath.Join(demo, "baseline.jsonl.gz")},
			filepath.Join(demo, "baseline.jsonl.gz") + `:1: a gzip file (as check --write-baseline writes a baseline), not a saved --json report (report --from renders the --json file of check, compare or calibrate); check --baseline reads a baseline`},
		{"a history to report --from", []string{"report", "--from", history},
			history + `:1: a history of runs (retrieval-gate/history@1, one run per line), not a saved --json report (report --from renders the --json file of check, compare or calibrate); report --history charts it`},
		{"ragas to report --from", []string{"report", "--from", filepath.Join(formats, "ragas.jsonl")},
			filepath.Join(formats, "ragas.jsonl") + ":1: a ragas dataset (JSONL or a JSON array), import format ragas, not a saved --json report"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			code, _, stderr := runIn(t, map[string]string{}, tt.args...)
			assert.Equal(t, ExitInput, code, stderr)
			if tt.want != "" {
				assert.Contains(t, stderr, "retrieval-gate: "+tt.want)
			}
			assert.NotContains(t, stderr, "usage:", "a file's mistake is not a usage error")
		})
	}
}

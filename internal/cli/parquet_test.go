package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/internal/llm/llmtest"
)

// duckdb runs SQL statements in DuckDB (tools/parquet/write.mjs, its pinned
// Node.js package) in dir. Without node or the package the test skips, except
// under CI, where it fails (.ci/run installs them).
func duckdb(t *testing.T, dir string, sql ...string) {
	t.Helper()
	root := repoRoot(t)
	node, err := exec.LookPath("node")
	if err == nil {
		_, err = os.Stat(filepath.Join(root, "tools", "parquet", "node_modules", "@duckdb", "node-api"))
	}
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("node or tools/parquet is not installed (npm ci in tools/parquet; .ci/run does it): %v", err)
		}
		t.Skipf("node or tools/parquet is not installed (cd tools/parquet && npm ci): skipping: %v", err)
	}
	cmd := exec.Command(node, append([]string{filepath.Join(root, "tools", "parquet", "write.mjs")}, sql...)...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
}

// Shards written by another Parquet writer (DuckDB's COPY … (FORMAT parquet),
// Hive-partitioned by locale and by relevance) give check and compare the
// reports of the same rows as JSONL and TREC text, byte for byte: the demo's
// cases (retrieved as DuckDB infers it from the JSONL: a list of JSON values),
// a TREC run and qrels.
func TestParquetFromDuckDB(t *testing.T) {
	root := repoRoot(t)
	demo := filepath.Join(root, "testdata", "demo")
	cmp := filepath.Join(root, "testdata", "compare")
	pq, txt := filepath.Join(t.TempDir(), "pq"), filepath.Join(t.TempDir(), "txt")
	for _, d := range []string{filepath.Join(pq, "runs", "bm25"), filepath.Join(txt, "runs", "bm25"), filepath.Join(txt, "qrels")} {
		require.NoError(t, os.MkdirAll(d, 0o755))
	}
	trecRun := "columns={'query_id':'VARCHAR','q0':'VARCHAR','doc_id':'VARCHAR','rank':'INTEGER','score':'DOUBLE','tag':'VARCHAR'}"
	trecQrels := "columns={'query_id':'VARCHAR','iter':'VARCHAR','doc_id':'VARCHAR','relevance':'INTEGER'}"
	duckdb(t, pq,
		"COPY (SELECT * FROM read_json('"+filepath.Join(demo, "cases.jsonl")+"', format='newline_delimited')) TO 'cases' (FORMAT parquet, PARTITION_BY (locale), WRITE_PARTITION_COLUMNS true)",
		"COPY (SELECT query_id, doc_id, rank, score, tag FROM read_csv('"+filepath.Join(cmp, "bm25.trec")+"', delim=' ', header=false, "+trecRun+")) TO 'runs/bm25/part-0.parquet' (FORMAT parquet)",
		"COPY (SELECT query_id, doc_id, relevance FROM read_csv('"+filepath.Join(cmp, "qrels.trec")+"', delim=' ', header=false, "+trecQrels+")) TO 'qrels' (FORMAT parquet, PARTITION_BY (relevance), WRITE_PARTITION_COLUMNS true)",
	)
	var shards []string
	require.NoError(t, filepath.WalkDir(pq, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(pq, p)
			shards = append(shards, rel)
		}
		return err
	}))
	require.Contains(t, shards, filepath.Join("cases", "locale=es-419", "data_0.parquet"), "Hive partitions: %v", shards)
	require.Contains(t, shards, filepath.Join("qrels", "relevance=3", "data_0.parquet"))

	// The JSONL side: the demo's lines in the same partitions, in file order.
	data, err := os.ReadFile(filepath.Join(demo, "cases.jsonl"))
	require.NoError(t, err)
	parts := map[string][]string{}
	for line := range strings.Lines(string(data)) {
		var c struct{ Locale string }
		require.NoError(t, json.Unmarshal([]byte(line), &c))
		parts[c.Locale] = append(parts[c.Locale], line)
	}
	for loc, lines := range parts {
		p := filepath.Join(txt, "cases", "locale="+loc, "part-0.jsonl")
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(strings.Join(lines, "")), 0o644))
	}
	for from, to := range map[string]string{"bm25.trec": "runs/bm25/bm25.trec", "qrels.trec": "qrels/qrels.trec"} {
		b, err := os.ReadFile(filepath.Join(cmp, from))
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(txt, to), b, 0o644))
	}

	run := func(dir string, args ...string) (string, string) {
		t.Chdir(dir)
		code, stdout, stderr := runIn(t, nil, args...)
		require.Equal(t, 0, code, stderr)
		return stdout, stderr
	}
	for _, args := range [][]string{
		{"check", "--cases", "cases", "--kb", filepath.Join(demo, "kb"), "--comment", "never", "--json", "out.json", "--cases-out", "cases-out.jsonl"},
		{"compare", "--qrels", "qrels", "--run", "bm25=runs/bm25", "--run", "dense=" + filepath.Join(cmp, "dense.trec"), "--json", "out.json", "--markdown", "out.md"},
	} {
		outP, errP := run(pq, args...)
		outT, errT := run(txt, args...)
		require.Equal(t, outT, outP, "%s: stdout", args[0])
		require.Equal(t, errT, errP, "%s: stderr", args[0])
		for _, f := range []string{"out.json", "cases-out.jsonl", "out.md"} {
			want, err := os.ReadFile(filepath.Join(txt, f))
			if os.IsNotExist(err) {
				continue
			}
			require.NoError(t, err)
			got, err := os.ReadFile(filepath.Join(pq, f))
			require.NoError(t, err)
			require.Equal(t, string(want), string(got), "%s: %s", args[0], f)
			require.NoError(t, os.Remove(filepath.Join(txt, f)))
		}
	}
}

// Every cases, run and qrels flag takes shards (issue 35 part 3): evaluate
// --cases and calibrate --judge-qrels (the last two that took one file) give
// the outputs of the one file from a directory of shards, one of them Parquet.
func TestShardedEvaluateAndCalibrate(t *testing.T) {
	root := repoRoot(t)
	demo := filepath.Join(root, "testdata", "demo")
	one, shards := t.TempDir(), t.TempDir()

	// calibrate: the judge's qrels as one file, and as a text and a Parquet shard.
	labels, err := os.ReadFile(filepath.Join(demo, "human-labels.jsonl"))
	require.NoError(t, err)
	var all []pqRel
	var text strings.Builder
	for i, line := range strings.Split(strings.TrimSpace(string(labels)), "\n") {
		var l struct {
			QueryID string `json:"query_id"`
			DocID   string `json:"doc_id"`
			Grade   int    `json:"grade"`
		}
		require.NoError(t, json.Unmarshal([]byte(line), &l))
		rel := pqRel{QueryID: l.QueryID, DocID: l.DocID, Relevance: int64((l.Grade + i%3/2) % 4)} // the judge disagrees now and then
		all = append(all, rel)
		if i < 50 {
			fmt.Fprintf(&text, `{"query_id": %q, "doc_id": %q, "relevance": %d}`+"\n", rel.QueryID, rel.DocID, rel.Relevance)
		}
	}
	var whole strings.Builder
	for _, r := range all {
		fmt.Fprintf(&whole, `{"query_id": %q, "doc_id": %q, "relevance": %d}`+"\n", r.QueryID, r.DocID, r.Relevance)
	}
	require.NoError(t, os.WriteFile(filepath.Join(one, "judged"), []byte(whole.String()), 0o644))
	require.NoError(t, os.MkdirAll(filepath.Join(shards, "judged"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(shards, "judged", "part-0.jsonl"), []byte(text.String()), 0o644))
	writeParquetRows(t, filepath.Join(shards, "judged", "part-1.parquet"), all[50:])

	args := []string{"calibrate", "--human-sheet", filepath.Join(demo, "human-labels.jsonl"), "--judge-qrels", "judged",
		"--lock", filepath.Join(root, "testdata", "calibrate", "relevance-lock.json"), "--bootstrap", "200", "--comment", "never", "--markdown", "cal.md", "--json", "cal.json"}
	t.Chdir(one)
	codeOne, outOne, errOne := runIn(t, nil, args...)
	require.LessOrEqual(t, codeOne, 1, errOne) // 1: the gate's verdict on these labels
	t.Chdir(shards)
	code, outShards, errShards := runIn(t, nil, args...)
	require.Equal(t, codeOne, code, errShards)
	assert.Equal(t, outOne, outShards)
	assert.Equal(t, errOne, errShards)
	for _, f := range []string{"cal.md", "cal.json"} {
		assert.Equal(t, string(raw(t, filepath.Join(one, f))), string(raw(t, filepath.Join(shards, f))), f)
	}
	// A duplicate across the shards names both.
	require.NoError(t, os.WriteFile(filepath.Join(shards, "judged", "part-2.jsonl"), []byte(strings.SplitAfter(text.String(), "\n")[0]), 0o644))
	code, _, errDup := runIn(t, nil, args...)
	assert.Equal(t, 2, code)
	assert.Contains(t, errDup, filepath.Join("judged", "part-2.jsonl")+":1: ")

	// evaluate --cases: the first 12 demo cases as one file, and as a JSONL
	// and a Parquet shard (the cases, retrieved and all; retrieve replaces it).
	data, err := os.ReadFile(filepath.Join(demo, "cases.jsonl"))
	require.NoError(t, err)
	lines := strings.SplitAfter(string(data), "\n")[:12]
	require.NoError(t, os.WriteFile(filepath.Join(one, "cases.jsonl"), []byte(strings.Join(lines, "")), 0o644))
	require.NoError(t, os.MkdirAll(filepath.Join(shards, "cases"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(shards, "cases", "part-0.jsonl"), []byte(strings.Join(lines[:6], "")), 0o644))
	var pc []pqCaseLite
	for _, l := range lines[6:] {
		var c pqCaseLite
		require.NoError(t, json.Unmarshal([]byte(l), &c))
		pc = append(pc, c)
	}
	writeParquetRows(t, filepath.Join(shards, "cases", "part-1.parquet"), pc)
	llm := llmtest.New(llmtest.Options{})
	defer llm.Close()
	eval := func(dir, cases string) {
		t.Chdir(dir)
		code, _, stderr := runIn(t, nil, "evaluate", "--kb", filepath.Join(demo, "kb"), "--cases", cases, "--out", "out",
			"--judge-url", llm.URL, "--judge-model", "fake", "--k", "3", "--bootstrap", "200", "--comment", "never")
		require.Equal(t, 0, code, stderr)
	}
	eval(one, "cases.jsonl")
	eval(shards, "cases")
	for _, f := range []string{"compare.json", "qrels.txt"} {
		assert.Equal(t, string(raw(t, filepath.Join(one, "out", f))), string(raw(t, filepath.Join(shards, "out", f))), f)
	}
	// retrieve keeps a case's own text and adds its ranking: the Parquet rows'
	// lines are compact JSON, the same values.
	a := strings.Split(strings.TrimSpace(string(raw(t, filepath.Join(one, "out", "run-hybrid.jsonl")))), "\n")
	b := strings.Split(strings.TrimSpace(string(raw(t, filepath.Join(shards, "out", "run-hybrid.jsonl")))), "\n")
	require.Len(t, b, len(a))
	for i := range a {
		assert.JSONEq(t, a[i], b[i])
	}
}

type pqRel struct {
	QueryID   string `parquet:"query_id"`
	DocID     string `parquet:"doc_id"`
	Relevance int64  `parquet:"relevance"`
}

type pqCaseLite struct {
	ID     string   `json:"id" parquet:"id"`
	Locale string   `json:"locale" parquet:"locale"`
	Type   string   `json:"type" parquet:"type,optional"`
	Query  string   `json:"query" parquet:"query"`
	Gold   []string `json:"must_cite_one_of" parquet:"must_cite_one_of,list"`
}

func writeParquetRows[T any](t *testing.T, path string, rows []T) {
	t.Helper()
	var buf bytes.Buffer
	w := parquet.NewGenericWriter[T](&buf)
	_, err := w.Write(rows)
	require.NoError(t, err)
	require.NoError(t, w.Close())
	require.NoError(t, os.WriteFile(path, buf.Bytes(), 0o644))
}

type rowsEntry struct {
	ID       string   `parquet:"id"`
	ParentID *string  `parquet:"parent_id,optional"`
	Score    *float64 `parquet:"score,optional"`
	Text     *string  `parquet:"text,optional"`
}

type rowsCase struct {
	ID        string      `parquet:"id"`
	Locale    *string     `parquet:"locale,optional"`
	Type      *string     `parquet:"type,optional"`
	Query     *string     `parquet:"query,optional"`
	Gold      []string    `parquet:"must_cite_one_of,optional,list"`
	Retrieved []rowsEntry `parquet:"retrieved,optional,list"`
}

// The demo's cases as Parquet shards of the cases' own columns (read by
// rows, casefile's fast path) give check the reports of the same lines as
// JSONL shards, byte for byte; a case id in two shards is the same error,
// naming both shards and rows.
func TestParquetCasesByRows(t *testing.T) {
	root := repoRoot(t)
	demo := filepath.Join(root, "testdata", "demo")
	data, err := os.ReadFile(filepath.Join(demo, "cases.jsonl"))
	require.NoError(t, err)
	var lines []string
	var rows []rowsCase
	for line := range strings.Lines(string(data)) {
		var c struct {
			ID, Locale, Type, Query string
			Gold                    []string          `json:"must_cite_one_of"`
			Retrieved               []json.RawMessage `json:"retrieved"`
		}
		require.NoError(t, json.Unmarshal([]byte(line), &c))
		r := rowsCase{ID: c.ID, Locale: &c.Locale, Type: &c.Type, Query: &c.Query, Gold: c.Gold}
		for _, e := range c.Retrieved {
			var re struct {
				ID       string   `json:"id"`
				ParentID *string  `json:"parent_id"`
				Score    *float64 `json:"score"`
				Text     *string  `json:"text"`
			}
			if json.Unmarshal(e, &re.ID) != nil {
				require.NoError(t, json.Unmarshal(e, &re))
			}
			r.Retrieved = append(r.Retrieved, rowsEntry(re))
		}
		lines, rows = append(lines, line), append(rows, r)
	}
	// The JSONL shards carry the Parquet shards' names, so that the messages
	// are the same (a shard is read as Parquet by its content, not its name).
	write := func(dir string, dup bool) {
		half := len(rows) / 2
		parts := [][2]int{{0, half}, {half, len(rows)}}
		for i, p := range parts {
			pr, tl := slices.Clone(rows[p[0]:p[1]]), slices.Clone(lines[p[0]:p[1]])
			if dup && i == 1 {
				pr, tl = append(pr, rows[3]), append(tl, lines[3])
			}
			name := fmt.Sprintf("part-%d.parquet", i)
			require.NoError(t, os.MkdirAll(filepath.Join(dir, "pq", "cases"), 0o755))
			require.NoError(t, os.MkdirAll(filepath.Join(dir, "txt", "cases"), 0o755))
			var buf bytes.Buffer
			w := parquet.NewGenericWriter[rowsCase](&buf, parquet.PageBufferSize(512), parquet.MaxRowsPerRowGroup(20))
			_, err := w.Write(pr)
			require.NoError(t, err)
			require.NoError(t, w.Close())
			require.NoError(t, os.WriteFile(filepath.Join(dir, "pq", "cases", name), buf.Bytes(), 0o644))
			require.NoError(t, os.WriteFile(filepath.Join(dir, "txt", "cases", name), []byte(strings.Join(tl, "")), 0o644))
		}
	}
	dir := t.TempDir()
	write(dir, false)
	args := []string{"check", "--cases", "cases", "--kb", filepath.Join(demo, "kb"), "--comment", "never", "--json", "out.json", "--cases-out", "cases-out.jsonl"}
	results := map[string][4]string{}
	for _, side := range []string{"pq", "txt"} {
		t.Chdir(filepath.Join(dir, side))
		code, stdout, stderr := runIn(t, nil, args...)
		require.Contains(t, []int{0, 1}, code, stderr)
		j, err := os.ReadFile("out.json")
		require.NoError(t, err)
		c, err := os.ReadFile("cases-out.jsonl")
		require.NoError(t, err)
		results[side] = [4]string{stdout, stderr, string(j), string(c)}
	}
	require.Equal(t, results["txt"], results["pq"])
	require.Contains(t, results["pq"][3], `"id":"en-golden-001"`)

	dir = t.TempDir()
	write(dir, true)
	var msgs []string
	for _, side := range []string{"pq", "txt"} {
		t.Chdir(filepath.Join(dir, side))
		code, _, stderr := runIn(t, nil, "check", "--cases", "cases", "--kb", filepath.Join(demo, "kb"), "--comment", "never")
		require.Equal(t, 2, code, stderr)
		msgs = append(msgs, stderr)
	}
	require.Equal(t, msgs[1], msgs[0])
	want := fmt.Sprintf("part-1.parquet:%d: duplicate case id %q (first at cases/part-0.parquet:4)", len(rows)-len(rows)/2+1, rows[3].ID)
	require.Contains(t, msgs[0], want)
	// retrieve reads the same shards with the same integrity: the same error,
	// nothing written.
	for _, side := range []string{"pq", "txt"} {
		t.Chdir(filepath.Join(dir, side))
		code, _, stderr := runIn(t, nil, "retrieve", "--cases", "cases", "--kb", filepath.Join(demo, "kb"), "--out", "run.jsonl")
		require.Equal(t, 2, code, stderr)
		assert.Contains(t, stderr, want, side)
		assert.NoFileExists(t, "run.jsonl")
	}
}

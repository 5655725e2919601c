package cli

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
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
	cmd := exec.Command(node, append([]string{filepath.Join(root, "tools", "parquet", "write.mjs")}, sql...)...) //nolint:gosec // the test's own statements
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

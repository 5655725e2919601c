package check

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/internal/input"
	"github.com/retrieval-gate/retrieval-gate/internal/input/kbfile"
)

type pqIDCase struct {
	ID    string  `parquet:"id"`
	Query *string `parquet:"query,optional"`
}

// writeIDsParquet writes cases of ids to path as Parquet, in row groups of 3
// rows and small pages: a row read again is sought past groups and pages.
func writeIDsParquet(t *testing.T, path string, ids []string) {
	t.Helper()
	q := "q"
	rows := make([]pqIDCase, len(ids))
	for i, id := range ids {
		rows[i] = pqIDCase{ID: id, Query: &q}
	}
	var buf bytes.Buffer
	w := parquet.NewGenericWriter[pqIDCase](&buf, parquet.PageBufferSize(64), parquet.MaxRowsPerRowGroup(3))
	_, err := w.Write(rows)
	require.NoError(t, err)
	require.NoError(t, w.Close())
	require.NoError(t, os.WriteFile(path, buf.Bytes(), 0o600))
}

func openShards(t *testing.T, path string) *input.Sharded {
	t.Helper()
	s, err := input.OpenSharded(context.Background(), path)
	require.NoError(t, err)
	t.Cleanup(func() { s.Close() })
	return s
}

// TestIDsReadAgainParquet: Parquet shards' case ids are read again by line,
// the rows of the shards numbered one after another from 1 (each in its row
// group and page); a line before the first or past the last row is "" (text
// shards: TestIDsReadAgainTextShards). Undoing the Parquet case of
// idsReadAgain (nil for shards) or counting a shard's rows from the wrong
// start fails it.
func TestIDsReadAgainParquet(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	first := []string{"a0", "a1", "a2", "a3", "a4", "a5", "a6"}
	second := []string{"b0", "bé", `b "2"`, "b3", strings.Repeat("long", 40)}
	require.NoError(t, os.Mkdir(filepath.Join(dir, "cases"), 0o755))
	writeIDsParquet(t, filepath.Join(dir, "cases", "part-0.parquet"), first)
	writeIDsParquet(t, filepath.Join(dir, "cases", "part-1.parquet"), second)

	all := append(append([]string{}, first...), second...)
	idAt := idsReadAgain(ctx, openShards(t, filepath.Join(dir, "cases")), "cases")
	require.NotNil(t, idAt, "Parquet shards")
	for line := len(all) + 1; line >= 0; line-- { // backwards: no state carried
		want := ""
		if line >= 1 && line <= len(all) {
			want = all[line-1]
		}
		id, err := idAt(line)
		require.NoError(t, err)
		assert.Equal(t, want, id, "line %d", line)
	}

	one := filepath.Join(dir, "one.parquet") // a file, read as its one shard
	writeIDsParquet(t, one, second)
	idAt = idsReadAgain(ctx, openShards(t, one), "one.parquet")
	require.NotNil(t, idAt, "a Parquet file")
	for line, want := range map[int]string{1: "b0", 3: `b "2"`, 5: second[4], 6: ""} {
		id, err := idAt(line)
		require.NoError(t, err)
		assert.Equal(t, want, id, "line %d", line)
	}
}

// TestRunDuplicateParquet: a duplicate case id in a Parquet file, and across
// Parquet shards, is the error of the same cases as JSONL read from a reader
// (whose ids the accumulator keeps), byte for byte.
func TestRunDuplicateParquet(t *testing.T) {
	kb, err := kbfile.Load(context.Background(), demo+"/kb")
	require.NoError(t, err)
	ids := func(prefix string, n int, edit map[int]string) []string {
		var s []string
		for i := 1; i <= n; i++ {
			if id, ok := edit[i]; ok {
				s = append(s, id)
				continue
			}
			s = append(s, fmt.Sprintf("%s%d", prefix, i))
		}
		return s
	}
	tests := map[string]struct {
		shards [][]string
		want   string
	}{
		"in one file": {[][]string{ids("c", 10, map[int]string{8: "c2"})},
			`cases:8: duplicate case id "c2" (first at line 2)`},
		"across two shards": {[][]string{ids("a", 7, nil), ids("b", 9, map[int]string{5: "a6", 7: "a1"})},
			`cases:12: duplicate case id "a6" (first at line 6)`},
		"the earliest of two, non-ASCII": {[][]string{ids("a", 5, map[int]string{2: "é"}), ids("b", 6, map[int]string{1: "x", 3: "é", 4: "x"})},
			`cases:8: duplicate case id "é" (first at line 2)`},
	}
	dir := t.TempDir()
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			d := filepath.Join(dir, strings.ReplaceAll(name, " ", "-"))
			require.NoError(t, os.Mkdir(d, 0o755))
			var text strings.Builder
			for i, s := range tt.shards {
				writeIDsParquet(t, filepath.Join(d, fmt.Sprintf("part-%d.parquet", i)), s)
				for _, id := range s {
					fmt.Fprintf(&text, "{\"id\": %q, \"query\": \"q\"}\n", id)
				}
			}
			_, err := Run(context.Background(), In{Cases: strings.NewReader(text.String()), CasesName: "cases", KB: kb}, Options{K: 5})
			require.EqualError(t, err, tt.want, "JSONL")
			_, err = Run(context.Background(), In{Cases: openShards(t, d), CasesName: "cases", KB: kb}, Options{K: 5})
			require.EqualError(t, err, tt.want, "Parquet")
		})
	}
}

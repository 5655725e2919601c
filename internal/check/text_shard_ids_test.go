package check

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/internal/input"
	"github.com/retrieval-gate/retrieval-gate/internal/input/casefile"
	"github.com/retrieval-gate/retrieval-gate/internal/input/kbfile"
)

// writeShardFiles writes each of bodies as shard part-I.jsonl of a new
// directory under dir, and returns the directory.
func writeShardFiles(t *testing.T, dir, name string, bodies []string) string {
	t.Helper()
	d := filepath.Join(dir, name)
	require.NoError(t, os.Mkdir(d, 0o755))
	for i, b := range bodies {
		require.NoError(t, os.WriteFile(filepath.Join(d, fmt.Sprintf("part-%d.jsonl", i)), []byte(b), 0o600))
	}
	return d
}

// TestIDsReadAgainTextShards: text shards' case ids are read again by line,
// the lines numbered as the stream numbers them (blank and white-space lines
// counted, a shard's BOM and CRLF dropped, a shard without a final newline
// ended by the stream, a Parquet shard among them by its rows); a line before
// the first or past the last is "". The stream is read first: a shard's line
// is found once the read has passed its start. Shards that are not all
// regular files, and a CSV sheet's shards, give nil. Undoing the text case of
// idsReadAgain, the BOM's or the "\r"'s drop, or locating a line from the
// wrong shard start fails it. (An empty shard is the stream's error, so no
// line is ever in one.)
func TestIDsReadAgainTextShards(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	d := writeShardFiles(t, dir, "cases", []string{
		"\n{\"id\": \"a\"}\n\n \t\r\n{\"id\": \"b\\u00e9\", \"query\": \"q\"}\r\n",
		"\ufeff{\"id\": \"c\"}\r\n{\"id\": \"d\"}", // a BOM, no final newline
		"{\"id\": \"e\"}\n\n",
	})
	writeIDsParquet(t, filepath.Join(d, "part-3.parquet"), []string{"p0", "p1"})
	want := map[int]string{0: "", 1: "", 2: "a", 3: "", 4: "", 5: "bé", 6: "c", 7: "d", 8: "e", 9: "", 10: "p0", 11: "p1", 12: ""}

	s := openShards(t, d)
	idAt := idsReadAgain(ctx, s, "cases")
	require.NotNil(t, idAt, "text shards")
	b, err := io.ReadAll(s)
	require.NoError(t, err)
	require.Equal(t, len(want)-2, strings.Count(string(b), "\n"), "the stream's lines")
	for line := len(want) - 1; line >= 0; line-- { // backwards: no state carried
		id, err := idAt(line)
		require.NoError(t, err)
		assert.Equal(t, want[line], id, "line %d", line)
	}

	fifo := filepath.Join(dir, "fifo.jsonl") // a path, read as its one shard
	require.NoError(t, syscall.Mkfifo(fifo, 0o600))
	go func() {
		if w, err := os.OpenFile(fifo, os.O_WRONLY, 0); err == nil {
			_, _ = w.WriteString("{\"id\": \"x\"}\n")
			w.Close()
		}
	}()
	assert.Nil(t, idsReadAgain(ctx, openShards(t, fifo), "fifo.jsonl"), "a shard that is a named pipe")

	csv := writeShardFiles(t, dir, "csv", []string{"id,query\nx,q\n", "id,query\ny,q\n"})
	cs, err := input.OpenShardedCSV(ctx, csv)
	require.NoError(t, err)
	defer cs.Close()
	assert.Nil(t, cs.TextLineAt(casefile.MaxLine), "a CSV sheet's shards")
}

// TestRunDuplicateTextShards: a duplicate case id across JSONL shards is the
// error of the same lines read as one file, and as one reader (whose ids the
// accumulator keeps), byte for byte; the shards' ids are read again
// (idsReadAgain is not nil), and the error remapped names the shards.
func TestRunDuplicateTextShards(t *testing.T) {
	kb, err := kbfile.Load(context.Background(), demo+"/kb")
	require.NoError(t, err)
	c := func(id string) string { return fmt.Sprintf("{\"id\": %q, \"query\": \"q\"}", id) }
	tests := map[string]struct {
		shards         []string
		want, remapped string
	}{
		"across two shards": {[]string{c("a1") + "\n" + c("a2") + "\n" + c("a3") + "\n", c("b1") + "\n" + c("a2") + "\n"},
			`cases:5: duplicate case id "a2" (first at line 2)`,
			`D/part-1.jsonl:2: duplicate case id "a2" (first at D/part-0.jsonl:2)`},
		"blank lines, BOM, CRLF, no final newline": {[]string{"\n" + c("a1") + "\r\n\n" + c("é") + "\r\n" + c("a3"), "\ufeff" + c("b1") + "\n \n" + c("é") + "\n" + c("a1") + "\n"},
			`cases:8: duplicate case id "é" (first at line 4)`,
			`D/part-1.jsonl:3: duplicate case id "é" (first at D/part-0.jsonl:4)`},
		"in one shard, after another": {[]string{c("a1") + "\n", c("b1") + "\n" + c("b2") + "\n" + c("b1") + "\n"},
			`cases:4: duplicate case id "b1" (first at line 2)`,
			`D/part-1.jsonl:3: duplicate case id "b1" (first at line 1)`},
	}
	dir := t.TempDir()
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			d := writeShardFiles(t, dir, strings.ReplaceAll(name, " ", "-"), tt.shards)
			var text strings.Builder
			for _, b := range tt.shards {
				b = strings.TrimPrefix(b, "\ufeff")
				if !strings.HasSuffix(b, "\n") {
					b += "\n"
				}
				text.WriteString(b)
			}
			_, err := Run(context.Background(), In{Cases: strings.NewReader(text.String()), CasesName: "cases", KB: kb}, Options{K: 5})
			require.EqualError(t, err, tt.want, "a reader")

			one := filepath.Join(dir, strings.ReplaceAll(name, " ", "-")+".jsonl")
			require.NoError(t, os.WriteFile(one, []byte(text.String()), 0o600))
			f, err := os.Open(one)
			require.NoError(t, err)
			defer f.Close()
			_, err = Run(context.Background(), In{Cases: f, CasesName: "cases", KB: kb}, Options{K: 5})
			require.EqualError(t, err, tt.want, "one file")

			require.NotNil(t, idsReadAgain(context.Background(), openShards(t, d), d), "the shards' ids read again")
			s := openShards(t, d) // named by its path, as the command names it
			_, err = Run(context.Background(), In{Cases: s, CasesName: d, KB: kb}, Options{K: 5})
			require.EqualError(t, err, d+strings.TrimPrefix(tt.want, "cases"), "the shards")
			require.EqualError(t, s.Remap(err), strings.ReplaceAll(tt.remapped, "D/", d+"/"), "remapped")
		})
	}
}

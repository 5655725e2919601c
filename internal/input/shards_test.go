package input_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/internal/input"
)

func writeShards(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, body := range files {
		p := filepath.Join(dir, name)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(body), 0o600))
	}
	return dir
}

func TestExpandShards(t *testing.T) {
	dir := writeShards(t, map[string]string{
		"part-00010.jsonl": "a\n", "part-00002.jsonl": "b\n", "_SUCCESS": "", ".part-00002.jsonl.crc": "x",
		"locale=en/part-0.jsonl": "c\n", "_temporary/part-9.jsonl": "d\n", "other.txt": "e\n",
	})
	got, err := input.ExpandShards(dir)
	require.NoError(t, err)
	rel := func(ps []string) []string {
		out := make([]string, len(ps))
		for i, p := range ps {
			out[i], _ = filepath.Rel(dir, p)
		}
		return out
	}
	assert.Equal(t, []string{"locale=en/part-0.jsonl", "other.txt", "part-00002.jsonl", "part-00010.jsonl"}, rel(got), "sorted by path, hidden names skipped, subdirectories read")

	got, err = input.ExpandShards(filepath.Join(dir, "part-*.jsonl"))
	require.NoError(t, err)
	assert.Equal(t, []string{"part-00002.jsonl", "part-00010.jsonl"}, rel(got))
	assert.True(t, input.IsSharded(dir))
	assert.True(t, input.IsSharded(filepath.Join(dir, "part-*.jsonl")))
	assert.False(t, input.IsSharded(filepath.Join(dir, "other.txt")))

	_, err = input.ExpandShards(filepath.Join(dir, "nothing-*.jsonl"))
	require.ErrorContains(t, err, "nothing-*.jsonl: no shards: the pattern matches no file")
	_, err = input.ExpandShards(writeShards(t, map[string]string{"_SUCCESS": ""}))
	require.ErrorContains(t, err, "no shards: the directory holds no files")

	// A file whose name holds a pattern's characters is the file.
	odd := writeShards(t, map[string]string{"a[1].jsonl": "x\n"})
	got, err = input.ExpandShards(filepath.Join(odd, "a[1].jsonl"))
	require.NoError(t, err)
	assert.Equal(t, []string{filepath.Join(odd, "a[1].jsonl")}, got)
	assert.False(t, input.IsSharded(filepath.Join(odd, "a[1].jsonl")))
}

func TestShardedReadsInOrder(t *testing.T) {
	dir := writeShards(t, map[string]string{
		"part-1": "one\ntwo\n",
		"part-2": "\xEF\xBB\xBFthree\nfour", // a BOM, no final newline
		"part-3": "five\n",
	})
	s, err := input.OpenSharded(context.Background(), dir)
	require.NoError(t, err)
	defer s.Close()
	b, err := io.ReadAll(s)
	require.NoError(t, err)
	assert.Equal(t, "one\ntwo\nthree\nfour\nfive\n", string(b))
	for _, c := range []struct {
		n    int
		file string
		line int
	}{{1, "part-1", 1}, {2, "part-1", 2}, {3, "part-2", 1}, {4, "part-2", 2}, {5, "part-3", 1}} {
		f, l := s.Locate(c.n)
		assert.Equal(t, filepath.Join(dir, c.file), f, "line %d", c.n)
		assert.Equal(t, c.line, l, "line %d", c.n)
	}
	// Small reads give the same bytes.
	s2, err := input.OpenSharded(context.Background(), dir)
	require.NoError(t, err)
	defer s2.Close()
	var small []byte
	buf := make([]byte, 3)
	for {
		n, err := s2.Read(buf)
		small = append(small, buf[:n]...)
		if errors.Is(err, io.EOF) {
			break
		}
		require.NoError(t, err)
	}
	assert.Equal(t, string(b), string(small))
}

func TestShardedEmptyShard(t *testing.T) {
	for _, body := range []string{"", "\n\n", " \r\n"} {
		dir := writeShards(t, map[string]string{"part-1": "one\n", "part-2": body, "part-3": "three\n"})
		s, err := input.OpenSharded(context.Background(), dir)
		require.NoError(t, err)
		_, err = io.ReadAll(s)
		var ie *input.Error
		require.ErrorAs(t, err, &ie, "%q", body)
		assert.Equal(t, filepath.Join(dir, "part-2"), ie.File)
		assert.Contains(t, ie.Msg, "empty shard")
		require.NoError(t, s.Close())
	}
}

func TestShardedGzipRefused(t *testing.T) {
	dir := writeShards(t, map[string]string{"a": "1\n", "b": "\x1f\x8b\x08\x00rest"})
	s, err := input.OpenSharded(context.Background(), dir)
	require.NoError(t, err)
	defer s.Close()
	_, err = io.ReadAll(s)
	require.ErrorContains(t, err, filepath.Join(dir, "b")+": a gzip file: shards are read as text")
}

func TestShardedRemap(t *testing.T) {
	dir := writeShards(t, map[string]string{"a": "1\n2\n", "b": "3\n4\n5\n"})
	s, err := input.OpenSharded(context.Background(), dir)
	require.NoError(t, err)
	defer s.Close()
	_, err = io.ReadAll(s)
	require.NoError(t, err)
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	for _, c := range []struct {
		in   error
		want string
	}{
		{input.Errorf(dir, 4, "duplicate case id %q (first at line %d)", "x", 2), fmt.Sprintf("%s:2: duplicate case id \"x\" (first at %s:2)", b, a)},
		{input.Errorf(dir, 5, "duplicate case id %q (first on line %d)", "x", 3), fmt.Sprintf("%s:3: duplicate case id \"x\" (first at line 1)", b)},
		{input.Errorf(dir, 1, "bad"), a + ":1: bad"},
		{input.Errorf(dir, 0, "whole"), dir + ": whole"},
		{input.Errorf("other", 3, "bad"), "other:3: bad"},
		{fmt.Errorf("failed to read cases: %w", input.Errorf(dir, 3, "bad")), "failed to read cases: " + b + ":1: bad"},
	} {
		got := s.Remap(c.in)
		assert.Equal(t, c.want, got.Error())
		var ie *input.Error
		require.ErrorAs(t, got, &ie, "still an input error")
	}
	assert.NoError(t, s.Remap(nil))
}

func TestShardedSeekStart(t *testing.T) {
	dir := writeShards(t, map[string]string{"a": "1\n2\n", "b": "3\n"})
	s, err := input.OpenSharded(context.Background(), dir)
	require.NoError(t, err)
	defer s.Close()
	first, err := io.ReadAll(s)
	require.NoError(t, err)
	_, err = s.Seek(0, io.SeekStart)
	require.NoError(t, err)
	again, err := io.ReadAll(s)
	require.NoError(t, err)
	assert.Equal(t, "1\n2\n3\n", string(again))
	assert.Equal(t, first, again)
	f, l := s.Locate(3)
	assert.Equal(t, filepath.Join(dir, "b"), f)
	assert.Equal(t, 1, l)
	_, err = s.Seek(1, io.SeekStart)
	require.Error(t, err)
}

// FuzzSharded: shards of any bytes (none empty, none gzip) read as their
// concatenation, each ended by a newline; every line of the stream is located
// in its shard at its line there.
func FuzzSharded(f *testing.F) {
	f.Add([]byte("a\nb"), []byte("c\n"), []byte("\xEF\xBB\xBFd\n\ne"))
	f.Add([]byte("x"), []byte("y"), []byte("z"))
	f.Fuzz(func(t *testing.T, a, b, c []byte) {
		bodies := [][]byte{a, b, c}
		dir := t.TempDir()
		var want []byte
		type place struct {
			file string
			line int
		}
		var places []place
		for i, body := range bodies {
			body = bytes.TrimPrefix(body, []byte("\xEF\xBB\xBF"))
			if len(bytes.TrimSpace(body)) == 0 || bytes.HasPrefix(body, []byte{0x1f, 0x8b}) {
				t.Skip()
			}
			name := filepath.Join(dir, fmt.Sprintf("part-%d", i))
			require.NoError(t, os.WriteFile(name, bodies[i], 0o600))
			if body[len(body)-1] != '\n' {
				body = append(body[:len(body):len(body)], '\n')
			}
			want = append(want, body...)
			for l := range bytes.Count(body, []byte{'\n'}) {
				places = append(places, place{name, l + 1})
			}
		}
		s, err := input.OpenSharded(context.Background(), dir)
		require.NoError(t, err)
		defer s.Close()
		got, err := io.ReadAll(s)
		require.NoError(t, err)
		require.Equal(t, want, got)
		for n, p := range places {
			file, line := s.Locate(n + 1)
			at := place{file, line}
			require.Equal(t, p, at, "line %d", n+1)
		}
	})
}

// TestShardedCSV: a CSV sheet's shards each carry the header; the first
// shard's stays in the stream, a later one's is checked and dropped, and its
// lines are still counted in its shard.
func TestShardedCSV(t *testing.T) {
	pq, err := os.ReadFile(filepath.Join("..", "..", "testdata", "parquet", "qrels", "part-00000.parquet"))
	require.NoError(t, err)
	for _, c := range []struct {
		name   string
		shards map[string]string
		want   string // the stream
		err    string // the error, with DIR for the directory
		locate map[int]string
	}{
		{name: "headers dropped", shards: map[string]string{"a.csv": "h1,h2\nq1,a\n", "b.csv": "\xEF\xBB\xBF\nh1,h2\r\nq2,b\nq3,c"},
			want: "h1,h2\nq1,a\nq2,b\nq3,c\n", locate: map[int]string{1: "a.csv:1", 2: "a.csv:2", 3: "b.csv:3", 4: "b.csv:4"}},
		{name: "header differs", shards: map[string]string{"a.csv": "h1,h2\nq1,a\n", "b.csv": "\nh2,h1\nq2,b\n"},
			err: "DIR/b.csv:2: header differs from DIR/a.csv:1"},
		{name: "a header alone is an empty shard", shards: map[string]string{"a.csv": "h1,h2\nq1,a\n", "b.csv": "h1,h2\n"},
			err: "DIR/b.csv: empty shard"},
		{name: "the first shard too", shards: map[string]string{"a.csv": "h1,h2\n\n", "b.csv": "h1,h2\nq1,a\n"},
			err: "DIR/a.csv: empty shard"},
		{name: "a blank shard", shards: map[string]string{"a.csv": "h1,h2\nq1,a\n", "b.csv": " \n"},
			err: "DIR/b.csv: empty shard"},
		{name: "JSONL: no header", shards: map[string]string{"a.jsonl": "\n{\"a\":1}\n", "b.jsonl": "{\"a\":2}\n"},
			want: "\n{\"a\":1}\n{\"a\":2}\n", locate: map[int]string{2: "a.jsonl:2", 3: "b.jsonl:1"}},
		{name: "gzip", shards: map[string]string{"a.csv": "h1,h2\nq1,a\n", "b.csv": "\x1f\x8b\x08\x00rest"},
			err: "DIR/b.csv: a gzip file"},
		{name: "Parquet among CSV shards", shards: map[string]string{"a.csv": "query_id,doc_id,relevance\nq1,a,1\n", "b.parquet": string(pq)},
			err: "DIR/b.parquet: a Parquet shard among CSV shards (DIR/a.csv is a CSV)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := writeShards(t, c.shards)
			s, err := input.OpenShardedCSV(context.Background(), dir)
			var got []byte
			if err == nil {
				defer s.Close()
				got, err = io.ReadAll(s)
			}
			if c.err != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), strings.ReplaceAll(c.err, "DIR", dir))
				return
			}
			require.NoError(t, err)
			assert.Equal(t, c.want, string(got))
			for n, want := range c.locate {
				f, l := s.Locate(n)
				assert.Equal(t, filepath.Join(dir, want), fmt.Sprintf("%s:%d", f, l), "line %d", n)
			}
			// Read again from the start: the same stream.
			_, err = s.Seek(0, io.SeekStart)
			require.NoError(t, err)
			again, err := io.ReadAll(s)
			require.NoError(t, err)
			assert.Equal(t, string(got), string(again))
		})
	}
}

// TestShardedRemapLines: every line a message names is made its shard's, a
// CSV shard's dropped header counted.
func TestShardedRemapLines(t *testing.T) {
	dir := writeShards(t, map[string]string{"a.csv": "h\nq1\nq2\n", "b.csv": "h\nq3\nq4\n"})
	s, err := input.OpenShardedCSV(context.Background(), dir)
	require.NoError(t, err)
	defer s.Close()
	_, err = io.ReadAll(s)
	require.NoError(t, err)
	a, b := filepath.Join(dir, "a.csv"), filepath.Join(dir, "b.csv")
	// Stream line 5 is q4, b.csv:3 (b.csv's header, its line 1, is not in the stream).
	for in, want := range map[string]string{
		`query "x" has a grade on line 2 and none on line 4`: b + `:3: query "x" has a grade at ` + a + `:2 and none on line 2`,
		`given twice (first on line 3, in cluster "x")`:      b + `:3: given twice (first at ` + a + `:3, in cluster "x")`,
		`given twice (first on line 4)`:                      b + `:3: given twice (first at line 2)`,
		`the first is on line 1`:                             b + `:3: the first is at ` + a + `:1`,
		`no line 2 here: online 2`:                           b + `:3: no line 2 here: online 2`,
	} {
		got := s.Remap(input.Errorf(dir, 5, "%s", in))
		assert.Equal(t, want, got.Error(), in)
	}
}

// FuzzShardedCSV: CSV shards of any bytes after a header read as the first
// shard and the later ones without their header, every line of the stream
// located in its shard; a later shard with another header is refused naming it.
func FuzzShardedCSV(f *testing.F) {
	f.Add([]byte("h,i"), []byte("a\nb"), []byte("c\n"), false)
	f.Add([]byte("h"), []byte("x"), []byte("\r\ny\n"), true)
	f.Fuzz(func(t *testing.T, header, a, b []byte, differ bool) {
		header = bytes.TrimRight(header, "\r\n")
		if len(bytes.TrimSpace(header)) == 0 || bytes.ContainsAny(header, "\r\n") || bytes.TrimSpace(header)[0] == '{' ||
			bytes.HasPrefix(header, []byte{0x1f, 0x8b}) || bytes.HasPrefix(header, []byte("PAR1")) || bytes.HasPrefix(header, []byte("\xEF\xBB\xBF")) {
			t.Skip()
		}
		dir := t.TempDir()
		var want []byte
		type place struct {
			file string
			line int
		}
		var places []place
		for i, body := range [][]byte{a, b} {
			if len(bytes.TrimSpace(body)) == 0 {
				t.Skip()
			}
			h := header
			if differ && i == 1 {
				h = append([]byte("x"), header...)
			}
			name := filepath.Join(dir, fmt.Sprintf("part-%d.csv", i))
			shard := slices.Concat(h, []byte("\n"), body)
			require.NoError(t, os.WriteFile(name, shard, 0o600))
			if body[len(body)-1] != '\n' {
				body = append(body[:len(body):len(body)], '\n')
			}
			if i == 0 {
				want = append(want, header...)
				want = append(want, '\n')
				places = append(places, place{name, 1})
			}
			want = append(want, body...)
			for l := range bytes.Count(body, []byte{'\n'}) {
				places = append(places, place{name, l + 2})
			}
		}
		s, err := input.OpenShardedCSV(context.Background(), dir)
		require.NoError(t, err)
		defer s.Close()
		got, err := io.ReadAll(s)
		if differ {
			require.ErrorContains(t, err, filepath.Join(dir, "part-1.csv")+":1: header differs from "+filepath.Join(dir, "part-0.csv")+":1")
			return
		}
		require.NoError(t, err)
		require.Equal(t, want, got)
		for n, p := range places {
			file, line := s.Locate(n + 1)
			at := place{file, line}
			require.Equal(t, p, at, "line %d", n+1)
		}
	})
}

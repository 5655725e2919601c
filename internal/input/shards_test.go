package input_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
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

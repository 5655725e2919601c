package judge

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/retrieval-gate/retrieval-gate/internal/input/casefile"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Issue 20 item 3: the cache drops a torn last line only from a file that is
// recognisably a judge cache; any other file is refused and left as it was.
// The repair (a torn line dropped, a last entry's newline added) is made by the
// first judgment appended, never by opening it.
func TestOpenCacheRefusesNonCacheNeverTruncates(t *testing.T) {
	entry := `{"key":"k1","grade":2,"reason":"r","model":"m","prompt_hash":"h","repeat":0,"answer_format":"json","prompt_tokens":1,"completion_tokens":1}`
	for _, tt := range []struct {
		name, text, want string // want: the file afterwards; "" means unchanged and refused
	}{
		{"one-line run", `{"id":"c1","query":"q","must_cite_one_of":["a"],"retrieved":["a"]}`, ""},
		{"TREC run line", "q1 Q0 a 1 0.5 t", ""},
		{"prose", "notes about the judge", ""},
		{"JSON of another shape", `{"keys":["a"]}`, ""},
		{"torn entry after entries", entry + "\n" + `{"key":"k2","gra`, entry + "\n"},
		{"torn first entry", `{"key":"k2","gra`, ""},
		{"complete last entry without newline", entry, entry + "\n"},
		// Complete JSON is no torn write: an invalid entry is refused as it
		// is with its newline, never cut off by the next append.
		{"invalid complete last entry after entries, without newline", entry + "\n" + strings.Replace(entry, `"grade":2`, `"grade":7`, 1), ""},
		{"another shape after entries, without newline", entry + "\n" + `{"keys":["a"]}`, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "cache.jsonl")
			require.NoError(t, os.WriteFile(path, []byte(tt.text), 0o644))
			c, err := OpenCache(path)
			b, rerr := os.ReadFile(path)
			require.NoError(t, rerr)
			if tt.want == "" && tt.name != "torn first entry" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), "not a judge cache entry")
				assert.Equal(t, tt.text, string(b), "the file was changed")
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.text, string(b), "opening the cache changed it")
			require.NoError(t, c.Close())
			b, rerr = os.ReadFile(path)
			require.NoError(t, rerr)
			assert.Equal(t, tt.text, string(b), "a run without a judgment changed the cache")
			// The repair is made by the first judgment appended.
			c, err = OpenCache(path)
			require.NoError(t, err)
			require.NoError(t, c.Put(Entry{Key: "k9", Grade: 1}))
			require.NoError(t, c.Close())
			b, rerr = os.ReadFile(path)
			require.NoError(t, rerr)
			assert.Equal(t, tt.want+`{"key":"k9","grade":1,"reason":"","model":"","prompt_hash":"","repeat":0,"answer_format":"","prompt_tokens":0,"completion_tokens":0}`+"\n", string(b))
		})
	}
}

// Opening a cache writes nothing: a missing cache (and its directory) is
// created by the first judgment appended, so a run refused for its inputs
// after the cache was opened, or one that makes no judgment, leaves no empty
// cache behind (judge --run with a malformed run left
// .retrieval-gate-cache/judge.jsonl).
func TestOpenCacheCreatesNothingBeforeAPut(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "cache-dir", "judge.jsonl")
	c, err := OpenCache(path)
	require.NoError(t, err)
	require.NoError(t, c.Sync())
	require.NoError(t, c.Close())
	_, err = os.Stat(filepath.Dir(path))
	require.ErrorIs(t, err, os.ErrNotExist, "a cache without a judgment was created")

	c, err = OpenCache(path)
	require.NoError(t, err)
	require.NoError(t, c.Put(Entry{Key: "k1", Grade: 2}))
	require.NoError(t, c.Close())
	c, err = OpenCache(path)
	require.NoError(t, err)
	assert.Equal(t, 1, c.Loaded())
	require.NoError(t, c.Put(Entry{Key: "k2", Grade: 1}))
	require.NoError(t, c.Close())
	// A Put after Close is kept in memory only, as before.
	require.NoError(t, c.Put(Entry{Key: "k3", Grade: 1}))
	c, err = OpenCache(path)
	require.NoError(t, err)
	assert.Equal(t, 2, c.Loaded())
	require.NoError(t, c.Close())
}

// A UTF-8 BOM at the start of the judge cache is dropped, as every reader
// drops it (it was refused, ":1: not a judge cache entry"): the cache loads
// the entries of the same file without it, and the first judgment appended
// leaves the BOM and every byte after it as they were (a last entry without
// newline is ended, a torn last line dropped, after the BOM). A BOM that is
// not at the start is refused, the file left as it was.
func TestCacheBOM(t *testing.T) {
	const bom = "\xef\xbb\xbf"
	entry := `{"key":"k1","grade":2,"reason":"r","model":"m","prompt_hash":"h","repeat":0,"answer_format":"json","prompt_tokens":1,"completion_tokens":1}`
	put := `{"key":"k9","grade":1,"reason":"","model":"","prompt_hash":"","repeat":0,"answer_format":"","prompt_tokens":0,"completion_tokens":0}` + "\n"
	for _, tt := range []struct {
		name, text string
		loaded     int
		kept       string // the file's bytes before the appended judgment
	}{
		{"entry", bom + entry + "\n", 1, bom + entry + "\n"},
		{"entry, CRLF", bom + entry + "\r\n", 1, bom + entry + "\r\n"},
		{"blank first line", bom + "\n" + entry + "\n", 1, bom + "\n" + entry + "\n"},
		{"entry without newline", bom + entry, 1, bom + entry + "\n"},
		{"torn entry after entries", bom + entry + "\n" + `{"key":"k2","gra`, 1, bom + entry + "\n"},
		{"torn first entry", bom + `{"key":"k2","gra`, 0, bom},
		{"the BOM alone", bom, 0, bom},
	} {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "cache.jsonl")
			require.NoError(t, os.WriteFile(path, []byte(strings.TrimPrefix(tt.text, bom)), 0o644))
			plain, err := OpenCache(path)
			require.NoError(t, err)
			require.NoError(t, plain.Close())

			require.NoError(t, os.WriteFile(path, []byte(tt.text), 0o644))
			c, err := OpenCache(path)
			require.NoError(t, err)
			assert.Equal(t, tt.loaded, c.Loaded())
			assert.Equal(t, plain.entries, c.entries, "the entries of the file without its BOM")
			require.NoError(t, c.Put(Entry{Key: "k9", Grade: 1}))
			require.NoError(t, c.Close())
			b, err := os.ReadFile(path)
			require.NoError(t, err)
			assert.Equal(t, tt.kept+put, string(b))

			c, err = OpenCache(path)
			require.NoError(t, err)
			assert.Equal(t, tt.loaded+1, c.Loaded(), "read back with the new judgment")
			require.NoError(t, c.Close())
		})
	}
	path := filepath.Join(t.TempDir(), "cache.jsonl")
	text := entry + "\n" + bom + entry + "\n"
	require.NoError(t, os.WriteFile(path, []byte(text), 0o644))
	_, err := OpenCache(path)
	require.ErrorContains(t, err, "cache.jsonl:2: not a judge cache entry")
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, text, string(b))
}

// A TSV queries line past the line cap is refused at its line with what is
// wrong, as compare --queries says it (it said "bufio.Scanner: token too long").
func TestReadQueriesLongLine(t *testing.T) {
	long := "q0\tfine\nq1\t" + strings.Repeat("a", casefile.MaxLine) + "\n"
	_, err := ReadQueries(context.Background(), strings.NewReader(long), "q.tsv")
	require.EqualError(t, err, "q.tsv:2: line longer than 64 MiB")
}

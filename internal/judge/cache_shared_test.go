package judge_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/internal/judge"
)

// Two runs sharing one cache (two judge processes, each with its own open
// file) each keep what they paid for (docs/judge.md, "The cache": each
// judgment is appended as soon as it is made, and an interrupted or failed
// run keeps it). Each wrote at its own offset and the second's first append
// cut the file back to the length it had loaded ("a torn last line"), so the
// judgments the other had appended since were lost, or overwritten by its
// next lines. Whatever the file held at the start, every judgment of both
// runs is read back, and nothing else.
func TestCacheSharedByTwoRuns(t *testing.T) {
	entry := func(key string) string {
		return fmt.Sprintf(`{"key":%q,"grade":2,"reason":"r","model":"m","prompt_hash":"h","repeat":0,"answer_format":"json","prompt_tokens":1,"completion_tokens":1}`, key)
	}
	for _, tc := range []struct {
		name, start string
		kept        []string // the keys of start read back
	}{
		{"missing", "", nil},
		{"complete", entry("old") + "\n", []string{"old"}},
		{"last-line-without-newline", entry("old"), []string{"old"}},
		{"torn-last-line", entry("old") + "\n" + `{"key":"torn","gra`, []string{"old"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "cache.jsonl")
			if tc.start != "" {
				require.NoError(t, os.WriteFile(p, []byte(tc.start), 0o644))
			}
			a, err := judge.OpenCache(p)
			require.NoError(t, err)
			b, err := judge.OpenCache(p)
			require.NoError(t, err)
			put := func(c *judge.Cache, key string) {
				require.NoError(t, c.Put(judge.Entry{Key: key, Grade: 2, Reason: "r", Model: "m", PromptHash: "h", AnswerFormat: "json", PromptTokens: 1, CompletionTokens: 1}))
			}
			put(a, "a1")
			put(b, "b1")
			put(a, "a2")
			put(b, "b2")
			put(a, "a3")
			require.NoError(t, a.Close())
			require.NoError(t, b.Close())

			c, err := judge.OpenCache(p)
			require.NoError(t, err, "the cache reads back")
			defer c.Close()
			want := append(append([]string{}, tc.kept...), "a1", "b1", "a2", "b2", "a3")
			for _, k := range want {
				_, ok := c.Get(k)
				assert.True(t, ok, "judgment %s kept", k)
			}
			assert.Equal(t, len(want), c.Loaded())
		})
	}
}

// A run sharing the cache that is killed mid-write leaves a torn line at the
// end of the file; the next append of a run still going drops it (as the
// first append of a run does) instead of gluing its line to it, a line that
// would stop every later run at that line of the cache.
func TestCacheTornByAnotherRun(t *testing.T) {
	p := filepath.Join(t.TempDir(), "cache.jsonl")
	a, err := judge.OpenCache(p)
	require.NoError(t, err)
	put := func(key string) {
		require.NoError(t, a.Put(judge.Entry{Key: key, Grade: 1, Reason: "r", Model: "m", PromptHash: "h", AnswerFormat: "json"}))
	}
	put("a1")
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND, 0)
	require.NoError(t, err)
	_, err = f.WriteString(`{"key":"killed","grade":1,"rea`)
	require.NoError(t, err)
	require.NoError(t, f.Close())
	put("a2")
	require.NoError(t, a.Close())

	c, err := judge.OpenCache(p)
	require.NoError(t, err, "the cache reads back")
	defer c.Close()
	for _, k := range []string{"a1", "a2"} {
		_, ok := c.Get(k)
		assert.True(t, ok, "judgment %s kept", k)
	}
	assert.Equal(t, 2, c.Loaded())
}

package cli

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestJudgeInterruptedSaysWhatIsKept: an interrupted judge (SIGINT, SIGTERM:
// a cancelled context) exits 2, writes nothing and says what it kept: the
// judgments made are in the cache (docs/judge.md, "The cache"), or, with
// --cache none, nowhere. It said "in the cache" without one too.
func TestJudgeInterruptedSaysWhatIsKept(t *testing.T) {
	demo := filepath.Join("..", "..", "testdata", "demo")
	for _, tc := range []struct {
		name, cache, want string
	}{
		{"cache", "cache.jsonl", "judge: interrupted, nothing written (the judgments made are in the cache): context canceled"},
		{"no-cache", "none", "judge: interrupted, nothing written (no --cache: the judgments made are not kept): context canceled"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			cache := tc.cache
			if cache != "none" {
				cache = filepath.Join(dir, cache)
			}
			qrels := filepath.Join(dir, "out.qrels")
			ctx, cancel := context.WithCancel(t.Context())
			cancel()
			env, out, _ := checkEnv("")
			err := NewCmdJudge(NewFactory(env), nil).Run(ctx, []string{"--kb", filepath.Join(demo, "kb"), "--run", "demo=" + filepath.Join(demo, "cases.jsonl"),
				"--k", "2", "--judge-url", "http://127.0.0.1:1", "--judge-model", "m", "--cache", cache, "--qrels", qrels})
			assert.Equal(t, ExitInput, ExitCode(err))
			require.EqualError(t, err, tc.want)
			assert.NoFileExists(t, qrels)
			entries, rerr := os.ReadDir(dir)
			require.NoError(t, rerr)
			assert.Empty(t, entries, "nothing written")
			assert.Empty(t, out.String())
		})
	}
}

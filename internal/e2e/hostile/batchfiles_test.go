package hostile

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/internal/e2e/e2etest"
)

// TestHostileBatchFiles runs the built binary's judge and generate on the
// files of a batch that they read, each hostile: a --batch-in results file
// (the Batch API's output format) and the state file of a submitted batch
// (--batch: CACHE.batch.json of judge, OUT.batch.json of generate). Each is
// refused with exit 2 and an error naming the file and a line, before any
// request (the server's URL is a closed port: a request would fail with
// another error), with nothing written (no output, no judge cache) and the
// state file as it was. The readers' own messages are asserted in
// internal/judge and internal/generate.
func TestHostileBatchFiles(t *testing.T) {
	root, err := e2etest.Root()
	require.NoError(t, err)
	kb := filepath.Join(root, "testdata", "demo", "kb")
	cases := filepath.Join(root, "testdata", "demo", "cases.jsonl")
	const url = "http://127.0.0.1:1"
	deep := "[" + strings.Repeat("[", 20000) + strings.Repeat("]", 20000) + "]\n"
	results := map[string]string{
		"dup-key.jsonl":       `{"custom_id":"a","custom_id":"b","response":null,"error":{"code":"x","message":"y"}}` + "\n",
		"deep-nesting.jsonl":  deep,
		"not-an-object.jsonl": "[1, 2]\n",
	}
	states := map[string]string{
		"dup-key":      `{"schema":"retrieval-gate/judge-batch@1","batch_id":"b1","batch_id":"b2"}` + "\n",
		"deep-nesting": deep,
		"other-schema": `{"schema":"retrieval-gate/baseline@1","batch_id":"b1"}` + "\n",
	}
	type run struct {
		name, key string // key: of results, or of states when state is set
		args      func(dir, file string) []string
		state     string // the state file's path under dir, when file is one
	}
	var runs []run
	for name := range results {
		runs = append(runs,
			run{"judge --batch-in " + name, name, func(dir, file string) []string {
				return []string{"judge", "--kb", kb, "--run", "a=" + cases, "--k", "1", "--judge-url", url, "--qrels", filepath.Join(dir, "out", "q.txt"), "--cache", filepath.Join(dir, "out", "cache.jsonl"), "--batch-in", file}
			}, ""},
			run{"generate --batch-in " + name, name, func(dir, file string) []string {
				return []string{"generate", "--kb", kb, "--generator-url", url, "--out", filepath.Join(dir, "out", "g.jsonl"), "--batch-in", file}
			}, ""})
	}
	for name := range states {
		runs = append(runs,
			run{"judge --batch, state " + name, name, func(dir, _ string) []string {
				return []string{"judge", "--kb", kb, "--run", "a=" + cases, "--k", "1", "--judge-url", url, "--judge-model", "m", "--batch", "--batch-poll", "1ms", "--qrels", filepath.Join(dir, "out", "q.txt"), "--cache", filepath.Join(dir, "c", "cache.jsonl")}
			}, filepath.Join("c", "cache.jsonl.batch.json")},
			run{"generate --batch, state " + name, name, func(dir, _ string) []string {
				return []string{"generate", "--kb", kb, "--generator-url", url, "--generator-model", "m", "--batch", "--batch-poll", "1ms", "--out", filepath.Join(dir, "g", "g.jsonl")}
			}, filepath.Join("g", "g.jsonl.batch.json")})
	}
	for _, r := range runs {
		t.Run(r.name, func(t *testing.T) {
			dir := t.TempDir()
			var file, body string
			if r.state != "" {
				body = states[r.key]
				file = filepath.Join(dir, r.state)
				require.NoError(t, os.MkdirAll(filepath.Dir(file), 0o755))
			} else {
				body = results[r.key]
				file = filepath.Join(dir, "results.jsonl")
			}
			writeFile(t, file, []byte(body))
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, hostileBinary(), r.args(dir, file)...)
			cmd.Dir = dir
			cmd.Env = append(os.Environ(), "GITHUB_ACTIONS=", "CI=")
			var out bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &out
			err := cmd.Run()
			require.NoError(t, ctx.Err(), "still running after 20 s")
			assert.Equal(t, 2, e2etest.ExitCode(err), out.String())
			assert.Regexp(t, regexp.QuoteMeta(file)+`:[0-9]+: `, out.String())
			assert.NotContains(t, out.String(), "panic")
			assert.NotContains(t, out.String(), "unreachable", "a request was made")
			assert.NoDirExists(t, filepath.Join(dir, "out"), "an output or the judge cache was written")
			ents, err := os.ReadDir(filepath.Dir(file))
			require.NoError(t, err)
			assert.Len(t, ents, 1, "a file written beside %s", file)
			after, err := os.ReadFile(file)
			require.NoError(t, err)
			assert.Equal(t, body, string(after), "the file was modified")
		})
	}
}

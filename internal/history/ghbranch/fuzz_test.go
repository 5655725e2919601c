package ghbranch

import (
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/internal/github"
)

// The contents answer's decoder never panics, and what it accepts is content
// whose length is the answer's size (for base64), or nothing (for "none").
func FuzzDecodeContents(f *testing.F) {
	f.Add([]byte(`{"type":"file","sha":"8ab686eafeb1f44702738c8b0f24f2567c36da6d","size":13,"encoding":"base64","content":"SGVsbG8sIFdv\ncmxkIQ==\n"}`))
	f.Add([]byte(`{"type":"file","sha":"8ab686eafeb1f44702738c8b0f24f2567c36da6d","size":2000000,"encoding":"none","content":""}`))
	f.Add([]byte(`{"type":"file","sha":"x","size":-1,"encoding":"utf-8","content":"a"}`))
	f.Add([]byte(`[{"type":"dir"}]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var cf contentsFile
		if json.Unmarshal(data, &cf) != nil {
			return
		}
		b, err := cf.decode()
		if err != nil {
			assert.Nil(t, b)
			return
		}
		assert.True(t, validSHA(cf.SHA))
		if cf.Encoding == "none" {
			assert.Empty(t, b)
			return
		}
		assert.Equal(t, "base64", cf.Encoding)
		assert.Equal(t, cf.Size, int64(len(b)))
	})
}

// Whatever the event payload, event name and ref, the history branch is
// written only by a push, schedule or dispatch run of the repository itself
// (not a fork) on its default branch, never by a pull request's run.
func FuzzWriteAllowed(f *testing.F) {
	f.Add([]byte(`{"repository":{"default_branch":"main","fork":false}}`), "push", "refs/heads/main")
	f.Add([]byte(`{"repository":{"default_branch":"main","fork":true}}`), "push", "refs/heads/main")
	f.Add([]byte(`{"number":3,"pull_request":{"number":3,"head":{"repo":{"full_name":"a/b"}},"base":{"repo":{"full_name":"a/b"}}},"repository":{"default_branch":"main"}}`), "pull_request", "refs/heads/main")
	f.Add([]byte(`{"repository":{"default_branch":"main"}}`), "pull_request_target", "refs/heads/main")
	f.Add([]byte(`{"repository":{"default_branch":""}}`), "schedule", "refs/heads/")
	f.Add([]byte(`{"repository":{"default_branch":"main"}}`), "push", "refs/tags/main")
	// One event file per fuzz process, rewritten for each input (a worker runs
	// its inputs one at a time): a directory made and removed per input cost
	// more than the rest of the input's work.
	path := filepath.Join(f.TempDir(), "event.json")
	f.Fuzz(func(t *testing.T, payload []byte, event, ref string) {
		require.NoError(t, os.WriteFile(path, payload, 0o600))
		env := map[string]string{"GITHUB_ACTIONS": "true", "GITHUB_EVENT_NAME": event, "GITHUB_EVENT_PATH": path, "GITHUB_REF": ref, "GITHUB_REPOSITORY": "a/b"}
		a, err := github.ReadActions(func(k string) string { return env[k] }, io.Discard)
		if err != nil {
			return
		}
		ok, why := WriteAllowed(a)
		if !ok {
			require.NotEmpty(t, why)
			return
		}
		require.Contains(t, []string{"push", "schedule", "workflow_dispatch", "repository_dispatch"}, event)
		require.False(t, a.RepoFork)
		require.NotEmpty(t, a.DefaultBranch)
		require.Equal(t, "refs/heads/"+a.DefaultBranch, ref)
		require.Zero(t, a.PR)
	})
}

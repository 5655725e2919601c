package hostile

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/internal/e2e/e2etest"
	"github.com/retrieval-gate/retrieval-gate/internal/unixtest"
)

// TestHostileGit runs the built binary's git reader (calibrate --lock-base) on
// a git directory where a file git reads is a named pipe (issue 33 item 7:
// open(2) waited for a writer, still running 12 minutes after SIGTERM) or a
// symbolic link to a file outside the repository (item 14: the error printed
// that file's first line): each run ends at once with exit 2, and no output
// shows what the outside file holds. RG_HOSTILE_BINARY=PATH runs another
// binary (an older one, to see it fail).
func TestHostileGit(t *testing.T) {
	root, err := e2etest.Root()
	require.NoError(t, err)
	cal := filepath.Join(root, "testdata", "calibrate")
	secret := filepath.Join(t.TempDir(), "secret")
	writeFile(t, secret, []byte("root:SECRET-CONTENT:0:0\n"))
	for _, tc := range []struct {
		name   string
		path   string // under .git
		fifo   bool
		stderr string
		rev    string // --lock-base
	}{
		{"a FIFO as HEAD", "HEAD", true, "is not inside a git repository", ""},
		{"a FIFO as the branch", "refs/heads/main", true, "a named pipe", ""},
		{"a FIFO as packed-refs", "packed-refs", true, "a named pipe", ""},
		{"a FIFO as config", "config", true, "a named pipe", ""},
		{"HEAD a link out", "HEAD", false, "a symbolic link that leads out of the repository's git directory: not followed", "HEAD"},
		{"the branch a link out", "refs/heads/main", false, "a symbolic link that leads out of the repository's git directory: not followed", ""},
		{"packed-refs a link out", "packed-refs", false, "a symbolic link that leads out of the repository's git directory: not followed", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			g := filepath.Join(dir, ".git")
			for _, d := range []string{"objects/pack", "refs/heads"} {
				require.NoError(t, os.MkdirAll(filepath.Join(g, d), 0o755))
			}
			if tc.path != "HEAD" {
				writeFile(t, filepath.Join(g, "HEAD"), []byte("ref: refs/heads/main\n"))
			}
			p := filepath.Join(g, filepath.FromSlash(tc.path))
			if tc.fifo {
				unixtest.Mkfifo(t, p, 0o644)
			} else {
				require.NoError(t, os.Symlink(secret, p))
			}
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			args := calibrateArgs(dir, cal)
			if tc.rev != "" {
				args[len(args)-3] = tc.rev // --lock-base REV --comment never
			}
			cmd := exec.CommandContext(ctx, hostileBinary(), args...)
			cmd.Dir = dir
			cmd.Env = append(os.Environ(), "GITHUB_ACTIONS=", "CI=")
			var out bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &out
			start := time.Now()
			err := cmd.Run()
			require.NoError(t, ctx.Err(), "still running after 20 s")
			assert.Less(t, time.Since(start), 10*time.Second)
			assert.Equal(t, 2, e2etest.ExitCode(err), out.String())
			assert.Contains(t, out.String(), tc.stderr)
			assert.NotContains(t, out.String(), "SECRET")
			assert.NotContains(t, out.String(), "panic")
		})
	}
}

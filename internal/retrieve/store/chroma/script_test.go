package chroma

import (
	"bytes"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/internal/retrieve/store/chroma/chromatest"
	"github.com/retrieval-gate/retrieval-gate/internal/unixtest"
)

// repoRoot is this checkout's root, from the package's directory.
var repoRoot = filepath.Join("..", "..", "..", "..")

// chromaLocal runs scripts/chroma-local with its state in state.
func chromaLocal(t *testing.T, state string, arg string) (stdout, stderr string, err error) {
	t.Helper()
	return runScript(t, filepath.Join(repoRoot, "scripts", "chroma-local"), []string{"RETRIEVAL_GATE_CHROMA_STATE=" + state}, arg)
}

// runScript runs script with arg, in the test's environment without
// RETRIEVAL_GATE_CHROMA_STATE and with env added.
func runScript(t *testing.T, script string, env []string, arg string) (stdout, stderr string, err error) {
	t.Helper()
	cmd := exec.Command(script, arg)
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "RETRIEVAL_GATE_CHROMA_STATE=") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, env...)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err = cmd.Run()
	return o.String(), e.String(), err
}

// checkout makes another checkout of this one in a new directory: its own copy
// of scripts/chroma-local, and links to everything else at the root (the
// installed tools/chroma among them). It returns the copy's path.
func checkout(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	root, err := filepath.Abs(repoRoot)
	require.NoError(t, err)
	entries, err := os.ReadDir(root)
	require.NoError(t, err)
	for _, e := range entries {
		if e.Name() != "scripts" {
			require.NoError(t, os.Symlink(filepath.Join(root, e.Name()), filepath.Join(dir, e.Name())))
		}
	}
	src, err := os.ReadFile(filepath.Join(root, "scripts", "chroma-local"))
	require.NoError(t, err)
	script := filepath.Join(dir, "scripts", "chroma-local")
	require.NoError(t, os.Mkdir(filepath.Dir(script), 0o755))
	require.NoError(t, os.WriteFile(script, src, 0o755))
	return script
}

// heartbeat fails the test unless url answers Chroma's heartbeat.
func heartbeat(t *testing.T, url string) {
	t.Helper()
	resp, err := http.Get(strings.TrimRight(url, "/") + "/api/v2/heartbeat")
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode, url)
}

// lastLine is the last line of out (start's URL).
func lastLine(out string) string {
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	return lines[len(lines)-1]
}

// glibcBefore239 reports whether this machine's C library is glibc older than 2.39.
func glibcBefore239(t *testing.T) bool {
	out, err := exec.Command("getconf", "GNU_LIBC_VERSION").Output()
	if err != nil {
		return false
	}
	m := regexp.MustCompile(`glibc (\d+)\.(\d+)`).FindStringSubmatch(string(out))
	if m == nil {
		return false
	}
	major, _ := strconv.Atoi(m[1])
	minor, _ := strconv.Atoi(m[2])
	return major < 2 || (major == 2 && minor < 39)
}

// scripts/chroma-local of two checkouts (links to this one, each its own copy
// of the script), with the default state (no RETRIEVAL_GATE_CHROMA_STATE),
// started at once: each checkout runs its own server next to the one at
// $CHROMA_URL (its own state directory, a free port; both used to share
// ${TMPDIR:-/tmp}/retrieval-gate-chroma, and the second start answered with
// the first's URL). The base URL is the last line of stdout and answers its
// heartbeat, a second start reuses it, the glibc steps are applied exactly
// when the machine needs them, and stop ends that checkout's process with
// SIGINT and leaves the other checkout's answering.
func TestChromaLocalScript(t *testing.T) {
	other := chromatest.URL(t) // runs where a Chroma server can run
	tmp := t.TempDir()
	env := []string{"TMPDIR=" + tmp}
	a, b := checkout(t), checkout(t)
	dirA, _, err := runScript(t, a, env, "dir")
	require.NoError(t, err)
	dirB, _, err := runScript(t, b, env, "dir")
	require.NoError(t, err)
	assert.NotEqual(t, dirA, dirB)
	for _, d := range []string{dirA, dirB} {
		assert.Regexp(t, `^`+regexp.QuoteMeta(tmp)+`/retrieval-gate-chroma-[0-9a-f]{12}\n$`, d)
	}
	t.Cleanup(func() {
		_, _, _ = runScript(t, a, env, "stop")
		_, _, _ = runScript(t, b, env, "stop")
	})

	type started struct {
		out, errOut string
		err         error
	}
	startB := make(chan started, 1)
	go func() {
		out, errOut, err := runScript(t, b, env, "start")
		startB <- started{out, errOut, err}
	}()
	out, errOut, err := runScript(t, a, env, "start")
	require.NoError(t, err, errOut)
	urlA := lastLine(out)
	require.Regexp(t, `^http://127\.0\.0\.1:\d+$`, urlA, "stdout: %q", out)
	assert.NotEqual(t, strings.TrimRight(other, "/"), urlA, "a free port, not the other server's")
	if glibcBefore239(t) {
		assert.Contains(t, errOut, "glibc < 2.39: applying the compatibility steps")
	} else {
		assert.NotContains(t, errOut, "compatibility steps")
	}
	heartbeat(t, urlA)
	sb := <-startB
	require.NoError(t, sb.err, sb.errOut)
	assert.NotContains(t, sb.errOut, "already running")
	urlB := lastLine(sb.out)
	require.Regexp(t, `^http://127\.0\.0\.1:\d+$`, urlB, "stdout: %q", sb.out)
	require.NotEqual(t, urlA, urlB)
	heartbeat(t, urlB)

	pidText, err := os.ReadFile(filepath.Join(strings.TrimSpace(dirA), "chroma.pid"))
	require.NoError(t, err)
	pid, err := strconv.Atoi(strings.TrimSpace(string(pidText)))
	require.NoError(t, err)
	require.NoError(t, unixtest.Signal0(t, pid), "server process alive")

	out, errOut, err = runScript(t, a, env, "start")
	require.NoError(t, err, errOut)
	assert.Contains(t, errOut, "already running")
	assert.Equal(t, urlA, strings.TrimSpace(out))

	out, _, err = runScript(t, a, env, "status")
	require.NoError(t, err)
	assert.Equal(t, urlA, strings.TrimSpace(out))

	_, errOut, err = runScript(t, a, env, "stop")
	require.NoError(t, err, errOut)
	assert.Contains(t, errOut, "stopped (pid "+strconv.Itoa(pid)+")")
	require.Error(t, unixtest.Signal0(t, pid), "server process gone after stop")
	if resp, err := http.Get(urlA + "/api/v2/heartbeat"); err == nil {
		_ = resp.Body.Close() // the answer itself is the failure
		t.Fatalf("something still answers at %s after stop: HTTP %d", urlA, resp.StatusCode)
	}
	_, _, err = runScript(t, a, env, "status")
	require.Error(t, err, "status fails when not running")

	// The other checkout's server, and the one at $CHROMA_URL, are untouched.
	heartbeat(t, urlB)
	out, _, err = runScript(t, b, env, "status")
	require.NoError(t, err)
	assert.Equal(t, urlB, strings.TrimSpace(out))
	heartbeat(t, other)
}

// A pid file whose process has gone, or whose pid now names another process,
// is stale: status says so and fails, and stop signals nothing (the other
// process lives on) and removes it. stop used to send that pid SIGINT.
func TestChromaLocalStaleState(t *testing.T) {
	gone := exec.Command("true")
	require.NoError(t, gone.Run())
	other := exec.Command("sleep", "60")
	require.NoError(t, other.Start())
	t.Cleanup(func() { _ = other.Process.Kill(); _ = other.Wait() })
	for _, tc := range []struct {
		name string
		pid  int
		want string
	}{
		{"process gone", gone.Process.Pid, "is gone (removed)"},
		{"pid of another process", other.Process.Pid, "is not its server (removed, nothing signalled)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, arg := range []string{"status", "stop"} {
				state := t.TempDir()
				pidfile, urlfile := filepath.Join(state, "chroma.pid"), filepath.Join(state, "chroma.url")
				require.NoError(t, os.WriteFile(pidfile, []byte(strconv.Itoa(tc.pid)+"\n"), 0o644))
				require.NoError(t, os.WriteFile(urlfile, []byte("http://127.0.0.1:9\n"), 0o644))
				out, errOut, err := chromaLocal(t, state, arg)
				if arg == "status" {
					require.Error(t, err)
				} else {
					require.NoError(t, err, errOut)
				}
				assert.Empty(t, out)
				assert.Contains(t, errOut, "chroma-local: stale state in "+state+": pid "+strconv.Itoa(tc.pid)+" "+tc.want, arg)
				assert.Contains(t, errOut, "not running", arg)
				assert.NoFileExists(t, pidfile)
				assert.NoFileExists(t, urlfile)
			}
			require.NoError(t, unixtest.Signal0(t, other.Process.Pid), "the other process was not signalled")
		})
	}
}

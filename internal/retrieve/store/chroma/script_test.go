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

// chromaLocal runs scripts/chroma-local with its state in state.
func chromaLocal(t *testing.T, state string, arg string) (stdout, stderr string, err error) {
	t.Helper()
	cmd := exec.Command(filepath.Join("..", "..", "..", "..", "scripts", "chroma-local"), arg)
	cmd.Env = append(os.Environ(), "RETRIEVAL_GATE_CHROMA_STATE="+state)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err = cmd.Run()
	return o.String(), e.String(), err
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

// scripts/chroma-local starts a second, independent server (its own state
// directory, a free port) next to the one at $CHROMA_URL: the base URL is the last
// line of stdout and answers its heartbeat, a second start reuses it, the glibc
// steps are applied exactly when the machine needs them, and stop ends the
// process with SIGINT.
func TestChromaLocalScript(t *testing.T) {
	other := chromatest.URL(t) // runs where a Chroma server can run
	state := t.TempDir()
	t.Cleanup(func() { _, _, _ = chromaLocal(t, state, "stop") })

	out, errOut, err := chromaLocal(t, state, "start")
	require.NoError(t, err, errOut)
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	url := lines[len(lines)-1]
	require.Regexp(t, `^http://127\.0\.0\.1:\d+$`, url, "stdout: %q", out)
	assert.NotEqual(t, strings.TrimRight(other, "/"), url, "a free port, not the other server's")
	if glibcBefore239(t) {
		assert.Contains(t, errOut, "glibc < 2.39: applying the compatibility steps")
	} else {
		assert.NotContains(t, errOut, "compatibility steps")
	}
	resp, err := http.Get(url + "/api/v2/heartbeat")
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode)

	pidText, err := os.ReadFile(filepath.Join(state, "chroma.pid"))
	require.NoError(t, err)
	pid, err := strconv.Atoi(strings.TrimSpace(string(pidText)))
	require.NoError(t, err)
	require.NoError(t, unixtest.Signal0(t, pid), "server process alive")

	out, errOut, err = chromaLocal(t, state, "start")
	require.NoError(t, err, errOut)
	assert.Contains(t, errOut, "already running")
	assert.Equal(t, url, strings.TrimSpace(out))

	out, _, err = chromaLocal(t, state, "status")
	require.NoError(t, err)
	assert.Equal(t, url, strings.TrimSpace(out))

	_, errOut, err = chromaLocal(t, state, "stop")
	require.NoError(t, err, errOut)
	assert.Contains(t, errOut, "stopped (pid "+strconv.Itoa(pid)+")")
	require.Error(t, unixtest.Signal0(t, pid), "server process gone after stop")
	if resp, err := http.Get(url + "/api/v2/heartbeat"); err == nil {
		_ = resp.Body.Close() // the answer itself is the failure
		t.Fatalf("something still answers at %s after stop: HTTP %d", url, resp.StatusCode)
	}
	_, _, err = chromaLocal(t, state, "status")
	require.Error(t, err, "status fails when not running")

	// The other server is untouched.
	resp, err = http.Get(strings.TrimRight(other, "/") + "/api/v2/heartbeat")
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode)
}

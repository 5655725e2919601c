package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/internal/e2e/e2etest"
)

// The test binary is the command when LLMFAKE_MAIN=1: TestServe runs it as a
// process of its own, wired to signals by main.
func TestMain(m *testing.M) {
	if os.Getenv("LLMFAKE_MAIN") == "1" {
		main()
		return
	}
	os.Exit(m.Run())
}

// start runs the command with args (by default on a free loopback port) and
// returns it with its URL.
func start(t *testing.T, args ...string) (*exec.Cmd, string, *e2etest.LockedBuffer) {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	// Under -race the runtime sleeps a second at exit (GORACE atexit_sleep_ms,
	// default 1000) before the process ends; the command itself is what is timed.
	cmd.Env = append(os.Environ(), "LLMFAKE_MAIN=1", "GORACE=atexit_sleep_ms=0")
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	stderr := &e2etest.LockedBuffer{}
	cmd.Stderr = stderr
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	url := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(stdout).ReadString('\n')
		url <- strings.TrimSpace(line)
		_, _ = io.Copy(io.Discard, stdout)
	}()
	select {
	case u := <-url:
		require.True(t, strings.HasPrefix(u, "http://127.0.0.1:"), "the first line of stdout is the URL: %q (stderr %s)", u, stderr.String())
		return cmd, u, stderr
	case <-time.After(30 * time.Second):
		t.Fatalf("no URL on stdout; stderr: %s", stderr.String())
	}
	return nil, "", nil
}

func chat(ctx context.Context, url, user string) (*http.Response, error) {
	body := `{"model": "any", "temperature": 0, "messages": [{"role": "user", "content": ` + jsonString(user) + `}]}`
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url+"/v1/chat/completions", strings.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	return http.DefaultClient.Do(req)
}

func jsonString(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`)
	return `"` + r.Replace(s) + `"`
}

// stopped signals the command and returns how long it took to exit, and its code.
func stopped(t *testing.T, cmd *exec.Cmd, sig syscall.Signal) (time.Duration, int) {
	t.Helper()
	begin := time.Now()
	require.NoError(t, cmd.Process.Signal(sig))
	err := cmd.Wait()
	took := time.Since(begin)
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return took, ee.ExitCode()
	}
	require.NoError(t, err)
	return took, 0
}

// Built, it serves the chat-completions protocol on loopback, grades a (query,
// document) pair by its rule, says on stderr that it is a rule and not a model,
// and stops within a second of SIGINT or SIGTERM, even with an answer in flight.
func TestServe(t *testing.T) {
	judgePrompt := "Grade the document.\n<query>\nrefund window days\n</query>\n<document>\nThe refund window is 30 days.\n</document>\n"
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			t.Parallel()
			cmd, url, stderr := start(t)
			resp, err := chat(context.Background(), url, judgePrompt)
			require.NoError(t, err)
			data, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			require.NoError(t, err)
			require.Equal(t, http.StatusOK, resp.StatusCode, "%s", data)
			assert.Contains(t, string(data), `Final score: 3`, "every word of the query is in the document")
			assert.Contains(t, stderr.String(), "it grades by a rule, not a model")

			took, code := stopped(t, cmd, sig)
			assert.Less(t, took, time.Second)
			assert.Equal(t, 0, code, stderr.String())
		})
	}
	t.Run("an answer in flight", func(t *testing.T) {
		t.Parallel()
		cmd, url, stderr := start(t, "-delay", "1m")
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		go func() {
			if resp, err := chat(ctx, url, judgePrompt); err == nil {
				resp.Body.Close()
			}
		}()
		time.Sleep(300 * time.Millisecond)
		took, code := stopped(t, cmd, syscall.SIGTERM)
		assert.Less(t, took, time.Second)
		assert.Equal(t, 0, code, stderr.String())
	})
}

func TestBadFlags(t *testing.T) {
	for _, args := range [][]string{{"-addr", "127.0.0.1:notaport"}, {"extra"}, {"-qrels", "q.trec"}} {
		var out, errb bytes.Buffer
		cmd := exec.Command(os.Args[0], args...)
		cmd.Env = append(os.Environ(), "LLMFAKE_MAIN=1")
		cmd.Stdout, cmd.Stderr = &out, &errb
		err := cmd.Run()
		var ee *exec.ExitError
		require.ErrorAs(t, err, &ee, "%v", args)
		assert.Equal(t, 2, ee.ExitCode(), "%v", args)
		assert.Contains(t, errb.String(), "llmfake", "%v", args)
		assert.Empty(t, out.String())
	}
}

// Issue 32 item 12: with no -addr it listens on a free port of 127.0.0.1 and
// prints its URL, so two of them (or one beside a server on 8000) both start.
func TestDefaultAddressIsAFreePort(t *testing.T) {
	_, a, _ := start(t)
	_, b, stderr := start(t)
	assert.NotEqual(t, a, b)
	for _, u := range []string{a, b} {
		assert.Regexp(t, `^http://127\.0\.0\.1:[0-9]+$`, u)
		resp, err := chat(context.Background(), u, "<query>\nrefund\n</query>\n<document>\nrefund\n</document>\n")
		require.NoError(t, err)
		resp.Body.Close()
		assert.Equal(t, http.StatusOK, resp.StatusCode)
	}
	assert.Contains(t, stderr.String(), "/rerank reranks by the share of the query's words in each text (TEI's protocol), not a cross-encoder")
}

// Its /rerank speaks TEI's protocol ({"query", "texts"} -> [{"index",
// "score"}], best first; 413 beyond 32 texts; 422 for a malformed body; POST
// only) and scores by word overlap.
func TestRerank(t *testing.T) {
	_, url, _ := start(t)
	post := func(body string) (int, string) {
		resp, err := http.Post(url+"/rerank", "application/json", strings.NewReader(body))
		require.NoError(t, err)
		defer resp.Body.Close()
		data, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		return resp.StatusCode, string(data)
	}
	code, body := post(`{"query": "refund window days", "texts": ["invoices by email", "the refund window is 30 days", "a refund is possible"]}`)
	require.Equal(t, http.StatusOK, code, body)
	var items []struct {
		Index int     `json:"index"`
		Score float64 `json:"score"`
	}
	require.NoError(t, json.Unmarshal([]byte(body), &items))
	require.Len(t, items, 3)
	assert.Equal(t, []int{1, 2, 0}, []int{items[0].Index, items[1].Index, items[2].Index}, "best first")
	assert.InDelta(t, 1.0, items[0].Score, 1e-12, "every word of the query")
	assert.InDelta(t, 1.0/3, items[1].Score, 1e-12, "one of three")
	assert.InDelta(t, 0.0, items[2].Score, 1e-12)

	texts := make([]string, 33)
	for i := range texts {
		texts[i] = fmt.Sprintf("%q", "text")
	}
	code, _ = post(`{"query": "q", "texts": [` + strings.Join(texts, ",") + `]}`)
	assert.Equal(t, http.StatusRequestEntityTooLarge, code, "beyond TEI's default --max-client-batch-size")
	code, _ = post(`{"query": `)
	assert.Equal(t, http.StatusUnprocessableEntity, code)
	resp, err := http.Get(url + "/rerank")
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusMethodNotAllowed, resp.StatusCode)
}

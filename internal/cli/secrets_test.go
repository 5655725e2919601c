package cli

import (
	"context"
	"fmt"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/internal/e2e/e2etest"
	"github.com/retrieval-gate/retrieval-gate/internal/llm"
	"github.com/retrieval-gate/retrieval-gate/internal/llm/llmtest"
)

// An evaluation whose chat server is given with credentials in its URL (user
// information, which Go's client sends as Basic credentials, and an API key
// in the environment, sent as "Authorization: Bearer": OpenAI's
// platform.openai.com/docs/api-reference/authentication) writes none of them
// anywhere: not in stages.txt, the reports, the judge's cache and judgments,
// the cases, nor on standard error. The chat server is llmtest's stand-in.
func TestEvaluateWritesNoSecret(t *testing.T) {
	const pw, key = "pw-Jx4Nb8Qs2Vg6Lt0", "sk-proj-Fw5Zc9Mr3Yk7Pd1"
	srv := llmtest.New(llmtest.Options{})
	defer srv.Close()
	dir := t.TempDir()
	kb := filepath.Join(dir, "kb.jsonl")
	require.NoError(t, os.WriteFile(kb, []byte(evaluateKB), 0o644))
	out := filepath.Join(dir, "out")
	judgeURL := strings.Replace(srv.URL, "http://", "http://user:"+pw+"@", 1)
	var stderr e2etest.LockedBuffer
	err := NewCmdEvaluate(NewFactory(retrieveEnv(&stderr, map[string]string{"RETRIEVAL_GATE_LLM_API_KEY": key})), nil).Run(context.Background(), []string{
		"--kb", kb, "--out", out, "--judge-url", judgeURL, "--judge-model", "fake",
		"--per-locale", "2", "--k", "3", "--bootstrap", "200"})
	require.NoError(t, err, stderr.String())
	texts := readTree(t, dir)
	texts["stderr"] = stderr.String()
	require.Contains(t, texts, filepath.Join(out, "stages.txt"))
	assertNoSecretRun(t, texts, pw, key)
}

// readTree is the text of every file under dir but those named skip (the
// run's inputs), by path.
func readTree(t *testing.T, dir string, skip ...string) map[string]string {
	t.Helper()
	texts := map[string]string{}
	require.NoError(t, filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || slices.Contains(skip, d.Name()) {
			return err
		}
		b, err := os.ReadFile(path)
		texts[path] = string(b)
		return err
	}))
	return texts
}

// assertNoSecretRun fails t for each text (by name) that holds 8 characters
// in a row of a secret, in any case.
func assertNoSecretRun(t *testing.T, texts map[string]string, secrets ...string) {
	t.Helper()
	for name, text := range texts {
		text = strings.ToLower(text)
		for _, secret := range secrets {
			for j := 0; j+8 <= len(secret); j++ {
				if strings.Contains(text, strings.ToLower(secret[j:j+8])) {
					t.Errorf("%s holds %q of a secret:\n%s", name, secret[j:j+8], text)
					break
				}
			}
		}
	}
}

// A command's error that names its server by the URL it was given (the chat
// client's "URL: chat-completions response has no choices") shows the URL's
// credentials as ***, on standard error and in the Actions annotation alike.
func TestErrorHidesURLCredentials(t *testing.T) {
	const pw = "pw-Cv7Hn1Rj5Wb9Ge3"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte(`{"choices":[]}`))
	}))
	defer srv.Close()
	dir := t.TempDir()
	kb := filepath.Join(dir, "kb.jsonl")
	require.NoError(t, os.WriteFile(kb, []byte(evaluateKB), 0o644))
	var stderr e2etest.LockedBuffer
	u := strings.Replace(srv.URL, "http://", "http://user:"+pw+"@", 1) + "/v1?key=" + pw
	code := RunFactory(context.Background(), NewFactory(retrieveEnv(&stderr, nil)),
		[]string{"generate", "--kb", kb, "--out", filepath.Join(dir, "g.jsonl"), "--generator-url", u, "--per-locale", "1"})
	assert.NotEqual(t, 0, code)
	assert.Contains(t, stderr.String(), "has no choices")
	assert.NotContains(t, stderr.String(), pw[:8])
}

// The secrets the last redaction knows include every batch provider's key
// variable (llm.ProviderKeyEnv: ANTHROPIC_API_KEY, GEMINI_API_KEY,
// GOOGLE_API_KEY), not only OpenAI's.
func TestSecretsKnowEveryProviderKey(t *testing.T) {
	vars := map[string]string{}
	for _, names := range llm.ProviderKeyEnv {
		for _, name := range names {
			vars[name] = "key-of-" + name
		}
	}
	var stderr e2etest.LockedBuffer
	got := NewFactory(retrieveEnv(&stderr, vars)).secrets()
	for _, v := range vars {
		assert.Contains(t, got, v)
	}
}

// judge against a chat server (a stand-in of OpenAI's chat completions) that
// refuses every request with an error echoing the key, upper-cased and
// JSON-escaped: the run stops, and nothing it wrote (standard error, the cache,
// any output) holds 8 characters of the key in a row.
func TestJudgeWritesNoEchoedKey(t *testing.T) {
	const key = "sk-proj-Ua3Ke7Vf1Wb5Xc9"
	var escaped strings.Builder
	for i := range len(key) {
		escaped.WriteString(fmt.Sprintf(`\u%04x`, key[i]))
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusBadRequest)
		_, _ = fmt.Fprintf(w, `{"error":{"message":"key %s refused","type":"%s","code":"invalid_api_key"}}`, strings.ToUpper(key), escaped.String())
	}))
	defer srv.Close()
	dir := t.TempDir()
	t.Chdir(dir)
	require.NoError(t, os.WriteFile("run.jsonl", []byte(`{"id":"c1","query":"q","must_cite_one_of":["a"],"retrieved":["a"]}`+"\n"), 0o644))
	require.NoError(t, os.WriteFile("kb.jsonl", []byte(`{"id":"a","text":"alpha"}`+"\n"), 0o644))
	_, stdout, stderr := runIn(t, map[string]string{"RETRIEVAL_GATE_LLM_API_KEY": key}, "judge", "--judge-url", srv.URL, "--judge-model", "m",
		"--run", "a=run.jsonl", "--kb", "kb.jsonl", "--qrels", "q.txt", "--cache", "cache.jsonl", "--judgments", "j.jsonl", "--json", "j.json")
	texts := map[string]string{"stdout": stdout, "stderr": stderr}
	for _, name := range []string{"q.txt", "cache.jsonl", "j.jsonl", "j.json"} {
		if b, err := os.ReadFile(name); err == nil {
			texts[name] = string(b)
		}
	}
	require.Contains(t, stderr, "refused", "the server's message is shown")
	for name, text := range texts {
		text = strings.ToLower(text)
		for j := 0; j+8 <= len(key); j++ {
			if strings.Contains(text, strings.ToLower(key[j:j+8])) {
				t.Errorf("%s holds %q of the key:\n%s", name, key[j:j+8], text)
				break
			}
		}
	}
}

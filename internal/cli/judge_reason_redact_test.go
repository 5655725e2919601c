package cli

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/internal/llm/llmtest"
)

// judge against a hostile judge (llmtest's [[echo-key]]: the reason of every
// answer, and the answer of [[malformed]], which the detail of an unjudged
// judgment quotes, hold the credential the request carried) online, through
// each batch provider's API (OpenAI's Batch API, Anthropic's Message Batches,
// Gemini's batch mode) and in the file mode of a batch engine such as vLLM's
// run-batch (--batch-out, the engine answering each request, --batch-in): no
// output file, no cache or state file, neither standard output nor standard
// error holds 8 characters of the key (or of the URL's password) in a row;
// the reasons and the detail say "***" where the model wrote it. The key has
// no shape a credential is found by: it is redacted because the process was
// given it.
func TestJudgeReasonsWriteNoKey(t *testing.T) {
	const key = "local-judge-key-Hq2Vx8Lm4Tz6"
	const pw = "pw-Rf4Dc8Xs2Wq6Ez0"
	keyEnv := map[string]string{"RETRIEVAL_GATE_LLM_API_KEY": key}
	batch := []string{"--batch", "--batch-poll", "10ms"}
	for _, tc := range []struct {
		name    string
		apiKey  string // the stand-in's key: it refuses any other
		env     map[string]string
		userPW  bool     // --judge-url carries user:pw (no key: sent as Basic credentials)
		args    []string // besides the common ones
		file    bool     // --batch-out, the engine's answers, --batch-in
		secrets []string
	}{
		{name: "online", apiKey: key, env: keyEnv, secrets: []string{key}},
		{name: "online, the URL's credentials", userPW: true, secrets: []string{pw}},
		{name: "openai batch", apiKey: key, env: keyEnv, args: batch, secrets: []string{key}},
		{name: "anthropic batch", apiKey: key, env: keyEnv, args: append([]string{"--batch-api", "anthropic"}, batch...), secrets: []string{key}},
		{name: "gemini batch", apiKey: key, env: keyEnv, args: append([]string{"--batch-api", "gemini"}, batch...), secrets: []string{key}},
		{name: "batch engine's file", apiKey: key, env: keyEnv, file: true, secrets: []string{key}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := llmtest.New(llmtest.Options{APIKey: tc.apiKey})
			defer srv.Close()
			dir := t.TempDir()
			t.Chdir(dir)
			require.NoError(t, os.WriteFile("kb.jsonl", []byte(`{"id":"a","text":"alpha one"}`+"\n"+`{"id":"b","text":"beta two"}`+"\n"), 0o644))
			require.NoError(t, os.WriteFile("run.jsonl", []byte(`{"id":"c1","query":"alpha [[echo-key]]","must_cite_one_of":["a"],"retrieved":["a","b"]}`+"\n"+
				`{"id":"c2","query":"beta [[echo-key]] [[malformed]]","must_cite_one_of":["b"],"retrieved":["b"]}`+"\n"), 0o644))
			u := srv.URL
			if tc.userPW {
				u = strings.Replace(u, "http://", "http://judge:"+pw+"@", 1)
			}
			common := []string{"judge", "--judge-url", u, "--judge-model", "fake", "--run", "a=run.jsonl", "--kb", "kb.jsonl", "--k", "2", "--cache", "cache.jsonl"}
			texts := map[string]string{}
			if tc.file {
				code, stdout, stderr := runIn(t, tc.env, append(common, "--batch-out", "requests.jsonl")...)
				require.Equal(t, 0, code, stderr)
				texts["stdout of --batch-out"], texts["stderr of --batch-out"] = stdout, stderr
				require.NoError(t, os.WriteFile("results.jsonl", engineAnswers(t, srv.URL, key, "requests.jsonl"), 0o644))
				tc.args = []string{"--batch-in", "results.jsonl"}
			}
			code, stdout, stderr := runIn(t, tc.env, append(append(common, "--qrels", "q.txt", "--judgments", "j.jsonl", "--json", "j.json"), tc.args...)...)
			require.Equal(t, 0, code, stderr)
			maps.Copy(texts, readTree(t, dir, "results.jsonl")) // the inputs left out
			texts["stdout"], texts["stderr"] = stdout, stderr
			for _, name := range []string{"j.jsonl", "cache.jsonl", "j.json"} {
				require.Contains(t, texts, filepath.Join(dir, name))
			}
			// The model's words are kept, the key replaced: the reason in
			// the labels and the cache, the unreadable answer in the report.
			assert.Contains(t, texts[filepath.Join(dir, "j.jsonl")], "says the key ***", "the reason")
			assert.Contains(t, texts[filepath.Join(dir, "cache.jsonl")], "says the key ***", "the cached reason")
			assert.Contains(t, texts[filepath.Join(dir, "j.json")], `looks quite relevant to me, says the key ***.`, "the unreadable answer's detail")
			assertNoSecretRun(t, texts, tc.secrets...)
		})
	}
}

// engineAnswers is the results file a batch engine (vLLM's run-batch) writes
// for the requests file at path: each request's body answered by the chat
// server at url with key, as an OpenAI Batch API output line.
func engineAnswers(t *testing.T, url, key, path string) []byte {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	var out bytes.Buffer
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for n := 1; sc.Scan(); n++ {
		var req struct {
			CustomID string          `json:"custom_id"`
			Body     json.RawMessage `json:"body"`
		}
		require.NoError(t, json.Unmarshal(sc.Bytes(), &req))
		hr, err := http.NewRequest(http.MethodPost, url+"/v1/chat/completions", bytes.NewReader(req.Body))
		require.NoError(t, err)
		hr.Header.Set("Authorization", "Bearer "+key)
		resp, err := http.DefaultClient.Do(hr)
		require.NoError(t, err)
		body, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		require.NoError(t, resp.Body.Close())
		require.Equal(t, http.StatusOK, resp.StatusCode, string(body))
		line, err := json.Marshal(map[string]any{"id": fmt.Sprintf("vllm-%d", n), "custom_id": req.CustomID,
			"response": map[string]any{"status_code": 200, "request_id": fmt.Sprintf("req-%d", n), "body": json.RawMessage(bytes.TrimSpace(body))}, "error": nil})
		require.NoError(t, err)
		out.Write(append(line, '\n'))
	}
	require.NoError(t, sc.Err())
	return out.Bytes()
}

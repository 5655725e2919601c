package cli

import (
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/internal/llm/llmtest"
)

// generate against a hostile generator (llmtest's [[echo-key]]: the first
// question and the first keyword query it writes for the card quote the
// credential the request carried) online, through the Batch API and in the
// file mode of a batch engine such as vLLM's run-batch (--batch-out, the
// engine answering each request, --batch-in): no output file, no state file,
// neither standard output nor standard error holds 8 characters of the key
// (or of the URL's password) in a row. The queries that quoted it are
// dropped, and a warning on standard error counts them; the card's other
// queries, and the other card's, are written. The key has no shape a
// credential is found by: it is found because the process was given it.
func TestGenerateQueriesWriteNoKey(t *testing.T) {
	const key = "local-gen-key-Pw7Ns3Kd9Yb5"
	const pw = "pw-Lt6Gh2Mv8Qc4Zr1"
	keyEnv := map[string]string{"RETRIEVAL_GATE_LLM_API_KEY": key}
	for _, tc := range []struct {
		name    string
		apiKey  string // the stand-in's key: it refuses any other
		env     map[string]string
		userPW  bool     // --generator-url carries user:pw (no key: sent as Basic credentials)
		args    []string // besides the common ones
		file    bool     // --batch-out, the engine's answers, --batch-in
		secrets []string
	}{
		{name: "online", apiKey: key, env: keyEnv, secrets: []string{key}},
		{name: "online, the URL's credentials", userPW: true, secrets: []string{pw}},
		{name: "openai batch", apiKey: key, env: keyEnv, args: []string{"--batch", "--batch-poll", "10ms"}, secrets: []string{key}},
		{name: "batch engine's file", apiKey: key, env: keyEnv, file: true, secrets: []string{key}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := llmtest.New(llmtest.Options{APIKey: tc.apiKey})
			defer srv.Close()
			dir := t.TempDir()
			t.Chdir(dir)
			require.NoError(t, os.WriteFile("kb.jsonl", []byte(`{"id":"a","text":"alpine meadows bloom with gentian flowers [[echo-key]]"}`+"\n"+
				`{"id":"b","text":"harbour cranes unload container ships overnight"}`+"\n"), 0o644))
			u := srv.URL
			if tc.userPW {
				u = strings.Replace(u, "http://", "http://gen:"+pw+"@", 1)
			}
			common := []string{"generate", "--kb", "kb.jsonl", "--generator-model", "fake", "--per-locale", "2", "--questions", "2", "--keywords", "1"}
			texts := map[string]string{}
			if tc.file {
				code, stdout, stderr := runIn(t, tc.env, append(common, "--batch-out", "requests.jsonl")...)
				require.Equal(t, 0, code, stderr)
				texts["stdout of --batch-out"], texts["stderr of --batch-out"] = stdout, stderr
				require.NoError(t, os.WriteFile("results.jsonl", engineAnswers(t, srv.URL, key, "requests.jsonl"), 0o644))
				tc.args = []string{"--batch-in", "results.jsonl"}
			} else {
				common = append(common, "--generator-url", u)
			}
			code, stdout, stderr := runIn(t, tc.env, append(append(common, "--out", "cases.jsonl"), tc.args...)...)
			require.Equal(t, 0, code, stderr)
			maps.Copy(texts, readTree(t, dir, "results.jsonl", "kb.jsonl")) // the inputs left out
			texts["stdout"], texts["stderr"] = stdout, stderr
			cases := texts[filepath.Join(dir, "cases.jsonl")]
			// Card a's second question is written, its first question and its
			// keyword query are not; card b's three queries are.
			assert.Equal(t, 4, strings.Count(cases, "\n"), cases)
			assert.Contains(t, cases, `"query":"what does it say about bloom with?"`)
			assert.NotContains(t, cases, "says the key", "the queries that quoted the key are dropped")
			assert.NotContains(t, cases, "***", "no query is written redacted")
			assert.Equal(t, 3, strings.Count(cases, `"must_cite_one_of":["b"]`), cases)
			assert.Contains(t, stderr, "generate: warning: 2 generated queries dropped: they held a secret", "the drops are said")
			assertNoSecretRun(t, texts, tc.secrets...)
		})
	}
}

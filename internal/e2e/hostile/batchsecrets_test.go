package hostile

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/internal/e2e/e2etest"
)

// The credentials a provider's batch results file echoes in its error texts
// (fakes, in the shapes of the real ones). knownKey is the key of the
// environment (RETRIEVAL_GATE_LLM_API_KEY), of no particular shape: a local
// server's; the others the process was never given, as when the batch ran on
// another machine with its own keys.
const (
	knownKey     = "local-vllm-secret-0042"
	openAIKey    = "sk-proj-Rg7eTq2Lm9Xv4Bn8Kd1Wz6Hy3Pc5Jf0Ua"
	anthropicKey = "sk-ant-api03-Rg7eTq2Lm9Xv4Bn8Kd1Wz6Hy3Pc5Jf0Ua-AAAA"
	googleKey    = "AIzaSyRg7eTq2Lm9Xv4Bn8Kd1Wz6Hy3Pc5Jf0U"
	bearerToken  = "eyJhbGciOiJIUzI1NiJ9.cmd0ZXN0.c2lnbmF0dXJlMDA0Mg"
	queryKey     = "rgQueryKey0123456789"
	uploadID     = "ABCdef0123456789uploadXYZ"
)

// batchSecrets are the strings no output may hold.
var batchSecrets = []string{knownKey, openAIKey, anthropicKey, googleKey, bearerToken, queryKey, uploadID}

// batchErrorTexts are error messages as providers write them, each echoing
// some of the credentials; each line of a results file takes the next, so
// that every one is first in some line (a detail is cut at 300 characters).
var batchErrorTexts = []string{
	"Incorrect API key provided: " + openAIKey + ". You can find your API key at https://platform.openai.com/account/api-keys.",
	"invalid x-api-key " + anthropicKey,
	"API key not valid: POST https://generativelanguage.googleapis.com/v1beta/models/m:generateContent?key=" + queryKey + " (key " + googleKey + ")",
	"upstream refused Authorization: Bearer " + bearerToken + " at generativelanguage.googleapis.com/upload/v1beta/files?upload_id=" + uploadID + "&upload_protocol=resumable",
	"the engine's key " + knownKey + " was rejected",
}

// TestBatchResultErrorsRedacted: judge --batch-in and generate --batch-in
// read a provider's results file (OpenAI's output and error lines,
// Anthropic's Message Batch results, Gemini's batch responses) whose errors
// echo credentials: the environment's key and keys the process never had. The
// failed requests are reported (batch_failed, their error texts redacted) and
// none of the credentials reaches stdout, stderr or any file written; neither
// does a key-shaped custom_id that an input error quotes.
func TestBatchResultErrorsRedacted(t *testing.T) {
	type run struct {
		name     string
		provider string // --batch-api (judge); "" for generate
		generate bool
		// line is a results line for the request id of its index i.
		line func(id string, i int) string
		// exit is the exit code expected.
		exit int
	}
	msg := func(i int) string { return batchErrorTexts[i%len(batchErrorTexts)] }
	q := func(s string) string { b, _ := json.Marshal(s); return string(b) }
	openAILine := func(id string, i int) string {
		if i%2 == 0 { // an error file's line
			return `{"id":"batch_req_1","custom_id":` + q(id) + `,"response":null,"error":{"code":"invalid_api_key","message":` + q(msg(i)) + `}}`
		}
		return `{"id":"batch_req_2","custom_id":` + q(id) + `,"response":{"status_code":401,"request_id":"r","body":{"error":{"message":` + q(msg(i)) + `}}},"error":null}`
	}
	runs := []run{
		{name: "judge openai", provider: "openai", line: openAILine},
		{name: "judge anthropic", provider: "anthropic", line: func(id string, i int) string {
			return `{"custom_id":` + q(id) + `,"result":{"type":"errored","error":{"type":"error","error":{"type":"authentication_error","message":` + q(msg(i)) + `}}}}`
		}},
		{name: "judge gemini", provider: "gemini", line: func(id string, i int) string {
			return `{"key":` + q(id) + `,"error":{"code":400,"message":` + q(msg(i)) + `,"status":"INVALID_ARGUMENT"}}`
		}},
		// generate keeps no error text (a card without an answer is counted):
		// none reaches its outputs either.
		{name: "generate openai", generate: true, line: openAILine},
		// A custom_id that is a key: the input error quoting it is redacted.
		{name: "judge unknown key-shaped custom_id", provider: "openai", exit: 2, line: func(_ string, i int) string {
			return openAILine(openAIKey, i)
		}},
	}
	for _, r := range runs {
		t.Run(r.name, func(t *testing.T) {
			dir := t.TempDir()
			writeFile(t, filepath.Join(dir, "kb.jsonl"), []byte(secretsKB))
			writeFile(t, filepath.Join(dir, "run.jsonl"), []byte(secretsRun))
			var gen, use []string
			if r.generate {
				gen = []string{"generate", "--kb", "kb.jsonl", "--generator-model", "m", "--batch-out", "requests.jsonl"}
				use = []string{"generate", "--kb", "kb.jsonl", "--generator-model", "m", "--out", "out/cases.jsonl", "--batch-in", "results.jsonl"}
			} else {
				common := []string{"--kb", "kb.jsonl", "--run", "a=run.jsonl", "--k", "3", "--judge-model", "m", "--batch-api", r.provider}
				gen = append([]string{"judge", "--batch-out", "requests.jsonl", "--cache", "none"}, common...)
				use = append([]string{"judge", "--batch-in", "results.jsonl", "--cache", "out/cache.jsonl", "--qrels", "out/q.txt", "--judgments", "out/j.jsonl", "--json", "out/report.json"}, common...)
			}
			out, code := runSecretsBinary(t, dir, gen...)
			require.Equal(t, 0, code, out)
			ids := requestIDs(t, filepath.Join(dir, "requests.jsonl"))
			require.NotEmpty(t, ids)
			var results strings.Builder
			for i, id := range ids {
				results.WriteString(r.line(id, i) + "\n")
			}
			writeFile(t, filepath.Join(dir, "results.jsonl"), []byte(results.String()))
			out, code = runSecretsBinary(t, dir, use...)
			assert.Equal(t, r.exit, code, out)
			texts := map[string]string{"stdout and stderr": out}
			require.NoError(t, filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
				if err != nil || d.IsDir() || d.Name() == "results.jsonl" {
					return err
				}
				b, err := os.ReadFile(p)
				texts[p] = string(b)
				return err
			}))
			for where, text := range texts {
				for _, s := range batchSecrets {
					if strings.Contains(text, s) { // not NotContains: the text is a whole report
						t.Errorf("%s holds %q", where, s)
					}
				}
			}
			if !r.generate && r.exit == 0 {
				report := texts[filepath.Join(dir, "out", "report.json")]
				assert.Contains(t, report, `"batch_failed": `+strconv.Itoa(len(ids)), "every request is reported failed")
				assert.Contains(t, report, "***", "the failures' details say where a credential was")
				assert.Contains(t, report, "Incorrect API key provided: ***", "the rest of a detail is kept")
			}
			if r.exit == 2 {
				assert.Contains(t, out, "results.jsonl:1: unknown custom_id")
			}
		})
	}
}

// runSecretsBinary runs the built binary in dir with args, the environment's
// key set to knownKey, and returns its stdout and stderr and its exit code.
func runSecretsBinary(t *testing.T, dir string, args ...string) (string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, hostileBinary(), args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GITHUB_ACTIONS=", "CI=", "OPENAI_API_KEY=", "ANTHROPIC_API_KEY=", "GEMINI_API_KEY=", "GOOGLE_API_KEY=",
		"RETRIEVAL_GATE_LLM_API_KEY="+knownKey)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	require.NoError(t, ctx.Err(), "still running after 20 s")
	return out.String(), e2etest.ExitCode(err)
}

// requestIDs are the ids of a requests file's lines: custom_id (OpenAI,
// Anthropic) or key (Gemini).
func requestIDs(t *testing.T, path string) []string {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	var ids []string
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var l struct {
			CustomID string `json:"custom_id"`
			Key      string `json:"key"`
		}
		require.NoError(t, json.Unmarshal(sc.Bytes(), &l))
		ids = append(ids, l.CustomID+l.Key)
	}
	require.NoError(t, sc.Err())
	return ids
}

const secretsKB = `{"id": "en-reset", "locale": "en", "title": "Reset your password", "text": "Open settings and choose reset password. A link arrives by email."}
{"id": "en-2fa", "locale": "en", "title": "Two-factor authentication", "text": "Turn on two-factor authentication in the security settings."}
{"id": "en-billing", "locale": "en", "title": "Billing", "text": "Invoices are sent every month."}
`

const secretsRun = `{"id": "q1", "locale": "en", "query": "How do I reset my password?", "retrieved": ["en-reset", "en-2fa", "en-billing"]}
{"id": "q2", "locale": "en", "query": "turn on 2fa", "retrieved": ["en-billing", "en-2fa"]}
`

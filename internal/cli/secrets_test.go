package cli

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/internal/e2e/e2etest"
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
	texts := map[string]string{"stderr": stderr.String()}
	require.NoError(t, filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		texts[path] = string(b)
		return err
	}))
	require.Contains(t, texts, filepath.Join(out, "stages.txt"))
	for name, text := range texts {
		for _, secret := range []string{pw, key} {
			for j := 0; j+8 <= len(secret); j++ {
				if strings.Contains(text, secret[j:j+8]) {
					t.Errorf("%s holds %q of a secret", name, secret[j:j+8])
					break
				}
			}
		}
	}
}

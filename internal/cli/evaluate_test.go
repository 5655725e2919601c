package cli

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/internal/e2e/e2etest"
	"github.com/retrieval-gate/retrieval-gate/internal/llm/llmtest"
	"github.com/retrieval-gate/retrieval-gate/internal/retrieve/rerank/reranktest"
	"github.com/retrieval-gate/retrieval-gate/internal/retrieve/store/chroma/chromatest"
)

// evaluateKB is a small two-locale KB: enough cards that the top 3 of each
// strategy differ, few enough that the whole pipeline takes well under a second.
const evaluateKB = `{"id": "en-reset", "locale": "en", "title": "Reset your password", "text": "Open settings and choose reset password. A link arrives by email."}
{"id": "en-2fa", "locale": "en", "title": "Two-factor authentication", "text": "Turn on two-factor authentication in the security settings."}
{"id": "en-billing", "locale": "en", "title": "Billing", "text": "Invoices are sent every month by email."}
{"id": "en-export", "locale": "en", "title": "Export your data", "text": "Choose export in settings to download every project as a file."}
{"id": "es-reset", "locale": "es", "title": "Restablecer la contraseña", "text": "Abre la configuración y elige restablecer la contraseña."}
{"id": "es-factura", "locale": "es", "title": "Facturas", "text": "Las facturas llegan cada mes por correo."}
{"id": "es-exportar", "locale": "es", "title": "Exportar datos", "text": "Elige exportar en la configuración para descargar cada proyecto."}
`

// evaluate with --rerank-url runs each strategy twice (plain and reranked,
// through a server speaking TEI's /rerank protocol), and the dashboard pairs
// them; with a Chroma server (CHROMA_URL; required in CI, else the subtest
// skips saying how to start one) the same through the chroma store, named by
// --chroma-url alone (issue 21: evaluate passed --store memory to each retrieve
// stage, which refused the URL after the generation had spent its requests).
// The chat server follows the chat-completions protocol (llmtest); no model runs.
func TestEvaluateWithReranker(t *testing.T) {
	for _, store := range []string{"memory", "chroma"} {
		t.Run(store, func(t *testing.T) {
			var args []string
			if store == "chroma" {
				args = append(args, "--chroma-url", chromatest.URL(t))
			}
			llm := llmtest.New(llmtest.Options{})
			defer llm.Close()
			var reranked atomic.Int64
			tei := httptest.NewServer(reranktest.Handler(0, func(query, text string) float64 {
				reranked.Add(1)
				return float64(llmtest.Overlap(query, text))
			}))
			defer tei.Close()

			dir := t.TempDir()
			kb := filepath.Join(dir, "kb.jsonl")
			require.NoError(t, os.WriteFile(kb, []byte(evaluateKB), 0o644))
			out := filepath.Join(dir, "out")
			var stderr e2etest.LockedBuffer
			err := NewCmdEvaluate(NewFactory(retrieveEnv(&stderr, nil)), nil).Run(context.Background(), append([]string{
				"--kb", kb, "--out", out, "--judge-url", llm.URL, "--judge-model", "fake",
				"--rerank-url", tei.URL, "--per-locale", "2", "--k", "3", "--bootstrap", "200"}, args...))
			require.NoError(t, err, stderr.String())
			assert.Positive(t, reranked.Load(), "the reranker was called")

			stages, err := os.ReadFile(filepath.Join(out, "stages.txt"))
			require.NoError(t, err)
			assert.Equal(t, 3, strings.Count(string(stages), "--rerank-url "+tei.URL), "each strategy once reranked:\n%s", stages)
			if store == "chroma" {
				assert.Equal(t, 6, strings.Count(string(stages), "--store chroma"), "every retrieve stage on Chroma:\n%s", stages)
				// Dense and hybrid, plain and reranked, each on a temporary collection, deleted.
				assert.Equal(t, 4, strings.Count(stderr.String(), "retrieve: chroma "+args[1]+": temporary collection "), stderr.String())
				assert.Equal(t, 4, strings.Count(stderr.String(), "retrieve: temporary collection "), "each deleted:\n%s", stderr.String())
				assert.Contains(t, string(raw(t, filepath.Join(out, "run-hybrid+rerank.jsonl"))), `"retrieval":{"strategy": "hybrid", "store": "chroma", "embedder": "hash", "k": 3}`)
			}

			raw, err := os.ReadFile(filepath.Join(out, "compare.json"))
			require.NoError(t, err)
			var doc struct {
				Strategies map[string]json.RawMessage `json:"strategies"`
			}
			require.NoError(t, json.Unmarshal(raw, &doc))
			var names []string
			for name := range doc.Strategies {
				names = append(names, name)
			}
			assert.ElementsMatch(t, []string{"dense", "lexical", "hybrid", "dense+rerank", "lexical+rerank", "hybrid+rerank"}, names)

			page, err := os.ReadFile(filepath.Join(out, "compare.html"))
			require.NoError(t, err)
			assert.Contains(t, string(page), "Base vs reranker")
			// Each reranked strategy drawn beside its base, in its colour, dashed.
			assert.Regexp(t, `<li><span class="sw c(\d) dashed"></span>dense\+rerank</li>`, string(page))
			assert.Equal(t, 4*3, strings.Count(string(page), `hatch" x=`), "three in each of the chart's four drawings")

			assertEvaluateDirDocumented(t, out, names)
		})
	}
}

// assertEvaluateDirDocumented requires the files of evaluate's DIR (out, a
// run that generated its cases) to be those docs/judge.md lists ("`DIR` holds
// …"), run-NAME.jsonl once per strategy.
func assertEvaluateDirDocumented(t *testing.T, out string, strategies []string) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(repoRoot(t), "docs", "judge.md"))
	require.NoError(t, err)
	m := regexp.MustCompile("(?s)`DIR` holds (.*?)\\. Each option").FindSubmatch(data)
	require.NotNil(t, m, "docs/judge.md lists the files of evaluate's DIR")
	var want []string
	for _, f := range regexp.MustCompile("`([^`]+)`").FindAllSubmatch(m[1], -1) {
		if name := string(f[1]); name == "run-NAME.jsonl" {
			for _, s := range strategies {
				want = append(want, "run-"+s+".jsonl")
			}
		} else {
			want = append(want, name)
		}
	}
	entries, err := os.ReadDir(out)
	require.NoError(t, err)
	var got []string
	for _, e := range entries {
		got = append(got, e.Name())
	}
	assert.ElementsMatch(t, want, got, "docs/judge.md's list of the files evaluate writes to DIR")
}

func raw(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return b
}

// A case id that TREC qrels cannot hold (here a leading '{', which makes
// compare read DIR/qrels.txt as JSON lines) stops evaluate at the judge stage
// before any judge request, at the case's line in the run DIR holds: the
// judge had labelled the whole pool, and compare then refused the qrels
// (docs/judge.md: no LLM request is spent on a run that cannot finish).
func TestEvaluateRefusesQrelsIDsBeforeJudging(t *testing.T) {
	srv := llmtest.New(llmtest.Options{})
	defer srv.Close()
	dir := t.TempDir()
	kb := filepath.Join(dir, "kb.jsonl")
	require.NoError(t, os.WriteFile(kb, []byte(evaluateKB), 0o644))
	cases := filepath.Join(dir, "cases.jsonl")
	require.NoError(t, os.WriteFile(cases, []byte(`{"id": "{a", "locale": "en", "query": "reset my password", "must_cite_one_of": ["en-reset"]}`+"\n"+
		`{"id": "{b", "locale": "es", "query": "facturas por correo", "must_cite_one_of": ["es-factura"]}`+"\n"), 0o644))
	out := filepath.Join(dir, "out")
	var stderr e2etest.LockedBuffer
	err := NewCmdEvaluate(NewFactory(retrieveEnv(&stderr, nil)), nil).Run(context.Background(), []string{
		"--kb", kb, "--cases", cases, "--out", out, "--judge-url", srv.URL, "--k", "3", "--bootstrap", "200"})
	require.Error(t, err)
	assert.Equal(t, ExitInput, ExitCode(err))
	assert.Contains(t, err.Error(), "evaluate: stage 4 (judge) failed: "+filepath.Join(out, "run-dense.jsonl")+`:1: run "dense": query "{a": an id that starts with '{'`)
	assert.Zero(t, srv.Requests(), "no judge request")
	assert.NoFileExists(t, filepath.Join(out, "qrels.txt"))
}

// A rerun of evaluate in the DIR of an earlier run leaves none of that run's
// files beside its own (docs/judge.md, "`retrieval-gate evaluate`"): here the
// earlier run generated its cases and finished, the rerun is given its cases
// and stops at the judge stage. DIR then held the earlier cases.jsonl, qrels,
// judgments and reports beside the rerun's stages.txt and runs. The judge's
// cache, which a rerun reads, is kept as it was.
func TestEvaluateRerunLeavesNoEarlierFiles(t *testing.T) {
	srv := llmtest.New(llmtest.Options{})
	defer srv.Close()
	dir := t.TempDir()
	kb := filepath.Join(dir, "kb.jsonl")
	require.NoError(t, os.WriteFile(kb, []byte(evaluateKB), 0o644))
	out := filepath.Join(dir, "out")
	var stderr e2etest.LockedBuffer
	args := []string{"--kb", kb, "--out", out, "--judge-url", srv.URL, "--per-locale", "2", "--k", "3", "--bootstrap", "200"}
	require.NoError(t, NewCmdEvaluate(NewFactory(retrieveEnv(&stderr, nil)), nil).Run(context.Background(), args), stderr.String())
	require.FileExists(t, filepath.Join(out, "compare.json"))
	cache := raw(t, filepath.Join(out, "judge-cache.jsonl"))

	cases := filepath.Join(dir, "cases.jsonl")
	require.NoError(t, os.WriteFile(cases, []byte(`{"id": "{a", "locale": "en", "query": "reset my password", "must_cite_one_of": ["en-reset"]}`+"\n"), 0o644))
	err := NewCmdEvaluate(NewFactory(retrieveEnv(&stderr, nil)), nil).Run(context.Background(), append(args, "--cases", cases))
	require.ErrorContains(t, err, "stage 4 (judge) failed")
	entries, err := os.ReadDir(out)
	require.NoError(t, err)
	var got []string
	for _, e := range entries {
		got = append(got, e.Name())
	}
	assert.ElementsMatch(t, []string{"stages.txt", "run-dense.jsonl", "run-lexical.jsonl", "run-hybrid.jsonl", "judge-cache.jsonl"}, got)
	assert.Equal(t, cache, raw(t, filepath.Join(out, "judge-cache.jsonl")))
	assert.Contains(t, string(raw(t, filepath.Join(out, "stages.txt"))), "--cases "+cases)
}

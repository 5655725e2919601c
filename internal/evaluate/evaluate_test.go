package evaluate

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/internal/generate"
	"github.com/retrieval-gate/retrieval-gate/internal/judge"
)

func TestRuns(t *testing.T) {
	names := func(rs []RunSpec) (out []string) {
		for _, r := range rs {
			out = append(out, r.Name)
		}
		return out
	}
	assert.Equal(t, []string{"dense", "lexical", "hybrid"}, names(Runs(false)))
	rr := Runs(true)
	assert.Equal(t, []string{"dense", "lexical", "hybrid", "dense+rerank", "lexical+rerank", "hybrid+rerank"}, names(rr))
	assert.Equal(t, RunSpec{Name: "lexical+rerank", Strategy: "lexical", Rerank: true}, rr[4])
	assert.Equal(t, "run-dense+rerank.jsonl", RunFile("dense+rerank"))
}

func TestStageString(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want string
	}{
		{nil, "retrieval-gate judge"},
		{[]string{"--kb", "dir/kb.jsonl", "--run", "dense=out/run-dense.jsonl", "--chroma-url", "http://h:8000/a%20b"},
			"retrieval-gate judge --kb dir/kb.jsonl --run dense=out/run-dense.jsonl --chroma-url http://h:8000/a%20b"},
		{[]string{"--out", "my dir", "--x", ""}, "retrieval-gate judge --out 'my dir' --x ''"},
		{[]string{"it's"}, `retrieval-gate judge 'it'\''s'`},
		{[]string{"$HOME;rm"}, `retrieval-gate judge '$HOME;rm'`},
	} {
		assert.Equal(t, tt.want, Stage{Name: "judge", Args: tt.args}.String())
	}
}

func TestWriteStages(t *testing.T) {
	stages := []Stage{{Name: "retrieve", Args: []string{"--k", "3"}}, {Name: "judge", Args: []string{"--k", "3"}}, {Name: "compare", Args: []string{"--k", "3"}}}
	var b strings.Builder
	require.NoError(t, WriteStages(&b, stages, "a note"))
	assert.Equal(t, "# The stages of this evaluation, in order; each can be rerun alone.\n# a note\n"+
		"retrieval-gate retrieve --k 3\nretrieval-gate judge --k 3\nretrieval-gate compare --k 3\n", b.String())
	boom := errors.New("boom")
	err := error(&StageError{I: 2, Name: "judge", Err: boom})
	require.ErrorIs(t, err, boom)
	require.EqualError(t, err, "evaluate: stage 2 (judge) failed: boom")
}

func TestFingerprint(t *testing.T) {
	j := &judge.Result{Model: "jm", Format: "json", FellBack: true, Prompt: &judge.Prompt{Version: "v1", Hash: "abc"}}
	in := FingerprintOf{KB: "kb.jsonl", Cases: "c.jsonl", K: 7, Repeat: 2, Bootstrap: 300, Runs: []string{"dense", "dense+rerank"},
		Judge: j, Store: "chroma", Embedder: "openai", EmbedderModel: "em", Rerank: true}
	inputs, params := Fingerprint(in)
	assert.Equal(t, map[string]string{"kb": "kb.jsonl", "cases": "c.jsonl"}, inputs)
	assert.Equal(t, map[string]string{"k": "7", "strategies": "dense,dense+rerank", "judge-model": "jm", "judge-prompt": "v1 abc",
		"answer-format": "json (the server rejected json)", "repeat": "2", "bootstrap": "300", "store": "chroma",
		"embedder": "openai", "embedder-model": "em", "rerank": "on"}, params)

	in.Cases, in.Rerank, in.GeneratorModel, in.PerLocale, j.FellBack = "", false, "gm", 5, false
	inputs, params = Fingerprint(in)
	assert.Equal(t, map[string]string{"kb": "kb.jsonl"}, inputs)
	p := generate.DefaultPrompt()
	assert.Equal(t, "generated", params["cases"])
	assert.Equal(t, "gm", params["generator-model"])
	assert.Equal(t, p.Version+" "+p.Hash, params["generator-prompt"])
	assert.Equal(t, "5", params["per-locale"])
	assert.Equal(t, "off", params["rerank"])
	assert.Equal(t, "json", params["answer-format"])
}

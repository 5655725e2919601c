package cli

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/internal/evaluate"
	"github.com/retrieval-gate/retrieval-gate/internal/generate"
	"github.com/retrieval-gate/retrieval-gate/internal/judge"
	"github.com/retrieval-gate/retrieval-gate/internal/unixtest"
)

// evaluateBase are evaluate's required flags.
var evaluateBase = []string{"--kb", "kb.jsonl", "--out", "out", "--judge-url", "http://judge:8000"}

// retrieveStage is a retrieve stage's options as the retrieve command's.
func retrieveStage(r evaluate.RetrieveStage) *retrieveOptions {
	return &retrieveOptions{kb: r.KB, cases: r.Cases, out: r.Out, run: r.Run}
}

// evaluatePlan is evaluate.NewPlan's stages as the options evaluate runs each
// stage's command with.
type evaluatePlan struct {
	plan      *evaluate.Plan
	generate  *generate.RunOptions
	retrieves []*retrieveOptions
	judge     *judge.RunOptions
	compare   *compareOptions
}

func planFor(t *testing.T, env map[string]string, args ...string) (*evaluateOptions, *evaluatePlan) {
	t.Helper()
	e := &Env{Getenv: func(k string) string { return env[k] }}
	o, err := parseEvaluate(e, append(append([]string{}, evaluateBase...), args...))
	require.NoError(t, err)
	p := &evaluatePlan{plan: evaluate.NewPlan(&o.Options)}
	if p.plan.Generate != nil {
		p.generate = p.plan.Generate
	}
	for _, r := range p.plan.Retrieves {
		p.retrieves = append(p.retrieves, retrieveStage(r))
	}
	p.judge, p.compare = &p.plan.Judge, compareStage(p.plan.Compare, o.comment)
	return o, p
}

// Every option of evaluate reaches the stage(s) it is meant for, with its value;
// the check runs on the typed options evaluate calls each stage with.
func TestEvaluateOptionsReachTheirStages(t *testing.T) {
	in := func(n string) string { return filepath.Join("out", n) }
	each := func(p *evaluatePlan, f func(r *retrieveOptions)) {
		require.Len(t, p.retrieves, 3)
		for _, r := range p.retrieves {
			f(r)
		}
	}
	for _, tc := range []struct {
		name  string
		env   map[string]string
		args  []string
		check func(t *testing.T, p *evaluatePlan)
	}{
		{"kb", nil, nil, func(t *testing.T, p *evaluatePlan) {
			assert.Equal(t, "kb.jsonl", p.generate.KB)
			assert.Equal(t, "kb.jsonl", p.judge.KB)
			each(p, func(r *retrieveOptions) { assert.Equal(t, "kb.jsonl", r.kb) })
		}},
		{"cases", nil, []string{"--cases", "c.jsonl"}, func(t *testing.T, p *evaluatePlan) {
			assert.Nil(t, p.generate, "no generation")
			each(p, func(r *retrieveOptions) { assert.Equal(t, "c.jsonl", r.cases) })
		}},
		{"out", nil, nil, func(t *testing.T, p *evaluatePlan) {
			assert.Equal(t, in("cases.jsonl"), p.generate.Out)
			each(p, func(r *retrieveOptions) { assert.Equal(t, in("cases.jsonl"), r.cases) })
			assert.Equal(t, []judge.RunFile{{Name: "dense", Path: in("run-dense.jsonl")}, {Name: "lexical", Path: in("run-lexical.jsonl")}, {Name: "hybrid", Path: in("run-hybrid.jsonl")}}, p.judge.Runs)
			for i, r := range p.judge.Runs {
				assert.Equal(t, r, judge.RunFile(p.compare.files.Runs[i]))
			}
			assert.Equal(t, [4]string{in("judge-cache.jsonl"), in("qrels.txt"), in("judgments.jsonl"), in("judge.json")},
				[4]string{p.judge.Cache, p.judge.QrelsOut, p.judge.JudgmentsOut, p.judge.JSONOut})
			assert.Equal(t, [5]string{in("qrels.txt"), in("compare.json"), in("compare.md"), in("per-query.jsonl"), in("compare.html")},
				[5]string{p.compare.files.Qrels, p.compare.jsonOut, p.compare.mdOut, p.compare.perQuery, p.compare.htmlOut})
		}},
		{"judge-url", nil, nil, func(t *testing.T, p *evaluatePlan) {
			assert.Equal(t, "http://judge:8000", p.judge.LLM.URL)
			assert.Equal(t, "http://judge:8000", p.generate.LLM.URL, "the generator defaults to the judge's server")
		}},
		{"judge-model", nil, []string{"--judge-model", "jm"}, func(t *testing.T, p *evaluatePlan) {
			assert.Equal(t, "jm", p.judge.LLM.Model)
			assert.Equal(t, "jm", p.generate.LLM.Model, "the generator defaults to the judge's model")
		}},
		{"generator-url", nil, []string{"--generator-url", "http://gen:1"}, func(t *testing.T, p *evaluatePlan) {
			assert.Equal(t, "http://gen:1", p.generate.LLM.URL)
			assert.Equal(t, "http://judge:8000", p.judge.LLM.URL)
		}},
		{"generator-model", nil, []string{"--judge-model", "jm", "--generator-model", "gm"}, func(t *testing.T, p *evaluatePlan) {
			assert.Equal(t, "gm", p.generate.LLM.Model)
			assert.Equal(t, "jm", p.judge.LLM.Model)
		}},
		{"rerank-url", nil, []string{"--rerank-url", "http://tei:1"}, func(t *testing.T, p *evaluatePlan) {
			require.Len(t, p.retrieves, 6)
			for i, r := range p.retrieves {
				assert.Equal(t, map[bool]string{false: "", true: "http://tei:1"}[i >= 3], r.run.RerankURL)
			}
			assert.Equal(t, []string{"dense", "lexical", "hybrid", "dense+rerank", "lexical+rerank", "hybrid+rerank"}, compareNames(p.compare))
		}},
		{"store", map[string]string{"CHROMA_URL": "http://env-chroma:8000"}, []string{"--store", "chroma"}, func(t *testing.T, p *evaluatePlan) {
			each(p, func(r *retrieveOptions) {
				assert.Equal(t, "chroma", r.run.Store)
				assert.Equal(t, "http://env-chroma:8000", r.run.StoreURL)
			})
		}},
		// issue 21 item 1: --chroma-url alone ran every retrieve stage with --store memory.
		{"chroma-url", nil, []string{"--chroma-url", "http://chroma:8000"}, func(t *testing.T, p *evaluatePlan) {
			each(p, func(r *retrieveOptions) {
				assert.Equal(t, "chroma", r.run.Store)
				assert.Equal(t, "http://chroma:8000", r.run.StoreURL)
			})
		}},
		{"embedder", nil, []string{"--embedder", "openai", "--embedder-url", "http://emb:1", "--embedder-model", "em"}, func(t *testing.T, p *evaluatePlan) {
			each(p, func(r *retrieveOptions) {
				assert.Equal(t, [3]string{"openai", "http://emb:1", "em"}, [3]string{r.run.Embedder, r.run.EmbedderURL, r.run.EmbedderModel})
			})
		}},
		{"k", nil, []string{"--k", "7"}, func(t *testing.T, p *evaluatePlan) {
			each(p, func(r *retrieveOptions) { assert.Equal(t, 7, r.run.K) })
			assert.Equal(t, 7, p.judge.K)
			assert.Equal(t, 7, p.compare.run.K)
		}},
		{"per-locale", nil, []string{"--per-locale", "3"}, func(t *testing.T, p *evaluatePlan) {
			assert.Equal(t, 3, p.generate.PerLocale)
		}},
		{"repeat", nil, []string{"--repeat", "3"}, func(t *testing.T, p *evaluatePlan) {
			assert.Equal(t, 3, p.judge.Repeat)
		}},
		{"concurrency", nil, []string{"--concurrency", "9"}, func(t *testing.T, p *evaluatePlan) {
			assert.Equal(t, 9, p.judge.LLM.Concurrency)
			assert.Equal(t, 9, p.generate.LLM.Concurrency)
		}},
		{"max-requests", nil, []string{"--max-requests", "11"}, func(t *testing.T, p *evaluatePlan) {
			assert.Equal(t, int64(11), p.judge.LLM.MaxRequests)
		}},
		{"price-per-1k", nil, []string{"--price-per-1k", "0.5,2"}, func(t *testing.T, p *evaluatePlan) {
			assert.Equal(t, &judge.Price{Prompt: 0.5, Completion: 2}, p.judge.Price)
		}},
		{"batch", nil, []string{"--batch", "--batch-poll", "2s"}, func(t *testing.T, p *evaluatePlan) {
			assert.True(t, p.judge.Batch)
			assert.True(t, p.generate.Batch)
			assert.Equal(t, 2*time.Second, p.judge.BatchPoll)
			assert.Equal(t, 2*time.Second, p.generate.BatchPoll)
			assert.Equal(t, in("judge-cache.jsonl"), p.judge.Cache, "the judge's batch state is kept beside its cache in DIR")
		}},
		{"bootstrap", nil, []string{"--bootstrap", "300"}, func(t *testing.T, p *evaluatePlan) {
			assert.Equal(t, 300, p.compare.run.Resamples)
		}},
		{"comment", nil, []string{"--comment", "never", "--comment-mode", "changes", "--comment-key", "kk", "--comment-author", "my-app[bot]", "--pr", "5"}, func(t *testing.T, p *evaluatePlan) {
			assert.Equal(t, commentFlags{mode: "never", when: "changes", key: "kk", author: "my-app[bot]", pr: 5}, p.compare.comment)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, p := planFor(t, tc.env, tc.args...)
			tc.check(t, p)
		})
	}
	// The options evaluate keeps for itself (its history, its --html) are
	// checked by the end-to-end tests (evaluate_history.txtar, TestEvaluate*).
}

// Each line of DIR/stages.txt parses, with the stage command's own parser, to
// exactly the options evaluate runs the stage with: a stage rerun alone from
// stages.txt is the stage that ran.
func TestEvaluateStagesParseBackToTheirOptions(t *testing.T) {
	for _, args := range [][]string{
		nil,
		{"--cases", "c.jsonl", "--rerank-url", "http://tei:1", "--chroma-url", "http://chroma:8000", "--embedder", "openai",
			"--embedder-url", "http://emb:1", "--embedder-model", "em", "--k", "7", "--repeat", "2", "--concurrency", "3",
			"--max-requests", "40", "--price-per-1k", "0.5", "--bootstrap", "300", "--judge-model", "jm", "--comment", "never", "--pr", "4",
			"--comment-author", "my-app[bot]"},
		{"--generator-url", "http://gen:1", "--generator-model", "gm", "--per-locale", "5"},
		{"--batch", "--batch-poll", "250ms"},
	} {
		o, p := planFor(t, nil, args...)
		lines := p.plan.Args(&o.Options, o.comment.args()...)
		env := &Env{Getenv: func(string) string { return "" }}
		if p.generate != nil {
			g, err := parseGenerate(env, lines[0])
			require.NoError(t, err)
			assert.Equal(t, p.generate, g, lines[0])
			lines = lines[1:]
		}
		for i, want := range p.retrieves {
			r, err := parseRetrieve(env, lines[i])
			require.NoError(t, err)
			r.src = nil
			assert.Equal(t, want, r, lines[i])
		}
		lines = lines[len(p.retrieves):]
		j, err := parseJudge(env, lines[0])
		require.NoError(t, err)
		assert.Equal(t, p.judge, j, lines[0])
		c, err := parseCompare(env, lines[1])
		require.NoError(t, err)
		assert.Equal(t, p.compare, c, lines[1])
	}
}

// compareNames are the names of the compare stage's runs.
func compareNames(o *compareOptions) []string {
	var out []string
	for _, r := range o.files.Runs {
		out = append(out, r.Name)
	}
	return out
}

// evaluate's run files (and, with --batch, its batch state files) are outputs
// too: an input, the dashboard or the history at one of them is refused
// before any stage (the first stage had replaced the --cases file given as
// DIR/run-dense.jsonl, and exited 0).
func TestEvaluateRefusesItsRunFilesAsOthers(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	kb := filepath.Join(dir, "kb.jsonl")
	require.NoError(t, os.WriteFile(kb, []byte("{}\n"), 0o600))
	require.NoError(t, os.MkdirAll(out, 0o755))
	in := func(name string) string { // an existing file in out
		p := filepath.Join(out, name)
		require.NoError(t, os.WriteFile(p, []byte("{}\n"), 0o600))
		return p
	}
	base := []string{"--kb", kb, "--out", out, "--judge-url", "http://judge:8000"}
	e := &Env{Getenv: func(string) string { return "" }}
	for _, tt := range []struct {
		name string
		args []string
		want string
	}{
		{"cases at a run", []string{"--cases", in("run-dense.jsonl")}, "would overwrite the input " + filepath.Join(out, "run-dense.jsonl") + " (--cases)"},
		{"kb at a run", []string{"--kb", in("run-lexical.jsonl")}, "would overwrite the input " + filepath.Join(out, "run-lexical.jsonl") + " (--kb)"},
		{"html at a run", []string{"--html", filepath.Join(out, "run-lexical.jsonl")}, "name the same file " + filepath.Join(out, "run-lexical.jsonl")},
		{"history at a run", []string{"--history", filepath.Join(out, "run-hybrid.jsonl")}, "name the same file " + filepath.Join(out, "run-hybrid.jsonl")},
		{"cases at a reranked run", []string{"--rerank-url", "http://tei:8080", "--cases", in("run-dense+rerank.jsonl")}, "would overwrite the input"},
		{"cases at the judge's batch state", []string{"--batch", "--cases", in("judge-cache.jsonl.batch.json")}, "would overwrite the input"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := parseEvaluate(e, append(append([]string{}, base...), tt.args...))
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
	// Without a reranker there is no reranked run, and without --batch no state file.
	_, err := parseEvaluate(e, append(append([]string{}, base...), "--cases", in("run-dense+rerank.jsonl")))
	require.NoError(t, err)
	_, err = parseEvaluate(e, append(append([]string{}, base...), "--cases", in("judge-cache.jsonl.batch.json")))
	require.NoError(t, err)
}

// judge's and generate's batch state file (CACHE.batch.json, OUT.batch.json)
// is an output: an input at its path is refused before any request (it was
// read as a state file and refused with "delete it", the user's input).
func TestBatchStateFileIsAnOutput(t *testing.T) {
	dir := t.TempDir()
	state := filepath.Join(dir, "c.jsonl.batch.json")
	require.NoError(t, os.WriteFile(state, []byte("q1 0 a 1\n"), 0o600))
	kb := filepath.Join(dir, "kb.jsonl")
	require.NoError(t, os.WriteFile(kb, []byte("{}\n"), 0o600))
	e := &Env{Getenv: func(string) string { return "" }}
	judgeArgs := []string{"--kb", kb, "--run", "d=" + kb, "--judge-url", "http://judge:8000", "--cache", filepath.Join(dir, "c.jsonl"),
		"--known-qrels", state, "--qrels", filepath.Join(dir, "q.out")}
	_, err := parseJudge(e, append([]string{"--batch"}, judgeArgs...))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "would overwrite the input "+state+" (--known-qrels)")
	_, err = parseJudge(e, judgeArgs) // no batch, no state file
	require.NoError(t, err)
	genArgs := []string{"--kb", kb, "--generator-url", "http://gen:8000", "--out", filepath.Join(dir, "c.jsonl"), "--prompt", state}
	_, err = parseGenerate(e, append([]string{"--batch"}, genArgs...))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "would overwrite the input "+state+" (--prompt)")
	_, err = parseGenerate(e, genArgs)
	require.NoError(t, err)
}

// Given cases that cannot be read a second time (standard input, a named
// pipe) are refused before stages.txt and the first stage: evaluate reads the
// cases in each retrieve stage and again for compare's queries, and the
// stages' command lines name them for a rerun (docs/judge.md, "retrieval-gate
// evaluate"). They failed at the first stage, after stages.txt was written,
// with "open -: no such file or directory" or "seek: illegal seek". A file, a
// directory of shards and a missing file (left to the stage that opens it)
// still parse.
func TestEvaluateRefusesCasesItCannotReadAgain(t *testing.T) {
	dir := t.TempDir()
	kb := filepath.Join(dir, "kb.jsonl")
	require.NoError(t, os.WriteFile(kb, []byte("{}\n"), 0o600))
	fifo := filepath.Join(dir, "cases.fifo")
	unixtest.Mkfifo(t, fifo, 0o600)
	file := filepath.Join(dir, "cases.jsonl")
	require.NoError(t, os.WriteFile(file, []byte("{}\n"), 0o600))
	shards := filepath.Join(dir, "shards")
	require.NoError(t, os.MkdirAll(shards, 0o755))
	e := &Env{Getenv: func(string) string { return "" }}
	for _, tt := range []struct {
		name, cases string
		refused     bool
	}{
		{"standard input", "-", true},
		{"a named pipe", fifo, true},
		{"a file", file, false},
		{"a directory of shards", shards, false},
		{"a missing file", filepath.Join(dir, "missing.jsonl"), false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := parseEvaluate(e, []string{"--kb", kb, "--out", filepath.Join(dir, "out"), "--judge-url", "http://judge:8000", "--cases", tt.cases})
			if !tt.refused {
				require.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.Equal(t, ExitInput, ExitCode(err))
			assert.Contains(t, err.Error(), "evaluate: --cases must name a file, a directory or a glob pattern that every stage can read again, not standard input or a named pipe, got ")
			assert.NoDirExists(t, filepath.Join(dir, "out"))
		})
	}
}

package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/internal/e2e/e2etest"
	"github.com/retrieval-gate/retrieval-gate/internal/llm/llmtest"
)

// TestHistoryAllOrNothingWithOutputs: the --history record and the outputs of a
// run are published together. An output that becomes unwritable after it was
// created (its path made a directory while the run works, here when the run
// reads its provenance) fails the publication: exit 2 naming the path, no
// output written, an older one at another path kept, no temporary file left,
// and no record appended to the history (issue: the record was appended before
// the outputs were renamed into place, so a failed rename left a history
// that counted a run with no report).
func TestHistoryAllOrNothingWithOutputs(t *testing.T) {
	llm := llmtest.New(llmtest.Options{})
	defer llm.Close()
	for _, tc := range []struct {
		name string
		args func(dir string) []string // the command, its inputs and its --json
		out  string                    // the output made a directory during the run
	}{
		{"check", func(dir string) []string {
			cases, kb := writeCheckFixture(t, dir, 50)
			return []string{"check", "--cases", cases, "--kb", kb, "--k", "2", "--comment", "never", "--json", filepath.Join(dir, "old.json"),
				"--cases-out", filepath.Join(dir, "per.jsonl"), "--markdown", filepath.Join(dir, "new.md")}
		}, "new.md"},
		{"compare", func(dir string) []string {
			write := func(name, content string) string {
				p := filepath.Join(dir, name)
				require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
				return p
			}
			qrels := write("qrels.trec", "q1 0 d1 3\nq2 0 d2 2\n")
			a := write("a.trec", "q1 Q0 d1 1 2.0 t\nq2 Q0 d9 1 2.0 t\n")
			b := write("b.trec", "q1 Q0 d7 1 2.0 t\nq2 Q0 d2 1 2.0 t\n")
			return []string{"compare", "--qrels", qrels, "--run", "a=" + a, "--run", "b=" + b, "--bootstrap", "100", "--comment", "never",
				"--json", filepath.Join(dir, "old.json"), "--markdown", filepath.Join(dir, "new.md")}
		}, "new.md"},
		{"evaluate", func(dir string) []string {
			kb := filepath.Join(dir, "kb.jsonl")
			require.NoError(t, os.WriteFile(kb, []byte(evaluateKB), 0o644))
			return []string{"evaluate", "--kb", kb, "--out", filepath.Join(dir, "eval"), "--judge-url", llm.URL, "--judge-model", "fake",
				"--per-locale", "2", "--k", "3", "--bootstrap", "100", "--html", filepath.Join(dir, "new.html")}
		}, "new.html"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			args := tc.args(dir)
			hist := filepath.Join(dir, "history.jsonl")
			target := filepath.Join(dir, tc.out)
			inject := false
			vars := map[string]string{"GITHUB_SHA": "0123456789abcdef0123456789abcdef01234567", "GITHUB_REF_NAME": "main", "SOURCE_DATE_EPOCH": "1700000000"}
			getenv := func(k string) string {
				if k == "SOURCE_DATE_EPOCH" && inject { // read when the run records its history: after the outputs were created
					_ = os.Mkdir(target, 0o755)
				}
				return vars[k]
			}
			run := func() (string, error) {
				var stderr e2etest.LockedBuffer
				env := &Env{Stdin: strings.NewReader(""), Stdout: &bytes.Buffer{}, Stderr: &stderr, Getenv: getenv}
				f := NewFactory(env)
				c := map[string]func() *Command{
					"check":    func() *Command { return NewCmdCheck(f, nil) },
					"compare":  func() *Command { return NewCmdCompare(f, nil) },
					"evaluate": func() *Command { return NewCmdEvaluate(f, nil) },
				}[args[0]]()
				return stderr.String(), c.Run(context.Background(), append(args[1:], "--history", hist))
			}
			// A first run writes the outputs and the history's first record.
			stderr, err := run()
			require.NoError(t, err, stderr)
			require.NoError(t, os.Remove(target))
			before := map[string][]byte{}
			require.NoError(t, filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
				if err == nil && d.Type().IsRegular() {
					before[p], err = os.ReadFile(p)
				}
				return err
			}))
			require.Contains(t, before, hist)

			inject = true
			stderr, err = run()
			require.Error(t, err, stderr)
			assert.Equal(t, ExitInput, ExitCode(err))
			assert.Contains(t, err.Error(), "failed to write "+target, "the failure is the publication's, after the run")
			after := map[string][]byte{}
			require.NoError(t, filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
				if err == nil && d.Type().IsRegular() && !strings.HasPrefix(p, filepath.Join(dir, "eval")+string(os.PathSeparator)) {
					after[p], err = os.ReadFile(p)
				}
				return err
			}))
			for p := range before {
				if strings.HasPrefix(p, filepath.Join(dir, "eval")+string(os.PathSeparator)) {
					delete(before, p) // evaluate's stages publish their own outputs, each stage all or none (docs/judge.md)
				}
			}
			assert.Equal(t, before, after, "the history and every older output as they were; no temporary file left")
		})
	}
}

// TestHistoryUnwritableFailsBeforeTheWork: a --history that cannot be appended
// to (here under a regular file, which fails for root too) is refused as an
// output that cannot be created is, before any work: exit 2 naming it, no
// output written, and for evaluate no stage run (no model request: the
// generation is not cached, a rerun would pay for it again).
func TestHistoryUnwritableFailsBeforeTheWork(t *testing.T) {
	llm := llmtest.New(llmtest.Options{})
	defer llm.Close()
	dir := t.TempDir()
	cases, kb := writeCheckFixture(t, dir, 20)
	evalKB := filepath.Join(dir, "eval-kb.jsonl")
	require.NoError(t, os.WriteFile(evalKB, []byte(evaluateKB), 0o644))
	qrels := filepath.Join(dir, "qrels.trec")
	require.NoError(t, os.WriteFile(qrels, []byte("q1 0 d1 3\nq2 0 d2 2\n"), 0o644))
	run := filepath.Join(dir, "a.trec")
	require.NoError(t, os.WriteFile(run, []byte("q1 Q0 d1 1 2.0 t\nq2 Q0 d9 1 2.0 t\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "blocked"), []byte("a regular file\n"), 0o644))
	hist := filepath.Join(dir, "blocked", "history.jsonl")
	for name, args := range map[string][]string{
		"check":   {"--cases", cases, "--kb", kb, "--json", filepath.Join(dir, "out", "a.json")},
		"compare": {"--qrels", qrels, "--run", "a=" + run, "--bootstrap", "100", "--json", filepath.Join(dir, "out", "a.json")},
		"evaluate": {"--kb", evalKB, "--out", filepath.Join(dir, "out"), "--judge-url", llm.URL, "--judge-model", "fake",
			"--per-locale", "2", "--k", "3", "--bootstrap", "100"},
	} {
		t.Run(name, func(t *testing.T) {
			var stderr e2etest.LockedBuffer
			env := &Env{Stdin: strings.NewReader(""), Stdout: &bytes.Buffer{}, Stderr: &stderr, Getenv: func(string) string { return "" }}
			f := NewFactory(env)
			c := map[string]func() *Command{
				"check":    func() *Command { return NewCmdCheck(f, nil) },
				"compare":  func() *Command { return NewCmdCompare(f, nil) },
				"evaluate": func() *Command { return NewCmdEvaluate(f, nil) },
			}[name]()
			err := c.Run(context.Background(), append(args, "--comment", "never", "--history", hist))
			require.Error(t, err, stderr.String())
			assert.Equal(t, ExitInput, ExitCode(err))
			assert.Contains(t, err.Error(), "failed to create "+hist)
			assert.NoDirExists(t, filepath.Join(dir, "out"), "no output, no output directory")
			assert.Zero(t, llm.Requests(), "no model request")
			assert.NotContains(t, stderr.String(), "evaluate: stage")
		})
	}
}

// TestJudgeInputErrorWritesNoCache: judge with an input error found after the
// cache is opened (a run read by judge.Run) writes nothing, a new cache and
// its directory included (they were created empty at open); an existing cache
// keeps its bytes. A run that judges creates the cache with its first judgment.
func TestJudgeInputErrorWritesNoCache(t *testing.T) {
	llm := llmtest.New(llmtest.Options{})
	defer llm.Close()
	dir := t.TempDir()
	kb := filepath.Join(dir, "kb.jsonl")
	require.NoError(t, os.WriteFile(kb, []byte(evaluateKB), 0o644))
	bad := filepath.Join(dir, "bad.jsonl")
	require.NoError(t, os.WriteFile(bad, []byte(`{"id": "q1", "locale": "en", "query": "reset password", "retrieved": 3}`+"\n"), 0o644))
	good := filepath.Join(dir, "good.jsonl")
	require.NoError(t, os.WriteFile(good, []byte(`{"id": "q1", "locale": "en", "query": "reset password", "retrieved": ["en-reset", "en-2fa"]}`+"\n"), 0o644))
	cache := filepath.Join(dir, "cachedir", "sub", "cache.jsonl")
	judgeRun := func(run string) error {
		env, _, _ := checkEnv("")
		return NewCmdJudge(NewFactory(env), nil).Run(context.Background(), []string{"--kb", kb, "--run", "a=" + run, "--k", "2",
			"--judge-url", llm.URL, "--judge-model", "fake", "--cache", cache, "--qrels", filepath.Join(dir, "q.txt")})
	}
	err := judgeRun(bad)
	require.ErrorContains(t, err, "bad.jsonl:1:")
	assert.Equal(t, ExitInput, ExitCode(err))
	assert.NoDirExists(t, filepath.Join(dir, "cachedir"), "no cache, no cache directory")
	assert.NoFileExists(t, filepath.Join(dir, "q.txt"))

	require.NoError(t, judgeRun(good))
	before, err := os.ReadFile(cache)
	require.NoError(t, err)
	assert.Equal(t, 2, bytes.Count(before, []byte("\n")), "the judgments made")
	require.Error(t, judgeRun(bad))
	assert.Equal(t, before, raw(t, cache), "an existing cache kept as it was")

	// A cache that cannot be created (under a regular file, which fails for
	// root too) is refused before any request, as an output is.
	require.NoError(t, os.WriteFile(filepath.Join(dir, "blocked"), []byte("a regular file\n"), 0o644))
	cache = filepath.Join(dir, "blocked", "cache.jsonl")
	n := llm.Requests()
	err = judgeRun(good)
	require.ErrorContains(t, err, "failed to create "+cache)
	assert.Equal(t, ExitInput, ExitCode(err))
	assert.Equal(t, n, llm.Requests(), "no model request")
}

// TestStdinFileNotOverwritten: an input read from standard input ("-")
// redirected from a file is that file: an output naming it (or a link to it)
// is refused before any work, exit 2, the input left as it was (check
// --cases - --cases-out cases.jsonl < cases.jsonl replaced the cases with
// their scores).
func TestStdinFileNotOverwritten(t *testing.T) {
	dir := t.TempDir()
	cases, kb := writeCheckFixture(t, dir, 20)
	qrels := filepath.Join(dir, "q.trec")
	require.NoError(t, os.WriteFile(qrels, []byte("q1 0 d1 3\n"), 0o644))
	link := filepath.Join(dir, "link.jsonl")
	require.NoError(t, os.Symlink(cases, link))
	for _, tc := range []struct {
		name, stdin string
		cmd         func(*Factory) *Command
		args        []string
	}{
		{"check", cases, func(f *Factory) *Command { return NewCmdCheck(f, nil) }, []string{"--cases", "-", "--kb", kb, "--comment", "never", "--cases-out", cases}},
		{"check link", cases, func(f *Factory) *Command { return NewCmdCheck(f, nil) }, []string{"--cases", "-", "--kb", kb, "--comment", "never", "--json", link}},
		{"retrieve", cases, func(f *Factory) *Command { return NewCmdRetrieve(f, nil) }, []string{"--cases", "-", "--kb", kb, "--out", cases}},
		{"import", qrels, func(f *Factory) *Command { return NewCmdImport(f, nil) }, []string{"--in", "-", "--out", qrels}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := raw(t, tc.stdin)
			in, err := os.Open(tc.stdin)
			require.NoError(t, err)
			defer in.Close()
			var stderr e2etest.LockedBuffer
			env := &Env{Stdin: in, Stdout: &bytes.Buffer{}, Stderr: &stderr, Getenv: func(string) string { return "" }}
			err = tc.cmd(NewFactory(env)).Run(context.Background(), tc.args)
			require.ErrorContains(t, err, "would overwrite the input read from standard input")
			assert.Equal(t, ExitInput, ExitCode(err))
			assert.Equal(t, before, raw(t, tc.stdin))
		})
	}
}

// TestOutputMatchingAnInputPatternRefused: an output that would match an
// input's glob pattern would be read as one of its shards by the next run (the
// per-case scores as cases), as an output inside an input directory would be a
// card: refused, exit 2, nothing written.
func TestOutputMatchingAnInputPatternRefused(t *testing.T) {
	dir := t.TempDir()
	shards := filepath.Join(dir, "shards")
	require.NoError(t, os.Mkdir(shards, 0o755))
	cases, kb := writeCheckFixture(t, dir, 20)
	require.NoError(t, os.Rename(cases, filepath.Join(shards, "part-0.jsonl")))
	pattern := filepath.Join(shards, "*.jsonl")
	rel, err := filepath.Rel(mustGetwd(t), filepath.Join(shards, "scores.jsonl"))
	require.NoError(t, err)
	for _, out := range []string{filepath.Join(shards, "scores.jsonl"), rel} {
		env, _, _ := checkEnv("")
		err := NewCmdCheck(NewFactory(env), nil).Run(context.Background(), []string{"--cases", pattern, "--kb", kb, "--comment", "never", "--cases-out", out})
		require.ErrorContains(t, err, "--cases-out "+out+" would be a shard of the input "+pattern+" (--cases)")
		assert.Equal(t, ExitInput, ExitCode(err))
		assert.NoFileExists(t, filepath.Join(shards, "scores.jsonl"))
	}
	// Elsewhere, or not matching the pattern, it is written.
	env, _, _ := checkEnv("")
	require.NoError(t, NewCmdCheck(NewFactory(env), nil).Run(context.Background(), []string{"--cases", pattern, "--kb", kb, "--comment", "never",
		"--cases-out", filepath.Join(dir, "scores.jsonl"), "--json", filepath.Join(shards, "agg.json")}))
	assert.FileExists(t, filepath.Join(dir, "scores.jsonl"))
}

func mustGetwd(t *testing.T) string {
	t.Helper()
	wd, err := os.Getwd()
	require.NoError(t, err)
	return wd
}

package docs

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/internal/e2e/e2etest"
	"github.com/retrieval-gate/retrieval-gate/internal/llm/llmtest"
)

// The documentation's command examples run (issue 13). The convention:
//
//   - Every line of a ```sh block in README.md and docs/*.md that starts with
//     `retrieval-gate ` runs (lines continued with a trailing \ are joined) as a
//     user runs it after `go install`: the binary built once from this checkout
//     (docBinary) is first on PATH. A line starting with `go run . ` fails the
//     test: `go run` reports every failure as exit 1, so the exit codes the docs
//     promise hold only for the installed name. The lines run in the blocks' order, in one working
//     directory per page holding a copy of the repository's testdata (testdata/
//     demo, calibrate, formats, compare and internal/compare/testdata), so a later block may
//     read what an earlier one wrote. It runs through sh, so quoting and $VARs
//     mean what they mean to a user.
//   - It must exit 0, unless it ends in a comment `# exits N`: then it must exit N.
//   - Other lines of a ```sh block (comments, other tools) are not run. An example
//     meant as an illustration, with placeholder paths or a server that is not
//     here (Chroma, Docker, a chat server on another port), goes in a ```text block.
//   - The chat server of the LLM examples (judge, generate, evaluate) is
//     "$LLM_URL", and the reranker of --rerank-url "$RERANK_URL", as the reader
//     sets them (docs/judge.md: export LLM_URL=… once). TestDocExamples starts
//     llmfake's server as the docs start it (internal/llm/llmtest.ServeMain
//     with no flags: a free port of 127.0.0.1, its URL on stdout) and sets both
//     variables to its URL, so the examples run exactly as a reader pastes them
//     against a server that follows the protocols; TestLLMFakeDocBlock runs the
//     page's block that starts llmfake.
//
// A page's examples become one testscript (exec sh -c per command) run with the
// real binary.

// docExample is one command of a page.
type docExample struct {
	file    string
	line    int // of the command's first line
	command string
	exit    int
}

var (
	exitsComment = regexp.MustCompile(`\s+#\s*exits\s+([0-9]+)\s*$`)
	docCommand   = regexp.MustCompile(`^(retrieval-gate|go run \.) `)
)

// docExamples extracts the runnable examples of a Markdown page.
func docExamples(file, text string) ([]docExample, error) {
	var out []docExample
	sc := bufio.NewScanner(strings.NewReader(text))
	inSh, inOther := false, false
	var pending *docExample
	n := 0
	for sc.Scan() {
		n++
		line := sc.Text()
		trimmed := strings.TrimSpace(line)
		if strings.HasPrefix(trimmed, "```") {
			switch {
			case inSh || inOther:
				if pending != nil {
					return nil, fmt.Errorf("%s:%d: the block ends inside a continued command", file, pending.line)
				}
				inSh, inOther = false, false
			case trimmed == "```sh":
				inSh = true
			default:
				inOther = true
			}
			continue
		}
		if !inSh {
			continue
		}
		if pending != nil {
			pending.command += " " + strings.TrimSpace(strings.TrimSuffix(trimmed, `\`))
			pending.command = strings.TrimSpace(pending.command)
			if !strings.HasSuffix(trimmed, `\`) {
				out = append(out, finish(*pending))
				pending = nil
			}
			continue
		}
		if !docCommand.MatchString(trimmed) {
			continue
		}
		if strings.HasPrefix(trimmed, "go run . ") {
			return nil, fmt.Errorf("%s:%d: write the installed name, `retrieval-gate %s`: `go run` turns exit 2 into 1, so the documented exit codes would not hold", file, n, strings.TrimPrefix(trimmed, "go run . "))
		}
		ex := docExample{file: file, line: n, command: strings.TrimSpace(strings.TrimSuffix(trimmed, `\`))}
		if strings.HasSuffix(trimmed, `\`) {
			pending = &ex
			continue
		}
		out = append(out, finish(ex))
	}
	if inSh || pending != nil {
		return nil, fmt.Errorf("%s: a ```sh block is not closed", file)
	}
	return out, sc.Err()
}

// finish reads the `# exits N` annotation.
func finish(ex docExample) docExample {
	if m := exitsComment.FindStringSubmatch(ex.command); m != nil {
		ex.exit, _ = strconv.Atoi(m[1])
		ex.command = ex.command[:len(ex.command)-len(m[0])]
	}
	ex.command = strings.TrimSpace(ex.command)
	return ex
}

// docLLMVar is the variable the docs' LLM examples name the chat server by.
const docLLMVar = "$LLM_URL"

// docScript is the testscript of a page's examples.
func docScript(examples []docExample) string {
	var b strings.Builder
	for _, ex := range examples {
		fmt.Fprintf(&b, "# %s:%d\n", ex.file, ex.line)
		cmd := ex.command
		if ex.exit != 0 {
			cmd = fmt.Sprintf(`%s; rc=$?; if [ $rc -ne %d ]; then echo "exit code $rc, the example says %d" >&2; exit 1; fi`, cmd, ex.exit, ex.exit)
		}
		fmt.Fprintf(&b, "exec sh -c '%s'\n\n", strings.ReplaceAll(cmd, "'", "''"))
	}
	return b.String()
}

// startLLMFake starts llmfake's server as the docs start it (ServeMain with no
// flags) and returns its URL; it stops when the test's cleanups run.
func startLLMFake(t *testing.T) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	done := make(chan int, 1)
	go func() {
		done <- llmtest.ServeMain(ctx, nil, pw, io.Discard)
		pw.Close()
	}()
	line, err := bufio.NewReader(pr).ReadString('\n')
	require.NoError(t, err, "llmfake prints its URL")
	go func() { _, _ = io.Copy(io.Discard, pr) }()
	t.Cleanup(func() {
		cancel()
		assert.Equal(t, 0, <-done)
	})
	url := strings.TrimSpace(line)
	require.Regexp(t, `^http://127\.0\.0\.1:[0-9]+$`, url)
	return url
}

// docPages are the pages whose examples must run.
func docPages(t *testing.T) []string {
	t.Helper()
	pages, err := filepath.Glob("docs/*.md")
	require.NoError(t, err)
	return append([]string{"README.md"}, pages...)
}

// demoData are the directories copied into each page's working directory.
var demoData = []string{"testdata/demo", "testdata/parquet", "testdata/calibrate", "testdata/formats", "testdata/compare", "internal/compare/testdata"}

func TestDocExamples(t *testing.T) {
	root, err := os.Getwd()
	require.NoError(t, err)
	dir := t.TempDir()
	// The scripts run in parallel subtests, after this function returns: the
	// server stops when they are done.
	llmURL := startLLMFake(t)
	var files []string
	total, llmExamples := 0, 0
	for _, page := range docPages(t) {
		text, err := os.ReadFile(page)
		require.NoError(t, err)
		examples, err := docExamples(page, string(text))
		require.NoError(t, err)
		if len(examples) == 0 {
			continue
		}
		total += len(examples)
		for _, ex := range examples {
			if strings.Contains(ex.command, docLLMVar) {
				llmExamples++
			}
		}
		name := filepath.Join(dir, strings.NewReplacer("/", "_", ".md", "").Replace(page)+".txtar")
		require.NoError(t, os.WriteFile(name, []byte(docScript(examples)), 0o644))
		files = append(files, name)
	}
	assert.GreaterOrEqual(t, total, 15, "the docs show the commands")
	assert.GreaterOrEqual(t, llmExamples, 3, "judge, generate and evaluate run against the chat server")
	testscript.Run(t, docParams(t, root, files, llmURL))
}

// docParams runs files with the demo data copied in, the built binary first on
// PATH and LLM_URL and RERANK_URL set to llmURL (when not empty).
func docParams(t *testing.T, root string, files []string, llmURL string) testscript.Params {
	bin := docBinary(t)
	return testscript.Params{
		Files: files,
		Setup: func(env *testscript.Env) error {
			// The built binary before the test binary's own retrieval-gate (testscript.Main's).
			env.Setenv("PATH", filepath.Dir(bin)+string(filepath.ListSeparator)+env.Getenv("PATH"))
			if llmURL != "" {
				env.Setenv("LLM_URL", llmURL)
				env.Setenv("RERANK_URL", llmURL)
			}
			for _, d := range demoData {
				if err := copyTree(filepath.Join(root, d), filepath.Join(env.WorkDir, d)); err != nil {
					return err
				}
			}
			return nil
		},
	}
}

func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, data, 0o644)
	})
}

func TestDocExamplesExtraction(t *testing.T) {
	page := "# x\n\n```sh\nretrieval-gate check --cases a \\\n  --kb b   # exits 1\nretrieval-gate import --in 'x y' --out c\ndocker run img\n# a comment\n```\n\n```text\ngo run . judge --judge-url ... ...\n```\n\n```yaml\n- run: retrieval-gate check\n```\n"
	got, err := docExamples("p.md", page)
	require.NoError(t, err)
	assert.Equal(t, []docExample{
		{file: "p.md", line: 4, command: "retrieval-gate check --cases a --kb b", exit: 1},
		{file: "p.md", line: 6, command: "retrieval-gate import --in 'x y' --out c"},
	}, got)
	assert.Contains(t, docScript(got), `exec sh -c 'retrieval-gate import --in ''x y'' --out c'`)
	llm, err := docExamples("p.md", "```sh\nretrieval-gate judge --judge-url \"$LLM_URL\" --kb kb\n```\n")
	require.NoError(t, err)
	assert.Contains(t, docScript(llm), `exec sh -c 'retrieval-gate judge --judge-url "$LLM_URL" --kb kb'`, "the variable, as the reader sets it")

	_, err = docExamples("p.md", "```sh\nretrieval-gate check \\\n```\n")
	require.Error(t, err)
	// `go run .` in a runnable block: the installed name is what users paste.
	_, err = docExamples("p.md", "```sh\ngo run . check --cases a\n```\n")
	assert.EqualError(t, err, "p.md:2: write the installed name, `retrieval-gate check --cases a`: `go run` turns exit 2 into 1, so the documented exit codes would not hold")
}

// recorder is a testscript.T that records failures instead of failing the test.
type recorder struct {
	mu     sync.Mutex
	failed bool
	log    strings.Builder
}

func (r *recorder) Skip(args ...any) { panic("skip") }
func (r *recorder) Fatal(args ...any) {
	r.mu.Lock()
	r.failed = true
	fmt.Fprintln(&r.log, args...)
	r.mu.Unlock()
	panic(recorderStop{})
}
func (r *recorder) Parallel()       {}
func (r *recorder) Log(args ...any) { r.mu.Lock(); fmt.Fprintln(&r.log, args...); r.mu.Unlock() }
func (r *recorder) FailNow()        { r.Fatal("FailNow") }
func (r *recorder) Verbose() bool   { return false }
func (r *recorder) Run(name string, f func(testscript.T)) {
	defer func() {
		if v := recover(); v != nil {
			if _, ok := v.(recorderStop); !ok {
				panic(v)
			}
		}
	}()
	f(r)
}

type recorderStop struct{}

// The test fails when an example breaks: a wrong path, a wrong exit code.
func TestDocExamplesFailWhenBroken(t *testing.T) {
	root, err := os.Getwd()
	require.NoError(t, err)
	for name, page := range map[string]string{
		"ok":           "```sh\nretrieval-gate check --cases testdata/demo/cases.jsonl --kb testdata/demo/kb\n```\n",
		"missing file": "```sh\nretrieval-gate check --cases testdata/demo/nope.jsonl --kb testdata/demo/kb\n```\n",
		"exit code":    "```sh\nretrieval-gate check --cases testdata/demo/cases.jsonl --kb testdata/demo/kb   # exits 1\n```\n",
		"unknown flag": "```sh\nretrieval-gate check --cases testdata/demo/cases.jsonl --kb testdata/demo/kb --min-hitt 0.5\n```\n",
		// The documented code of a usage error is 2: the installed binary's, not go run's 1.
		"usage exit 2":   "```sh\nretrieval-gate check --cases testdata/demo/cases.jsonl   # exits 2\n```\n",
		"expected fail ": "```sh\nretrieval-gate check --cases testdata/demo/cases.jsonl --kb testdata/demo/kb --min-hit 1   # exits 1\n```\n",
	} {
		t.Run(name, func(t *testing.T) {
			examples, err := docExamples("p.md", page)
			require.NoError(t, err)
			script := filepath.Join(t.TempDir(), "p.txtar")
			require.NoError(t, os.WriteFile(script, []byte(docScript(examples)), 0o644))
			r := &recorder{}
			testscript.RunT(r, docParams(t, root, []string{script}, ""))
			wantFail := name != "ok" && name != "expected fail " && name != "usage exit 2"
			assert.Equal(t, wantFail, r.failed, r.log.String())
		})
	}
}

// docBinary is the binary TestMain built (e2etest.Binary), first on PATH.
func docBinary(t *testing.T) string {
	bin, err := e2etest.Binary()
	require.NoError(t, err)
	return bin
}

// TestMain builds the binary and puts it first on PATH; the tests run from the
// repository root, whose README.md and docs/*.md they read.
//
// llmfake is a command of the scripts (TestLLMFakeDocBlock runs the docs'
// `llmfake > llmfake.url &`): cmd/llmfake's main, the same ServeMain wired to
// SIGINT and SIGTERM.
func TestMain(m *testing.M) {
	e2etest.Main(m, map[string]func(){"llmfake": func() {
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		code := llmtest.ServeMain(ctx, os.Args[1:], os.Stdout, os.Stderr)
		stop()
		os.Exit(code)
	}})
}

var updateDocs = flag.Bool("update-docs", false, "rewrite the docs' output examples (docs/check.md's JSON) from real runs")

// outputExample is a command of a page whose output file the page shows whole:
// a ```sh block of one `retrieval-gate … --json FILE` line, then, before any
// other code block, a ```json block holding FILE as the command writes it.
var outputExample = regexp.MustCompile("(?s)```sh\n(retrieval-gate [^\n]*--json ([^ \n]+)[^\n]*)\n```\n(?:[^`]|`[^`]|``[^`])*?```json\n(.*?)```\n")

// TestDocOutputExamples runs the command above each whole-output example of the
// docs on the demo and requires the file it writes to equal the example byte for
// byte (-update-docs rewrites the examples), so the example cannot go stale.
func TestDocOutputExamples(t *testing.T) {
	t.Parallel()
	bin := docBinary(t)
	root, err := os.Getwd()
	require.NoError(t, err)
	for _, page := range []string{"docs/check.md"} {
		data, err := os.ReadFile(page)
		require.NoError(t, err)
		text := string(data)
		matches := outputExample.FindAllStringSubmatchIndex(text, -1)
		require.NotEmpty(t, matches, "%s shows a command's whole JSON", page)
		for i := len(matches) - 1; i >= 0; i-- { // from the end, so rewriting keeps earlier offsets
			m := matches[i]
			ex := finish(docExample{command: text[m[2]:m[3]]})
			file, shown := text[m[4]:m[5]], text[m[6]:m[7]]
			dir := t.TempDir()
			for _, d := range demoData {
				require.NoError(t, copyTree(filepath.Join(root, d), filepath.Join(dir, d)))
			}
			cmd := exec.Command("sh", "-c", strings.Replace(ex.command, "retrieval-gate", bin, 1))
			cmd.Dir = dir
			out, err := cmd.CombinedOutput()
			code := 0
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				code = ee.ExitCode()
			} else {
				require.NoError(t, err)
			}
			require.Equal(t, ex.exit, code, "%s: %s\n%s", page, ex.command, out)
			got, err := os.ReadFile(filepath.Join(dir, file))
			require.NoError(t, err)
			if *updateDocs {
				text = text[:m[6]] + string(got) + text[m[7]:]
				continue
			}
			assert.Equal(t, string(got), shown, "%s: the JSON shown is not what `%s` writes (go test -run TestDocOutputExamples -update-docs rewrites it)", page, ex.command)
		}
		if *updateDocs {
			require.NoError(t, os.WriteFile(page, []byte(text), 0o644))
		}
	}
}

// llmfakeBlock is the ```sh block of docs/judge.md that starts llmfake.
var llmfakeBlock = regexp.MustCompile("(?s)```sh\n([^`]*?llmfake > llmfake\\.url &[^`]*?)```\n")

// TestLLMFakeDocBlock runs docs/judge.md's block that starts llmfake, line by
// line as a reader pastes it (but its `go install`: llmfake is on PATH as it
// would put it), then a judge and a reranked retrieve against "$LLM_URL" and
// "$RERANK_URL": the copy-paste works on a free port, whatever else listens.
func TestLLMFakeDocBlock(t *testing.T) {
	root, err := os.Getwd()
	require.NoError(t, err)
	page, err := os.ReadFile("docs/judge.md")
	require.NoError(t, err)
	m := llmfakeBlock.FindSubmatch(page)
	require.NotNil(t, m, "docs/judge.md has the block that starts llmfake")
	var lines []string
	for _, l := range strings.Split(strings.TrimSpace(string(m[1])), "\n") {
		if strings.HasPrefix(l, "go install ") {
			continue
		}
		lines = append(lines, l)
		if strings.Contains(l, "llmfake > llmfake.url &") {
			lines = append(lines, `trap "kill $! 2>/dev/null" EXIT`) // never left running
		}
	}
	lines = append(lines,
		`retrieval-gate retrieve --kb testdata/demo/kb --cases testdata/demo/cases.jsonl --out run-rr.jsonl --strategy lexical --rerank-url "$RERANK_URL"`,
		`retrieval-gate retrieve --kb testdata/demo/kb --cases testdata/demo/cases.jsonl --out run-plain.jsonl --strategy lexical`,
		`! cmp -s run-rr.jsonl run-plain.jsonl # the reranker reordered`,
		`retrieval-gate judge --kb testdata/demo/kb --run rr=run-rr.jsonl --judge-url "$LLM_URL" --cache none --qrels rr.qrels --k 3`,
		`test -s rr.qrels`,
	)
	script := filepath.Join(t.TempDir(), "llmfake.txtar")
	body := "exec sh -e block.sh\nstdout 'judge: pool of'\n\n-- block.sh --\n" + strings.Join(lines, "\n") + "\n"
	require.NoError(t, os.WriteFile(script, []byte(body), 0o644))
	testscript.Run(t, docParams(t, root, []string{script}, ""))
}

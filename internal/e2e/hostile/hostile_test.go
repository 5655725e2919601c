package hostile

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/retrieval-gate/retrieval-gate/internal/e2e/e2etest"
	"github.com/retrieval-gate/retrieval-gate/internal/llm/llmtest"
)

// TestHostileCommands runs every file of the hostile corpus (testdata/hostile,
// listed with its expected outcome in its README) through every command that
// reads that family of input, as the built binary: an "error" file exits 2 with
// an error that names the file and a line (file:N:) and leaves no output file;
// an "accepted" file is read (a command may still refuse it for what it means,
// e.g. a case without a query for retrieve, but never with a reader error at a
// line). No run may hang (testscript's deadline) or panic. The exact messages are
// asserted reader by reader in internal/input's hostile test; a command checks
// the data further, so its first error can be another line of the same file.
func TestHostileCommands(t *testing.T) {
	root, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	expected, err := hostileExpectations(filepath.Join(root, "testdata", "hostile", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	names := make([]string, 0, len(expected))
	for name := range expected {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		script := hostileScript(name, expected[name])
		if script == "" {
			continue
		}
		file := filepath.Join(dir, strings.NewReplacer("/", "_", ".", "_").Replace(name)+".txtar")
		if err := os.WriteFile(file, []byte(script), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	testscript.Run(t, testscript.Params{
		Dir: dir,
		Setup: func(env *testscript.Env) error {
			env.Setenv("ROOT", root)
			return nil
		},
	})
}

// hostileExpectations reads the README's table: file -> "accepted" or the
// expected error message (the text between backticks after "error").
func hostileExpectations(readme string) (map[string]string, error) {
	data, err := os.ReadFile(readme)
	if err != nil {
		return nil, err
	}
	row := regexp.MustCompile("^\\| `([a-z]+/[^`]+)` \\| .* \\| (accepted.*|error `([^`]+)`.*) \\|$")
	out := map[string]string{}
	for _, line := range strings.Split(string(data), "\n") {
		m := row.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		if strings.HasPrefix(m[2], "accepted") {
			out[m[1]] = "accepted"
		} else {
			out[m[1]] = m[3]
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no rows", readme)
	}
	return out, nil
}

// hostileRun is a command line that reads a file of a family: $F is the
// hostile file, $COPY a copy of it with the same base name (for a command that
// appends to its input: the corpus is never modified), $SHARDS a directory
// holding only that copy (read as shards), $KB the file or a KB directory
// holding it; outputs go to out/ (absent: the paths that must not exist after
// a refusal, when not out). A line holding {{LLM_URL}} runs under fake-llm, a
// stand-in chat server that counts its requests: a refused file makes none
// (the input is refused before any request). errorsOnly: not run on an
// accepted file (a whole pipeline's worth of work, with nothing to say of it).
// only: evaluate's first stage is retrieve, whose reader the retrieve line
// runs on every file; two files show evaluate refusing them before a request.
type hostileRun struct {
	line       string
	absent     string
	errorsOnly bool
	only       []string // when set: run on these files of the family alone (a stage whose reader another line covers)
}

// Shared inputs of the command lines.
const (
	demoKB     = "$ROOT/testdata/demo/kb"
	demoCases  = "$ROOT/testdata/demo/cases.jsonl"
	oracle     = "$ROOT/internal/compare/testdata/oracle/dev300"
	compareArg = "compare --qrels " + oracle + ".qrels --run a=" + oracle + ".run --bootstrap 100 --comment never --json out/x.json"
	judgeArg   = "judge --judge-url {{LLM_URL}} --judge-model fake --k 1 --qrels out/q.txt --cache out/cache.jsonl"
)

var hostileRuns = map[string][]hostileRun{
	"cases": {
		{line: "check --cases $F --kb " + demoKB + " --comment never --json out/a.json --markdown out/a.md --cases-out out/c.jsonl --junit out/a.xml --codequality out/cq.json"},
		{line: "check --cases $SHARDS --kb " + demoKB + " --comment never --json out/a.json"},
		{line: "retrieve --cases $F --kb " + demoKB + " --out out/r.jsonl"},
		{line: judgeArg + " --kb " + demoKB + " --run a=$F"},
		{line: compareArg + " --queries $F"},
		{line: "evaluate --kb " + demoKB + " --cases $F --out ev --judge-url {{LLM_URL}} --judge-model fake --k 1 --bootstrap 100 --comment never", absent: "ev/run-dense.jsonl", errorsOnly: true,
			only: []string{"dup-second-line.jsonl", "score-inf.parquet"}},
	},
	"kb": {
		{line: "check --cases " + demoCases + " --kb $KB --comment never --json out/a.json"},
		{line: "retrieve --cases " + demoCases + " --kb $KB --out out/r.jsonl"},
		{line: judgeArg + " --kb $KB --run a=" + demoCases},
		{line: "generate --kb $KB --generator-url {{LLM_URL}} --out out/g.jsonl"},
	},
	"labels": {
		{line: "calibrate --human $F --judge $ROOT/testdata/calibrate/judge.jsonl --lock $ROOT/testdata/calibrate/lock.json --comment never --json out/c.json"},
		{line: "calibrate --human $ROOT/testdata/calibrate/human.jsonl --judge $F --lock $ROOT/testdata/calibrate/lock.json --comment never --json out/c.json"},
	},
	"lock": {
		{line: "calibrate --human $ROOT/testdata/calibrate/human.jsonl --judge $ROOT/testdata/calibrate/judge.jsonl --lock $F --comment never --json out/c.json"},
	},
	"qrels": {
		{line: "compare --qrels $F --run a=" + oracle + ".run --bootstrap 100 --comment never --json out/x.json"},
		{line: judgeArg + " --kb " + demoKB + " --run a=" + demoCases + " --known-qrels $F"},
	},
	// GITHUB_REF_NAME=main (set by hostileScript): the trend reads the records of main.
	"history": {
		{line: "check --cases " + demoCases + " --kb " + demoKB + " --comment never --history $COPY --markdown out/a.md --html out/a.html"},
		{line: compareArg + " --history $COPY"},
		{line: "evaluate --kb " + demoKB + " --cases " + demoCases + " --out ev --judge-url {{LLM_URL}} --judge-model fake --k 1 --bootstrap 100 --comment never --history $COPY", absent: "ev", errorsOnly: true},
		{line: "report --history $F --html out/h.html"},
	},
	"baseline": {
		{line: "check --cases " + demoCases + " --kb " + demoKB + " --comment never --baseline $F --json out/a.json --markdown out/a.md"},
	},
	"run": {
		{line: "compare --qrels " + oracle + ".qrels --run a=$F --bootstrap 100 --comment never --json out/x.json"},
		{line: judgeArg + " --kb " + demoKB + " --run a=$F --queries $ROOT/testdata/compare/queries.jsonl"},
	},
	"cache": {
		{line: judgeArg + " --kb " + demoKB + " --run a=" + demoCases + " --cache $COPY"},
	},
	"clusters": {
		{line: compareArg + " --clusters $F"},
	},
	"sheet": {
		{line: compareArg + " --human-qrels $F"},
		{line: "calibrate --human-sheet $F --judge-qrels " + oracle + ".qrels --lock $ROOT/testdata/calibrate/relevance-lock.json --comment never --json out/c.json"},
	},
	"import": {
		{line: "import --in $F --out out/x.jsonl"},
	},
	"from": {
		{line: "report --from $F --markdown out/r.md"},
	},
	"queries": {
		{line: judgeArg + " --kb " + demoKB + " --run a=$ROOT/testdata/compare/bm25.trec --queries $F"},
		{line: "compare --qrels $ROOT/testdata/compare/qrels.trec --run a=$ROOT/testdata/compare/bm25.trec --bootstrap 100 --comment never --json out/x.json --queries $F"},
	},
	"prompt": {
		{line: judgeArg + " --kb " + demoKB + " --run a=" + demoCases + " --prompt $F"},
		{line: "generate --kb " + demoKB + " --generator-url {{LLM_URL}} --out out/g.jsonl --prompt $F"},
	},
}

// hostileScript is the testscript for one hostile file.
func hostileScript(name, want string) string {
	family, base, _ := strings.Cut(name, "/")
	runs := hostileRuns[family]
	if len(runs) == 0 {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# %s: %s\n", name, want)
	file := "$ROOT/testdata/hostile/" + name
	kb := file
	if family == "kb" && strings.HasSuffix(base, ".md") {
		// A Markdown card is read from a KB directory.
		fmt.Fprintf(&b, "mkdir kbdir\ncp %s kbdir/%s\n", file, base)
		kb = "kbdir"
	}
	if family == "history" {
		b.WriteString("env GITHUB_REF_NAME=main\n")
	}
	for _, run := range runs {
		if (run.errorsOnly && want == "accepted") || (run.only != nil && !slices.Contains(run.only, base)) {
			continue
		}
		copied := strings.Contains(run.line, "$COPY")
		if copied {
			// A fresh copy for each command that may append to it.
			fmt.Fprintf(&b, "rm copy\nmkdir copy\ncp %s copy/%s\n", file, base)
		}
		if strings.Contains(run.line, "$SHARDS") {
			fmt.Fprintf(&b, "rm shards\nmkdir shards\ncp %s shards/%s\n", file, base)
		}
		line := strings.NewReplacer("$F", file, "$KB", kb, "$COPY", "copy/"+base, "$SHARDS", "shards").Replace(run.line)
		llm := strings.Contains(line, "{{LLM_URL}}")
		if llm {
			line = "fake-llm -- retrieval-gate " + line
		} else {
			line = "retrieval-gate " + line
		}
		fmt.Fprintf(&b, "exec sh exit.sh %s\n", line)
		b.WriteString("! stderr 'panic|goroutine [0-9]+'\n")
		if want == "accepted" {
			// Read: no reader error at a line of the file, whatever the verdict.
			fmt.Fprintf(&b, "! stderr %s\n", quote(regexp.QuoteMeta(base+":")+"[0-9]+: (malformed|duplicate|invalid)"))
			b.WriteString("rm out\n")
			continue
		}
		b.WriteString("stdout '^exit=2$'\n")
		fmt.Fprintf(&b, "stderr %s\n", quote(regexp.QuoteMeta(base+":")+"[0-9]+: "))
		absent := run.absent
		if absent == "" {
			absent = "out"
		}
		fmt.Fprintf(&b, "! exists %s\n", absent)
		if llm {
			// Refused before any request to the chat server.
			b.WriteString("stderr '^fake-llm: 0 requests'\n")
		}
		if copied {
			// Refused: the copy is left as it was (nothing appended, nothing repaired).
			fmt.Fprintf(&b, "cmp copy/%s %s\n", base, file)
		}
	}
	b.WriteString("-- exit.sh --\n\"$@\"\necho \"exit=$?\"\n")
	return b.String()
}

// quote quotes s as one argument of a testscript command.
func quote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", "''") + "'"
}

// TestMain builds the binary and puts it first on PATH, with the stand-in
// chat server (fake-llm) as a command of this test binary; the test runs from
// the repository root.
func TestMain(m *testing.M) { e2etest.Main(m, map[string]func(){"fake-llm": llmtest.Main}) }

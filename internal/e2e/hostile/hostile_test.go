package hostile

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/retrieval-gate/retrieval-gate/internal/e2e/e2etest"
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

// hostileRuns are the command lines that read a file of each family; $F is the
// hostile file, $COPY a copy of it with the same base name (for a command that
// appends to its input: the corpus is never modified), outputs go to out/.
var hostileRuns = map[string][]string{
	"cases": {
		"check --cases $F --kb $ROOT/testdata/demo/kb --comment never --json out/a.json --markdown out/a.md --cases-out out/c.jsonl --junit out/a.xml --codequality out/cq.json",
		"retrieve --cases $F --kb $ROOT/testdata/demo/kb --out out/r.jsonl",
	},
	"kb": {
		"check --cases $ROOT/testdata/demo/cases.jsonl --kb $KB --comment never --json out/a.json",
		"retrieve --cases $ROOT/testdata/demo/cases.jsonl --kb $KB --out out/r.jsonl",
	},
	"labels": {
		"calibrate --human $F --judge $ROOT/testdata/calibrate/judge.jsonl --lock $ROOT/testdata/calibrate/lock.json --comment never --json out/c.json",
		"calibrate --human $ROOT/testdata/calibrate/human.jsonl --judge $F --lock $ROOT/testdata/calibrate/lock.json --comment never --json out/c.json",
	},
	"lock": {
		"calibrate --human $ROOT/testdata/calibrate/human.jsonl --judge $ROOT/testdata/calibrate/judge.jsonl --lock $F --comment never --json out/c.json",
	},
	"qrels": {
		"compare --qrels $F --run a=$ROOT/internal/compare/testdata/oracle/dev300.run --bootstrap 100 --comment never --json out/x.json",
	},
	// GITHUB_REF_NAME=main (set by hostileScript): the trend reads the records of main.
	"history": {
		"check --cases $ROOT/testdata/demo/cases.jsonl --kb $ROOT/testdata/demo/kb --comment never --history $COPY --markdown out/a.md --html out/a.html",
		"report --history $F --html out/h.html",
	},
	"baseline": {
		"check --cases $ROOT/testdata/demo/cases.jsonl --kb $ROOT/testdata/demo/kb --comment never --baseline $F --json out/a.json --markdown out/a.md",
	},
	"run": {
		"compare --qrels $ROOT/internal/compare/testdata/oracle/dev300.qrels --run a=$F --bootstrap 100 --comment never --json out/x.json",
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
	copied := false
	for _, run := range runs {
		if strings.Contains(run, "$COPY") && !copied {
			fmt.Fprintf(&b, "mkdir copy\ncp %s copy/%s\n", file, base)
			copied = true
		}
		line := strings.NewReplacer("$F", file, "$KB", kb, "$COPY", "copy/"+base).Replace(run)
		fmt.Fprintf(&b, "exec sh exit.sh retrieval-gate %s\n", line)
		b.WriteString("! stderr 'panic|goroutine [0-9]+'\n")
		if want == "accepted" {
			// Read: no reader error at a line of the file, whatever the verdict.
			fmt.Fprintf(&b, "! stderr %s\n", quote(regexp.QuoteMeta(base+":")+"[0-9]+: (malformed|duplicate|invalid)"))
			continue
		}
		b.WriteString("stdout '^exit=2$'\n")
		fmt.Fprintf(&b, "stderr %s\n", quote(regexp.QuoteMeta(base+":")+"[0-9]+: "))
		b.WriteString("! exists out\n")
		if copied {
			// Refused: the copy is left as it was (nothing appended).
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

// TestMain builds the binary and puts it first on PATH; the test runs from the
// repository root.
func TestMain(m *testing.M) { e2etest.Main(m, nil) }

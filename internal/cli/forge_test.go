package cli

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/retrieval-gate/retrieval-gate/internal/publish/runnertest"
)

// forgePayloads carry a workflow command in every syntax the runner reads (issue 20
// items 1 and 2): the legacy "##[name]" anywhere in a line, "::" after white space
// the runner trims (U+00A0, U+3000, U+2007, U+0085 …) or after a character a
// culture-sensitive comparison ignores. Each names FORGED in its command.
var forgePayloads = []string{
	"a1 ##[stop-commands]FORGED",
	"en ##[error title=FORGED]x",
	"q ##[add-mask]FORGED",
	"##[set-output name=FORGED]v",
	"x#\u00ad#[warning title=FORGED]y",
	"\u00a0::add-mask::FORGED",
	"\u3000::error title=FORGED::x",
	"\u2007::warning title=FORGED::x",
	"\u0085::notice title=FORGED::x",
	"\u200b::stop-commands::FORGED",
	"\n\u205f::error title=FORGED::x",
}

// ourCommands are the workflow commands retrieval-gate issues itself, always at
// the start of a line in the "::" syntax.
var ourCommands = map[string]bool{"error": true, "warning": true, "notice": true, "add-mask": true, "group": true, "endgroup": true, "debug": true}

// assertNoForgedCommand reads text as the runner does and fails on any command
// data could have forged (forgedLines).
func assertNoForgedCommand(t *testing.T, what, text string) {
	t.Helper()
	for _, f := range forgedLines(text) {
		assert.Fail(t, "forged workflow command", "%s: %s", what, f)
	}
}

// forgedLines are the lines of text, read as the runner does, that carry a
// command data could have forged: the legacy syntax (never ours), "::" after
// anything, a command we never issue, or one whose title carries FORGED in any
// case (our own carry data only in their escaped file property and message; a
// locale is lowercased as it is read, so a forged title may read "forged");
// nor may data bring the legacy syntax into a line the runner reads as one of
// ours: "##[" gets its backslash anywhere in a line.
func forgedLines(text string) []string {
	var out []string
	for _, c := range runnertest.Commands(text, nil) {
		_, props, _ := strings.Cut(c.Info, " ")
		title := ""
		for _, kv := range strings.Split(props, ",") {
			if k, v, _ := strings.Cut(kv, "="); k == "title" {
				title = v
			}
		}
		if c.Syntax != "::" || !strings.HasPrefix(c.Text, "::") || !ourCommands[c.Name] || strings.Contains(strings.ToUpper(title), "FORGED") {
			out = append(out, fmt.Sprintf("line %d forges %s%s: %q", c.Line, c.Syntax, c.Name, c.Text))
		}
	}
	for i, l := range runnertest.Lines(text) {
		if strings.Contains(l, "##[") {
			out = append(out, fmt.Sprintf("line %d carries the legacy syntax: %q", i+1, l))
		}
	}
	return out
}

// The forge tests' oracle: what it finds forged and what it lets through
// (retrieval-gate's own commands, with data only in their escaped file
// property and message).
func TestForgedLines(t *testing.T) {
	for _, tc := range []struct {
		text   string
		forged int
	}{
		{"::warning::the `json` output x is outside the workspace\n", 0},
		{"::error file=a%3A%3Ab,line=2,title=retrieval-gate check%3A input error::c \\::error title=FORGED::x\n", 0},
		{"::add-mask::secret\n", 0},
		{"\\::error title=FORGED::x\n##\\[error]x\n", 0},
		{"::error title=FORGED::x\n", 1},
		{"::error title=forged::x\n", 1}, // a lowercased locale
		{"::stop-commands::FORGED\n", 1},
		{"\u3000::error::x\n", 1},
		{"x ##[error]y\n", 2}, // the command, and the legacy syntax in the line
		{"x ##[nope]y\n", 2},  // any name (after ::stop-commands:: the stop token is one)
	} {
		assert.Len(t, forgedLines(tc.text), tc.forged, "%q: %v", tc.text, forgedLines(tc.text))
	}
}

// Issue 20 items 1 and 2: every stream of every command, inside Actions and
// outside, read as the runner reads it: no id, locale, query, type, file name or
// qrels id forges a command in either syntax.
func TestNoForgedCommandAnySyntax(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	write := fileWriter(t, dir)
	js := func(s string) string { b, _ := json.Marshal(s); return string(b) }
	var cases, badCases, qrels, runA, runB, scored, human strings.Builder
	for i, p := range forgePayloads {
		fmt.Fprintf(&cases, `{"id":%s,"locale":%s,"type":%s,"query":%s,"must_cite_one_of":["a"],"retrieved":["a"]}`+"\n", js(fmt.Sprintf("c%d %s", i, p)), js(p), js(p), js(p))
		fmt.Fprintf(&badCases, `{"id":%s,"must_cite_one_of":[%s],"retrieved":["a"]}`+"\n", js(fmt.Sprintf("c%d %s", i, p)), js(p))
		// A TREC line holds no ASCII white space: the query ids without it.
		qid := strings.NewReplacer(" ", "", "\n", "").Replace(p)
		fmt.Fprintf(&qrels, `{"query_id":%s,"doc_id":"d%d","relevance":1}`+"\n", js(qid), i)
		fmt.Fprintf(&runA, "%s Q0 d%d 1 0.9 a\n", qid, i)
		fmt.Fprintf(&runB, "%s Q0 x%d 1 0.9 b\n", qid, i)
		fmt.Fprintf(&scored, `{"query_id":%s,"doc_id":"d%d","score":0.5}`+"\n", js(qid), i)
		fmt.Fprintf(&human, `{"case_id":%s,"dimension":"relevance","label":1}`+"\n", js(p))
	}
	kb := write("kb.jsonl", `{"id":"a","text":"alpha"}`+"\n")
	kbDir := filepath.Join(dir, "kbdir")
	write(filepath.Join("kbdir", "a.md"), "---\nid: a\nlocale: \"en ##[error title=FORGED]x\"\n---\nalpha\n")
	write(filepath.Join("kbdir", "card ##[add-mask]FORGED.md"), "---\nid: [\n---\nx\n")
	casesF, badF := write("cases.jsonl", cases.String()), write("bad.jsonl", badCases.String())
	qrelsF, aF, bF := write("qrels.jsonl", qrels.String()), write("a.trec", runA.String()), write("b.trec", runB.String())
	scoredF, humanF := write("scored.jsonl", scored.String()), write("human.jsonl", human.String())
	lock := write("lock.json", `{"dimensions":{"relevance ##[error title=FORGED]x":{"scale":[0,1,2]}}}`)

	runs := [][]string{
		{"check", "--cases", casesF, "--kb", kb},
		{"check", "--cases", casesF, "--kb", kbDir},
		{"check", "--cases", badF, "--kb", kb},
		{"check", "--cases", casesF, "--kb", kb, "--comment-key", "k ##[error title=FORGED]x"},
		{"import", "--in", scoredF, "--out", "-"},
		{"import", "--in", qrelsF, "--out", "-"},
		{"import", "--in", casesF, "--format", "ragas", "--out", "-"},
		{"retrieve", "--cases", casesF, "--kb", kbDir, "--out", filepath.Join(dir, "out.jsonl")},
		{"compare", "--qrels", qrelsF, "--run", "a=" + aF, "--run", "b=" + bF, "--bootstrap", "20"},
		{"calibrate", "--human", humanF, "--judge", humanF, "--lock", lock},
		{"report", "--from", casesF},
		{"nope ##[error title=FORGED]x"},
	}
	for _, args := range runs {
		want := -1
		if (args[0] == "import" && args[2] != casesF) || args[0] == "compare" {
			// These read the hostile ids and print them: the test must not pass
			// because the input was refused.
			want = 0
		}
		// Two runs are refused before they read a hostile value (ragas wants
		// another shape; report --from wants a report).
		refused := args[0] == "report" || (args[0] == "import" && args[2] == casesF)
		// Every stream, the job summary and the outputs file, inside Actions and
		// outside (forge_new_test.go).
		forgeRunData(t, dir, want, !refused, args...)
	}
}

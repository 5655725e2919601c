package github

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/retrieval-gate/retrieval-gate/internal/unixtest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func envFunc(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

func writeFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
	return p
}

func prPayload(number int, head, base string) string {
	headRepo := "null"
	if head != "" {
		headRepo = fmt.Sprintf(`{"full_name": %q}`, head)
	}
	return fmt.Sprintf(`{"action":"synchronize","number":%d,"pull_request":{"number":%d,
		"head":{"ref":"feature","repo":%s},"base":{"ref":"main","repo":{"full_name":%q}}}}`, number, number, headRepo, base)
}

func TestReadActions(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name, event, payload string
		wantPR               int
		wantFork, wantRO     bool
		wantErr              string
	}{
		{name: "same-repo pull_request", event: "pull_request", payload: prPayload(12, "octo/repo", "octo/repo"), wantPR: 12},
		{name: "fork pull_request has a read-only token", event: "pull_request", payload: prPayload(13, "someone/repo", "octo/repo"), wantPR: 13, wantFork: true, wantRO: true},
		{name: "deleted fork (head.repo null) is a fork", event: "pull_request", payload: prPayload(14, "", "octo/repo"), wantPR: 14, wantFork: true, wantRO: true},
		{name: "pull_request_target from a fork may write", event: "pull_request_target", payload: prPayload(15, "someone/repo", "octo/repo"), wantPR: 15, wantFork: true},
		// A review and a review comment carry the pull request as pull_request does,
		// and from a fork get the same read-only token ("Events that trigger
		// workflows", pull_request_review: "Workflows in forked repositories").
		{name: "pull_request_review", event: "pull_request_review", payload: prPayload(18, "octo/repo", "octo/repo"), wantPR: 18},
		{name: "fork pull_request_review has a read-only token", event: "pull_request_review", payload: prPayload(19, "someone/repo", "octo/repo"), wantPR: 19, wantFork: true, wantRO: true},
		{name: "fork pull_request_review_comment has a read-only token", event: "pull_request_review_comment", payload: prPayload(20, "someone/repo", "octo/repo"), wantPR: 20, wantFork: true, wantRO: true},
		{name: "push has no PR", event: "push", payload: `{"ref":"refs/heads/main"}`},
		{name: "issue_comment on a PR", event: "issue_comment", payload: `{"issue":{"number":16,"pull_request":{"url":"x"}}}`, wantPR: 16},
		{name: "issue_comment on an issue", event: "issue_comment", payload: `{"issue":{"number":17}}`},
		{name: "malformed payload", event: "pull_request", payload: `{"number":`, wantErr: "failed to read the event payload"},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := writeFile(t, dir, fmt.Sprintf("event%d.json", i), tc.payload)
			a, err := ReadActions(envFunc(map[string]string{
				"GITHUB_ACTIONS": "true", "GITHUB_EVENT_NAME": tc.event, "GITHUB_EVENT_PATH": path,
				"GITHUB_REPOSITORY": "octo/repo",
			}), &bytes.Buffer{})
			require.NotNil(t, a)
			if tc.wantErr != "" {
				require.ErrorContains(t, err, tc.wantErr)
				assert.Zero(t, a.PR)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.wantPR, a.PR)
			assert.Equal(t, tc.wantFork, a.Fork)
			assert.Equal(t, tc.wantRO, a.ReadOnlyToken())
			assert.Equal(t, DefaultAPIURL, a.APIURL)
		})
	}
	t.Run("outside Actions nothing is read and nothing written", func(t *testing.T) {
		var out bytes.Buffer
		a, err := ReadActions(envFunc(map[string]string{"GITHUB_EVENT_PATH": "/nonexistent"}), &out)
		require.NoError(t, err)
		assert.False(t, a.InActions)
		a.Warning("w")
		a.Mask("secret")
		assert.Equal(t, 0, a.Annotate("error", []Annotation{{File: "f", Line: 1, Message: "m"}}, 1, 5, ""))
		require.NoError(t, a.SetOutputs(map[string]string{"a": "b"}))
		require.NoError(t, a.AppendSummary("x"))
		assert.Empty(t, out.String())
	})
}

func TestAnnotate(t *testing.T) {
	ws := t.TempDir()
	var out bytes.Buffer
	a, err := ReadActions(envFunc(map[string]string{"GITHUB_ACTIONS": "true", "GITHUB_WORKSPACE": ws}), &out)
	require.NoError(t, err)
	anns := []Annotation{
		{File: filepath.Join(ws, "eval", "cases.jsonl"), Line: 41, Title: "unknown gold id", Message: "case en-1: gold id \"en-nope\" is not a card of the KB\n100% sure"},
		{File: "/elsewhere/cases.jsonl", Line: 2, Message: "outside the workspace"},
		{File: filepath.Join(ws, "c.jsonl"), Line: 3, Message: "third"},
	}
	n := a.Annotate("error", anns, 3, 2, "see the job summary")
	assert.Equal(t, 2, n)
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	require.Len(t, lines, 3)
	assert.Equal(t, "::error file=eval/cases.jsonl,line=41,title=unknown gold id::case en-1: gold id \"en-nope\" is not a card of the KB%0A100%25 sure", lines[0])
	assert.Equal(t, "::error file=/elsewhere/cases.jsonl,line=2::outside the workspace", lines[1])
	assert.Equal(t, "::notice::1 more problem not annotated (at most 2 are); see the job summary", lines[2])
}

// Data in an annotation's file, title or message, or in a warning or a notice,
// never carries "##[" (the legacy syntax the runner finds anywhere in a line).
func TestCommandsGuardLegacySyntax(t *testing.T) {
	ws := t.TempDir()
	var out bytes.Buffer
	a, err := ReadActions(envFunc(map[string]string{"GITHUB_ACTIONS": "true", "GITHUB_WORKSPACE": ws}), &out)
	require.NoError(t, err)
	n := a.Annotate("error", []Annotation{{File: filepath.Join(ws, "##[error]f.jsonl"), Line: 1, Title: "t ##[warning]t",
		Message: "duplicate key \"##[error]x\", #\u200b#[group]y"}}, 1, 5, "")
	require.Equal(t, 1, n)
	a.Warning("unknown id ##[stop-commands]z")
	a.Notice("##[endgroup]")
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	require.Len(t, lines, 3)
	// The zero-width space is shown (CommandText), and "#(U+200B)#[" is no command.
	assert.Equal(t, "::error file=##\\[error]f.jsonl,line=1,title=t ##\\[warning]t::duplicate key \"##\\[error]x\", #(U+200B)#[group]y", lines[0])
	assert.Equal(t, `::warning::unknown id ##\[stop-commands]z`, lines[1])
	assert.Equal(t, `::notice::##\[endgroup]`, lines[2])
	for _, l := range lines {
		assert.NotContains(t, l, "##[")
	}
}

func TestRelPath(t *testing.T) {
	ws := t.TempDir()
	wd, err := os.Getwd()
	require.NoError(t, err)
	a := &Actions{Workspace: ws}
	assert.Equal(t, "a/b.jsonl", a.RelPath(filepath.Join(ws, "a", "b.jsonl")))
	assert.Equal(t, "/x/y", a.RelPath("/x/y"))
	assert.Equal(t, "-", a.RelPath("-"))
	a = &Actions{Workspace: wd}
	assert.Equal(t, "testdata/x.jsonl", a.RelPath("./testdata/x.jsonl"))
	a = &Actions{}
	assert.Equal(t, "x/y.jsonl", a.RelPath("x//y.jsonl"))
}

func TestOutputsAndSummary(t *testing.T) {
	dir := t.TempDir()
	outFile := writeFile(t, dir, "output", "earlier=1\n")
	sumFile := writeFile(t, dir, "summary", "")
	var out bytes.Buffer
	a, err := ReadActions(envFunc(map[string]string{"GITHUB_ACTIONS": "true", "GITHUB_OUTPUT": outFile, "GITHUB_STEP_SUMMARY": sumFile}), &out)
	require.NoError(t, err)

	require.NoError(t, a.SetOutputs(map[string]string{"verdict": "fail", "hit": "0.7", "json": "out/agg.json"}))
	got, err := os.ReadFile(outFile)
	require.NoError(t, err)
	d := "_GitHubActionsFileCommandDelimeter_"
	assert.Equal(t, "earlier=1\n"+
		"hit<<"+d+"\n0.7\n"+d+"\n"+
		"json<<"+d+"\nout/agg.json\n"+d+"\n"+
		"verdict<<"+d+"\nfail\n"+d+"\n", string(got))

	// A value with a line break would end its block early and set outputs of
	// its own: it is not set, and said; the others are.
	d2 := "\n" + d + "\nverdict<<" + d + "\npass"
	err = a.SetOutputs(map[string]string{"json": "out/x.json" + d2, "n": "3"})
	require.ErrorContains(t, err, `step output "json" not set: its value holds a line break`)
	got2, err := os.ReadFile(outFile)
	require.NoError(t, err)
	assert.Equal(t, string(got)+"n<<"+d+"\n3\n"+d+"\n", string(got2))
	require.NoError(t, os.WriteFile(outFile, got, 0o644))

	require.NoError(t, a.AppendSummary("# one"))
	require.NoError(t, a.AppendSummary("# two"))
	got, err = os.ReadFile(sumFile)
	require.NoError(t, err)
	assert.Equal(t, "# one\n# two\n", string(got))
	assert.Equal(t, MaxSummaryBytes-2-len(got), a.SummaryRoom())

	err = a.AppendSummary(strings.Repeat("x", a.SummaryRoom()+1))
	require.ErrorContains(t, err, "1 MiB")
	assert.Empty(t, out.String(), "file commands write nothing to the log")

	t.Run("missing files are errors, not panics", func(t *testing.T) {
		b, err := ReadActions(envFunc(map[string]string{"GITHUB_ACTIONS": "true"}), &out)
		require.NoError(t, err)
		require.ErrorIs(t, b.SetOutputs(map[string]string{"a": "b"}), ErrNoFile)
		require.ErrorIs(t, b.AppendSummary("x"), ErrNoFile)
		c, err := ReadActions(envFunc(map[string]string{"GITHUB_ACTIONS": "true", "GITHUB_STEP_SUMMARY": filepath.Join(dir, "no", "such", "dir")}), &out)
		require.NoError(t, err)
		require.ErrorContains(t, c.AppendSummary("x"), "failed to write the job summary")
	})
}

func TestMask(t *testing.T) {
	var out bytes.Buffer
	a, err := ReadActions(envFunc(map[string]string{"GITHUB_ACTIONS": "true"}), &out)
	require.NoError(t, err)
	a.Mask("  ")
	assert.Empty(t, out.String())
	a.Mask("s3cret")
	assert.Equal(t, "::add-mask::s3cret\n", out.String())
}

// The event payload is a regular file of at most MaxEventBytes: a named pipe
// (whose open waited for a writer forever) and a device (/dev/zero, read until
// memory ran out) are refused at once.
func TestReadEventFileSpecial(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "event.json")
	unixtest.Mkfifo(t, fifo, 0o644)
	for _, p := range []string{fifo, "/dev/zero"} {
		done := make(chan error, 1)
		go func() {
			_, err := ReadActions(envFunc(map[string]string{"GITHUB_ACTIONS": "true", "GITHUB_EVENT_PATH": p}), &bytes.Buffer{})
			done <- err
		}()
		select {
		case err := <-done:
			require.ErrorContains(t, err, "is not a regular file")
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: still reading", p)
		}
	}
	big := filepath.Join(t.TempDir(), "big.json")
	f, err := os.Create(big)
	require.NoError(t, err)
	require.NoError(t, f.Truncate(MaxEventBytes+1)) // sparse: no disk, no memory
	require.NoError(t, f.Close())
	_, err = ReadEventFile(big)
	require.ErrorContains(t, err, "larger than 64 MiB")
}

// A named pipe as GITHUB_OUTPUT or GITHUB_STEP_SUMMARY is refused at once:
// opening it to write waited for a reader, and no signal ended the wait.
func TestFileCommandsRefuseANamedPipe(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	unixtest.Mkfifo(t, fifo, 0o600)
	var out bytes.Buffer
	a, err := ReadActions(envFunc(map[string]string{"GITHUB_ACTIONS": "true", "GITHUB_OUTPUT": fifo, "GITHUB_STEP_SUMMARY": fifo}), &out)
	require.NoError(t, err)
	done := make(chan [2]error, 1)
	go func() { done <- [2]error{a.SetOutputs(map[string]string{"verdict": "pass"}), a.AppendSummary("# x")} }()
	select {
	case errs := <-done:
		require.EqualError(t, errs[0], "failed to set step outputs: GITHUB_OUTPUT "+fifo+" is a named pipe, not a file")
		require.EqualError(t, errs[1], "failed to write the job summary: GITHUB_STEP_SUMMARY "+fifo+" is a named pipe, not a file")
	case <-time.After(5 * time.Second):
		t.Fatal("a file command waited on a named pipe")
	}
}

// runnerOutputs reads a GITHUB_OUTPUT file as the Actions runner does
// (actions/runner, FileCommandManager: each line NAME=VALUE or NAME<<DELIMITER,
// the value then the lines up to one equal to DELIMITER; any other line is
// "Invalid format", which fails the step).
func runnerOutputs(text string) (map[string]string, error) {
	out := map[string]string{}
	lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		if line == "" {
			continue
		}
		eq, hd := strings.Index(line, "="), strings.Index(line, "<<")
		switch {
		case eq >= 0 && (hd < 0 || eq < hd):
			out[line[:eq]] = line[eq+1:]
		case hd >= 0:
			name, delim := line[:hd], line[hd+2:]
			var value []string
			for i++; ; i++ {
				if i == len(lines) {
					return out, fmt.Errorf("matching delimiter not found %q", delim)
				}
				if lines[i] == delim {
					break
				}
				value = append(value, lines[i])
			}
			out[name] = strings.Join(value, "\n")
		default:
			return out, fmt.Errorf("invalid format %q", line)
		}
	}
	return out, nil
}

// The outputs file holds each value between two lines of go-githubactions'
// fixed delimiter ("Workflow commands for GitHub Actions", "Multiline
// strings": the delimiter must not occur on its own line in the value). A
// value with no line break that is the delimiter (a `--json` path of that
// name) ended its own block at once and left a line the runner cannot read,
// which failed the step; such a value is not set, and said, as a value with a
// line break is.
func TestOutputsHoldingTheDelimiter(t *testing.T) {
	const d = "_GitHubActionsFileCommandDelimeter_"
	for _, v := range []string{d, "x" + d, d + ".json"} {
		t.Run(v, func(t *testing.T) {
			outFile := writeFile(t, t.TempDir(), "output", "")
			a, err := ReadActions(envFunc(map[string]string{"GITHUB_ACTIONS": "true", "GITHUB_OUTPUT": outFile}), io.Discard)
			require.NoError(t, err)
			err = a.SetOutputs(map[string]string{"json": v, "n": "3", "verdict": "pass"})
			require.ErrorContains(t, err, `step output "json" not set: its value holds the file's delimiter`)
			got, err := os.ReadFile(outFile)
			require.NoError(t, err)
			outputs, err := runnerOutputs(string(got))
			require.NoError(t, err, "the runner reads the file:\n%s", got)
			assert.Equal(t, map[string]string{"n": "3", "verdict": "pass"}, outputs)
		})
	}
}

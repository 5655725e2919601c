package publish

import (
	"fmt"
	"strings"

	"github.com/retrieval-gate/retrieval-gate/internal/format"
	"github.com/retrieval-gate/retrieval-gate/internal/github"
	"github.com/retrieval-gate/retrieval-gate/internal/guard"
)

// Failure is a command that stopped on bad input (exit 2): nothing was written;
// or, Interrupted, one that SIGINT or SIGTERM stopped (exit 2 too; its Message
// says whether its files were written).
type Failure struct {
	Command     string // the subcommand ("check"), "" when none was recognised
	Message     string // the error, already redacted and cleaned (one line)
	File        string // the file the error names, "" when none; redacted as Message is
	Line        int    // its 1-based line, 0 when the error names the whole file
	Interrupted bool   // a signal (a cancelled job), not the input, stopped the run
}

// Fail reports an input error inside GitHub Actions: one ::error:: annotation
// (with file= and line= when the error names them) and a job-summary entry
// saying what went wrong. It returns false outside Actions, where it does nothing
// and the caller prints the error on stderr.
func (p *Publisher) Fail(f Failure) bool {
	act, _ := github.ReadActions(p.Getenv, p.Stdout)
	if !act.InActions {
		return false
	}
	act.Mask(Token(p.Getenv))
	what, next := "input error", "The run stopped with exit code 2 before writing any report; fix the input above and run again.\n"
	if f.Interrupted {
		// Not the input's fault, and a run interrupted while it published
		// had written its files: the message above says which.
		what, next = "interrupted", "The run was interrupted (SIGINT or SIGTERM: a cancelled job) and stopped with exit code 2; run it again.\n"
	}
	title := "retrieval-gate: " + what
	if f.Command != "" {
		title = "retrieval-gate " + f.Command + ": " + what
	}
	act.Annotate("error", []Annotation{{File: f.File, Line: f.Line, Title: title, Message: f.Message}}, 1, 1, "")
	var b strings.Builder
	fmt.Fprintf(&b, "## %s\n\n", title)
	if f.File != "" {
		loc := act.RelPath(f.File)
		if f.Line > 0 {
			loc = fmt.Sprintf("%s:%d", loc, f.Line)
		}
		fmt.Fprintf(&b, "In %s:\n\n", codeSpan(loc))
	}
	b.WriteString(codeBlock(f.Message))
	b.WriteString("\n" + next)
	if err := act.AppendSummary(Fit(guard.Text(b.String()), nil, act.SummaryRoom(), "", "")); err != nil {
		act.Warning(err.Error())
	}
	return true
}

// codeBlock fences text so that Markdown reads none of it (no links, mentions,
// math or HTML): the fence is longer than any run of backticks inside.
func codeBlock(text string) string {
	fence := strings.Repeat("`", max(3, longestRun(text, '`')+1))
	return fence + "text\n" + format.Clean(text) + "\n" + fence + "\n"
}

// codeSpan is text as inline code, with a delimiter longer than any backtick run.
func codeSpan(text string) string {
	d := strings.Repeat("`", longestRun(text, '`')+1)
	return d + " " + format.Clean(text) + " " + d
}

func longestRun(s string, c byte) int {
	best, cur := 0, 0
	for i := 0; i < len(s); i++ {
		if s[i] == c {
			cur++
			best = max(best, cur)
		} else {
			cur = 0
		}
	}
	return best
}

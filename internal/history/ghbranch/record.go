package ghbranch

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/retrieval-gate/retrieval-gate/internal/format"
	"github.com/retrieval-gate/retrieval-gate/internal/github"
	"github.com/retrieval-gate/retrieval-gate/internal/history"
)

// Timeout bounds everything one read or one append of the history branch may take.
const Timeout = 10 * time.Minute

// ErrNoHistory: the branch, or its history file, does not exist.
var ErrNoHistory = errors.New("no history yet")

// Branch is what a run needs of the history branch; *Client is one, and a
// test may give another.
type Branch interface {
	Read(ctx context.Context, branch string) (r io.Reader, found bool, err error)
	Append(ctx context.Context, branch string, run Run) (Result, error)
}

// Open opens the Branch of a repository (the command's wiring of New).
type Open func(Deps) (Branch, error)

// ReadHistory reads history.jsonl from branch within Timeout; a branch or file
// that does not exist is an error wrapping ErrNoHistory.
func ReadHistory(ctx context.Context, b Branch, branch string) (io.Reader, error) {
	ctx, cancel := context.WithTimeout(ctx, Timeout)
	defer cancel()
	r, found, err := b.Read(ctx, branch)
	if err != nil {
		return nil, err
	}
	if !found {
		return nil, ErrNoHistory
	}
	return r, nil
}

// ReportName is where a run's HTML report goes on the branch:
// reports/<UTC time>-<commit, 12 digits>-<command>.html.
func ReportName(rec history.Record) string {
	t, err := time.Parse(time.RFC3339, rec.Time)
	stamp := "00000000T000000Z"
	if err == nil {
		stamp = t.UTC().Format("20060102T150405Z")
	}
	commit := strings.Map(func(r rune) rune {
		if (r >= '0' && r <= '9') || (r >= 'a' && r <= 'f') {
			return r
		}
		return -1
	}, strings.ToLower(rec.Commit))
	if len(commit) > 12 {
		commit = commit[:12]
	}
	if commit == "" {
		commit = "nocommit"
	}
	return "reports/" + stamp + "-" + commit + "-" + rec.Command + ".html"
}

// Write is what appending a run to the branch asks of it.
type Write struct {
	Branch string         // --history-branch
	Record history.Record // this run's record
	HTML   string         // the --html report to store beside it ("" none)
	Token  string         // the token the writes use ("" writes nothing)
	Page   func(ctx context.Context, history []byte) ([]byte, error)
}

// Outcome is what a write has to say: notices and warnings for the Actions
// log, and on success the line for standard error.
type Outcome struct {
	Notices, Warnings []string
	Done              string
}

// WriteRun appends w.Record to w.Branch when this run may write (WriteAllowed
// of the Actions environment getenv reads), with the HTML report when it fits.
// Nothing it meets is an error: a run that may not write gets one notice
// saying why, a failed write one warning naming the cause and the fix.
func WriteRun(ctx context.Context, getenv func(string) string, open Open, w Write) Outcome {
	var out Outcome
	warn := func(format string, args ...any) {
		out.Warnings = append(out.Warnings, fmt.Sprintf("retrieval-gate: "+format, args...))
	}
	act, err := github.ReadActions(getenv, io.Discard)
	if err != nil {
		warn("the history branch %q was not written: %v", w.Branch, err)
		return out
	}
	if ok, why := WriteAllowed(act); !ok {
		out.Notices = append(out.Notices, fmt.Sprintf("retrieval-gate: the history branch %q was not written: %s.", w.Branch, why))
		return out
	}
	if w.Token == "" {
		warn("the history branch %q was not written: there is no token (the `github-token` input, or GITHUB_TOKEN)", w.Branch)
		return out
	}
	c, err := open(Deps{APIURL: act.APIURL, Repo: act.Repository, Token: w.Token})
	if err != nil {
		warn("the history branch %q was not written: %v", w.Branch, err)
		return out
	}
	rec := w.Record
	run := Run{Page: w.Page, Message: fmt.Sprintf("retrieval-gate: %s %s", rec.Command, format.CommitPrefix(rec.Commit, 12))}
	if w.HTML != "" {
		st, err := os.Stat(w.HTML)
		switch {
		case err != nil:
			warn("the HTML report is not stored on the history branch: %v", err)
		case st.Size() > MaxFile:
			warn("the HTML report is not stored on the history branch: %d bytes, over GitHub's %d per file", st.Size(), MaxFile)
		default:
			if run.Report, err = os.ReadFile(w.HTML); err != nil {
				warn("the HTML report is not stored on the history branch: %v", err)
			} else {
				run.ReportPath = ReportName(rec)
				rec.Report = run.ReportPath
			}
		}
	}
	if run.Line, err = history.Line(rec); err != nil {
		warn("the history branch %q was not written: %v", w.Branch, err)
		return out
	}
	ctx, cancel := context.WithTimeout(ctx, Timeout)
	defer cancel()
	res, err := c.Append(ctx, w.Branch, run)
	if err != nil {
		fix := ""
		var e *Error
		if errors.As(err, &e) && e.Fix() != "" {
			fix = "; " + e.Fix()
		}
		if res.Recorded {
			warn("the run was appended to %s on branch %q, but %s was not updated: %v%s", HistoryFile, w.Branch, IndexFile, err, fix)
			return out
		}
		warn("the run was not appended to the history branch %q: %v%s. The verdict is unchanged", w.Branch, err, fix)
		return out
	}
	what := "appended to"
	switch {
	case res.Created:
		what = "created, with the run in"
	case res.Already:
		what = "already in"
	}
	commits := "commits"
	if res.Commits == 1 {
		commits = "commit"
	}
	out.Done = fmt.Sprintf("retrieval-gate: history: branch %q %s %s (%d %s)", w.Branch, what, HistoryFile, res.Commits, commits)
	return out
}

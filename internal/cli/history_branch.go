package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/valyala/fastjson"

	"github.com/retrieval-gate/retrieval-gate/internal/format"
	"github.com/retrieval-gate/retrieval-gate/internal/github"
	"github.com/retrieval-gate/retrieval-gate/internal/history"
	"github.com/retrieval-gate/retrieval-gate/internal/history/ghbranch"
	"github.com/retrieval-gate/retrieval-gate/internal/publish"
	htmlreport "github.com/retrieval-gate/retrieval-gate/internal/report/html"
)

// historyBranchTimeout bounds everything the history branch may take.
const historyBranchTimeout = 10 * time.Minute

// historyBranchUsage is the help of --history-branch (check, compare, evaluate).
const historyBranchUsage = "in GitHub Actions, also append this run to history.jsonl on branch `NAME` (e.g. " + ghbranch.DefaultBranch +
	") through the REST API, with the history page as index.html (GitHub Pages) and the --html report; written only from push, schedule or workflow_dispatch runs on the default branch, never from pull requests or forks"

// validateHistoryBranch checks --history-branch at parse time: a branch name,
// and a GitHub Actions run (elsewhere there is no default-branch run to gate on:
// keep a local history with --history).
func validateHistoryBranch(env *Env, src *sources, command, branch string) error {
	if branch == "" {
		return nil
	}
	if err := ghbranch.ValidBranch(branch); err != nil {
		return src.refuseErr(command, "history-branch", err)
	}
	if env.Getenv("GITHUB_ACTIONS") != "true" {
		return usagef("%s: %s writes the history through GitHub's API from a GitHub Actions run on the default branch, and this is not one (GITHUB_ACTIONS is not true); keep a local history with --history FILE.jsonl", command, src.name("history-branch"))
	}
	return nil
}

// reportName is where a run's HTML report goes on the branch:
// reports/<UTC time>-<commit, 12 digits>-<command>.html.
func reportName(rec history.Record) string {
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

// readHistoryBranch reads history.jsonl from branch of $GITHUB_REPOSITORY
// (GITHUB_API_URL, and the token when there is one). Reading is allowed from
// any run, pull requests and forks included, and outside Actions. A branch or
// file that does not exist is an error naming it, wrapping errNoHistoryBranch.
func readHistoryBranch(ctx context.Context, f *Factory, branch string) (io.Reader, error) {
	g := f.Env.Getenv
	repo := strings.TrimSpace(g("GITHUB_REPOSITORY"))
	if repo == "" {
		return nil, usagef("--history-branch reads the branch of the repository GITHUB_REPOSITORY (owner/name), which is not set")
	}
	c, err := branchClient(f, ghbranch.Deps{APIURL: g("GITHUB_API_URL"), Repo: repo, Token: publish.Token(g)})
	if err != nil {
		return nil, usagef("--history-branch: %v", err)
	}
	ctx, cancel := context.WithTimeout(ctx, historyBranchTimeout)
	defer cancel()
	r, found, err := c.Read(ctx, branch)
	if err != nil {
		return nil, fmt.Errorf("--history-branch: %w", err)
	}
	if !found {
		return nil, fmt.Errorf("--history-branch: %s has no branch %q holding %s (the first push run with --history-branch creates it): %w", publish.Clean(repo), branch, ghbranch.HistoryFile, errNoHistoryBranch)
	}
	return r, nil
}

// branchClient is the history branch's client; the Factory's Sleep (tests)
// replaces the waits of its retries.
func branchClient(f *Factory, deps ghbranch.Deps) (*ghbranch.Client, error) {
	if f.Sleep != nil {
		p := ghbranch.Policy
		p.Sleep = f.Sleep
		deps.Policy = &p
	}
	return ghbranch.New(deps)
}

// errNoHistoryBranch: the branch, or its history file, does not exist.
var errNoHistoryBranch = errors.New("no history yet")

// historyPage renders the history page of the branch: the newest run's command,
// its default measure, from the whole history file.
func historyPage(h []byte) ([]byte, error) {
	command, measure := "", ""
	v, err := historyView(history.FileName, func(fn func(history.Record, *fastjson.Value) error) error {
		return history.ScanReader(history.FileName, bytes.NewReader(h), fn)
	}, &command, &measure)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	if err := htmlreport.History(&b, v); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// writeHistoryBranch appends the run to --history-branch, when asked for, after
// the outputs are published. Nothing here changes the verdict or the exit code:
// a run that may not write (a pull request, a fork, another branch) gets one
// notice saying why, a failed write one warning naming the cause and the fix,
// both added to pub (the publisher prints them).
func writeHistoryBranch(ctx context.Context, f *Factory, h historyRun, htmlOut string, pub *publish.Publication) {
	if h.branch == "" || h.rec == nil {
		return
	}
	env := f.Env
	act, err := github.ReadActions(env.Getenv, io.Discard)
	if err != nil {
		pub.ActionWarnings = append(pub.ActionWarnings, fmt.Sprintf("retrieval-gate: the history branch %q was not written: %v", h.branch, err))
		return
	}
	if ok, why := ghbranch.WriteAllowed(act); !ok {
		pub.ActionNotices = append(pub.ActionNotices, fmt.Sprintf("retrieval-gate: the history branch %q was not written: %s.", h.branch, why))
		return
	}
	warn := func(format string, args ...any) {
		pub.ActionWarnings = append(pub.ActionWarnings, fmt.Sprintf("retrieval-gate: "+format, args...))
	}
	token := publish.Token(env.Getenv)
	if token == "" {
		warn("the history branch %q was not written: there is no token (the `github-token` input, or GITHUB_TOKEN)", h.branch)
		return
	}
	c, err := branchClient(f, ghbranch.Deps{APIURL: act.APIURL, Repo: act.Repository, Token: token})
	if err != nil {
		warn("the history branch %q was not written: %v", h.branch, err)
		return
	}
	rec := *h.rec
	run := ghbranch.Run{Page: historyPage, Message: fmt.Sprintf("retrieval-gate: %s %s", rec.Command, format.CommitPrefix(rec.Commit, 12))}
	if htmlOut != "" {
		st, err := os.Stat(htmlOut)
		switch {
		case err != nil:
			warn("the HTML report is not stored on the history branch: %v", err)
		case st.Size() > ghbranch.MaxFile:
			warn("the HTML report is not stored on the history branch: %d bytes, over GitHub's %d per file", st.Size(), ghbranch.MaxFile)
		default:
			if run.Report, err = os.ReadFile(htmlOut); err != nil {
				warn("the HTML report is not stored on the history branch: %v", err)
			} else {
				run.ReportPath = reportName(rec)
				rec.Report = run.ReportPath
			}
		}
	}
	if run.Line, err = history.Line(rec); err != nil {
		warn("the history branch %q was not written: %v", h.branch, err)
		return
	}
	ctx, cancel := context.WithTimeout(ctx, historyBranchTimeout)
	defer cancel()
	res, err := c.Append(ctx, h.branch, run)
	if err != nil {
		fix := ""
		var e *ghbranch.Error
		if errors.As(err, &e) && e.Fix() != "" {
			fix = "; " + e.Fix()
		}
		if res.Recorded {
			warn("the run was appended to %s on branch %q, but %s was not updated: %v%s", ghbranch.HistoryFile, h.branch, ghbranch.IndexFile, err, fix)
			return
		}
		warn("the run was not appended to the history branch %q: %v%s. The verdict is unchanged", h.branch, err, fix)
		return
	}
	what := "appended to"
	switch {
	case res.Created:
		what = "created, with the run in"
	case res.Already:
		what = "already in"
	}
	fmt.Fprintf(env.Stderr, "retrieval-gate: history: branch %q %s %s (%s)\n", h.branch, what, ghbranch.HistoryFile, plural(res.Commits, "commit", "commits"))
}

package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/valyala/fastjson"

	"github.com/retrieval-gate/retrieval-gate/internal/history"
	"github.com/retrieval-gate/retrieval-gate/internal/history/ghbranch"
	"github.com/retrieval-gate/retrieval-gate/internal/publish"
	htmlreport "github.com/retrieval-gate/retrieval-gate/internal/report/html"
)

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
	r, err := ghbranch.ReadHistory(ctx, c, branch)
	if errors.Is(err, ghbranch.ErrNoHistory) {
		return nil, fmt.Errorf("--history-branch: %s has no branch %q holding %s (the first push run with --history-branch creates it): %w", publish.Clean(repo), branch, ghbranch.HistoryFile, err)
	}
	if err != nil {
		return nil, fmt.Errorf("--history-branch: %w", err)
	}
	return r, nil
}

// branchClient is the history branch's client; the Factory's Sleep (tests)
// replaces the waits of its retries.
func branchClient(f *Factory, deps ghbranch.Deps) (ghbranch.Branch, error) {
	if f.Sleep != nil {
		p := ghbranch.Policy
		p.Sleep = f.Sleep
		deps.Policy = &p
	}
	return ghbranch.New(deps)
}

// errNoHistoryBranch: the branch, or its history file, does not exist.
var errNoHistoryBranch = ghbranch.ErrNoHistory

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
// the outputs are published (ghbranch.WriteRun). Nothing here changes the
// verdict or the exit code: its notices and warnings are added to pub (the
// publisher prints them).
func writeHistoryBranch(ctx context.Context, f *Factory, h historyRun, htmlOut string, pub *publish.Publication) {
	if h.branch == "" || h.rec == nil {
		return
	}
	open := func(d ghbranch.Deps) (ghbranch.Branch, error) { return branchClient(f, d) }
	out := ghbranch.WriteRun(ctx, f.Env.Getenv, open, ghbranch.Write{Branch: h.branch, Record: *h.rec, HTML: htmlOut,
		Token: publish.Token(f.Env.Getenv), Page: historyPage})
	pub.ActionNotices = append(pub.ActionNotices, out.Notices...)
	pub.ActionWarnings = append(pub.ActionWarnings, out.Warnings...)
	if out.Done != "" {
		fmt.Fprintln(f.Env.Stderr, out.Done)
	}
}

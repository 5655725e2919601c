package cli

// The history of runs (--history, --history-branch) and the trend read from
// it (--trend-runs): the flags, and the wiring of the domain's read
// (trend.ReadRun) and append (history.AppendRun) to the run's provenance
// (provenance.go), the history branch's client and the dashboard's view.

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"strings"
	"syscall"

	"github.com/valyala/fastjson"

	"github.com/retrieval-gate/retrieval-gate/internal/atomicfile"
	"github.com/retrieval-gate/retrieval-gate/internal/format"
	"github.com/retrieval-gate/retrieval-gate/internal/history"
	"github.com/retrieval-gate/retrieval-gate/internal/history/ghbranch"
	"github.com/retrieval-gate/retrieval-gate/internal/publish"
	htmlreport "github.com/retrieval-gate/retrieval-gate/internal/report/html"
	"github.com/retrieval-gate/retrieval-gate/internal/report/trendtable"
	"github.com/retrieval-gate/retrieval-gate/internal/trend"
)

// historyBranchUsage is the help of --history-branch (check, compare, evaluate).
const historyBranchUsage = "in GitHub Actions, also append this run to history.jsonl on branch `NAME` (e.g. " + ghbranch.DefaultBranch +
	") through the REST API, with the history page as index.html (GitHub Pages) and the --html report; written only from push, schedule or workflow_dispatch runs on the default branch, never from pull requests or forks"

// trendFlag is --trend-runs N: the Markdown report (PR comment, job summary)
// shows the gated measures over the newest N runs of the base branch in the
// history (--history-branch, else --history); 0 turns it off.
type trendFlag struct{ runs int }

func (t *trendFlag) register(fs *flag.FlagSet) {
	fs.IntVar(&t.runs, "trend-runs", trend.DefaultRuns, fmt.Sprintf("with --history or --history-branch: the Markdown report shows the gated measures over the newest `N` runs of the base branch (at most %d; 0: no trend)", trend.MaxRuns))
}

func (t *trendFlag) validate(cmd string, src *sources) error {
	if t.runs < 0 || t.runs > trend.MaxRuns {
		return src.refuse(cmd, "trend-runs", fmt.Sprintf("must be between 0 (no trend) and %d", trend.MaxRuns))
	}
	return nil
}

// historyFlags are --history and --history-branch: where a run is appended,
// and where its trend is read: the history on the branch when given (the runs
// the default branch recorded there, read from any run, pull requests and
// forks included), else the --history file; with neither, none.
type historyFlags struct {
	path, branch string
}

// register adds --history (its help: usage) and --history-branch to fs.
func (h *historyFlags) register(fs *flag.FlagSet, usage string) {
	fs.StringVar(&h.path, "history", "", usage)
	fs.StringVar(&h.branch, "history-branch", "", historyBranchUsage)
}

// file is the file --history appends to (history.FileOf).
func (h historyFlags) file() string { return history.FileOf(h.path) }

// validate checks --history-branch at parse time: a branch name, and a GitHub
// Actions run (elsewhere there is no default-branch run to gate on: keep a
// local history with --history).
func (h historyFlags) validate(env *Env, src *sources, command string) error {
	if h.branch == "" {
		return nil
	}
	if err := ghbranch.ValidBranch(h.branch); err != nil {
		return src.refuseErr(command, "history-branch", err)
	}
	if env.Getenv("GITHUB_ACTIONS") != "true" {
		return usagef("%s: %s writes the history through GitHub's API from a GitHub Actions run on the default branch, and this is not one (GITHUB_ACTIONS is not true); keep a local history with --history FILE.jsonl", command, src.name("history-branch"))
	}
	return nil
}

// fingerprint is what a run's numbers depend on: input files by role, and parameters.
type fingerprint struct{ inputs, params map[string]string }

// fingerprintOf is the fingerprint of a domain's Fingerprint.
func fingerprintOf(inputs, params map[string]string) fingerprint { return fingerprint{inputs, params} }

// dashboardRuns is how many runs the compare dashboard's chart over the runs
// shows at most: the newest (report --history charts them all).
const dashboardRuns = 100

// historyReads is what one read of a run's history gives it: the trend of the
// Markdown report, and the dashboard's view of a measure over the runs.
type historyReads struct {
	trend    *trend.Trend
	overRuns *htmlreport.HistoryView
	warning  string
}

// readHistory is trend.ReadRun on src for this run of command (fingerprint
// in, JSON document written by doc): the trend of trendRuns runs of measures
// ms, and with overMeasure the dashboard's view of that measure over the
// newest dashboardRuns runs of the base branch, this run last.
func readHistory(ctx context.Context, f *Factory, src historyFlags, command string, in fingerprint, doc func(io.Writer) error,
	trendRuns int, ms []trend.Measure, overMeasure string) (historyReads, error) {
	if src.path == "" && src.branch == "" {
		return historyReads{}, nil
	}
	prov, err := f.provenance()
	if err != nil {
		return historyReads{}, fmt.Errorf("--history: %w", err)
	}
	r := trend.RunRead{Path: src.path, Branch: src.branch, NoHistory: ghbranch.ErrNoHistory, Provenance: prov,
		OpenBranch: func(ctx context.Context, branch string) (io.Reader, error) { return readHistoryBranch(ctx, f, branch) },
		Command:    command, Inputs: in.inputs, Params: in.params, Doc: doc, Runs: trendRuns, Measures: ms}
	var over *htmlreport.HistoryBuilder
	if overMeasure != "" {
		r.Observe = func(file, _ string) func(history.Record, *fastjson.Value) error {
			over = htmlreport.NewHistory(file, command, overMeasure)
			return over.Add
		}
	}
	got, err := trend.ReadRun(ctx, r)
	if err != nil || !got.Read {
		return historyReads{}, err
	}
	out := historyReads{trend: got.Trend, warning: trendtable.UnreadWarning(got)}
	switch {
	case overMeasure == "":
	case got.Unread != nil:
		out.overRuns = &htmlreport.HistoryView{Command: command, Measure: overMeasure, File: got.File, Branch: got.Base, Unread: got.Unread.Error()}
	default:
		v := over.View().Newest(dashboardRuns)
		v.Branch = got.Base
		out.overRuns = &v
	}
	return out, nil
}

// checkHistory reads the local history of src (--history) as the trend and
// the append read it, every line a record, before a long run's work (evaluate's
// stages): a malformed one is then refused at once, not after the judge has paid
// for its requests. A history that does not exist yet is none of its concern
// (the run creates it).
func checkHistory(ctx context.Context, src historyFlags) error {
	if src.path == "" {
		return nil
	}
	err := history.Scan(ctx, src.path, func(history.Record, *fastjson.Value) error { return nil })
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
		return nil // none yet: addHistory checks that it can be created
	}
	return err
}

// historyRun is the history of one run: the record (when --history or
// --history-branch asks for one), appended to the local history with the run's
// outputs and to the branch once they are published.
type historyRun struct {
	rec    *history.Record
	branch string // --history-branch
}

// addHistory registers --history's file with outs (atomicfile.Set.AddAppended),
// so that one that cannot be appended to fails before the run's work, as an
// output that cannot be created does; recordHistory's record is appended to
// it at outs' Commit.
func addHistory(outs *atomicfile.Set, h historyFlags) error {
	if h.path == "" {
		return nil
	}
	return outs.AddAppended(h.file())
}

// recordHistory is history.AppendRun with the run's provenance, its warning
// on stderr: the record's append to --history is made by outs' Commit, all or
// none with the run's outputs (an output that cannot be published appends no
// record; a record that cannot be appended publishes no output).
func recordHistory(ctx context.Context, f *Factory, outs *atomicfile.Set, h historyFlags, command string, in fingerprint, doc func(io.Writer) error) (historyRun, error) {
	if h.path == "" && h.branch == "" {
		return historyRun{}, nil
	}
	prov, err := f.provenance()
	if err != nil {
		return historyRun{}, fmt.Errorf("--history: %w", err)
	}
	rec, appendRec, err := history.AppendRun(ctx, prov, h.path, h.branch, command, in.inputs, in.params, doc, func(w string) {
		fmt.Fprintf(f.Env.Stderr, "retrieval-gate: warning: history: %s\n", format.SanitizeText(w))
	})
	if err != nil {
		return historyRun{}, err
	}
	if appendRec != nil {
		outs.Append(appendRec)
	}
	return historyRun{rec: rec, branch: h.branch}, nil
}

// readHistoryBranch reads history.jsonl from branch of $GITHUB_REPOSITORY
// (GITHUB_API_URL, and the token when there is one). Reading is allowed from
// any run, pull requests and forks included, and outside Actions. A branch or
// file that does not exist is an error naming it, wrapping ghbranch.ErrNoHistory.
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
		return nil, fmt.Errorf("--history-branch: %s has no branch %q holding %s (the first push run with --history-branch creates it): %w", format.Clean(repo), branch, ghbranch.HistoryFile, err)
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

// publishRun publishes pub with the warnings that are not empty, after it
// appends the run to --history-branch when asked for (ghbranch.WriteRun).
// Nothing here changes the verdict or the exit code: the branch's notices and
// warnings are added to pub (the publisher prints them).
func publishRun(ctx context.Context, f *Factory, pub publish.Publication, h historyRun, htmlOut string, warnings ...string) {
	for _, w := range warnings {
		if w != "" {
			pub.ActionWarnings = append(pub.ActionWarnings, w)
		}
	}
	if h.branch != "" && h.rec != nil {
		open := func(d ghbranch.Deps) (ghbranch.Branch, error) { return branchClient(f, d) }
		out := ghbranch.WriteRun(ctx, f.Env.Getenv, open, ghbranch.Write{Branch: h.branch, Record: *h.rec, HTML: htmlOut,
			Token: publish.Token(f.Env.Getenv), Page: htmlreport.HistoryPage})
		pub.ActionNotices = append(pub.ActionNotices, out.Notices...)
		pub.ActionWarnings = append(pub.ActionWarnings, out.Warnings...)
		if out.Done != "" {
			fmt.Fprintln(f.Env.Stderr, out.Done)
		}
	}
	f.Publisher().Publish(ctx, pub)
}

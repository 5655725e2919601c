package cli

import (
	"context"
	"fmt"

	"github.com/valyala/fastjson"

	"github.com/retrieval-gate/retrieval-gate/internal/atomicfile"
	"github.com/retrieval-gate/retrieval-gate/internal/format"
	"github.com/retrieval-gate/retrieval-gate/internal/history"
	"github.com/retrieval-gate/retrieval-gate/internal/history/ghbranch"
	htmlreport "github.com/retrieval-gate/retrieval-gate/internal/report/html"
)

// NewCmdReport is `retrieval-gate report`: reports over the history of runs
// that check and compare append with --history, or (--from) a saved --json
// document of check, compare or calibrate rendered again (report_from.go).
// Its two modes parse as they run.
func NewCmdReport(f *Factory) *Command {
	return &Command{Name: "report", Synopsis: "chart a measure over the runs of a --history (HTML), or render a saved --json report again (--from)",
		Run: func(ctx context.Context, args []string) error { return runReport(ctx, f, args) }}
}

// reportInputs are report's Action inputs. --command is not one of them: the
// Action's `command` input selects the subcommand itself.
var reportInputs = actionInputs{"history": "", "history-branch": "", "html": "", "measure": "", "from": "", "markdown": "", "comment-key": ""}

func runReport(ctx context.Context, f *Factory, args []string) error {
	env := f.Env
	fs := newFlagSet(env, "report")
	path := fs.String("history", "", "the history: a `DIR` holding "+history.FileName+", or a FILE.jsonl (this or --from is required)")
	htmlOut := fs.String("html", "", "write the history page (--history; required), or the report of --from (check only), as one self-contained HTML `FILE`")
	branch := fs.String("history-branch", "", "chart the history kept on branch `NAME` of $GITHUB_REPOSITORY (check --history-branch), read through GitHub's API ($GITHUB_TOKEN when the repository is private), instead of --history")
	command := fs.String("command", "", "the runs to chart: check, compare or evaluate (default: the command of the newest run)")
	measure := fs.String("measure", "", "the measure to chart, a key of the documents' metrics, or for check delta:KEY, the baseline delta of KEY (default: retrieval_hit_at_k for check, dcg_at_k for compare and evaluate)")
	var from fromOptions
	fs.StringVar(&from.from, "from", "", "render again the --json report of check, compare or calibrate in `FILE`: the text report on stdout, --markdown and --html (check only) files")
	fs.StringVar(&from.markdownOut, "markdown", "", "--from: write the Markdown report to `FILE`")
	fs.StringVar(&from.commentKey, "comment-key", "", "--from: the comment key of the Markdown's marker (default: the command's, default for check, calibrate for calibrate)")
	fs.BoolVar(&from.verbose, "verbose", false, "--from a check report: print its whole terminal report, as check --verbose does")
	src, err := parseFlags(fs, env, args, reportInputs)
	if err != nil {
		return err
	}
	if from.from != "" {
		switch {
		case *path != "":
			return usagef("report: %s and %s exclude each other", src.name("from"), src.name("history"))
		case *branch != "":
			return usagef("report: %s and %s exclude each other", src.name("from"), src.name("history-branch"))
		case *command != "" || *measure != "":
			return usagef("report: --command and %s chart a --history; %s takes neither", src.name("measure"), src.name("from"))
		}
		from.htmlOut, from.src = *htmlOut, src
		return runFrom(ctx, env, from)
	}
	switch {
	case from.markdownOut != "" || from.commentKey != "" || from.verbose:
		return usagef("report: %s, %s and --verbose need --from", src.name("markdown"), src.name("comment-key"))
	case *path != "" && *branch != "":
		return usagef("report: %s and %s exclude each other", src.name("history"), src.name("history-branch"))
	case *path == "" && *branch == "":
		return usagef("report: --history, --history-branch or --from is required")
	case *htmlOut == "":
		return usagef("report: --html is required")
	case *command != "" && htmlreport.DefaultMeasure(*command) == "":
		return usagef("report: --command must be check, compare or evaluate, got %q", *command)
	}
	if *branch != "" {
		if err := ghbranch.ValidBranch(*branch); err != nil {
			return usagef("report: %s: %v", src.name("history-branch"), err)
		}
	}
	hist := history.File(*path)
	inputs := []file{{"history", hist}}
	if *branch != "" {
		hist, inputs = *branch+":"+history.FileName, nil
	}
	if err := refuseOverwrite("report", src, inputs, []file{{"html", *htmlOut}}); err != nil {
		return err
	}
	// The page is created (as a temporary file) first: an unwritable --html fails
	// before the history is read.
	outs := atomicfile.NewSet()
	defer outs.Abort()
	out, err := outs.Add(*htmlOut)
	if err != nil {
		return err
	}
	torn := history.OnTorn(func(file string, line int) {
		fmt.Fprintf(f.Env.Stderr, "retrieval-gate: warning: %s\n", format.SanitizeText(history.TornWarning(file, line)))
	})
	scan := func(fn func(history.Record, *fastjson.Value) error) error { return history.Scan(ctx, *path, fn, torn) }
	if *branch != "" {
		r, err := readHistoryBranch(ctx, f, *branch)
		if err != nil {
			return err
		}
		scan = func(fn func(history.Record, *fastjson.Value) error) error {
			return history.ScanReader(ctx, hist, r, fn, torn)
		}
	}
	v, err := htmlreport.HistoryOf(hist, scan, *command, *measure)
	if err != nil {
		return err
	}
	if err := htmlreport.History(out, v); err != nil {
		return err
	}
	if err := outs.Commit(ctx); err != nil {
		return err
	}
	fmt.Fprintln(env.Stdout, v.Summary(*htmlOut))
	return nil
}

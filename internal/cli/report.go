package cli

import (
	"context"
	"fmt"

	"github.com/valyala/fastjson"

	"github.com/retrieval-gate/retrieval-gate/internal/atomicfile"
	"github.com/retrieval-gate/retrieval-gate/internal/format"
	"github.com/retrieval-gate/retrieval-gate/internal/history"
	"github.com/retrieval-gate/retrieval-gate/internal/history/ghbranch"
	"github.com/retrieval-gate/retrieval-gate/internal/publish"
	htmlreport "github.com/retrieval-gate/retrieval-gate/internal/report/html"
)

// NewCmdReport is `retrieval-gate report`: reports over the history of runs
// that check and compare append with --history, or (--from) a saved --json
// document of check, compare or calibrate rendered again (report_from.go).
func NewCmdReport(f *Factory, runF func(context.Context, *reportOptions) error) *Command {
	return newCommand(f, "report", "chart a measure over the runs of a --history (HTML), or render a saved --json report again (--from)",
		parseReport, func(ctx context.Context, o *reportOptions) error { return runReport(ctx, f, o) }, runF)
}

// reportInputs are report's Action inputs. --command is not one of them: the
// Action's `command` input selects the subcommand itself.
var reportInputs = actionInputs{"history": "", "history-branch": "", "html": "", "measure": "", "from": "", "markdown": "", "comment-key": ""}

// reportOptions are the parsed and validated flags of report: --from mode
// when from.from is set, else the history page of path or branch.
type reportOptions struct {
	from                  fromOptions
	path, branch, htmlOut string
	command, measure      string
}

func parseReport(env *Env, args []string) (*reportOptions, error) {
	fs := newFlagSet(env, "report")
	o := &reportOptions{}
	fs.StringVar(&o.path, "history", "", "the history: a `DIR` holding "+history.FileName+", or a FILE.jsonl (this, --history-branch or --from is required)")
	fs.StringVar(&o.htmlOut, "html", "", "write the history page (--history; required), or the report of --from (check and compare; calibrate has none), as one self-contained HTML `FILE`")
	fs.StringVar(&o.branch, "history-branch", "", "chart the history kept on branch `NAME` of $GITHUB_REPOSITORY (check --history-branch), read through GitHub's API ($GITHUB_TOKEN when the repository is private), instead of --history")
	fs.StringVar(&o.command, "command", "", "the runs to chart: check, compare or evaluate (default: the command of the newest run)")
	fs.StringVar(&o.measure, "measure", "", "the measure to chart, a key of the documents' metrics, or for check delta:KEY, the baseline delta of KEY (default: retrieval_hit_at_k for check, dcg_at_k for compare and evaluate)")
	from := &o.from
	fs.StringVar(&from.from, "from", "", "render again the --json report of check, compare or calibrate in `FILE`: the text report on stdout, --markdown and --html (check and compare) files")
	fs.StringVar(&from.markdownOut, "markdown", "", "--from: write the Markdown report to `FILE`")
	fs.StringVar(&from.commentKey, "comment-key", "", "--from --markdown: the comment key of the Markdown's marker (default: the command's, default for check, calibrate for calibrate; refused for compare, whose Markdown has no marker)")
	fs.BoolVar(&from.verbose, "verbose", false, "--from a check report: print its whole terminal report, as check --verbose does")
	src, err := parseFlags(fs, env, args, reportInputs)
	if err != nil {
		return nil, err
	}
	if from.from != "" {
		switch {
		case o.path != "":
			return nil, usagef("report: %s and %s exclude each other", src.name("from"), src.name("history"))
		case o.branch != "":
			return nil, usagef("report: %s and %s exclude each other", src.name("from"), src.name("history-branch"))
		case o.command != "" || o.measure != "":
			return nil, usagef("report: --command and %s chart a --history; %s takes neither", src.name("measure"), src.name("from"))
		case from.commentKey != "" && !publish.ValidKey(from.commentKey):
			return nil, src.refuse("report", "comment-key", "must be 1 to 100 characters of A-Z a-z 0-9 . _ / -")
		case from.commentKey != "" && from.markdownOut == "": // the key would mark nothing
			md := "--markdown"
			if _, ok := src.input("comment-key"); ok {
				md = `action input "markdown"`
			}
			return nil, usagef("report: %s: the key of the Markdown's comment marker needs %s", src.name("comment-key"), md)
		}
		from.htmlOut, from.src = o.htmlOut, src
		return o, refuseOverwrite("report", src, []file{{"from", from.from}}, []file{{"markdown", from.markdownOut}, {"html", from.htmlOut}})
	}
	switch {
	case from.markdownOut != "" || from.commentKey != "" || from.verbose:
		return nil, usagef("report: %s, %s and --verbose need --from", src.name("markdown"), src.name("comment-key"))
	case o.path != "" && o.branch != "":
		return nil, usagef("report: %s and %s exclude each other", src.name("history"), src.name("history-branch"))
	case o.path == "" && o.branch == "":
		return nil, usagef("report: --history, --history-branch or --from is required")
	case o.htmlOut == "":
		return nil, usagef("report: --html is required")
	case o.command != "" && htmlreport.DefaultMeasure(o.command) == "":
		return nil, usagef("report: --command must be check, compare or evaluate, got %q", o.command)
	}
	inputs := []file{{"history", history.File(o.path)}}
	if o.branch != "" {
		if err := ghbranch.ValidBranch(o.branch); err != nil {
			return nil, usagef("report: %s: %v", src.name("history-branch"), err)
		}
		inputs = nil
	}
	return o, refuseOverwrite("report", src, inputs, []file{{"html", o.htmlOut}})
}

// runReport renders the --from document (runFrom), or charts the history.
func runReport(ctx context.Context, f *Factory, o *reportOptions) error {
	if o.from.from != "" {
		return runFrom(ctx, f.Env, o.from)
	}
	hist := history.File(o.path)
	if o.branch != "" {
		hist = o.branch + ":" + history.FileName
	}
	// The page is created (as a temporary file) first: an unwritable --html fails
	// before the history is read.
	outs := atomicfile.NewSet()
	defer outs.Abort()
	out, err := outs.Add(o.htmlOut)
	if err != nil {
		return err
	}
	torn := history.OnTorn(func(file string, line int) {
		fmt.Fprintf(f.Env.Stderr, "retrieval-gate: warning: %s\n", format.SanitizeText(history.TornWarning(file, line)))
	})
	scan := func(fn func(history.Record, *fastjson.Value) error) error { return history.Scan(ctx, o.path, fn, torn) }
	if o.branch != "" {
		r, err := readHistoryBranch(ctx, f, o.branch)
		if err != nil {
			return err
		}
		scan = func(fn func(history.Record, *fastjson.Value) error) error {
			return history.ScanReader(ctx, hist, r, fn, torn)
		}
	}
	v, err := htmlreport.HistoryOf(hist, scan, o.command, o.measure)
	if err != nil {
		return err
	}
	if err := htmlreport.History(out, v); err != nil {
		return err
	}
	if err := outs.Commit(ctx); err != nil {
		return err
	}
	fmt.Fprintln(f.Env.Stdout, v.Summary(o.htmlOut))
	return nil
}

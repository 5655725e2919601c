package cli

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"time"

	"github.com/retrieval-gate/retrieval-gate/internal/atomicfile"
	"github.com/retrieval-gate/retrieval-gate/internal/check"
	"github.com/retrieval-gate/retrieval-gate/internal/format"
	"github.com/retrieval-gate/retrieval-gate/internal/gate"
	"github.com/retrieval-gate/retrieval-gate/internal/input"
	"github.com/retrieval-gate/retrieval-gate/internal/input/kbfile"
	"github.com/retrieval-gate/retrieval-gate/internal/publish"
	"github.com/retrieval-gate/retrieval-gate/internal/report/checkreport"
	"github.com/retrieval-gate/retrieval-gate/internal/report/codequality"
	htmlreport "github.com/retrieval-gate/retrieval-gate/internal/report/html"
	"github.com/retrieval-gate/retrieval-gate/internal/report/junit"
)

// NewCmdCheck is `retrieval-gate check`: score each case, aggregate, enforce
// the gates, write the reports.
// runF, when set, replaces its run (a test of the parsing alone).
func NewCmdCheck(f *Factory, runF func(context.Context, *checkOptions) error) *Command {
	return newCommand(f, "check", "score retrieval per case, aggregate, enforce the gates, write reports", parseCheck, func(ctx context.Context, o *checkOptions) error { return runCheck(ctx, f, o) }, runF)
}

// checkOptions are the parsed and validated flags of check: the files, the
// outputs, and the options of the run, each set once, in check.Options but
// --k, which check.ResolveK turns into the run's k before the run.
type checkOptions struct {
	cases, kb                      string
	k                              int // --k; 0: not given
	run                            check.Options
	jsonOut, markdownOut, casesOut string
	htmlOut                        string        // --html
	junitOut                       string        // --junit
	codeQualityOut                 string        // --codequality
	hist                           historyFlags  // --history, --history-branch (history.go)
	comment                        commentFlags  // --comment, --comment-key, --pr (publication.go)
	checkRun                       checkRunFlag  // --check-run (publication.go)
	baseline                       baselineFlags // --baseline, --write-baseline, regression gates (check_baseline.go)
	trend                          trendFlag     // --trend-runs (history.go)
	suggestFloors                  bool          // --suggest-floors
	verbose                        bool          // --verbose
}

// checkInputs are check's Action inputs; inside Actions --json defaults to
// retrieval-gate.json, so the `json` output always names a file.
var checkInputs = commentInputs(actionInputs{
	"cases": "", "kb": "", "k": "", "min-hit": "", "min-recall": "", "floors": "", "allow-empty": "", "reference-locale": "",
	"json": "retrieval-gate.json", "markdown": "", "cases-out": "", "parent-from-id": "",
	"html": "", "history": "", "history-branch": "", "trend-runs": "",
	"check-run": "", "baseline": "", "baseline-artifact": "", "write-baseline": "", "max-drop-hit": "", "max-drop-recall": "", "max-drop-ndcg": "", "max-drops": "", "regression-test": "", "rank-drop": "", "min-rbo": "", "max-churn": "",
})

func parseCheck(env *Env, args []string) (*checkOptions, error) {
	fs := newFlagSet(env, "check")
	o := &checkOptions{}
	r := &o.run
	floors := &floorFlag{grammar: check.FloorGrammar, list: &r.Floors}
	fs.StringVar(&o.cases, "cases", "", "cases JSONL (required; - reads standard input; a directory or glob pattern: its shards)")
	fs.StringVar(&o.kb, "kb", "", "knowledge base: JSONL file of cards or directory of Markdown cards (required)")
	fs.IntVar(&o.k, "k", 0, "the retrieval top-k (≥ 1); default: the baseline's k when comparing, else the k the run records (retrieval.k of its first case), else 5")
	floorVar(fs, &r.MinHit, "min-hit", "floor on the overall mean hit@k, in [0,1]; none or empty is off")
	floorVar(fs, &r.MinRecall, "min-recall", "floor on the overall mean recall@k, in [0,1]; none or empty is off")
	fs.Var(floors, "floor", check.FloorGrammar.Usage())
	fs.Var(floors, "floors", "several `FLOORS`, one MEASURE[@GROUP]=F per line (the floors Action input); added to --floor")
	fs.BoolVar(&r.AllowEmpty, "allow-empty", false, "pass when no gold-carrying case was scored (by default that fails the non_empty gate)")
	fs.StringVar(&r.ReferenceLocale, "reference-locale", "en", "locale the deltas are taken against: a BCP 47 tag, put in the case the cases' locales are grouped in (pt-br is pt-BR)")
	fs.StringVar(&o.jsonOut, "json", "", "write the aggregates as JSON to `FILE`")
	fs.StringVar(&o.markdownOut, "markdown", "", "write the Markdown report (the PR comment body) to `FILE`")
	fs.StringVar(&o.casesOut, "cases-out", "", "write per-case scores as JSONL to `FILE`")
	fs.StringVar(&r.ParentSep, "parent-from-id", "", "a retrieved entry without parent_id is the card before the last `SEPARATOR` of its id (card-12#chunk-3 with # is card-12)")
	fs.StringVar(&o.htmlOut, "html", "", "write the report as one self-contained HTML `FILE`")
	fs.StringVar(&o.codeQualityOut, "codequality", "", "write the integrity problems as a GitLab Code Quality report (code-climate JSON) to `FILE`, for the merge request's Code Quality widget")
	fs.StringVar(&o.junitOut, "junit", "", "write the gates and the integrity problems as a JUnit XML `FILE` (the test view of Jenkins, GitLab, Azure Pipelines, ...)")
	o.hist.register(fs, "append this run to the history: a `DIR` (history.jsonl in it) or a FILE.jsonl")
	fs.BoolVar(&o.verbose, "verbose", false, "print the whole terminal report: the locale deltas, the gate table of a pass, every baseline group and flip list, the retrieved ids that are not cards and the missed cases (by default a passing run prints its verdict, counts and groups, and one line counting these)")
	fs.BoolVar(&o.suggestFloors, "suggest-floors", false, "after the report, print a floor per measure and group from this run (the lower bound of its 95% interval, rounded down to 0.01) as --floor flags and as the floors Action input")
	o.comment.register(fs, checkCommentKey)
	o.checkRun.register(fs)
	o.baseline.register(fs, r)
	o.trend.register(fs)
	src, err := parseFlags(fs, env, args, checkInputs)
	if err != nil {
		return nil, err
	}
	if o.cases == "" {
		return nil, usagef("check: --cases is required")
	}
	if o.kb == "" {
		return nil, usagef("check: --kb is required")
	}
	if o.k < 1 && src.given("k") {
		return nil, src.refuse("check", "k", "must be at least 1")
	}
	if r.ReferenceLocale, err = gate.ParseLocale(r.ReferenceLocale); err != nil {
		return nil, src.refuseErr("check", "reference-locale", err)
	}
	if err := r.ValidateFloors(); err != nil {
		return nil, src.option("check", err)
	}
	if err := o.comment.validate("check", src); err != nil {
		return nil, err
	}
	if err := o.baseline.validate(src, o.comment.key, r); err != nil {
		return nil, err
	}
	if err := o.trend.validate("check", src); err != nil {
		return nil, err
	}
	if err := o.hist.validate(env, src, "check"); err != nil {
		return nil, err
	}
	if err := refuseOverwrite("check", src, []file{{"cases", o.cases}, {"kb", o.kb}, {"baseline", o.baseline.baselineFile()}},
		[]file{{"json", o.jsonOut}, {"markdown", o.markdownOut}, {"cases-out", o.casesOut}, {"html", o.htmlOut}, {"junit", o.junitOut}, {"codequality", o.codeQualityOut}, {"history", o.hist.file()}, {"write-baseline", o.baseline.write}}); err != nil {
		return nil, err
	}
	return o, nil
}

func runCheck(ctx context.Context, f *Factory, o *checkOptions) error {
	env := f.Env
	// The outputs, all or none (an unwritable one fails before the inputs are read).
	outs := atomicfile.NewSet()
	defer outs.Abort()
	ws, err := outs.AddAll(o.casesOut, o.baseline.write, o.jsonOut, o.markdownOut, o.htmlOut, o.junitOut, o.codeQualityOut)
	if err != nil {
		return err
	}
	if err := addHistory(outs, o.hist); err != nil {
		return err
	}
	kb, err := kbfile.Load(ctx, o.kb)
	if err != nil {
		return err
	}
	kb.WarnSkipped(func(format string, args ...any) {
		fmt.Fprintf(env.Stderr, "retrieval-gate: "+format+"\n", args...)
	})
	in := check.In{Cases: env.Stdin, CasesName: "stdin", KB: kb}
	var files opened // the cases, or their shards
	defer files.close()
	var shards *input.Sharded // the cases' shards (nil: one file)
	if o.cases != "-" {
		cf, err := files.shards(ctx, o.cases, "failed to read cases: %w")
		if err != nil {
			return err
		}
		in.Cases, in.CasesName = cf, o.cases
		shards, _ = cf.(*input.Sharded)
	}
	if ws[0] != nil {
		in.CasesOut = ws[0]
	}
	bl, err := openBaseline(ctx, env, o, &in)
	if err != nil {
		return err
	}
	defer func() { // a downloaded file that could not be removed is said, not fatal
		if err := bl.Close(); err != nil {
			fmt.Fprintf(env.Stderr, "retrieval-gate: warning: baseline artifact: %s\n", format.SanitizeText(err.Error()))
		}
	}()
	// The run's settings, resolved once before it: its k (--k, else the
	// baseline's, else the run's, else the default) and its clock.
	kc, err := check.ResolveK(ctx, &in, o.k)
	if err != nil {
		return notCases(o.cases, files.remap(bl.Remap(err)))
	}
	opts := o.run
	opts.K = kc.K
	if opts.Now, err = runTime(f.Env.Getenv, time.Now); err != nil {
		return err
	}
	run, err := check.Run(ctx, in, opts)
	if err != nil {
		return notCases(o.cases, files.remap(bl.Remap(err)))
	}
	if shards != nil { // the reports name each case's shard and its line there
		run.Locate(o.cases, shards.Locate)
		if kc.RunKFile == o.cases && kc.RunKLine > 0 {
			kc.RunKFile, kc.RunKLine = shards.Locate(kc.RunKLine)
		}
	}
	bl.Locate(run) // a sharded baseline's cases: their shard and line there
	res, cmp := run.Gate, run.Comparison
	kWarning := checkreport.KChoiceWarning(kc.K, kc.From, kc.RunK, kc.RunKFile, kc.RunKLine)
	if kWarning != "" {
		fmt.Fprintf(env.Stderr, "retrieval-gate: warning: %s\n", format.SanitizeText(kWarning))
		kWarning = "retrieval-gate: " + kWarning // the annotation's
	}

	// All reports are written, whatever the verdict.
	doc := checkreport.New(res)
	doc.SetBaseline(cmp)
	reads, err := readHistory(ctx, f, o.hist, "check", fingerprintOf(check.Fingerprint(o.cases, o.kb, opts)), doc.WriteJSON, o.trend.runs, doc.TrendMeasures(), "")
	if err != nil {
		return err
	}
	doc.Trend = reads.trend
	if ws[1] != nil {
		prov, err := f.provenance()
		if err != nil {
			return fmt.Errorf("--write-baseline: %w", err)
		}
		if err := bl.WriteFile(ws[1], run, prov, o.cases, kb.Len(), doc.WriteJSON); err != nil {
			return err
		}
	}
	if err := atomicfile.Render(ws[2:], doc.WriteJSON,
		func(w io.Writer) error {
			_, err := io.WriteString(w, doc.Markdown(checkreport.MarkdownOptions{Marker: publish.Marker(o.comment.key)}))
			return err
		},
		func(w io.Writer) error { return htmlreport.CheckHTML(w, doc) },
		func(w io.Writer) error { return junit.Write(w, junit.Check(res)) },
		func(w io.Writer) error {
			return codequality.Write(w, codequality.Issues(res, o.cases, codeQualityRoot(f.Env.Getenv)))
		}); err != nil {
		return err
	}
	if w := doc.UnknownKeysWarning(); w != "" {
		fmt.Fprintf(env.Stderr, "retrieval-gate: warning: %s\n", format.SanitizeText(w))
	}
	// The history's record is appended as the outputs are published, all or
	// none with them.
	hist, err := recordHistory(ctx, f, outs, o.hist, "check", fingerprintOf(check.Fingerprint(o.cases, o.kb, opts)), doc.WriteJSON)
	if err != nil {
		return err
	}
	// The terminal report is printed as the outputs are published, before
	// them: a report that cannot be printed publishes none.
	text, err := checkText(env, o, res, doc)
	if err != nil {
		return err
	}
	outs.Print("standard output", env.Stdout, text)
	if err := outs.Commit(ctx); err != nil {
		return err
	}
	// GitHub: outputs, annotations, job summary, PR comment. Its failures are
	// warnings; the exit code reflects only the gates.
	if cmp != nil && !cmp.Available {
		fmt.Fprintf(env.Stderr, "retrieval-gate: warning: no baseline: %s\n", doc.Baseline.Reason)
	}
	pub := o.checkRun.publication(checkPublication(res, doc, o.comment, o.jsonOut))
	publish.BaselineOutputs(pub.Outputs, cmp)
	publishRun(ctx, f, pub, hist, o.htmlOut, reads.warning, kWarning)

	return gateError(res.Failed())
}

// checkText is check's terminal report of res (doc its document): the
// verbose one with --verbose, then the suggested floors with
// --suggest-floors. Inside Actions the stale-index warning is the ::warning::
// annotation's, not the terminal report's.
func checkText(env *Env, o *checkOptions, res *gate.Result, doc *checkreport.Document) ([]byte, error) {
	text := doc
	if env.Getenv("GITHUB_ACTIONS") == "true" && res.Integrity.Unknown.Entries > 0 {
		cp := *res
		cp.Integrity.Unknown = gate.UnknownRetrieved{}
		text = checkreport.New(&cp)
	}
	write := text.Text
	if o.verbose {
		write = text.TextVerbose
	}
	var b bytes.Buffer
	if err := write(&b); err != nil {
		return nil, fmt.Errorf("failed to write the report: %w", err)
	}
	if o.suggestFloors {
		if err := checkreport.SuggestedFloorsText(&b, res.SuggestFloors(), res.K); err != nil {
			return nil, fmt.Errorf("failed to write the report: %w", err)
		}
	}
	return b.Bytes(), nil
}

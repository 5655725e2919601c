package cli

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/retrieval-gate/retrieval-gate/internal/atomicfile"
	"github.com/retrieval-gate/retrieval-gate/internal/compare"
	"github.com/retrieval-gate/retrieval-gate/internal/metrics"
	"github.com/retrieval-gate/retrieval-gate/internal/outcome"
	"github.com/retrieval-gate/retrieval-gate/internal/publish"
	"github.com/retrieval-gate/retrieval-gate/internal/report/comparereport"
	htmlreport "github.com/retrieval-gate/retrieval-gate/internal/report/html"
	"github.com/retrieval-gate/retrieval-gate/internal/report/junit"
	"github.com/retrieval-gate/retrieval-gate/internal/trend"
)

// NewCmdCompare is `retrieval-gate compare`: graded-relevance comparison of
// retrieval strategies on the same queries. It is a gate only when asked
// (--gate-strategy with --floor or --fail-if-beaten): then a failed gate exits 1;
// otherwise it exits 0 unless the command line or an input is bad (2).
// runF, when set, replaces its run (a test of the parsing alone).
func NewCmdCompare(f *Factory, runF func(context.Context, *compareOptions) error) *Command {
	return newCommand(f, "compare", "compare retrieval strategies on graded qrels (nDCG, MAP, ... with CIs and significance)", parseCompare, func(ctx context.Context, o *compareOptions) error { return runCompare(ctx, f, o, nil) }, runF)
}

// aRun names the strategies of --run in a message: "a --run", or "a strategy of
// action input "run"".
func aRun(src *sources) string {
	if _, ok := src.input("run"); ok {
		return "a strategy of " + src.name("run")
	}
	return "a --run"
}

// compareOptions are the parsed and validated flags of compare: the files, the
// outputs, and the options of the comparison, each set once, in compare.Options.
type compareOptions struct {
	files                    compare.Files // --qrels, --run, --human-qrels (the filled-in labelling sheet)
	run                      compare.Options
	jsonOut, mdOut, perQuery string
	comment                  commentFlags // its own key, compare: never check's or calibrate's comment
	checkRun                 checkRunFlag // --check-run, when it gates (publication.go)
	htmlOut                  string       // --html
	junitOut                 string       // --junit
	hist                     historyFlags // --history, --history-branch (history.go)
	trend                    trendFlag    // --trend-runs (history.go)
}

// compareInputs are compare's Action inputs (`run` holds one NAME=FILE per line).
// compare keeps its own sticky PR comment (key compare) and the job summary.
var compareInputs = commentInputs(actionInputs{
	"qrels": "", "run": "", "k": "", "gain": "", "relevant-level": "", "judged-only": "", "baseline": "", "primary": "", "bootstrap": "", "seed": "",
	"gate-strategy": "", "floors": "", "fail-if-beaten": "", "check-run": "",
	"json": "retrieval-gate-compare.json", "markdown": "", "per-query": "",
	"html": "", "history": "", "history-branch": "", "trend-runs": "",
})

// newCompareOptions are compare's defaults (its flags' and evaluate's stage's).
func newCompareOptions() *compareOptions {
	return &compareOptions{trend: trendFlag{runs: trend.DefaultRuns}, checkRun: checkRunFlag{publish.CheckRunAuto}, run: compare.NewOptions()}
}

func parseCompare(env *Env, args []string) (*compareOptions, error) {
	fs := newFlagSet(env, "compare")
	o := newCompareOptions()
	r := &o.run
	floors := &floorFlag{grammar: compare.FloorGrammar, list: &r.Gate.Floors} // --floor, --floors on the gate strategy
	fs.StringVar(&o.files.Qrels, "qrels", "", "qrels `FILE`: TREC \"qid iter docid rel\" (rel 0-3) or JSONL {\"query_id\",\"doc_id\",\"relevance\"} (required)")
	fs.Var(runFlag[compare.RunFile]{&o.files.Runs}, "run", "NAME=FILE: a TREC run or a cases JSONL; repeat for each strategy (required)")
	fs.StringVar(&o.files.Clusters, "clusters", "", "queries in families: a `FILE` (a directory or glob of shards) of `QUERY_ID CLUSTER` lines (the card or intent each query was written from); the intervals and paired tests are then computed over the clusters")
	fs.StringVar(&o.files.Queries, "queries", "", "what each query id stands for: the cases JSONL (`FILE`, a directory or glob of shards) that generate writes and check reads; the best and worst queries show each query's text, and the cases' cluster keys count as --clusters (which wins where it lists a query)")
	fs.StringVar(&o.files.HumanQrels, "human-qrels", "", "the labelling sheet of judge --human-sample as filled in by people (`FILE`, CSV or JSONL; a directory or glob of shards, each CSV shard with the header): report human-corrected (PPI++) estimates and base the recommendation and the gates on them")
	fs.IntVar(&r.K, "k", r.K, "cutoff")
	gain := ""
	enumVar(fs, &gain, "gain", r.Gain.String(), []string{metrics.GainExp.String(), metrics.GainLinear.String()}, "DCG gain: exp (2^rel - 1, the default) or linear (rel, as trec_eval)")
	fs.IntVar(&r.RelevantLevel, "relevant-level", r.RelevantLevel, "a document is relevant when rel >= this level (precision, recall, MAP, MRR, hit)")
	fs.StringVar(&r.Baseline, "baseline", "", "the strategy the paired comparisons are against (default: the first --run)")
	fs.StringVar(&r.Primary, "primary", r.Primary, "the pre-declared primary measure the recommendation rests on (its tests are Holm-adjusted across strategies only): one of "+strings.Join(metrics.GradedKeys[:], ", "))
	fs.BoolVar(&r.JudgedOnly, "judged-only", false, "compute every measure on condensed lists: unjudged documents removed from each ranking before the cutoff (trec_eval -J; runs read 1000 deep)")
	fs.IntVar(&r.Resamples, "bootstrap", r.Resamples, fmt.Sprintf("resamples for the confidence intervals and the randomization test (at most %d)", metrics.MaxResamples))
	seed := fs.String("seed", strconv.FormatUint(r.Seed, 10), "seed of the resampling (reports are reproducible)")
	fs.StringVar(&o.jsonOut, "json", "", "write the JSON report (retrieval-gate/compare@1) here")
	fs.StringVar(&o.mdOut, "markdown", "", "write the Markdown report here")
	fs.StringVar(&o.perQuery, "per-query", "", "write per-query metrics here (JSONL)")
	o.comment.register(fs, compareCommentKey)
	o.checkRun.register(fs)
	fs.StringVar(&o.htmlOut, "html", "", "write the dashboard here: one self-contained HTML `FILE`")
	fs.StringVar(&o.junitOut, "junit", "", "write the gates as a JUnit XML `FILE` (the test view of Jenkins, GitLab, Azure Pipelines, ...)")
	o.hist.register(fs, "append this run to the history: a `DIR` (history.jsonl in it) or a FILE.jsonl")
	fs.StringVar(&r.Gate.Strategy, "gate-strategy", "", "make compare a gate on the strategy `NAME` you run in production (with --floor or --fail-if-beaten); off by default")
	fs.Var(floors, "floor", compare.FloorGrammar.Usage()+"; on the --gate-strategy")
	fs.Var(floors, "floors", "several `FLOORS`, one MEASURE=F per line (the floors Action input); added to --floor")
	o.trend.register(fs)
	fs.BoolVar(&r.Gate.FailIfBeaten, "fail-if-beaten", false, "fail when another strategy is significantly better than the --gate-strategy on "+compare.Primary)
	src, err := parseFlags(fs, env, args, compareInputs)
	if err != nil {
		return nil, err
	}
	r.RelevantLevelSet = src.given("relevant-level")
	if gain == metrics.GainLinear.String() {
		r.Gain = metrics.GainLinear
	}
	if err := r.Validate(o.files); err != nil {
		return nil, src.option("compare", err)
	}
	if err := o.comment.validate("compare", src); err != nil {
		return nil, err
	}
	if err := o.trend.validate("compare", src); err != nil {
		return nil, err
	}
	sd, err := strconv.ParseUint(*seed, 10, 64)
	if err != nil {
		return nil, src.refuse("compare", "seed", "must be a non-negative integer")
	}
	r.Seed = sd
	runs := runFlag[compare.RunFile]{&o.files.Runs}
	if r.Baseline != "" && !slices.ContainsFunc(o.files.Runs, func(f compare.RunFile) bool { return f.Name == r.Baseline }) {
		return nil, usagef("compare: %s is not the name of %s (%s)", src.quoted("baseline", r.Baseline), aRun(src), runs)
	}
	if err := r.Gate.Validate(); err != nil {
		return nil, src.option("compare", err)
	}
	if r.Gate.Strategy != "" && !slices.ContainsFunc(o.files.Runs, func(f compare.RunFile) bool { return f.Name == r.Gate.Strategy }) {
		return nil, usagef("compare: %s is not the name of %s (%s)", src.quoted("gate-strategy", r.Gate.Strategy), aRun(src), runs)
	}
	if err := o.hist.validate(env, src, "compare"); err != nil {
		return nil, err
	}
	inputs := []file{{"qrels", o.files.Qrels}, {"human-qrels", o.files.HumanQrels}, {"clusters", o.files.Clusters}, {"queries", o.files.Queries}}
	for _, f := range o.files.Runs {
		inputs = append(inputs, file{"run", f.Path})
	}
	if err := refuseOverwrite("compare", src, inputs, []file{{"json", o.jsonOut}, {"markdown", o.mdOut}, {"per-query", o.perQuery}, {"html", o.htmlOut}, {"junit", o.junitOut}, {"history", o.hist.file()}}); err != nil {
		return nil, err
	}
	return o, nil
}

// overRuns is the history a compare run charts its dashboard from when it is
// evaluate's stage: evaluate's history and this evaluation's fingerprint (nil:
// compare's own --history, as a compare run).
type overRuns struct {
	src         historyFlags
	fingerprint func() fingerprint
}

func runCompare(ctx context.Context, f *Factory, o *compareOptions, ev *overRuns) error {
	// The outputs, all or none (an unwritable one fails before the inputs are read).
	outs := atomicfile.NewSet()
	defer outs.Abort()
	ws, err := outs.AddAll(o.jsonOut, o.mdOut, o.perQuery, o.htmlOut, o.junitOut)
	if err != nil {
		return err
	}
	if err := addHistory(outs, o.hist); err != nil {
		return err
	}
	var files opened
	defer files.close()
	in, err := openCompare(ctx, &files, o.files)
	if err != nil {
		return err
	}
	res, err := compare.Run(ctx, in, o.run)
	if err != nil {
		return files.remap(err)
	}
	files.close()
	_, err = reportCompare(ctx, f, o, res, ev, outs, ws)
	return err
}

// reportCompare writes, says and publishes a comparison: its reports into the
// writers ws of outs (json, markdown, per-query, html; nil: not asked for),
// after one read of the history (the trend, the dashboard's chart over the
// runs), the history record, the text on stdout and what compare publishes.
// It returns the document (evaluate records it in its history).
func reportCompare(ctx context.Context, f *Factory, o *compareOptions, res *compare.Result, ev *overRuns, outs *atomicfile.Set, ws []io.Writer) (*comparereport.Document, error) {
	env := f.Env
	doc := comparereport.New(res)
	// One read of the history: the Markdown's trend, and the dashboard's chart
	// of the primary measure over the runs (an evaluate stage: over evaluate's
	// runs, without a trend).
	command, hsrc, fp, trendRuns := "compare", o.hist, fingerprintOf(compare.Fingerprint(o.files, o.run)), o.trend.runs
	if ev != nil {
		if command, hsrc, trendRuns = "evaluate", ev.src, 0; hsrc != (historyFlags{}) {
			fp = ev.fingerprint()
		}
	}
	reads, err := readHistory(ctx, f, hsrc, command, fp, doc.WriteJSON, trendRuns, doc.TrendMeasures(), doc.Primary)
	if err != nil {
		return nil, err
	}
	doc.Trend = reads.trend
	if err := atomicfile.Render(ws, doc.WriteJSON, doc.Markdown,
		func(w io.Writer) error { return comparereport.PerQuery(w, res) },
		func(w io.Writer) error { return htmlreport.CompareHTML(w, doc, res, reads.overRuns) },
		func(w io.Writer) error { return junit.Write(w, junit.Compare(res)) }); err != nil {
		return nil, err
	}
	// The history's record is appended as the outputs are published, all or
	// none with them.
	hist, err := recordHistory(ctx, f, outs, o.hist, "compare", fingerprintOf(compare.Fingerprint(o.files, o.run)), doc.WriteJSON)
	if err != nil {
		return nil, err
	}
	if err := printText(outs, env, doc.Text); err != nil {
		return nil, err
	}
	if err := outs.Commit(ctx); err != nil {
		return nil, err
	}
	// GitHub: the Markdown report (with the gates, when asked for) in the job
	// summary and the sticky PR comment (key compare), the recommendation, the
	// verdict and the JSON path as step outputs. Without a gate the verdict is
	// pass, so --comment-mode failures only updates an earlier comment.
	var md strings.Builder
	if err := doc.Markdown(&md); err != nil {
		return nil, err
	}
	pub := o.checkRun.publication(o.comment.publication(publish.Publication{Markdown: md.String(),
		Outputs:     map[string]string{"recommended": res.Recommended, "verdict": string(res.Verdict()), "json": o.jsonOut},
		PathOutputs: []string{"json"}, Failed: res.Verdict() == outcome.Fail, CheckTitle: publish.CompareCheck(len(res.Gates), res.Failed())}))
	publishRun(ctx, f, pub, hist, o.htmlOut, reads.warning)
	return doc, gateError(res.Failed())
}

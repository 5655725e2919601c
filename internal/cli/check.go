package cli

import (
	"context"
	"fmt"
	"io"
	"sync"
	"sync/atomic"

	"github.com/retrieval-gate/retrieval-gate/internal/atomicfile"
	"github.com/retrieval-gate/retrieval-gate/internal/format"
	"github.com/retrieval-gate/retrieval-gate/internal/gate"
	"github.com/retrieval-gate/retrieval-gate/internal/importer"
	"github.com/retrieval-gate/retrieval-gate/internal/input"
	"github.com/retrieval-gate/retrieval-gate/internal/input/casefile"
	"github.com/retrieval-gate/retrieval-gate/internal/input/kbfile"
	"github.com/retrieval-gate/retrieval-gate/internal/metrics"
	"github.com/retrieval-gate/retrieval-gate/internal/report/checkreport"
	htmlreport "github.com/retrieval-gate/retrieval-gate/internal/report/html"
)

// CheckCommand is `retrieval-gate check`: score each case, aggregate, enforce
// the gates, write the reports.
type CheckCommand struct{}

func (c *CheckCommand) Name() string { return "check" }
func (c *CheckCommand) Synopsis() string {
	return "score retrieval per case, aggregate, enforce the gates, write reports"
}

// checkOptions are the parsed and validated flags of check.
type checkOptions struct {
	cases, kb                      string
	k                              int
	minHit, minRecall              gate.Floor
	floors                         floorFlag // --floor, --floors
	allowEmpty                     bool
	referenceLocale                string
	jsonOut, markdownOut, casesOut string
	parentSep                      string        // --parent-from-id
	htmlOut, history               string        // --html, --history (history.go)
	historyBranch                  string        // --history-branch (history_branch.go)
	comment                        commentFlags  // --comment, --comment-key, --pr (publication.go)
	baseline                       baselineFlags // --baseline, --write-baseline, regression gates (check_baseline.go)
	trend                          trendFlag     // --trend-runs (trend.go)
}

// checkInputs are check's Action inputs; inside Actions --json defaults to
// retrieval-gate.json, so the `json` output always names a file.
var checkInputs = trendInputs(baselineInputs(commentInputs(actionInputs{
	"cases": "", "kb": "", "k": "", "min-hit": "", "min-recall": "", "floors": "", "allow-empty": "", "reference-locale": "",
	"json": "retrieval-gate.json", "markdown": "", "cases-out": "", "parent-from-id": "",
	"html": "", "history": "", "history-branch": "",
})))

func (c *CheckCommand) parse(env *Env, args []string) (*checkOptions, error) {
	fs := newFlagSet(env, "check")
	o := &checkOptions{floors: floorFlag{grammar: checkFloorGrammar}}
	fs.StringVar(&o.cases, "cases", "", "cases JSONL (required; - reads standard input)")
	fs.StringVar(&o.kb, "kb", "", "knowledge base: JSONL file of cards or directory of Markdown cards (required)")
	fs.IntVar(&o.k, "k", 5, "the retrieval top-k (≥ 1)")
	floorVar(fs, &o.minHit, "min-hit", "floor on the overall mean hit@k, in [0,1]; none or empty is off")
	floorVar(fs, &o.minRecall, "min-recall", "floor on the overall mean recall@k, in [0,1]; none or empty is off")
	fs.Var(&o.floors, "floor", floorUsage(checkFloorGrammar))
	fs.Var(&o.floors, "floors", "several `FLOORS`, one MEASURE[@GROUP]=F per line (the floors Action input); added to --floor")
	fs.BoolVar(&o.allowEmpty, "allow-empty", false, "pass when no gold-carrying case was scored (by default that fails the non_empty gate)")
	fs.StringVar(&o.referenceLocale, "reference-locale", "en", "locale the deltas are taken against")
	fs.StringVar(&o.jsonOut, "json", "", "write the aggregates as JSON to `FILE`")
	fs.StringVar(&o.markdownOut, "markdown", "", "write the Markdown report (the PR comment body) to `FILE`")
	fs.StringVar(&o.casesOut, "cases-out", "", "write per-case scores as JSONL to `FILE`")
	fs.StringVar(&o.parentSep, "parent-from-id", "", "a retrieved entry without parent_id is the card before the last `SEPARATOR` of its id (card-12#chunk-3 with # is card-12)")
	fs.StringVar(&o.htmlOut, "html", "", "write the report as one self-contained HTML `FILE`")
	fs.StringVar(&o.history, "history", "", "append this run to the history: a `DIR` (history.jsonl in it) or a FILE.jsonl")
	fs.StringVar(&o.historyBranch, "history-branch", "", historyBranchUsage)
	o.comment.register(fs, checkCommentKey)
	o.baseline.register(fs)
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
	if o.k < 1 {
		return nil, src.refuse("check", "k", "must be at least 1")
	}
	if err := shorthandConflict("check", src, o.floors.list,
		shorthand{"min-hit", o.minHit.Set, metrics.KeyHit}, shorthand{"min-recall", o.minRecall.Set, metrics.KeyRecall}); err != nil {
		return nil, err
	}
	if err := o.comment.validate("check", src); err != nil {
		return nil, err
	}
	if err := o.baseline.validate(src, o.comment.key); err != nil {
		return nil, err
	}
	if err := o.trend.validate("check", src); err != nil {
		return nil, err
	}
	if err := validateHistoryBranch(env, src, "check", o.historyBranch); err != nil {
		return nil, err
	}
	if err := refuseOverwrite("check", src, []file{{"cases", o.cases}, {"kb", o.kb}, {"baseline", o.baseline.baselineFile()}},
		[]file{{"json", o.jsonOut}, {"markdown", o.markdownOut}, {"cases-out", o.casesOut}, {"html", o.htmlOut}, {"history", historyFile(o.history)}, {"write-baseline", o.baseline.write}}); err != nil {
		return nil, err
	}
	return o, nil
}

func (c *CheckCommand) Run(ctx context.Context, f *Factory, args []string) error {
	o, err := c.parse(f.Env, args)
	if err != nil {
		return err
	}
	return c.run(ctx, f, o)
}

func (c *CheckCommand) run(ctx context.Context, f *Factory, o *checkOptions) error {
	env := f.Env
	// The outputs, all or none (an unwritable one fails before the inputs are read).
	outs := atomicfile.NewSet()
	defer outs.Abort()
	ws, err := addOutputs(outs, o.casesOut, o.baseline.write, o.jsonOut, o.markdownOut, o.htmlOut)
	if err != nil {
		return err
	}
	kb, err := kbfile.Load(ctx, o.kb)
	if err != nil {
		return err
	}
	for _, s := range kb.Skipped {
		fmt.Fprintf(env.Stderr, "retrieval-gate: warning: knowledge base: skipped %s\n", s)
	}
	bl, err := openBaseline(ctx, env, o, kb)
	if err != nil {
		return err
	}
	defer bl.close()
	res, err := scoreCases(ctx, env, o, kb, bl, ws[0])
	if err != nil {
		return err
	}
	cmp, err := bl.result()
	if err != nil {
		return err
	}
	if cmp != nil {
		res.Gates = append(res.Gates, cmp.Gates...)
	}

	// All reports are written, whatever the verdict.
	doc := checkreport.New(res)
	doc.SetBaseline(cmp)
	var trendWarning string
	if doc.Trend, trendWarning, err = readTrend(ctx, f, trendSource{path: o.history, branch: o.historyBranch}, "check", o.trend.runs, checkFingerprint(o), checkTrendMeasures(doc), doc.WriteJSON); err != nil {
		return err
	}
	if ws[1] != nil {
		if err := writeBaselineFile(env, o, bl, res, kb, doc, ws[1]); err != nil {
			return err
		}
	}
	if err := render(ws[2:], doc.WriteJSON,
		func(w io.Writer) error {
			_, err := io.WriteString(w, doc.Markdown(checkreport.MarkdownOptions{Marker: commentMarker(o.comment.key)}))
			return err
		},
		func(w io.Writer) error { return htmlreport.CheckHTML(w, doc) }); err != nil {
		return err
	}
	if w := doc.UnknownKeysWarning(); w != "" {
		fmt.Fprintf(env.Stderr, "retrieval-gate: warning: %s\n", format.SanitizeText(w))
	}
	// The history is appended before the outputs are published: its failure
	// then leaves no output either.
	hist, err := recordHistory(ctx, env, o.history, o.historyBranch, "check", checkFingerprint(o), doc.WriteJSON)
	if err != nil {
		return err
	}
	if err := outs.Commit(); err != nil {
		return err
	}
	// Inside Actions the stale-index warning is the ::warning:: annotation's, not
	// the terminal report's (textResult).
	text := doc
	if inActions := env.Getenv("GITHUB_ACTIONS") == "true"; inActions && res.Integrity.Unknown.Entries > 0 {
		text = checkreport.New(textResult(res, inActions))
	}
	if err := text.Text(env.Stdout); err != nil {
		return fmt.Errorf("failed to write the report: %w", err)
	}
	// GitHub: outputs, annotations, job summary, PR comment. Its failures are
	// warnings; the exit code reflects only the gates.
	if cmp != nil && !cmp.Available {
		fmt.Fprintf(env.Stderr, "retrieval-gate: warning: no baseline: %s\n", cmp.Reason)
	}
	pub := checkPublication(res, doc, o.comment, o.jsonOut)
	baselineOutputs(pub.Outputs, cmp)
	if trendWarning != "" {
		pub.ActionWarnings = append(pub.ActionWarnings, trendWarning)
	}
	writeHistoryBranch(ctx, f, hist, o.htmlOut, &pub)
	f.Publisher().Publish(ctx, pub)

	if failed := res.Failed(); len(failed) > 0 {
		return &GateError{Failed: failed}
	}
	return nil
}

// scoreCases streams the cases: workers score each case in parallel, emit
// aggregates them in file order and writes --cases-out into casesW (nil
// without it; the caller's output set publishes it, or on an error does not).
func scoreCases(ctx context.Context, env *Env, o *checkOptions, kb *kbfile.KB, bl *baselineRun, casesW io.Writer) (*gate.Result, error) {
	var in io.Reader = env.Stdin
	name := "stdin"
	if o.cases != "-" {
		f, err := input.Open(ctx, o.cases)
		if err != nil {
			return nil, fmt.Errorf("failed to read cases: %w", err)
		}
		defer f.Close()
		in, name = f, o.cases
	}
	scorer := &gate.Scorer{KB: kb, K: o.k}
	acc := gate.NewAccumulator()
	run := func(out io.Writer) error {
		work := func(cs *casefile.Case) (caseItem, error) {
			var it caseItem
			r := &it.r
			if o.parentSep != "" {
				for i := range cs.Retrieved {
					if e := &cs.Retrieved[i]; e.ParentID == "" {
						if p := importer.ParentFromID(e.ID, o.parentSep); p != e.ID {
							e.ParentID = p
						}
					}
				}
			}
			err := scorer.ScoreInto(cs, r)
			if err == nil && out != nil {
				r.Out = appendLine(cs, r)
			}
			if err == nil && bl != nil {
				bl.prepare(cs, &it, o.k)
			}
			return it, err
		}
		emit := func(it caseItem) error {
			if out != nil {
				if _, err := out.Write(it.r.Out); err != nil {
					return err
				}
			}
			if err := acc.Add(&it.r); err != nil {
				return err
			}
			if bl != nil {
				return bl.add(&it)
			}
			return nil
		}
		return casefile.MapCases(ctx, in, name, 0, work, emit)
	}
	var err error
	if casesW != nil {
		aw := newAsyncWriter(casesW)
		err = run(aw)
		if cerr := aw.Close(); err == nil {
			err = cerr
		}
	} else {
		err = run(nil)
	}
	if err == nil && bl != nil && bl.write {
		err = bl.finishBody()
	}
	if err != nil {
		return nil, err
	}
	return acc.Result(gate.Config{
		K: o.k, ReferenceLocale: o.referenceLocale, MinHit: o.minHit, MinRecall: o.minRecall, KBCards: kb.Len(),
		Floors: o.floors.list, AllowEmpty: o.allowEmpty,
	}), nil
}

// lineChunk is a block that --cases-out lines are carved from, so a million
// lines cost a few hundred allocations instead of a million. A line is never
// written after it is handed out (later lines are appended past its end).
type lineChunk struct{ buf []byte }

const lineChunkSize = 64 << 10

var lineChunks = sync.Pool{New: func() any { return &lineChunk{} }}

// appendLine renders the --cases-out line of one case into a pooled chunk.
func appendLine(c *casefile.Case, r *gate.CaseResult) []byte {
	ch := lineChunks.Get().(*lineChunk)
	if cap(ch.buf)-len(ch.buf) < 4<<10 {
		ch.buf = make([]byte, 0, lineChunkSize)
	}
	start := len(ch.buf)
	ch.buf = checkreport.AppendCaseLine(ch.buf, c, r)
	line := ch.buf[start:len(ch.buf):len(ch.buf)]
	lineChunks.Put(ch)
	return line
}

// asyncWriter hands full 1 MiB buffers to a goroutine that writes them, so the
// single goroutine that emits results in file order never waits on write
// system calls. Close flushes, waits and returns the first write error.
type asyncWriter struct {
	buf  []byte
	full chan []byte
	free chan []byte
	done chan error
	// failed holds the writer's first error, so Write stops the stream early.
	failed atomic.Pointer[error]
}

const asyncBufSize = 1 << 20

func newAsyncWriter(w io.Writer) *asyncWriter {
	a := &asyncWriter{
		buf:  make([]byte, 0, asyncBufSize),
		full: make(chan []byte, 4),
		free: make(chan []byte, 5),
		done: make(chan error, 1),
	}
	go func() {
		var err error
		for b := range a.full {
			if err == nil {
				if _, err = w.Write(b); err != nil {
					a.failed.Store(&err)
				}
			}
			select { // recycle; never block (a spare buffer is simply dropped)
			case a.free <- b[:0]:
			default:
			}
		}
		a.done <- err
	}()
	return a
}

func (a *asyncWriter) Write(p []byte) (int, error) {
	if e := a.failed.Load(); e != nil {
		return 0, *e // stop the stream early (e.g. disk full); Close reports it too
	}
	if len(a.buf)+len(p) > cap(a.buf) && len(a.buf) > 0 {
		a.full <- a.buf
		select {
		case a.buf = <-a.free:
		default:
			a.buf = make([]byte, 0, max(asyncBufSize, len(p)))
		}
	}
	a.buf = append(a.buf, p...)
	return len(p), nil
}

// Close writes what is buffered, stops the goroutine and returns its first error.
func (a *asyncWriter) Close() error {
	if len(a.buf) > 0 {
		a.full <- a.buf
		a.buf = nil
	}
	close(a.full)
	return <-a.done
}

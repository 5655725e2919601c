package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"

	"github.com/retrieval-gate/retrieval-gate/internal/atomicfile"
	"github.com/retrieval-gate/retrieval-gate/internal/compare"
	"github.com/retrieval-gate/retrieval-gate/internal/evaluate"
	"github.com/retrieval-gate/retrieval-gate/internal/format"
	"github.com/retrieval-gate/retrieval-gate/internal/generate"
	"github.com/retrieval-gate/retrieval-gate/internal/httpretry"
	"github.com/retrieval-gate/retrieval-gate/internal/input"
	"github.com/retrieval-gate/retrieval-gate/internal/input/kbfile"
	"github.com/retrieval-gate/retrieval-gate/internal/judge"
	"github.com/retrieval-gate/retrieval-gate/internal/llm"
	"github.com/retrieval-gate/retrieval-gate/internal/metrics"
	"github.com/retrieval-gate/retrieval-gate/internal/progress"
	"github.com/retrieval-gate/retrieval-gate/internal/publish"
	"github.com/retrieval-gate/retrieval-gate/internal/report/comparereport"
	"github.com/retrieval-gate/retrieval-gate/internal/retrieve"
	"github.com/retrieval-gate/retrieval-gate/internal/retrieve/embed"
	"github.com/retrieval-gate/retrieval-gate/internal/retrieve/store"
)

// NewCmdEvaluate is `retrieval-gate evaluate`: the whole pipeline, KB (and
// optional cases, else generated ones) -> retrieve with every strategy -> judge
// the pool -> compare, every intermediate file kept in one directory. Each stage
// is the real command's domain Run (evaluate.Run composes them in memory), and
// its command line is written to DIR/stages.txt, so any stage can be rerun alone.
// runF, when set, replaces its run (a test of the parsing alone).
func NewCmdEvaluate(f *Factory, runF func(context.Context, *evaluateOptions) error) *Command {
	return newCommand(f, "evaluate", "the whole pipeline: (generate) -> retrieve with each strategy -> judge the pool -> compare", parseEvaluate, func(ctx context.Context, o *evaluateOptions) error { return runEvaluate(ctx, f, o) }, runF)
}

// evaluateOptions are evaluate's options (evaluate.Options, from which every
// stage's come) and what evaluate itself writes and publishes.
type evaluateOptions struct {
	evaluate.Options
	comment commentFlags // passed to the compare stage, under evaluate's own key
	hist    historyFlags // --history (one record per run, command evaluate), --history-branch (history.go)
	htmlOut string       // --html: the dashboard, also written here
}

// evaluateInputs are evaluate's Action inputs. Its stages see none of them (each
// stage gets every flag it needs from evaluate): an input reaches only the
// command the step runs.
var evaluateInputs = commentInputs(actionInputs{
	"kb": "", "cases": "", "out": "", "judge-url": "", "judge-model": "", "generator-url": "", "generator-model": "",
	"rerank-url": "", "store": "", "chroma-url": "", "embedder": "", "embedder-url": "", "embedder-model": "", "k": "",
	"per-locale": "", "repeat": "", "concurrency": "", "max-requests": "", "price-per-1k": "", "bootstrap": "",
	"history": "", "history-branch": "", "html": "", "batch": "", "batch-poll": "",
	"chroma-tenant": "", "chroma-database": "", "chroma-api-key": "", "chroma-token-header": "", "chroma-create-database": "",
})

func parseEvaluate(env *Env, args []string) (*evaluateOptions, error) {
	fs := newFlagSet(env, "evaluate")
	o := &evaluateOptions{}
	o.BatchPoll = llm.DefaultPoll.Initial
	fs.StringVar(&o.KB, "kb", "", "knowledge base: JSONL file of cards or directory of Markdown cards (required)")
	fs.StringVar(&o.Cases, "cases", "", "cases JSONL with the queries (default: generated from the KB with the generator)")
	fs.StringVar(&o.Out, "out", "", "output `DIR`: every intermediate file and report (required)")
	fs.StringVar(&o.JudgeURL, "judge-url", "", "OpenAI-compatible chat server of the judge (required)")
	fs.StringVar(&o.JudgeModel, "judge-model", "", "judge model name")
	fs.StringVar(&o.GeneratorURL, "generator-url", "", "chat server of the query generator (default: --judge-url)")
	fs.StringVar(&o.GeneratorModel, "generator-model", "", "query generator model (default: --judge-model)")
	fs.StringVar(&o.RerankURL, "rerank-url", "", "TEI /rerank server: each strategy is also run reranked")
	r := &o.Retrieval
	fs.StringVar(&r.Store, "store", retrieve.DefaultStore, "vector store of retrieve: "+store.Choices(store.Names()))
	fs.StringVar(&o.ChromaURL, "chroma-url", "", "Chroma server URL (implies --store chroma; default $CHROMA_URL when --store chroma)")
	registerChromaFlags(fs, r)
	fs.StringVar(&r.Embedder, "embedder", retrieve.DefaultEmbedder, "embedder of retrieve: "+store.Choices(embed.Names()))
	fs.StringVar(&r.EmbedderURL, "embedder-url", "", "embedding server URL")
	fs.StringVar(&r.EmbedderModel, "embedder-model", "", "embedding model name")
	fs.IntVar(&o.K, "k", retrieve.DefaultK, "retrieval depth, pool depth and compare cutoff")
	fs.IntVar(&o.PerLocale, "per-locale", 20, "documents sampled per locale when generating")
	fs.IntVar(&o.Repeat, "repeat", 1, "judgments per pair")
	fs.IntVar(&o.Concurrency, "concurrency", 4, "chat requests in flight at once")
	fs.Int64Var(&o.MaxRequests, "max-requests", 0, "request budget of the judge (0: no limit)")
	fs.StringVar(&o.Price, "price-per-1k", "", "judge price per 1,000 tokens, PRICE or PROMPT,COMPLETION")
	fs.BoolVar(&o.Batch, "batch", false, "generate and judge through the server's Batch API, one batch each (resumable: the state files are kept in DIR)")
	fs.DurationVar(&o.BatchPoll, "batch-poll", o.BatchPoll, "with --batch: first wait between two polls of a batch's status (then 1.5× longer each time, at most a minute)")
	fs.IntVar(&o.Bootstrap, "bootstrap", metrics.DefaultResamples, fmt.Sprintf("compare's bootstrap resamples (at most %d)", metrics.MaxResamples))
	o.comment.register(fs, evaluateCommentKey)
	o.hist.register(fs, "append this run (compare's JSON report, the fingerprint of KB, cases or generator, strategies, judge prompt and model) to the history: a `DIR` (history.jsonl in it) or a FILE.jsonl")
	fs.StringVar(&o.htmlOut, "html", "", "also write the dashboard (DIR/compare.html) to this self-contained HTML `FILE`")
	src, err := parseFlags(fs, env, args, evaluateInputs)
	if err != nil {
		return nil, err
	}
	if err := o.comment.validate("evaluate", src); err != nil {
		return nil, err
	}
	if err := o.Validate(); err != nil {
		return nil, src.option("evaluate", err)
	}
	r.StoreURL = o.ChromaURL
	if err := r.ResolveStore(retrievalEnv(env), src.given("store")); err != nil {
		return nil, src.option("evaluate", err)
	}
	if err := o.hist.validate(env, src, "evaluate"); err != nil {
		return nil, err
	}
	// The inputs, the history and the dashboard must be none of the stages'
	// files: those of evaluate.Files, each run's and, with --batch, the
	// batch state files beside the cases and the cache.
	outs := []file{{"history", o.hist.file()}, {"html", o.htmlOut}}
	if o.Out != "" {
		names := slices.Clone(evaluate.Files)
		for _, r := range evaluate.Runs(o.RerankURL != "") {
			names = append(names, evaluate.RunFile(r.Name))
		}
		if o.Batch {
			names = append(names, "cases.jsonl"+judge.BatchStateSuffix, "judge-cache.jsonl"+judge.BatchStateSuffix)
		}
		for _, name := range names {
			outs = append(outs, file{"out", o.Out + string(os.PathSeparator) + name})
		}
	}
	if err := refuseOverwrite("evaluate", src, []file{{"kb", o.KB}, {"cases", o.Cases}}, outs); err != nil {
		return nil, err
	}
	if err := refuseUnrereadableCases(src, o.Cases); err != nil {
		return nil, err
	}
	return o, nil
}

// refuseUnrereadableCases refuses, before stages.txt and the first stage,
// given cases that cannot be read a second time: standard input ("-") and a
// named pipe, a device or a socket. evaluate reads the cases once per
// retrieve stage and once more for compare's queries, and stages.txt names
// them for a rerun; such cases failed at the first stage ("open -: no such
// file or directory", "seek: illegal seek") after stages.txt was written.
// A path that does not exist is left to the stage that opens it, as for
// every other input.
func refuseUnrereadableCases(src *sources, path string) error {
	const rule = "must name a file, a directory or a glob pattern that every stage can read again, not standard input or a named pipe"
	if path == "" || input.IsSharded(path) {
		return nil
	}
	if path == "-" {
		return src.refuse("evaluate", "cases", rule)
	}
	if st, err := os.Stat(path); err == nil && !st.Mode().IsRegular() {
		return src.refuse("evaluate", "cases", rule)
	}
	return nil
}

// compareStage is the compare stage's options as the compare command's, the
// comment flags evaluate's.
func compareStage(s evaluate.CompareStage, comment commentFlags) *compareOptions {
	o := newCompareOptions()
	o.files, o.run = s.Files, s.Run
	o.jsonOut, o.mdOut, o.perQuery, o.htmlOut = s.JSON, s.Markdown, s.PerQuery, s.HTML
	o.comment = comment
	return o
}

// args are the comment flags as a command line.
func (c *commentFlags) args() []string {
	a := []string{"--comment", c.mode, "--comment-mode", c.when, "--comment-key", c.key}
	if c.author != "" {
		a = append(a, "--comment-author", c.author)
	}
	if c.pr > 0 {
		a = append(a, "--pr", strconv.Itoa(c.pr))
	}
	return a
}

// runEvaluate is the evaluate command's run of its options: stages.txt, then
// evaluate.Run with the CLI as its front end (evaluateFront: each stage's
// services made and its files written as the stage runs), then evaluate's own
// outputs from the results it holds: the history record (the compare stage's
// document) and --html (written with the compare stage's dashboard).
func runEvaluate(ctx context.Context, f *Factory, o *evaluateOptions) error {
	env := f.Env
	f.secret(o.Retrieval.StoreAPIKey)
	f.urlSecrets(o.JudgeURL, o.GeneratorURL, o.RerankURL, o.ChromaURL, o.Retrieval.StoreURL, o.Retrieval.EmbedderURL)
	in := o.In
	// The compare stage reads the history for its trend: a malformed one is
	// refused before any stage writes or asks anything.
	if err := checkHistory(ctx, o.hist); err != nil {
		return err
	}
	// evaluate's own file, stages.txt, is created first (and with it --out DIR):
	// an unwritable DIR fails before any stage. It is published before the stages
	// run so that a failed stage can be rerun from it; each stage's outputs are
	// that stage's own all-or-nothing set.
	outs := atomicfile.NewSet()
	defer outs.Abort()
	stagesOut, err := outs.Add(in("stages.txt"))
	if err != nil {
		return err
	}
	// evaluate's own outputs after the stages (--html), all or none with the
	// history record (recordHistory): created now, and the history checked, so
	// an unwritable one fails before any stage.
	final := atomicfile.NewSet()
	defer final.Abort()
	ws, err := final.AddAll(o.htmlOut)
	if err != nil {
		return err
	}
	if err := addHistory(final, o.hist); err != nil {
		return err
	}
	plan := evaluate.NewPlan(&o.Options)
	var notes []string
	if o.Retrieval.StoreAPIKey != "" {
		notes = append(notes, "The Chroma API key is not written here: set CHROMA_API_KEY to rerun a retrieve stage.")
	}
	for _, u := range []string{o.JudgeURL, o.GeneratorURL, o.ChromaURL, o.RerankURL, o.Retrieval.EmbedderURL} {
		if len(httpretry.URLSecrets(u)) > 0 {
			notes = append(notes, "A server URL's credentials are not written here (***): give them again to rerun its stage.")
			break
		}
	}
	if err := evaluate.WriteStages(stagesOut, plan.Stages(&o.Options, o.comment.args()...), notes...); err != nil {
		return err
	}
	// An earlier run's files in DIR go as stages.txt is published, so that
	// DIR never mixes two runs (a stage that fails, a run that writes fewer
	// files: given cases, no reranker).
	stale := &staleFiles{}
	outs.Append(stale.remove(o.Out))
	if err := outs.Commit(ctx); err != nil {
		return err
	}
	stale.forget()
	// The stages run with the Factory of a stage (no Action input reaches
	// them); each says and publishes what it did as the command would, but
	// retrieve, whose outputs and summary evaluate's own say.
	front := &evaluateFront{f: f, sf: f.stage(), o: o, plan: plan, html: ws[0]}
	defer front.close()
	opts := o.Options
	opts.Retrieval.Logf, opts.Retrieval.Progress = front.sf.logf("retrieve"), front.update
	_, err = evaluate.Run(ctx, evaluate.In{Front: front, CompareFlags: o.comment.args()}, &opts)
	front.finish()
	if se := (*evaluate.StageError)(nil); errors.As(err, &se) {
		if se.Name == "judge" { // a query or document of a run the judge refused: its line in DIR's run file
			se.Err = locatePoolError(ctx, se.Err)
		}
		se.Err = stageError(se.Name, front.files.remap(se.Err)) // the shard of a sharded --cases
	}
	if err != nil {
		return err
	}
	// The history's record is appended as --html is published, all or none
	// with it.
	// A record of command evaluate whose document is the compare stage's JSON
	// report (retrieval-gate/compare@1), so `report --history --command
	// evaluate` charts it like compare's runs, apart from them (their
	// fingerprints differ).
	var hist historyRun
	if o.hist != (historyFlags{}) {
		if hist, err = recordHistory(ctx, f, final, o.hist, "evaluate", front.fingerprint(), front.doc.WriteJSON); err != nil {
			return err
		}
	}
	if err := final.Commit(ctx); err != nil {
		return err
	}
	fmt.Fprintf(env.Stderr, "evaluate: reports in %s (compare.html, compare.json, compare.md, judge.json); stages in %s\n", format.SanitizeText(o.Out), format.SanitizeText(in("stages.txt")))
	// The stages set their outputs (judge: qrels, judgments; compare: json,
	// recommended) and compare's job summary and comment; evaluate adds its DIR,
	// and the history branch's notice or warning.
	pub := publish.PathOutputs(map[string]string{"out": o.Out})
	publishRun(ctx, f, pub, hist, in("compare.html"))
	return nil
}

// staleFiles are the files an earlier evaluate left in its DIR that this run
// replaces (evaluate.StaleFiles), moved aside as this run's stages.txt is
// published: put back if it cannot be, removed once it is.
type staleFiles struct{ moved map[string]string } // the file: its name aside

// remove is the change that moves dir's stale files aside, and its undo.
func (s *staleFiles) remove(dir string) atomicfile.Append {
	return func() (func() error, error) {
		s.moved = map[string]string{}
		undo := func() error {
			var errs []error
			for path, aside := range s.moved {
				if err := os.Rename(aside, path); err != nil {
					errs = append(errs, fmt.Errorf("failed to put back %s: %w", path, err))
				}
			}
			s.moved = nil
			return errors.Join(errs...)
		}
		for _, name := range evaluate.StaleFiles() {
			path := filepath.Join(dir, name)
			if fi, err := os.Lstat(path); err != nil || fi.IsDir() {
				continue // absent; a directory is refused by the stage that writes there
			}
			aside, err := atomicfile.Aside(path)
			if err != nil {
				return nil, errors.Join(fmt.Errorf("failed to remove %s, an earlier run's: %w", path, err), undo())
			}
			s.moved[path] = aside
		}
		return undo, nil
	}
}

// forget removes the files moved aside: this run's stages.txt is published.
func (s *staleFiles) forget() {
	for _, aside := range s.moved {
		_ = os.Remove(aside)
	}
	s.moved = nil
}

// stageError words a stage's error as its command does when it runs alone.
func stageError(name string, err error) error {
	interrupted := map[string]string{"generate": "generate: interrupted, nothing written",
		"retrieve": "retrieve: interrupted, nothing written", "judge": "judge: interrupted, nothing written (the judgments made are in the cache)"}
	if w, ok := interrupted[name]; ok && errors.Is(err, context.Canceled) {
		return interruptedf("%s: %w", w, err)
	}
	if name == "retrieve" {
		return (*sources)(nil).option("retrieve", err)
	}
	return err
}

// evaluateFront is the CLI as evaluate's front end (evaluate.Front): when a
// stage starts it opens the inputs, makes the stage's services and creates its
// outputs (all or none, an unwritable one failing before the stage's work);
// when the stage ends it writes, says and publishes what the stage produced,
// as the stage's command would, from what evaluate.Run hands it.
type evaluateFront struct {
	f, sf *Factory // evaluate's Factory; a stage's (no Action input)
	o     *evaluateOptions
	plan  *evaluate.Plan
	html  io.Writer // --html, written with the compare stage's dashboard (nil: none)

	prog  *progress.Progress // the running stage's progress
	outs  *atomicfile.Set    // the running stage's outputs
	ws    []io.Writer
	kb    *kbfile.KB
	cases io.ReadSeeker // the given cases (a file, or shards read as one)
	files opened
	cache *judge.Cache
	judge *judge.Result           // the judge stage's labels: the evaluation's fingerprint
	doc   *comparereport.Document // the compare stage's document: the history record
}

// update is the running stage's progress.
func (e *evaluateFront) update(done, total int) {
	if e.prog != nil {
		e.prog.Update(done, total)
	}
}

// finish ends the running stage's progress.
func (e *evaluateFront) finish() {
	if e.prog != nil {
		e.prog.Finish()
		e.prog = nil
	}
}

// close closes the inputs and the cache and removes the outputs of a stage
// that failed.
func (e *evaluateFront) close() {
	e.files.close()
	if e.cache != nil {
		_ = e.cache.Close()
	}
	if e.outs != nil {
		e.outs.Abort()
	}
}

// create creates the running stage's outputs (paths ""), all or none.
func (e *evaluateFront) create(paths ...string) error {
	e.outs = atomicfile.NewSet()
	var err error
	e.ws, err = e.outs.AddAll(paths...)
	return err
}

// commit publishes the running stage's outputs.
func (e *evaluateFront) commit(ctx context.Context) error {
	err := e.outs.Commit(ctx)
	e.outs, e.ws = nil, nil
	return err
}

// fingerprint is the evaluation's fingerprint in the history, known once the
// judge stage has run.
func (e *evaluateFront) fingerprint() fingerprint {
	return fingerprintOf(e.o.Fingerprint(e.plan.Names(), e.judge))
}

// progressLabels are the stages' progress labels, as their commands'.
var progressLabels = map[string]string{"generate": "generate: asking", "retrieve": "retrieve: indexing chunks", "judge": "judge: judging"}

// Start says which stage begins (stderr) and starts its progress.
func (e *evaluateFront) Start(i, n int, s evaluate.Stage) {
	e.finish()
	fmt.Fprintf(e.f.Env.Stderr, "evaluate: stage %d/%d: %s\n", i, n, format.SanitizeText(s.String()))
	if l, ok := progressLabels[s.Name]; ok {
		e.prog = lazyProgress(e.sf, l)
	}
}

// KB loads the knowledge base once.
func (e *evaluateFront) KB(ctx context.Context) (*kbfile.KB, error) {
	if e.kb == nil {
		kb, err := kbfile.Load(ctx, e.o.KB)
		if err != nil {
			return nil, err
		}
		// The skipped entries once, not again in every stage that reads the
		// KB (generate, each retrieval, judge).
		kb.WarnSkipped(e.f.logf("evaluate"))
		kb.Skipped = nil
		e.kb = kb
	}
	return e.kb, nil
}

// Generate creates DIR/cases.jsonl and makes the generator's services.
func (e *evaluateFront) Generate(_ context.Context, s *evaluate.GenerateStage) (generate.In, error) {
	if err := e.create(s.Out); err != nil {
		return generate.In{}, err
	}
	return generateServices(e.sf, s, e.update)
}

// Generated writes the cases and says what generate did.
func (e *evaluateFront) Generated(ctx context.Context, s *evaluate.GenerateStage, res *generate.RunResult, cases []byte) error {
	e.finish()
	if _, err := e.ws[0].Write(cases); err != nil {
		return err
	}
	if err := e.commit(ctx); err != nil {
		return err
	}
	sayGenerate(ctx, e.sf, s, res)
	return nil
}

// Retrieve creates the stage's run file and opens the given cases (once).
func (e *evaluateFront) Retrieve(ctx context.Context, s evaluate.RetrieveStage, given bool) (io.ReadSeeker, error) {
	if err := e.create(s.Out); err != nil {
		return nil, err
	}
	if !given {
		return nil, nil
	}
	if e.cases == nil {
		f, err := e.files.shards(ctx, e.o.Cases, "failed to read cases: %w")
		if err != nil {
			return nil, err
		}
		e.cases = f
	}
	return e.cases, nil
}

// Retrieved writes the run and says so, as retrieve does.
func (e *evaluateFront) Retrieved(ctx context.Context, s evaluate.RetrieveStage, res *retrieve.RunResult, run []byte) error {
	e.finish()
	if _, err := e.ws[0].Write(run); err != nil {
		return err
	}
	if err := e.commit(ctx); err != nil {
		return err
	}
	fmt.Fprintf(e.sf.Env.Stderr, "retrieve: %d cases written to %s\n", res.Cases, format.SanitizeText(s.Out))
	return nil
}

// Judge creates the judge's outputs, makes its services and opens its cache.
func (e *evaluateFront) Judge(ctx context.Context, s *evaluate.JudgeStage) (judge.In, error) {
	sheetCSV, sheetJSONL := s.SheetPaths()
	if err := e.create(s.QrelsOut, s.JudgmentsOut, s.JSONOut, s.BatchOut, sheetCSV, sheetJSONL); err != nil {
		return judge.In{}, err
	}
	in, err := judgeServices(e.sf, s, e.update)
	if err != nil {
		return in, err
	}
	if e.cache, err = openJudgeCache(ctx, e.outs, s); err != nil {
		return in, err
	}
	in.Cache = e.cache
	return in, nil
}

// Judged closes the cache, writes the labels and the report, and says what
// judge did.
func (e *evaluateFront) Judged(ctx context.Context, s *evaluate.JudgeStage, res *judge.RunResult, qrels []byte) error {
	e.finish()
	err := e.cache.Close()
	e.cache = nil
	if err != nil {
		return err
	}
	if err := writeJudge(e.ws, s, res, qrels); err != nil {
		return err
	}
	if err := e.commit(ctx); err != nil {
		return err
	}
	e.judge, e.kb = res.Result, nil // the KB's last reader has run
	sayJudge(ctx, e.sf, s, res)
	return nil
}

// Compare creates compare's reports (the dashboard also into --html).
func (e *evaluateFront) Compare(_ context.Context, s evaluate.CompareStage) error {
	if err := e.create(s.JSON, s.Markdown, s.PerQuery, s.HTML); err != nil {
		return err
	}
	if e.html != nil { // --html: the dashboard as DIR/compare.html has it
		e.ws[3] = io.MultiWriter(e.ws[3], e.html)
	}
	return nil
}

// Compared writes, says and publishes the comparison as compare does; its
// dashboard charts evaluate's runs from evaluate's history, under this
// evaluation's fingerprint.
func (e *evaluateFront) Compared(ctx context.Context, s evaluate.CompareStage, res *compare.Result) error {
	outs, ws := e.outs, e.ws
	e.outs, e.ws = nil, nil
	defer outs.Abort()
	var err error
	e.doc, err = reportCompare(ctx, e.sf, compareStage(s, e.o.comment), res, &overRuns{src: e.o.hist, fingerprint: e.fingerprint}, outs, ws)
	return err
}

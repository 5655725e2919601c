package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"strconv"

	"github.com/retrieval-gate/retrieval-gate/internal/atomicfile"
	"github.com/retrieval-gate/retrieval-gate/internal/evaluate"
	"github.com/retrieval-gate/retrieval-gate/internal/format"
	"github.com/retrieval-gate/retrieval-gate/internal/judge"
	"github.com/retrieval-gate/retrieval-gate/internal/llm"
	"github.com/retrieval-gate/retrieval-gate/internal/metrics"
	"github.com/retrieval-gate/retrieval-gate/internal/publish"
	"github.com/retrieval-gate/retrieval-gate/internal/retrieve"
	"github.com/retrieval-gate/retrieval-gate/internal/retrieve/embed"
	"github.com/retrieval-gate/retrieval-gate/internal/retrieve/store"
)

// NewCmdEvaluate is `retrieval-gate evaluate`: the whole pipeline, KB (and
// optional cases, else generated ones) -> retrieve with every strategy -> judge
// the pool -> compare, every intermediate file kept in one directory. Each stage
// is the real command (generate, retrieve, judge, compare) run with the flags
// written to DIR/stages.txt, so any stage can be rerun alone.
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
	// The history must be none of the stages' files.
	outs := []file{{"history", o.hist.file()}, {"html", o.htmlOut}}
	for _, name := range evaluate.Files {
		if o.Out != "" {
			outs = append(outs, file{"out", o.Out + string(os.PathSeparator) + name})
		}
	}
	if err := refuseOverwrite("evaluate", src, []file{{"kb", o.KB}, {"cases", o.Cases}}, outs); err != nil {
		return nil, err
	}
	return o, nil
}

// The options of each stage as its command's: the stage's options of
// evaluate.NewPlan on the command's defaults.

func retrieveStage(r evaluate.RetrieveStage) *retrieveOptions {
	return &retrieveOptions{kb: r.KB, cases: r.Cases, out: r.Out, run: r.Run}
}

func compareStage(s evaluate.CompareStage, comment commentFlags) *compareOptions {
	o := newCompareOptions()
	o.files, o.run.K, o.run.Resamples = s.Files, s.K, s.Resamples
	o.jsonOut, o.mdOut, o.perQuery, o.htmlOut = s.JSON, s.Markdown, s.PerQuery, s.HTML
	o.comment = comment
	return o
}

// args are the comment flags as a command line.
func (c *commentFlags) args() []string {
	a := []string{"--comment", c.mode, "--comment-mode", c.when, "--comment-key", c.key}
	if c.pr > 0 {
		a = append(a, "--pr", strconv.Itoa(c.pr))
	}
	return a
}

// runEvaluate is the evaluate command's run of its options.
func runEvaluate(ctx context.Context, f *Factory, o *evaluateOptions) error {
	env := f.Env
	f.secret(o.Retrieval.StoreAPIKey)
	in := o.In
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
	// history record: created now, so an unwritable one fails before any stage.
	final := atomicfile.NewSet()
	defer final.Abort()
	ws, err := final.AddAll(o.htmlOut)
	if err != nil {
		return err
	}
	// The stages run as typed calls with the Factory of a stage (no Action input
	// reaches them); each publishes what it did as the command would, but
	// retrieve, whose outputs and summary evaluate's own say.
	plan, sf := evaluate.NewPlan(&o.Options), f.stage()
	var used *judge.Result
	stages := plan.Stages(&o.Options, evaluate.Runners{
		Generate: func(ctx context.Context, g *evaluate.GenerateStage) error {
			return execGenerate(ctx, sf, g)
		},
		Retrieve: func(ctx context.Context, r evaluate.RetrieveStage) error {
			_, err := runRetrieve(ctx, sf, retrieveStage(r))
			return err
		},
		Judge: func(ctx context.Context, j evaluate.JudgeStage) (err error) {
			used, err = execJudge(ctx, sf, &j)
			return err
		},
		Compare: func(ctx context.Context, c evaluate.CompareStage) error {
			// The dashboard charts evaluate's runs from evaluate's history, under
			// this evaluation's fingerprint (known once the judge has run).
			ev := &overRuns{src: o.hist, fingerprint: func() fingerprint { return fingerprintOf(o.Fingerprint(plan.Names(), used)) }}
			return runCompare(ctx, sf, compareStage(c, o.comment), ev)
		},
	}, o.comment.args()...)
	var notes []string
	if o.Retrieval.StoreAPIKey != "" {
		notes = append(notes, "The Chroma API key is not written here: set CHROMA_API_KEY to rerun a retrieve stage.")
	}
	if err := evaluate.WriteStages(stagesOut, stages, notes...); err != nil {
		return err
	}
	if err := outs.Commit(); err != nil {
		return err
	}
	if err := evaluate.RunStages(ctx, stages, func(i, n int, s evaluate.Stage) {
		fmt.Fprintf(env.Stderr, "evaluate: stage %d/%d: %s\n", i, n, format.SanitizeText(s.String()))
	}); err != nil {
		return err
	}
	if ws[0] != nil {
		page, err := os.ReadFile(in("compare.html"))
		if err != nil {
			return fmt.Errorf("evaluate: --html: the compare stage's dashboard: %w", err)
		}
		if _, err := ws[0].Write(page); err != nil {
			return err
		}
	}
	// The history is appended before --html is published: its failure then
	// leaves no output of evaluate's own.
	// A record of command evaluate whose document is the compare stage's JSON
	// report (retrieval-gate/compare@1), so `report --history --command
	// evaluate` charts it like compare's runs, apart from them (their
	// fingerprints differ).
	var hist historyRun
	if o.hist != (historyFlags{}) {
		doc, err := os.ReadFile(in("compare.json"))
		if err != nil {
			return fmt.Errorf("evaluate: --history: compare's report: %w", err)
		}
		if hist, err = recordHistory(f, o.hist, "evaluate", fingerprintOf(o.Fingerprint(plan.Names(), used)), func(w io.Writer) error {
			_, err := w.Write(doc)
			return err
		}); err != nil {
			return err
		}
	}
	if err := final.Commit(); err != nil {
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

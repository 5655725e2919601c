package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/retrieval-gate/retrieval-gate/internal/atomicfile"
	"github.com/retrieval-gate/retrieval-gate/internal/format"
	"github.com/retrieval-gate/retrieval-gate/internal/metrics"
	"github.com/retrieval-gate/retrieval-gate/internal/retrieve"
)

// EvaluateCommand is `retrieval-gate evaluate`: the whole pipeline, KB (and
// optional cases, else generated ones) -> retrieve with every strategy -> judge
// the pool -> compare, every intermediate file kept in one directory. Each stage
// is the real command (generate, retrieve, judge, compare) run with the flags
// written to DIR/stages.txt, so any stage can be rerun alone.
type EvaluateCommand struct{}

func (c *EvaluateCommand) Name() string { return "evaluate" }
func (c *EvaluateCommand) Synopsis() string {
	return "the whole pipeline: (generate) -> retrieve with each strategy -> judge the pool -> compare"
}

type evaluateOptions struct {
	kb, cases, out                     string
	judgeURL, judgeModel               string
	genURL, genModel                   string
	rerankURL                          string
	store, chromaURL                   string
	embedder, embedderURL, embedderMdl string
	k, perLocale, repeat, concurrency  int
	maxRequests                        int64
	price                              string
	bootstrap                          int
	comment                            commentFlags // passed to the compare stage, under evaluate's own key
	history                            string       // --history: one record per run, command evaluate (evaluate_history.go)
	historyBranch                      string       // --history-branch (history_branch.go)
	htmlOut                            string       // --html: the dashboard, also written here
}

// evaluateInputs are evaluate's Action inputs. Its stages see none of them (each
// stage gets every flag it needs from evaluate): an input reaches only the
// command the step runs.
var evaluateInputs = commentInputs(actionInputs{
	"kb": "", "cases": "", "out": "", "judge-url": "", "judge-model": "", "generator-url": "", "generator-model": "",
	"rerank-url": "", "store": "", "chroma-url": "", "embedder": "", "embedder-url": "", "embedder-model": "", "k": "",
	"per-locale": "", "repeat": "", "concurrency": "", "max-requests": "", "price-per-1k": "", "bootstrap": "",
	"history": "", "history-branch": "", "html": "",
})

func (c *EvaluateCommand) parse(env *Env, args []string) (*evaluateOptions, error) {
	fs := newFlagSet(env, "evaluate")
	o := &evaluateOptions{}
	fs.StringVar(&o.kb, "kb", "", "knowledge base: JSONL file of cards or directory of Markdown cards (required)")
	fs.StringVar(&o.cases, "cases", "", "cases JSONL with the queries (default: generated from the KB with the generator)")
	fs.StringVar(&o.out, "out", "", "output `DIR`: every intermediate file and report (required)")
	fs.StringVar(&o.judgeURL, "judge-url", "", "OpenAI-compatible chat server of the judge (required)")
	fs.StringVar(&o.judgeModel, "judge-model", "", "judge model name")
	fs.StringVar(&o.genURL, "generator-url", "", "chat server of the query generator (default: --judge-url)")
	fs.StringVar(&o.genModel, "generator-model", "", "query generator model (default: --judge-model)")
	fs.StringVar(&o.rerankURL, "rerank-url", "", "TEI /rerank server: each strategy is also run reranked")
	fs.StringVar(&o.store, "store", "memory", "vector store of retrieve: memory or chroma")
	fs.StringVar(&o.chromaURL, "chroma-url", "", "Chroma server URL (implies --store chroma)")
	fs.StringVar(&o.embedder, "embedder", "hash", "embedder of retrieve: hash, openai or ollama")
	fs.StringVar(&o.embedderURL, "embedder-url", "", "embedding server URL")
	fs.StringVar(&o.embedderMdl, "embedder-model", "", "embedding model name")
	fs.IntVar(&o.k, "k", 10, "retrieval depth, pool depth and compare cutoff")
	fs.IntVar(&o.perLocale, "per-locale", 20, "documents sampled per locale when generating")
	fs.IntVar(&o.repeat, "repeat", 1, "judgments per pair")
	fs.IntVar(&o.concurrency, "concurrency", 4, "chat requests in flight at once")
	fs.Int64Var(&o.maxRequests, "max-requests", 0, "request budget of the judge (0: no limit)")
	fs.StringVar(&o.price, "price-per-1k", "", "judge price per 1,000 tokens, PRICE or PROMPT,COMPLETION")
	fs.IntVar(&o.bootstrap, "bootstrap", metrics.DefaultResamples, fmt.Sprintf("compare's bootstrap resamples (at most %d)", metrics.MaxResamples))
	o.comment.register(fs, evaluateCommentKey)
	fs.StringVar(&o.history, "history", "", "append this run (compare's JSON report, the fingerprint of KB, cases or generator, strategies, judge prompt and model) to the history: a `DIR` (history.jsonl in it) or a FILE.jsonl")
	fs.StringVar(&o.historyBranch, "history-branch", "", historyBranchUsage)
	fs.StringVar(&o.htmlOut, "html", "", "also write the dashboard (DIR/compare.html) to this self-contained HTML `FILE`")
	src, err := parseFlags(fs, env, args, evaluateInputs)
	if err != nil {
		return nil, err
	}
	if err := o.comment.validate("evaluate", src); err != nil {
		return nil, err
	}
	switch {
	case o.kb == "":
		return nil, usagef("evaluate: --kb is required")
	// The stages' own checks, made here so that a bad value is named as evaluate
	// got it (its stages see no Action input) and refused before any stage runs.
	case !slices.Contains(stores, o.store):
		return nil, src.refuse("evaluate", "store", "must be memory or chroma")
	case !slices.Contains(embedders, o.embedder):
		return nil, src.refuse("evaluate", "embedder", "must be hash, openai or ollama")
	case o.k < 1 || o.k > 1000:
		return nil, src.refuse("evaluate", "k", "must be between 1 and 1000")
	case o.perLocale < 1:
		return nil, src.refuse("evaluate", "per-locale", "must be at least 1")
	case o.repeat < 1 || o.repeat > 10:
		return nil, src.refuse("evaluate", "repeat", "must be between 1 and 10")
	case o.concurrency < 1 || o.concurrency > 256:
		return nil, src.refuse("evaluate", "concurrency", "must be between 1 and 256")
	case o.maxRequests < 0:
		return nil, src.refuse("evaluate", "max-requests", "must be 0 (no limit) or more")
	case o.bootstrap < 1 || o.bootstrap > metrics.MaxResamples:
		return nil, src.refuse("evaluate", "bootstrap", fmt.Sprintf("must be between 1 and %d", metrics.MaxResamples))
	case o.out == "":
		return nil, usagef("evaluate: --out DIR is required")
	case o.judgeURL == "":
		return nil, usagef("evaluate: --judge-url is required")
	}
	if _, err := parsePrice(o.price); err != nil {
		return nil, src.refuseErr("evaluate", "price-per-1k", err)
	}
	if o.genURL == "" {
		o.genURL = o.judgeURL
	}
	if o.genModel == "" {
		o.genModel = o.judgeModel
	}
	if err := validateHistoryBranch(env, src, "evaluate", o.historyBranch); err != nil {
		return nil, err
	}
	if err := refuseOverwrite("evaluate", src, []file{{"kb", o.kb}, {"cases", o.cases}}, evaluateOutputs(o)); err != nil {
		return nil, err
	}
	return o, nil
}

// stage is one command of the pipeline.
type stage struct {
	cmd  Command
	args []string
}

func (s stage) String() string {
	parts := []string{"retrieval-gate", s.cmd.Name()}
	for _, a := range s.args {
		parts = append(parts, shellQuote(a))
	}
	return strings.Join(parts, " ")
}

// shellQuote quotes a for a POSIX shell when it needs it.
func shellQuote(a string) string {
	if a != "" && strings.IndexFunc(a, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./:=+,@%", r))
	}) < 0 {
		return a
	}
	return "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
}

func (c *EvaluateCommand) Run(ctx context.Context, f *Factory, args []string) error {
	env := f.Env
	o, err := c.parse(env, args)
	if err != nil {
		return err
	}
	in := func(name string) string { return filepath.Join(o.out, name) }
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
	ws, err := addOutputs(final, o.htmlOut)
	if err != nil {
		return err
	}
	var stages []stage
	cases := o.cases
	if cases == "" {
		cases = in("cases.jsonl")
		g := []string{"--kb", o.kb, "--out", cases, "--per-locale", strconv.Itoa(o.perLocale),
			"--generator-url", o.genURL, "--concurrency", strconv.Itoa(o.concurrency)}
		if o.genModel != "" {
			g = append(g, "--generator-model", o.genModel)
		}
		stages = append(stages, stage{&GenerateCommand{}, g})
	}
	var runNames, runFiles []string
	variants := []string{""}
	if o.rerankURL != "" {
		variants = append(variants, o.rerankURL)
	}
	for _, rr := range variants {
		for _, s := range retrieve.Strategies {
			name := s
			if rr != "" {
				name += "+rerank"
			}
			file := in("run-" + name + ".jsonl")
			a := []string{"--kb", o.kb, "--cases", cases, "--out", file, "--strategy", s, "--k", strconv.Itoa(o.k),
				"--store", o.store, "--embedder", o.embedder}
			for _, f := range []struct{ name, v string }{{"chroma-url", o.chromaURL}, {"embedder-url", o.embedderURL}, {"embedder-model", o.embedderMdl}, {"rerank-url", rr}} {
				if f.v != "" {
					a = append(a, "--"+f.name, f.v)
				}
			}
			stages = append(stages, stage{&RetrieveCommand{}, a})
			runNames, runFiles = append(runNames, name), append(runFiles, file)
		}
	}
	j := []string{"--kb", o.kb, "--k", strconv.Itoa(o.k), "--judge-url", o.judgeURL, "--repeat", strconv.Itoa(o.repeat),
		"--concurrency", strconv.Itoa(o.concurrency), "--max-requests", strconv.FormatInt(o.maxRequests, 10),
		"--cache", in("judge-cache.jsonl"), "--qrels", in("qrels.txt"), "--judgments", in("judgments.jsonl"), "--json", in("judge.json")}
	if o.judgeModel != "" {
		j = append(j, "--judge-model", o.judgeModel)
	}
	if o.price != "" {
		j = append(j, "--price-per-1k", o.price)
	}
	cmp := []string{"--qrels", in("qrels.txt"), "--k", strconv.Itoa(o.k), "--bootstrap", strconv.Itoa(o.bootstrap),
		"--json", in("compare.json"), "--markdown", in("compare.md"), "--per-query", in("per-query.jsonl"), "--html", in("compare.html"),
		"--comment", o.comment.mode, "--comment-mode", o.comment.when, "--comment-key", o.comment.key}
	if o.comment.pr > 0 {
		cmp = append(cmp, "--pr", strconv.Itoa(o.comment.pr))
	}
	for i, n := range runNames {
		j = append(j, "--run", n+"="+runFiles[i])
		cmp = append(cmp, "--run", n+"="+runFiles[i])
	}
	stages = append(stages, stage{&JudgeCommand{}, j}, stage{&CompareCommand{}, cmp})

	fmt.Fprintln(stagesOut, "# The stages of this evaluation, in order; each can be rerun alone.")
	for _, s := range stages {
		fmt.Fprintln(stagesOut, s.String())
	}
	if err := outs.Commit(); err != nil {
		return err
	}
	sf := f.stage()
	sf.evaluateRuns = newEvaluateRuns(o, runNames, in)
	for i, s := range stages {
		fmt.Fprintf(env.Stderr, "evaluate: stage %d/%d: %s\n", i+1, len(stages), format.SanitizeText(s.String()))
		if err := s.cmd.Run(ctx, sf, s.args); err != nil {
			return fmt.Errorf("evaluate: stage %d (%s) failed: %w", i+1, s.cmd.Name(), err)
		}
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
	hist, err := recordEvaluateHistory(ctx, env, o, runNames, in)
	if err != nil {
		return err
	}
	if err := final.Commit(); err != nil {
		return err
	}
	fmt.Fprintf(env.Stderr, "evaluate: reports in %s (compare.html, compare.json, compare.md, judge.json); stages in %s\n", format.SanitizeText(o.out), format.SanitizeText(in("stages.txt")))
	// The stages set their outputs (judge: qrels, judgments; compare: json,
	// recommended) and compare's job summary and comment; evaluate adds its DIR,
	// and the history branch's notice or warning.
	pub := pathOutputs(map[string]string{"out": o.out})
	writeHistoryBranch(ctx, f, hist, in("compare.html"), &pub)
	f.Publisher().Publish(ctx, pub)
	return nil
}

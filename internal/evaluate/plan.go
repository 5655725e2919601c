package evaluate

import (
	"fmt"
	"path/filepath"
	"strconv"
	"time"

	"github.com/retrieval-gate/retrieval-gate/internal/compare"
	"github.com/retrieval-gate/retrieval-gate/internal/generate"
	"github.com/retrieval-gate/retrieval-gate/internal/httpretry"
	"github.com/retrieval-gate/retrieval-gate/internal/judge"
	"github.com/retrieval-gate/retrieval-gate/internal/llm"
	"github.com/retrieval-gate/retrieval-gate/internal/metrics"
	"github.com/retrieval-gate/retrieval-gate/internal/option"
	"github.com/retrieval-gate/retrieval-gate/internal/retrieve"
)

// LLM is one chat server of a stage: the judge's or the generator's.
type LLM = llm.Server

// Options are evaluate's options, each set once: every stage's options come
// from them (Plan), and only from them.
type Options struct {
	KB    string
	Cases string // "": generated from the KB
	Out   string // the directory of every intermediate file and report
	// Judge and Generator are the chat servers; the generator's URL and model
	// default to the judge's (Defaults). Concurrency and MaxRequests are
	// Concurrency and MaxRequests below.
	JudgeURL, JudgeModel         string
	GeneratorURL, GeneratorModel string
	RerankURL                    string // "": no reranked runs
	// Retrieval is the store (and its URL) and the embedder of every retrieve
	// stage; each stage adds its strategy, k and reranker.
	Retrieval retrieve.RunOptions
	// ChromaURL is the Chroma URL as given, for the stages' command lines (a
	// URL read from the environment is left to the environment there).
	ChromaURL                         string
	K, PerLocale, Repeat, Concurrency int
	MaxRequests                       int64
	Price                             string // the judge's price per 1,000 tokens, as given
	Bootstrap                         int
	// Batch: generate and judge through the server's Batch API (one batch
	// each, resumable: the state files are kept in Out), polled from
	// BatchPoll on.
	Batch     bool
	BatchPoll time.Duration
}

// Validate checks the options the stages would refuse, before any stage runs,
// so that a bad value is named as evaluate got it. The retrieval's store and
// embedder are checked against their registries by the caller.
func (o *Options) Validate() error {
	switch {
	case o.KB == "":
		return option.Required("kb", "")
	case o.K < 1 || o.K > 1000:
		return option.Refuse("k", "must be between 1 and 1000")
	case o.PerLocale < 1:
		return option.Refuse("per-locale", "must be at least 1")
	case o.Repeat < 1 || o.Repeat > 10:
		return option.Refuse("repeat", "must be between 1 and 10")
	case o.Concurrency < 1 || o.Concurrency > 256:
		return option.Refuse("concurrency", "must be between 1 and 256")
	case o.MaxRequests < 0:
		return option.Refuse("max-requests", "must be 0 (no limit) or more")
	case o.Batch && (o.BatchPoll <= 0 || o.BatchPoll > time.Hour):
		return option.Refuse("batch-poll", "must be between 1ns and 1h")
	case o.Bootstrap < 1 || o.Bootstrap > metrics.MaxResamples:
		return option.Refuse("bootstrap", fmt.Sprintf("must be between 1 and %d", metrics.MaxResamples))
	case o.Out == "":
		return option.Required("out", "DIR")
	case o.JudgeURL == "":
		return option.Required("judge-url", "")
	}
	if _, err := judge.ParsePrice(o.Price); err != nil {
		return option.Invalid("price-per-1k", err)
	}
	if o.GeneratorURL == "" {
		o.GeneratorURL = o.JudgeURL
	}
	if o.GeneratorModel == "" {
		o.GeneratorModel = o.JudgeModel
	}
	return nil
}

// In is the path of file name in the evaluation's directory.
func (o *Options) In(name string) string { return filepath.Join(o.Out, name) }

// GenerateStage is the generate stage's options: the generate command's.
type GenerateStage = generate.RunOptions

// RetrieveStage is one retrieve stage's options: its run's name, its files
// and the options of the run.
type RetrieveStage struct {
	Name           string
	KB, Cases, Out string
	Run            retrieve.RunOptions
}

// JudgeStage is the judge stage's options, the judge command's: the runs
// pooled, in order.
type JudgeStage = judge.RunOptions

// CompareStage is the compare stage's options: its files, the options of the
// comparison (compare's defaults, evaluate's k and resamples) and its outputs.
type CompareStage struct {
	Files                          compare.Files
	Run                            compare.Options
	JSON, Markdown, PerQuery, HTML string
}

// Plan is every stage's options, in the order the stages run.
type Plan struct {
	Generate  *GenerateStage // nil when the cases are given
	Retrieves []RetrieveStage
	Judge     JudgeStage
	Compare   CompareStage
}

// Names are the runs' names, one per retrieve stage.
func (p *Plan) Names() []string {
	out := make([]string, len(p.Retrieves))
	for i, r := range p.Retrieves {
		out[i] = r.Name
	}
	return out
}

// NewPlan is the stages' options from evaluate's (validated) options: every
// option of evaluate reaches its stages here, and only here.
func NewPlan(o *Options) *Plan {
	p := &Plan{}
	cases := o.Cases
	if cases == "" {
		cases = o.In("cases.jsonl")
		g := generate.NewRunOptions()
		g.KB, g.Out, g.PerLocale, g.LLM = o.KB, cases, o.PerLocale, LLM{URL: o.GeneratorURL, Model: o.GeneratorModel, Concurrency: o.Concurrency}
		if o.Batch {
			g.Batch, g.BatchPoll = true, o.BatchPoll
		}
		p.Generate = g
	}
	j := judge.NewRunOptions()
	j.KB, j.K, j.Repeat, j.LLM = o.KB, o.K, o.Repeat, LLM{URL: o.JudgeURL, Model: o.JudgeModel, Concurrency: o.Concurrency, MaxRequests: o.MaxRequests}
	j.Price, _ = judge.ParsePrice(o.Price) // checked by Validate
	j.Cache, j.QrelsOut, j.JudgmentsOut, j.JSONOut = o.In("judge-cache.jsonl"), o.In("qrels.txt"), o.In("judgments.jsonl"), o.In("judge.json")
	if o.Batch {
		j.Batch, j.BatchPoll = true, o.BatchPoll
	}
	p.Judge = *j
	p.Compare = CompareStage{Files: compare.Files{Qrels: o.In("qrels.txt"), Queries: cases}, Run: compare.NewOptions(),
		JSON: o.In("compare.json"), Markdown: o.In("compare.md"), PerQuery: o.In("per-query.jsonl"), HTML: o.In("compare.html")}
	p.Compare.Run.K, p.Compare.Run.Resamples = o.K, o.Bootstrap
	for _, run := range Runs(o.RerankURL != "") {
		r := RetrieveStage{Name: run.Name, KB: o.KB, Cases: cases, Out: o.In(RunFile(run.Name)), Run: o.Retrieval}
		r.Run.Strategy, r.Run.K = run.Strategy, o.K
		if run.Rerank {
			r.Run.RerankURL = o.RerankURL
		}
		p.Retrieves = append(p.Retrieves, r)
		p.Judge.Runs = append(p.Judge.Runs, judge.RunFile{Name: run.Name, Path: r.Out})
		p.Compare.Files.Runs = append(p.Compare.Files.Runs, compare.RunFile{Name: run.Name, Path: r.Out})
	}
	return p
}

// Args are the stages' command lines (without the command's name), in order;
// compareFlags (the comment's flags, which the caller owns) go on compare's
// line before its runs. The Chroma API key is never written: a rerun reads it from the
// environment (stages.txt says so); nor are a server URL's credentials (its
// user information, a key in its query: httpretry.RedactURL), which are ***.
// The lines are written (stages.txt) and shown, never run.
func (p *Plan) Args(o *Options, compareFlags ...string) [][]string {
	var out [][]string
	if g := p.Generate; g != nil {
		a := []string{"--kb", g.KB, "--out", g.Out, "--per-locale", strconv.Itoa(g.PerLocale),
			"--generator-url", httpretry.RedactURL(g.LLM.URL), "--concurrency", strconv.Itoa(g.LLM.Concurrency)}
		if g.LLM.Model != "" {
			a = append(a, "--generator-model", g.LLM.Model)
		}
		if g.Batch {
			a = append(a, "--batch", "--batch-poll", g.BatchPoll.String())
		}
		out = append(out, a)
	}
	for _, r := range p.Retrieves {
		a := []string{"--kb", r.KB, "--cases", r.Cases, "--out", r.Out, "--strategy", r.Run.Strategy, "--k", strconv.Itoa(r.Run.K),
			"--store", r.Run.Store, "--embedder", r.Run.Embedder}
		for _, f := range []struct{ name, v string }{{"chroma-url", o.ChromaURL}, {"chroma-tenant", r.Run.StoreTenant}, {"chroma-database", r.Run.StoreDatabase},
			{"chroma-token-header", r.Run.StoreTokenHeader}, {"embedder-url", r.Run.EmbedderURL}, {"embedder-model", r.Run.EmbedderModel}, {"rerank-url", r.Run.RerankURL}} {
			if f.v != "" && r.Run.FromEnv[f.name] == "" { // a value of the environment is left to it
				a = append(a, "--"+f.name, httpretry.RedactURL(f.v))
			}
		}
		if r.Run.CreateDatabase {
			a = append(a, "--chroma-create-database")
		}
		out = append(out, a)
	}
	j, c := p.Judge, p.Compare
	ja := []string{"--kb", j.KB, "--k", strconv.Itoa(j.K), "--judge-url", httpretry.RedactURL(j.LLM.URL), "--repeat", strconv.Itoa(j.Repeat),
		"--concurrency", strconv.Itoa(j.LLM.Concurrency), "--max-requests", strconv.FormatInt(j.LLM.MaxRequests, 10),
		"--cache", j.Cache, "--qrels", j.QrelsOut, "--judgments", j.JudgmentsOut, "--json", j.JSONOut}
	if j.LLM.Model != "" {
		ja = append(ja, "--judge-model", j.LLM.Model)
	}
	if o.Price != "" {
		ja = append(ja, "--price-per-1k", o.Price)
	}
	if j.Batch {
		ja = append(ja, "--batch", "--batch-poll", j.BatchPoll.String())
	}
	ca := []string{"--qrels", c.Files.Qrels, "--queries", c.Files.Queries, "--k", strconv.Itoa(c.Run.K), "--bootstrap", strconv.Itoa(c.Run.Resamples),
		"--json", c.JSON, "--markdown", c.Markdown, "--per-query", c.PerQuery, "--html", c.HTML}
	ca = append(ca, compareFlags...)
	for i, r := range j.Runs {
		ja = append(ja, "--run", r.Name+"="+r.Path)
		ca = append(ca, "--run", r.Name+"="+c.Files.Runs[i].Path)
	}
	return append(out, ja, ca)
}

// Stages are the plan's stages in order, each with its command line (Args,
// compareFlags on compare's).
func (p *Plan) Stages(o *Options, compareFlags ...string) []Stage {
	lines := p.Args(o, compareFlags...)
	var out []Stage
	if p.Generate != nil {
		out = append(out, Stage{Name: "generate", Args: lines[0]})
		lines = lines[1:]
	}
	for i := range p.Retrieves {
		out = append(out, Stage{Name: "retrieve", Args: lines[i]})
	}
	lines = lines[len(p.Retrieves):]
	return append(out, Stage{Name: "judge", Args: lines[0]}, Stage{Name: "compare", Args: lines[1]})
}

// Fingerprint is the evaluation's fingerprint (Fingerprint) from its options,
// the names of its runs and the judge stage's result.
func (o *Options) Fingerprint(runs []string, j *judge.Result) (inputs, params map[string]string) {
	return Fingerprint(FingerprintOf{KB: o.KB, Cases: o.Cases, K: o.K, Repeat: o.Repeat, Bootstrap: o.Bootstrap, Runs: runs, Judge: j,
		Store: o.Retrieval.Store, Embedder: o.Retrieval.Embedder, EmbedderModel: o.Retrieval.EmbedderModel, Rerank: o.RerankURL != "",
		GeneratorModel: o.GeneratorModel, PerLocale: o.PerLocale})
}

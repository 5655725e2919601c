package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"strconv"
	"strings"

	"github.com/retrieval-gate/retrieval-gate/internal/format"
	"github.com/retrieval-gate/retrieval-gate/internal/gate"
	"github.com/retrieval-gate/retrieval-gate/internal/httpretry"
	"github.com/retrieval-gate/retrieval-gate/internal/option"
	"github.com/retrieval-gate/retrieval-gate/internal/outcome"
	"github.com/retrieval-gate/retrieval-gate/internal/progress"
	"github.com/retrieval-gate/retrieval-gate/internal/publish"
	"github.com/retrieval-gate/retrieval-gate/internal/report/summary"
	"github.com/retrieval-gate/retrieval-gate/internal/retrieve"
	"github.com/retrieval-gate/retrieval-gate/internal/retrieve/embed"
	"github.com/retrieval-gate/retrieval-gate/internal/retrieve/store"
)

// NewCmdRetrieve is `retrieval-gate retrieve`: run the cases' queries live
// against the KB and write the cases with their `retrieved` lists filled.
// runF, when set, replaces its run (a test of the parsing alone).
func NewCmdRetrieve(f *Factory, runF func(context.Context, *retrieveOptions) error) *Command {
	return newCommand(f, "retrieve", "run the cases' queries against the KB (memory or Chroma) and fill `retrieved`", parseRetrieve, func(ctx context.Context, o *retrieveOptions) error { return runRetrieveCommand(ctx, f, o) }, runF)
}

// retrieveOptions are the parsed and validated flags of retrieve: the paths,
// and the options of the run, each set once, in retrieve.RunOptions, resolved
// at parse time (retrieve's Resolve, with the environment's values).
type retrieveOptions struct {
	kb, cases, out string
	run            retrieve.RunOptions
	src            *sources // where the values came from, for the run's refusals
}

// exactCheckFlag is --exact-check: a number of queries, all, or 0 (off).
type exactCheckFlag struct{ n *int }

func (f exactCheckFlag) String() string {
	switch {
	case f.n == nil || *f.n == 0:
		return ""
	case *f.n == retrieve.ExactAll:
		return "all"
	}
	return strconv.Itoa(*f.n)
}

func (f exactCheckFlag) Set(v string) error {
	v = strings.TrimSpace(v)
	switch strings.ToLower(v) {
	case "all":
		*f.n = retrieve.ExactAll
		return nil
	case "", "0", "off":
		*f.n = 0
		return nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		return fmt.Errorf("want a number of queries (at least 1), all or 0, got %q", v)
	}
	*f.n = n
	return nil
}

// annFloorFlag is --min-ann-recall: a floor in [0,1], none or empty is off.
type annFloorFlag struct{ r *retrieve.RunOptions }

func (f annFloorFlag) String() string {
	if f.r == nil || !f.r.MinANNRecallSet {
		return ""
	}
	return format.Full(f.r.MinANNRecall)
}

func (f annFloorFlag) Set(v string) error {
	fl, err := gate.ParseFloor(v)
	if err != nil {
		return err
	}
	f.r.MinANNRecall, f.r.MinANNRecallSet = fl.Value, fl.Set
	return nil
}

// retrieveInputs are retrieve's Action inputs.
var retrieveInputs = actionInputs{
	"kb": "", "cases": "", "out": "", "store": "", "chroma-url": "", "collection": "", "embedder": "", "embedder-url": "",
	"embedder-model": "", "strategy": "", "rerank-url": "", "k": "", "all-locales": "",
	"chroma-tenant": "", "chroma-database": "", "chroma-api-key": "", "chroma-token-header": "", "chroma-create-database": "",
	"exact-check": "", "min-ann-recall": "",
}

// registerChromaFlags adds the server settings of a store that takes them
// (tenant, database, API key, token header) to fs, bound to r; retrieve and
// evaluate share them.
func registerChromaFlags(fs *flag.FlagSet, r *retrieve.RunOptions) {
	fs.StringVar(&r.StoreTenant, "chroma-tenant", "", "Chroma tenant (default $CHROMA_TENANT, else default_tenant)")
	fs.StringVar(&r.StoreDatabase, "chroma-database", "", "Chroma database (default $CHROMA_DATABASE, else default_database); a missing one is refused unless --chroma-create-database")
	fs.StringVar(&r.StoreAPIKey, "chroma-api-key", "", "Chroma token or Chroma Cloud API key (default $CHROMA_API_KEY, which is safer: a flag shows in the process list); sent only to the Chroma server, never printed")
	fs.StringVar(&r.StoreTokenHeader, "chroma-token-header", "", "header of the token: Authorization (as \"Bearer <key>\") or X-Chroma-Token (default $CHROMA_AUTH_TOKEN_TRANSPORT_HEADER, else X-Chroma-Token on Chroma Cloud and Authorization elsewhere)")
	fs.BoolVar(&r.CreateDatabase, "chroma-create-database", false, "create the Chroma tenant and database when they do not exist (default: refuse)")
}

func parseRetrieve(env *Env, args []string) (*retrieveOptions, error) {
	fs := newFlagSet(env, "retrieve")
	o := &retrieveOptions{}
	r := &o.run
	fs.StringVar(&o.kb, "kb", "", "knowledge base: JSONL file of cards or directory of Markdown cards (required)")
	fs.StringVar(&o.cases, "cases", "", "cases JSONL whose queries are run (required; - reads standard input; a directory or glob pattern: its shards)")
	fs.StringVar(&o.out, "out", "", "write the cases to `FILE`, each with its retrieved entries filled (required)")
	fs.StringVar(&r.Store, "store", retrieve.DefaultStore, "vector store: "+store.Help())
	fs.StringVar(&r.StoreURL, "chroma-url", "", "Chroma server `URL` (v2 API); implies --store chroma (default $CHROMA_URL when --store chroma)")
	fs.StringVar(&r.Collection, "collection", "", "Chroma collection to keep and reuse while its fingerprint matches (default: a temporary one)")
	fs.StringVar(&r.Embedder, "embedder", retrieve.DefaultEmbedder, "embedder: "+embed.Help())
	fs.StringVar(&r.EmbedderURL, "embedder-url", "", "embedding server `URL` (openai: default https://api.openai.com/v1; ollama: default http://127.0.0.1:11434)")
	fs.StringVar(&r.EmbedderModel, "embedder-model", "", "embedding model name (required for ollama and api.openai.com)")
	fs.StringVar(&r.Strategy, "strategy", retrieve.DefaultStrategy, "dense, lexical (BM25) or hybrid (reciprocal rank fusion of both)")
	fs.StringVar(&r.RerankURL, "rerank-url", "", "cross-encoder reranker speaking the TEI /rerank protocol (optional)")
	fs.IntVar(&r.K, "k", retrieve.DefaultK, "chunks kept per case (≥ 1)")
	fs.BoolVar(&r.AllLocales, "all-locales", false, "search every locale (default: a case with a locale searches only cards of that locale)")
	registerChromaFlags(fs, r)
	fs.Var(exactCheckFlag{&r.ExactCheck}, "exact-check", "check the vector store's answers against exact nearest-neighbour search over the vectors it holds, read back, on `N` queries (a sample by case id) or all; reports the index's recall with its 95% interval (dense and hybrid)")
	fs.Var(annFloorFlag{r}, "min-ann-recall", "gate: the index's mean recall against exact search (--exact-check) must be at least `F`, in [0,1]; exit 1 below it, the output still written; none or empty is off")
	src, err := parseFlags(fs, env, args, retrieveInputs)
	if err != nil {
		return nil, err
	}
	o.src = src
	for _, req := range []struct{ name, v string }{{"kb", o.kb}, {"cases", o.cases}, {"out", o.out}} {
		if req.v == "" {
			return nil, usagef("retrieve: --%s is required", req.name)
		}
	}
	if err := refuseOverwrite("retrieve", src, []file{{"cases", o.cases}, {"kb", o.kb}}, []file{{"out", o.out}}); err != nil {
		return nil, err
	}
	if r.K == 0 { // given: 0 is not the default here
		return nil, src.option("retrieve", option.Refuse("k", "must be at least 1"))
	}
	if err := r.Resolve(retrievalEnv(env), src.given("store")); err != nil {
		return nil, src.option("retrieve", err)
	}
	return o, nil
}

// retrievalEnv is what a retrieval takes from the process environment: the
// variables the registered stores and embedders name (retrieve.Variables),
// read here, in the front end, and handed to retrieve's Resolve as values.
func retrievalEnv(env *Env) retrieve.Env {
	out := retrieve.Env{}
	for _, name := range retrieve.Variables() {
		if v := env.Getenv(name); v != "" {
			out[name] = v
		}
	}
	return out
}

// runRetrieve runs retrieveFiles on o's files, its progress on stderr
// (evaluate's retrieve stages are evaluate.Run's, evaluateFront their front end).
func runRetrieve(ctx context.Context, f *Factory, o *retrieveOptions) (*retrieve.RunResult, error) {
	env := f.Env
	opt := o.run
	prog := lazyProgress(f, "retrieve: indexing chunks")
	opt.Logf, opt.Progress = f.logf("retrieve"), prog.Update
	res, err := retrieveFiles(ctx, o.kb, o.cases, o.out, env.Stdin, opt)
	prog.Finish()
	if errors.Is(err, context.Canceled) {
		return nil, interruptedf("retrieve: interrupted, nothing written: %w", err)
	}
	if err != nil {
		return nil, notCases(o.cases, o.src.option("retrieve", err))
	}
	fmt.Fprintf(env.Stderr, "retrieve: %d cases written to %s\n", res.Cases, format.SanitizeText(o.out))
	if res.ANN != nil {
		fmt.Fprintf(env.Stderr, "retrieve: %s\n", summary.ANNCheck(res.ANN))
		if g := res.ANN.Gate; g.Status != outcome.Off {
			fmt.Fprintf(env.Stderr, "retrieve: %s\n", summary.ANNGate(g))
		}
	}
	return res, nil
}

// lazyProgress is a step's progress on the Factory's standard error (the bar
// on the terminal itself, when standard error is one), started at its first
// update.
func lazyProgress(f *Factory, label string) *progress.Progress {
	return progress.Lazy(f.Env.Stderr, f.terminal, label)
}

// logf is a run's log on standard error, each line after "cmd: ".
func (f *Factory) logf(cmd string) func(string, ...any) {
	return func(format string, args ...any) {
		fmt.Fprintf(f.Env.Stderr, "%s: %s\n", cmd, httpretry.RedactText(fmt.Sprintf(format, args...), f.secrets()...))
	}
}

// given reports that flag n was given, on the command line or as an Action input.
func (s *sources) given(n string) bool {
	if s == nil {
		return false
	}
	if _, ok := s.inputs[n]; ok {
		return true
	}
	g := false
	s.fs.Visit(func(f *flag.Flag) { g = g || f.Name == n })
	return g
}

// runRetrieveCommand is the retrieve command's run of its options.
func runRetrieveCommand(ctx context.Context, f *Factory, o *retrieveOptions) error {
	f.secret(o.run.StoreAPIKey)
	f.urlSecrets(o.run.StoreURL, o.run.EmbedderURL, o.run.RerankURL)
	res, err := runRetrieve(ctx, f, o)
	if err != nil {
		return err
	}
	pub := publish.PathOutputs(map[string]string{"out": o.out})
	pub.Outputs["cases"] = strconv.Itoa(res.Cases)
	pub.Outputs["strategy"] = res.Strategy
	annOutputs(pub.Outputs, res.ANN)
	pub.Mode = publish.ModeNever
	pub.Markdown = summary.Retrieve(res, o.out)
	f.Publisher().Publish(ctx, pub)
	if res.ANN != nil {
		return gateError(outcome.Gates{res.ANN.Gate}.Failed())
	}
	return nil
}

// annOutputs adds the step outputs of retrieve's exact check: ann-recall (the
// index's mean recall against exact search, "" without a checked query),
// ann-recall-n (the queries checked) and, when --min-ann-recall is set,
// verdict (pass or fail). Nothing without --exact-check.
func annOutputs(out map[string]string, c *retrieve.ANNCheck) {
	if c == nil {
		return
	}
	out["ann-recall"], out["ann-recall-n"] = "", strconv.FormatInt(c.N, 10)
	if c.N > 0 {
		out["ann-recall"] = format.Full(c.Recall)
	}
	if c.Gate.Status != outcome.Off {
		out["verdict"] = string(c.Gate.Status)
	}
}

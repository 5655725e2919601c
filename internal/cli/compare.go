package cli

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/retrieval-gate/retrieval-gate/internal/atomicfile"
	"github.com/retrieval-gate/retrieval-gate/internal/compare"
	"github.com/retrieval-gate/retrieval-gate/internal/dataset"
	"github.com/retrieval-gate/retrieval-gate/internal/metrics"
	"github.com/retrieval-gate/retrieval-gate/internal/report"
)

// CompareCommand is `retrieval-gate compare`: graded-relevance comparison of
// retrieval strategies on the same queries. It has no gate: it exits 0 unless the
// command line or an input is bad (2).
type CompareCommand struct{}

func (c *CompareCommand) Name() string { return "compare" }
func (c *CompareCommand) Synopsis() string {
	return "compare retrieval strategies on graded qrels (nDCG, MAP, ... with CIs and significance)"
}

// runFlag collects repeated --run NAME=FILE (an Action input may hold several,
// one per line).
type runFlag struct {
	names, files []string
}

func (f *runFlag) String() string { return strings.Join(f.names, ",") }

func (f *runFlag) Set(v string) error {
	for _, item := range strings.Split(v, "\n") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		name, file, ok := strings.Cut(item, "=")
		name = strings.TrimSpace(name)
		file = strings.TrimSpace(file)
		if !ok || name == "" || file == "" {
			return fmt.Errorf("want NAME=FILE, got %q", item)
		}
		if name == compare.NoClearWinner {
			return fmt.Errorf("%q is reserved for the recommendation; pick another name", name)
		}
		for i, n := range f.names {
			if n == name {
				return fmt.Errorf("duplicate strategy name %q (files %s and %s)", name, f.files[i], file)
			}
		}
		f.names = append(f.names, name)
		f.files = append(f.files, file)
	}
	return nil
}

// gainFlag is --gain exp|linear.
type gainFlag struct{ g metrics.Gain }

func (f *gainFlag) String() string { return f.g.String() }
func (f *gainFlag) Set(v string) error {
	switch v {
	case "exp":
		f.g = metrics.GainExp
	case "linear":
		f.g = metrics.GainLinear
	default:
		return fmt.Errorf("want exp or linear, got %q", v)
	}
	return nil
}

func (c *CompareCommand) Run(ctx context.Context, env *Env, args []string) error {
	fs := newFlagSet(env, "compare")
	qrelsPath := fs.String("qrels", "", "qrels `FILE`: TREC \"qid iter docid rel\" (rel 0-3) or JSONL {\"query_id\",\"doc_id\",\"relevance\"} (required)")
	var runs runFlag
	fs.Var(&runs, "run", "NAME=FILE: a TREC run or a cases JSONL; repeat for each strategy (required)")
	k := fs.Int("k", 10, "cutoff")
	gain := &gainFlag{g: metrics.GainExp}
	fs.Var(gain, "gain", "DCG gain: exp (2^rel - 1, the default) or linear (rel, as trec_eval)")
	level := fs.Int("relevant-level", 2, "a document is relevant when rel >= this level (precision, recall, MAP, MRR, hit)")
	baseline := fs.String("baseline", "", "the strategy the paired comparisons are against (default: the first --run)")
	resamples := fs.Int("bootstrap", 10000, "resamples for the confidence intervals and the randomization test")
	seed := fs.String("seed", strconv.FormatUint(metrics.DefaultSeed, 10), "seed of the resampling (reports are reproducible)")
	jsonOut := fs.String("json", "", "write the JSON report (retrieval-gate/compare@1) here")
	mdOut := fs.String("markdown", "", "write the Markdown report here")
	perQuery := fs.String("per-query", "", "write per-query metrics here (JSONL)")
	if err := parseFlags(fs, env, args); err != nil {
		return err
	}
	switch {
	case *qrelsPath == "":
		return usagef("compare: --qrels is required")
	case len(runs.names) == 0:
		return usagef("compare: --run NAME=FILE is required (repeat it for each strategy)")
	case *k < 1 || *k > 100000:
		return usagef("compare: --k must be between 1 and 100000, got %d", *k)
	case *level < 1 || *level > dataset.MaxRelevance:
		return usagef("compare: --relevant-level must be between 1 and %d, got %d", dataset.MaxRelevance, *level)
	case *resamples < 1:
		return usagef("compare: --bootstrap must be at least 1, got %d", *resamples)
	}
	sd, err := strconv.ParseUint(*seed, 10, 64)
	if err != nil {
		return usagef("compare: --seed must be a non-negative integer, got %q", *seed)
	}
	if *baseline != "" {
		found := false
		for _, n := range runs.names {
			found = found || n == *baseline
		}
		if !found {
			return usagef("compare: --baseline %q is not the name of a --run (%s)", *baseline, runs.String())
		}
	}

	// Inputs are never overwritten by a report.
	inputsPaths := append([]string{*qrelsPath}, runs.files...)
	for _, out := range []struct{ flag, path string }{{"json", *jsonOut}, {"markdown", *mdOut}, {"per-query", *perQuery}} {
		for _, in := range inputsPaths {
			if out.path != "" && samePath(out.path, in) {
				return usagef("compare: --%s %s would overwrite the input %s", out.flag, out.path, in)
			}
		}
	}

	// The qrels are read (sequentially) while the runs are read (in parallel);
	// errors are reported in command-line order: qrels first, then each run.
	var qrels *dataset.Qrels
	qerr := make(chan error, 1)
	go func() {
		var err error
		qrels, err = dataset.ReadQrels(ctx, *qrelsPath)
		qerr <- err
	}()
	inputs := make([]compare.Input, len(runs.names))
	var runErr error
	for i, name := range runs.names {
		run, err := dataset.ReadRun(ctx, runs.files[i], *k, dataset.RunOptions{})
		if err != nil {
			runErr = fmt.Errorf("failed to read run %q: %w", name, err)
			break
		}
		inputs[i] = compare.Input{Name: name, Run: run}
	}
	if err := <-qerr; err != nil {
		return fmt.Errorf("failed to read qrels: %w", err)
	}
	if runErr != nil {
		return runErr
	}
	res, err := compare.Run(qrels, inputs, compare.Options{
		K: *k, Gain: gain.g, RelevantLevel: *level, Baseline: *baseline, Resamples: *resamples, Seed: sd,
	})
	if err != nil {
		return fmt.Errorf("failed to compare: %w", err)
	}
	outputs := []struct {
		path   string
		render func(io.Writer, *compare.Result) error
	}{
		{*jsonOut, report.CompareJSON},
		{*mdOut, report.CompareMarkdown},
		{*perQuery, report.ComparePerQuery},
	}
	for _, o := range outputs {
		if o.path == "" {
			continue
		}
		if err := atomicfile.Write(o.path, func(w io.Writer) error { return o.render(w, res) }); err != nil {
			return err
		}
	}
	if err := report.CompareText(env.Stdout, res); err != nil {
		return err
	}
	// Inside GitHub Actions the Markdown report goes to the job summary (compare
	// keeps no PR comment) and the recommendation becomes a step output.
	if env.Getenv("GITHUB_ACTIONS") == "true" {
		var md strings.Builder
		if err := report.CompareMarkdown(&md, res); err != nil {
			return err
		}
		publish(ctx, env, publication{Markdown: md.String(), CommentMode: commentNever,
			Outputs: map[string]string{"recommended": res.Recommended, "json": *jsonOut}})
	}
	return nil
}

package cli

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"slices"

	"github.com/valyala/fastjson"

	"github.com/retrieval-gate/retrieval-gate/internal/compare"
	"github.com/retrieval-gate/retrieval-gate/internal/history"
	"github.com/retrieval-gate/retrieval-gate/internal/metrics"
	"github.com/retrieval-gate/retrieval-gate/internal/outcome"
	"github.com/retrieval-gate/retrieval-gate/internal/report/checkreport"
	"github.com/retrieval-gate/retrieval-gate/internal/report/comparereport"
	"github.com/retrieval-gate/retrieval-gate/internal/report/gatetable"
	"github.com/retrieval-gate/retrieval-gate/internal/trend"
)

// trendFlag is --trend-runs N: the Markdown report (PR comment, job summary)
// shows the gated measures over the newest N runs of the base branch in the
// history (--history-branch, else --history); 0 turns it off.
type trendFlag struct{ runs int }

func (t *trendFlag) register(fs *flag.FlagSet) {
	fs.IntVar(&t.runs, "trend-runs", trend.DefaultRuns, fmt.Sprintf("with --history or --history-branch: the Markdown report shows the gated measures over the newest `N` runs of the base branch (at most %d; 0: no trend)", trend.MaxRuns))
}

func (t *trendFlag) validate(cmd string, src *sources) error {
	if t.runs < 0 || t.runs > trend.MaxRuns {
		return src.refuse(cmd, "trend-runs", fmt.Sprintf("must be between 0 (no trend) and %d", trend.MaxRuns))
	}
	return nil
}

// trendInputs adds the trend-runs input to a command's Action inputs.
func trendInputs(in actionInputs) actionInputs {
	in["trend-runs"] = ""
	return in
}

// baseBranch is the branch a trend is of: the pull request's base branch
// (GITHUB_BASE_REF), else this run's branch as the history records it.
func baseBranch(ctx context.Context, env *Env) string {
	if b := env.Getenv("GITHUB_BASE_REF"); b != "" {
		return b
	}
	return runBranch(ctx, env)
}

// gateMeasures are the measures of a run's gate table that a gate is set on
// (floors, regression gates: a threshold; a gate left off has none): each
// measure of a group once, in gate order.
func gateMeasures(gates []gatetable.Entry) []trend.Measure {
	var out []trend.Measure
	for _, g := range gates {
		m := trend.Measure{Group: g.Group, Key: g.Measure}
		if g.Measure == "" || g.Group == "" || g.Threshold == nil || math.IsNaN(g.Threshold.V()) || slices.Contains(out, m) {
			continue
		}
		out = append(out, m)
	}
	return out
}

// checkTrendMeasures: the gated measures, else hit@k, recall@k and nDCG@k overall.
func checkTrendMeasures(d *checkreport.Document) []trend.Measure {
	if ms := gateMeasures(d.Gates); len(ms) > 0 {
		return ms
	}
	return []trend.Measure{{Group: outcome.GroupOverall, Key: metrics.KeyHit}, {Group: outcome.GroupOverall, Key: metrics.KeyRecall},
		{Group: outcome.GroupOverall, Key: metrics.KeyNDCG}}
}

// compareTrendMeasures: the gated measures, else the primary measure of the
// recommended strategy (with no clear winner, of the best one on it; with one
// strategy, of that one).
func compareTrendMeasures(d *comparereport.Document) []trend.Measure {
	if ms := gateMeasures(d.Gates); len(ms) > 0 {
		return ms
	}
	s := d.Recommended
	if s == compare.NoClearWinner || s == "" {
		switch {
		case d.RecommendationTest != nil:
			s = d.RecommendationTest.Best
		case len(d.Order) > 0:
			s = d.Order[0]
		default:
			return nil
		}
	}
	return []trend.Measure{{Group: compare.StrategyGroup(s), Key: d.Primary}}
}

// trendSource is where the trend reads the history: the history on
// --history-branch when given (the runs the default branch recorded there,
// read from any run, pull requests and forks included), else the --history
// file; with neither, none.
type trendSource struct {
	path, branch string
}

// readTrend is the trend of measures over the newest runs of command on the
// base branch in the history of src (nil without one, or with --trend-runs 0),
// read before this run is appended; doc writes this run's JSON document. A
// history branch that cannot be read is a warning (GitHub-side problems never
// change the verdict), returned with no trend.
func readTrend(ctx context.Context, f *Factory, src trendSource, command string, runs int, in fingerprint, ms []trend.Measure, doc func(io.Writer) error) (*trend.Trend, string, error) {
	env := f.Env
	if (src.path == "" && src.branch == "") || runs == 0 || len(ms) == 0 {
		return nil, "", nil
	}
	var b bytes.Buffer
	if err := doc(&b); err != nil {
		return nil, "", err
	}
	cur, err := fastjson.ParseBytes(b.Bytes())
	if err != nil {
		return nil, "", err
	}
	fp, err := history.NewFingerprint(in.inputs, in.params)
	if err != nil {
		return nil, "", fmt.Errorf("--history: %w", err)
	}
	source := trend.FileSource(src.path)
	if src.branch != "" {
		r, err := readHistoryBranch(ctx, f, src.branch)
		if err != nil && !errors.Is(err, errNoHistoryBranch) {
			return nil, fmt.Sprintf("retrieval-gate: no trend: the history branch %q could not be read: %v", src.branch, err), nil
		}
		name := src.branch + ":" + history.FileName
		source = func(fn func(history.Record, *fastjson.Value) error) error {
			if r == nil {
				return nil // no branch yet: no runs
			}
			return history.ScanReader(name, r, fn)
		}
	}
	t, err := trend.Collect(source, cur, fp, trend.Options{Command: command, Branch: baseBranch(ctx, env), Limit: runs, Measures: ms})
	if err != nil {
		if src.branch != "" {
			return nil, fmt.Sprintf("retrieval-gate: no trend: the history on branch %q is not readable: %v", src.branch, err), nil
		}
		return nil, "", fmt.Errorf("failed to read the history for the trend: %w", err)
	}
	return t, "", nil
}

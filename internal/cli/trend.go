package cli

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"

	"github.com/valyala/fastjson"

	"github.com/retrieval-gate/retrieval-gate/internal/history"
	"github.com/retrieval-gate/retrieval-gate/internal/report/comparereport"
	"github.com/retrieval-gate/retrieval-gate/internal/report/gatetable"
	htmlreport "github.com/retrieval-gate/retrieval-gate/internal/report/html"
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

// trendGates is a report's gate table as the trend's selection reads it.
func trendGates(es []gatetable.Entry) []trend.Gate {
	out := make([]trend.Gate, len(es))
	for i, e := range es {
		out[i] = trend.Gate{Group: e.Group, Measure: e.Measure, Threshold: math.NaN()}
		if e.Threshold != nil {
			out[i].Threshold = e.Threshold.V()
		}
	}
	return out
}

// compareTrendMeasures: trend.CompareMeasures of compare's document.
func compareTrendMeasures(d *comparereport.Document) []trend.Measure {
	best := ""
	if d.RecommendationTest != nil {
		best = d.RecommendationTest.Best
	}
	return trend.CompareMeasures(trendGates(d.Gates), d.Recommended, best, d.Order, d.Primary)
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
	h, err := readHistory(ctx, f, src, command, in, doc, runs, ms, "")
	return h.trend, h.warning, err
}

// dashboardRuns is how many runs the compare dashboard's chart over the runs
// shows at most: the newest (report --history charts them all).
const dashboardRuns = 100

// historyReads is what one read of a run's history gives it: the trend of the
// Markdown report, and the dashboard's view of a measure over the runs.
type historyReads struct {
	trend    *trend.Trend
	overRuns *htmlreport.HistoryView
	warning  string
}

// readHistory reads the history of src once, before this run is appended: the
// trend (trendRuns > 0 and measures ms), and with overMeasure the view of that
// measure over the runs of command on the base branch, the newest
// dashboardRuns with this run last (its fingerprint in; doc writes its JSON
// document). A history branch that cannot be read is a warning, no trend and
// a view that says so.
func readHistory(ctx context.Context, f *Factory, src trendSource, command string, in fingerprint, doc func(io.Writer) error,
	trendRuns int, ms []trend.Measure, overMeasure string) (historyReads, error) {
	env := f.Env
	wantTrend := trendRuns > 0 && len(ms) > 0
	if (src.path == "" && src.branch == "") || (!wantTrend && overMeasure == "") {
		return historyReads{}, nil
	}
	var b bytes.Buffer
	if err := doc(&b); err != nil {
		return historyReads{}, err
	}
	cur, err := fastjson.ParseBytes(b.Bytes())
	if err != nil {
		return historyReads{}, err
	}
	fp, err := history.NewFingerprint(in.inputs, in.params)
	if err != nil {
		return historyReads{}, fmt.Errorf("--history: %w", err)
	}
	base := history.BaseBranch(ctx, env.Getenv)
	file := src.path
	if file != "" {
		file = history.File(file)
	}
	source := trend.FileSource(src.path)
	if src.branch != "" {
		file = src.branch + ":" + history.FileName
		r, err := readHistoryBranch(ctx, f, src.branch)
		if err != nil && !errors.Is(err, errNoHistoryBranch) {
			w := fmt.Sprintf("retrieval-gate: no trend: the history branch %q could not be read: %v", src.branch, err)
			return historyReads{warning: w, overRuns: unreadView(command, overMeasure, file, base, err)}, nil
		}
		source = trend.ReaderSource(file, r)
	}
	var over *htmlreport.HistoryBuilder
	if overMeasure != "" {
		over = htmlreport.NewHistory(file, command, overMeasure)
		source = trend.Observe(source, base, over.Add)
	}
	var out historyReads
	out.trend, err = trend.Read(source, cur, fp, trend.Options{Command: command, Branch: base, Limit: trendRuns, Measures: ms})
	if err != nil {
		if src.branch != "" {
			w := fmt.Sprintf("retrieval-gate: no trend: the history on branch %q is not readable: %v", src.branch, err)
			return historyReads{warning: w, overRuns: unreadView(command, overMeasure, file, base, err)}, nil
		}
		return historyReads{}, fmt.Errorf("failed to read the history for the trend: %w", err)
	}
	if over != nil {
		rec, err := historyRecord(ctx, env, command, in, doc)
		if err != nil {
			return historyReads{}, err
		}
		if err := over.Add(rec, cur); err != nil {
			return historyReads{}, err
		}
		v := over.View().Newest(dashboardRuns)
		v.Branch = base
		out.overRuns = &v
	}
	return out, nil
}

// unreadView is the dashboard's view of a history that could not be read.
func unreadView(command, measure, file, branch string, err error) *htmlreport.HistoryView {
	if measure == "" {
		return nil
	}
	return &htmlreport.HistoryView{Command: command, Measure: measure, File: file, Branch: branch, Unread: err.Error()}
}

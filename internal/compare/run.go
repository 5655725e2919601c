package compare

import (
	"context"
	"fmt"
	"io"

	"github.com/retrieval-gate/retrieval-gate/internal/input/labelfile"
	"github.com/retrieval-gate/retrieval-gate/internal/input/trecfile"
)

// RunFile is one named run file: a TREC run or a cases JSONL.
type RunFile struct {
	Name, Path string
}

// Files name the files a comparison reads, as the front end gives them: the
// graded qrels and the runs, in the order of the report, and the human sheet.
// The front end opens them (In); Options.Validate and Fingerprint read their
// names.
type Files struct {
	Qrels string
	Runs  []RunFile
	// HumanQrels is the filled-in human labelling sheet (judge --human-sample),
	// CSV or JSONL; "" none.
	HumanQrels string
	// Clusters is the query-to-cluster file (ReadClusters); "" none.
	Clusters string
	// Queries is the cases JSONL that says what each query id stands for
	// (ReadQueries: its text, locale and cluster); "" none.
	Queries string
}

// Reader is one input of a comparison: its bytes and the name its messages
// give it (a path).
type Reader struct {
	Name string
	R    io.Reader
}

// RunReader is one run of a comparison: the strategy's name and its run, a TREC
// run or a cases JSONL (trecfile.ReadRunFrom: an open regular file is parsed in
// parallel ranges).
type RunReader struct {
	Strategy string
	Reader
}

// In is what a comparison reads: the graded qrels, the runs in the order of the
// report and, with --human-qrels, the filled-in labelling sheet (R nil: none).
type In struct {
	Qrels      Reader
	Runs       []RunReader
	HumanQrels Reader
	Clusters   Reader // R nil: none
	// Queries is the cases JSONL of the queries (Files.Queries, evaluate's
	// cases; ReadQueries); R nil: none.
	Queries Reader
}

// Run is the compare command's pipeline: it reads the qrels (in a goroutine)
// while it reads the runs (each cut at o.K), then the human sheet, and compares
// them (Compare). Errors are reported in the inputs' order: the qrels first,
// then each run. It opens no file and writes nothing. Runs in regular files
// sorted by query id are scored as they are read (stream.go), with the same
// result.
func Run(ctx context.Context, in In, o Options) (*Result, error) {
	var qrels *trecfile.Qrels
	if rs, ok := streamable(ctx, in, o); ok {
		st, q, ok, err := runStreaming(ctx, in, rs, o)
		if err != nil {
			return nil, err
		}
		if ok {
			if err := readAfterRuns(ctx, in, &o); err != nil {
				return nil, err
			}
			res, err := until(ctx, func() (*Result, error) { return st.finish(o) })
			if err != nil {
				return nil, fmt.Errorf("failed to compare: %w", err)
			}
			return res, nil
		}
		qrels = q // the runs are read whole below
	}
	qerr := make(chan error, 1)
	if qrels != nil {
		qerr <- nil
	} else {
		go func() {
			var err error
			qrels, err = trecfile.ParseQrels(ctx, in.Qrels.R, in.Qrels.Name)
			qerr <- err
		}()
	}
	inputs := make([]Input, len(in.Runs))
	var runErr error
	for i, r := range in.Runs {
		depth := o.K
		if o.JudgedOnly { // the condensed list takes judged documents from below k
			depth = max(o.K, JudgedOnlyDepth)
		}
		run, err := trecfile.ReadRunFrom(ctx, r.R, r.Name, depth, trecfile.RunOptions{})
		if err != nil {
			runErr = fmt.Errorf("failed to read run %q: %w", r.Strategy, err)
			break
		}
		inputs[i] = Input{Name: r.Strategy, Run: run}
	}
	if err := <-qerr; err != nil {
		return nil, fmt.Errorf("failed to read qrels: %w", err)
	}
	if runErr != nil {
		return nil, runErr
	}
	if in.HumanQrels.R != nil {
		sh, err := labelfile.ReadSheet(ctx, in.HumanQrels.R, in.HumanQrels.Name)
		if err != nil {
			return nil, fmt.Errorf("failed to read the human labels: %w", err)
		}
		o.HumanSheet = sh // Compare's copy; the caller's options are not touched
	}
	if err := readAfterRuns(ctx, in, &o); err != nil {
		return nil, err
	}
	res, err := compareUntil(ctx, qrels, inputs, o)
	if err != nil {
		return nil, fmt.Errorf("failed to compare: %w", err)
	}
	return res, nil
}

// compareUntil is Compare, given up when ctx ends first (then ctx's error):
// its resampling (--bootstrap up to metrics.ExactResamplingBudget draws a
// series, over every run, measure and group) takes seconds and does not
// watch ctx, and a signal was heeded only once it was done, the outputs
// written. The abandoned computation ends on its own; the command exits
// before.
func compareUntil(ctx context.Context, qrels *trecfile.Qrels, inputs []Input, o Options) (*Result, error) {
	return until(ctx, func() (*Result, error) { return Compare(qrels, inputs, o) })
}

// until is f, given up when ctx ends first (then ctx's error): Compare's, and
// a streamed comparison's finish, whose statistics are Compare's (compareUntil).
func until(ctx context.Context, f func() (*Result, error)) (*Result, error) {
	if ctx.Done() == nil {
		return f()
	}
	type result struct {
		res *Result
		err error
	}
	done := make(chan result, 1)
	go func() {
		res, err := f()
		done <- result{res, err}
	}()
	select {
	case r := <-done:
		return r.res, r.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// readAfterRuns reads what Run reads after the runs and the human sheet, in
// this order, into o: the clusters and the queries.
func readAfterRuns(ctx context.Context, in In, o *Options) error {
	if in.Clusters.R != nil {
		cl, err := ReadClusters(ctx, in.Clusters.R, in.Clusters.Name)
		if err != nil {
			return fmt.Errorf("failed to read the clusters: %w", err)
		}
		o.Clusters, o.ClustersFile = cl, in.Clusters.Name
	}
	if in.Queries.R != nil {
		qs, err := ReadQueries(ctx, in.Queries.R, in.Queries.Name)
		if err != nil {
			return fmt.Errorf("failed to read the queries: %w", err)
		}
		o.Queries, o.QueriesFile = qs, in.Queries.Name
	}
	return nil
}

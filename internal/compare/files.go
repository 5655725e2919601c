package compare

import (
	"context"
	"fmt"

	"github.com/retrieval-gate/retrieval-gate/internal/input/labelfile"
	"github.com/retrieval-gate/retrieval-gate/internal/input/trecfile"
)

// RunFile is one named run file: a TREC run or a cases JSONL.
type RunFile struct {
	Name, Path string
}

// Files are the files a comparison reads: the graded qrels and the runs, in
// the order of the report.
type Files struct {
	Qrels string
	Runs  []RunFile
	// HumanQrels is the filled-in human labelling sheet (judge --human-sample),
	// CSV or JSONL; "" none. It sets Options.HumanSheet.
	HumanQrels string
}

// RunFiles is the compare command's pipeline: it reads the qrels (in a
// goroutine) while it reads the runs (each cut at opt.K), and compares them
// (Run). Errors are reported in the files' order: the qrels first, then each run.
func RunFiles(ctx context.Context, f Files, opt Options) (*Result, error) {
	var qrels *trecfile.Qrels
	qerr := make(chan error, 1)
	go func() {
		var err error
		qrels, err = trecfile.ReadQrels(ctx, f.Qrels)
		qerr <- err
	}()
	inputs := make([]Input, len(f.Runs))
	var runErr error
	for i, r := range f.Runs {
		depth := opt.K
		if opt.JudgedOnly { // the condensed list takes judged documents from below k
			depth = max(opt.K, JudgedOnlyDepth)
		}
		run, err := trecfile.ReadRun(ctx, r.Path, depth, trecfile.RunOptions{})
		if err != nil {
			runErr = fmt.Errorf("failed to read run %q: %w", r.Name, err)
			break
		}
		inputs[i] = Input{Name: r.Name, Run: run}
	}
	if err := <-qerr; err != nil {
		return nil, fmt.Errorf("failed to read qrels: %w", err)
	}
	if runErr != nil {
		return nil, runErr
	}
	if f.HumanQrels != "" {
		sh, err := labelfile.ReadSheetFile(ctx, f.HumanQrels)
		if err != nil {
			return nil, fmt.Errorf("failed to read the human labels: %w", err)
		}
		opt.HumanSheet = sh
	}
	res, err := Run(qrels, inputs, opt)
	if err != nil {
		return nil, fmt.Errorf("failed to compare: %w", err)
	}
	return res, nil
}

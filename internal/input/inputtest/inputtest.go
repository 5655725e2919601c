// Package inputtest reads input files for tests: the file forms of the
// readers of trecfile and labelfile. The commands open their inputs in their
// front end (internal/cli) and hand the domain the readers; a test that starts
// from a file path calls these.
package inputtest

import (
	"context"
	"fmt"

	"github.com/retrieval-gate/retrieval-gate/internal/input"
	"github.com/retrieval-gate/retrieval-gate/internal/input/labelfile"
	"github.com/retrieval-gate/retrieval-gate/internal/input/trecfile"
)

// ReadRun reads the run file at path (trecfile.ReadRunFrom of the open file).
func ReadRun(ctx context.Context, path string, k int, opt trecfile.RunOptions) (*trecfile.Run, error) {
	f, err := input.Open(ctx, path)
	if err != nil {
		return nil, fmt.Errorf("failed to read run: %w", err)
	}
	defer f.Close()
	return trecfile.ReadRunFrom(ctx, f, path, k, opt)
}

// ReadQrels reads the qrels file at path (trecfile.ParseQrels).
func ReadQrels(ctx context.Context, path string) (*trecfile.Qrels, error) {
	f, err := input.Open(ctx, path)
	if err != nil {
		return nil, fmt.Errorf("failed to read qrels: %w", err)
	}
	defer f.Close()
	return trecfile.ParseQrels(ctx, f, path)
}

// ReadLabelsFile reads the labels file at path (labelfile.ReadLabels).
func ReadLabelsFile(ctx context.Context, path string, side labelfile.LabelSide, lock *labelfile.Lock) (*labelfile.Labels, error) {
	f, err := input.Open(ctx, path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return labelfile.ReadLabels(ctx, f, path, side, lock)
}

// ReadSheetFile reads the labelling sheet at path (labelfile.ReadSheet).
func ReadSheetFile(ctx context.Context, path string) (*labelfile.Sheet, error) {
	f, err := input.Open(ctx, path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return labelfile.ReadSheet(ctx, f, path)
}

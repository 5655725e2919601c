package trecfile

import (
	"context"
	"fmt"

	"github.com/retrieval-gate/retrieval-gate/internal/input"
)

// The file forms of the package's readers, for its tests: the commands open
// their inputs in their front end and hand the readers over
// (internal/input/inputtest has them for other packages' tests).

// ReadQrels reads a qrels file, TREC (`qid iter docid rel`) or JSONL
// ({"query_id", "doc_id", "relevance"}), detected by content.
func ReadQrels(ctx context.Context, path string) (*Qrels, error) {
	f, err := input.Open(ctx, path)
	if err != nil {
		return nil, fmt.Errorf("failed to read qrels: %w", err)
	}
	defer f.Close()
	return ParseQrels(ctx, f, path)
}

// ReadRun reads a run file, TREC (`qid Q0 docid rank score tag`) or a cases JSONL
// (`id` as query id, `retrieved` as the ranking, identity = parent_id else id),
// detected by content, and keeps the top k of each query (ReadRunFrom).
func ReadRun(ctx context.Context, path string, k int, opt RunOptions) (*Run, error) {
	if k < 1 {
		return nil, fmt.Errorf("run cutoff k must be at least 1, got %d", k)
	}
	f, err := input.Open(ctx, path)
	if err != nil {
		return nil, fmt.Errorf("failed to read run: %w", err)
	}
	defer f.Close()
	return ReadRunFrom(ctx, f, path, k, opt)
}

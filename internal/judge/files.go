package judge

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/retrieval-gate/retrieval-gate/internal/input"
	"github.com/retrieval-gate/retrieval-gate/internal/input/kbfile"
	"github.com/retrieval-gate/retrieval-gate/internal/input/trecfile"
)

// RunFile is one named run: a cases JSONL from retrieve, or a TREC run (whose
// query texts come from Files.Queries).
type RunFile struct {
	Name, Path string
}

// Files are the files the judge command reads (and its cache, which it appends to).
type Files struct {
	KB      string    // the documents' text
	Runs    []RunFile // pooled at FileOptions.K
	Queries string    // query texts for TREC runs: cases JSONL or TSV; "" none
	Prompt  string    // prompt template; "" is the built-in one
	Cache   string    // append-only judgment cache; "" none (an in-memory one)
	// KnownQrels are labels already made (human or an earlier judge; TREC or
	// JSONL qrels): the pool's pairs they label are not judged (holes.go).
	KnownQrels string
}

// FileOptions are the options of RunFiles: the pool depth, a log, and the
// options of Run (its Prompt and Cache are those of Files).
type FileOptions struct {
	K int // pool depth: the top K of each run per query
	// Logf, when set, receives the run's log lines, without a trailing newline.
	Logf func(format string, args ...any)
	// Batch, when set, judges through a batch (BatchOptions) instead of one
	// request per judgment.
	Batch *BatchOptions
	Options
}

// RunFiles is the judge command's pipeline: it loads the KB, the prompt and the
// runs, pools their top K per query, opens the cache and judges the pool (Run).
// The cache keeps every judgment made, also when the run fails or is cancelled.
// With o.Batch.RequestsOut it writes the requests and returns a nil Result.
func RunFiles(ctx context.Context, f Files, o FileOptions) (res *Result, err error) {
	kb, err := kbfile.Load(ctx, f.KB)
	if err != nil {
		return nil, err
	}
	opt := o.Options
	opt.Prompt = DefaultPrompt()
	if f.Prompt != "" {
		if opt.Prompt, err = LoadPrompt(ctx, f.Prompt); err != nil {
			return nil, err
		}
	}
	qs := Queries{}
	if f.Queries != "" {
		if qs, err = ReadQueries(ctx, f.Queries); err != nil {
			return nil, err
		}
	}
	var runs []NamedRun
	for _, r := range f.Runs {
		run, err := trecfile.ReadRun(ctx, r.Path, o.K, trecfile.RunOptions{})
		if err != nil {
			return nil, fmt.Errorf("failed to read run %q: %w", r.Name, err)
		}
		if run.Format == "cases" {
			file, err := input.Open(ctx, r.Path)
			if err != nil {
				return nil, err
			}
			err = QueriesFromCases(ctx, file, r.Path, qs)
			file.Close()
			if err != nil {
				return nil, err
			}
		}
		runs = append(runs, NamedRun{Name: r.Name, Run: run})
	}
	pairs, err := BuildPool(runs, qs, kb)
	if err != nil {
		return nil, err
	}
	knownQrels, err := readKnown(ctx, f.KnownQrels)
	if err != nil {
		return nil, err
	}
	pool := len(pairs)
	pairs, known := splitKnown(pairs, knownQrels)
	if f.Cache != "" {
		if err := os.MkdirAll(filepath.Dir(f.Cache), 0o755); err != nil { //nolint:gosec // G301: the cache's directory, 0755 like atomicfile's output directories
			return nil, fmt.Errorf("failed to create the cache directory: %w", err)
		}
	}
	if opt.Cache, err = OpenCache(f.Cache); err != nil {
		return nil, err
	}
	if o.Logf != nil {
		o.Logf("%d pairs from %d run(s) at k %d, %d judgment(s) each; %d cached judgment(s) loaded",
			pool, len(runs), o.K, opt.Repeat, opt.Cache.Loaded())
		if f.KnownQrels != "" {
			o.Logf("%d pair(s) labelled in %s are not judged; %d pair(s) left for the judge", len(known), f.KnownQrels, len(pairs))
		}
	}
	if o.Batch != nil {
		res, err = RunBatch(ctx, pairs, opt, f.Cache, o.Batch, o.Logf)
	} else {
		res, err = Run(ctx, pairs, opt)
	}
	if cerr := opt.Cache.Close(); err == nil && cerr != nil {
		err = cerr
	}
	if err != nil {
		return nil, err
	}
	if res != nil {
		res.Known = known
	}
	return res, nil
}

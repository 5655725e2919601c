package judge

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/retrieval-gate/retrieval-gate/internal/input/kbfile"
	"github.com/retrieval-gate/retrieval-gate/internal/input/trecfile"
	"github.com/retrieval-gate/retrieval-gate/internal/llm"
)

// RunFile is one named run: a cases JSONL from retrieve, or a TREC run (whose
// query texts come from Files.Queries).
type RunFile struct {
	Name, Path string
}

// Files name the files of the judge command as the front end gives them (it
// opens them: In): what it reads, and its cache, which it appends to.
type Files struct {
	KB      string    // the documents' text
	Runs    []RunFile // pooled at RunOptions.K
	Queries string    // query texts for TREC runs: cases JSONL or TSV; "" none
	Prompt  string    // prompt template; "" is the built-in one
	Cache   string    // append-only judgment cache; "" none (an in-memory one)
	// KnownQrels are labels already made (human or an earlier judge; TREC or
	// JSONL qrels): the pool's pairs they label are not judged (holes.go).
	KnownQrels string
}

// Reader is one input of a judge run: its bytes and the name its messages
// give it (a path).
type Reader struct {
	Name string
	R    io.Reader
}

// RunReader is one named run: a cases JSONL from retrieve or a TREC run, named
// File in messages. A cases run is read twice (its rankings, then its queries'
// texts), so R seeks back to its start.
type RunReader struct {
	Name, File string
	R          io.ReadSeeker
}

// In is what a judge run reads and the services it uses, all opened or made by
// the front end: Run opens no file, writes nothing but into the writers and the
// cache it is given, and reads no environment.
type In struct {
	KB   *kbfile.KB  // the documents' text
	Runs []RunReader // pooled at RunOptions.K, in order
	// Queries are the query texts of TREC runs (cases JSONL or TSV); R nil: none.
	Queries Reader
	Prompt  *Prompt // the template (ParsePrompt); nil: the built-in one
	// KnownQrels are labels already made (RunOptions.KnownQrels); R nil: none.
	KnownQrels Reader
	// Cache is read and appended to during the run (OpenCache: the file of
	// RunOptions.Cache); nil: an in-memory cache, not kept.
	Cache CacheStore
	// Client asks the chat server (online judging: no batch mode).
	Client Completer
	// BatchAPI and BatchState run RunOptions.Batch: the server's Batch API, and
	// where the submitted batch is kept between runs (StateFile beside the cache).
	BatchAPI   llm.BatchService
	BatchState BatchStore
	// BatchRequests receives the requests of RunOptions.BatchOut; BatchResults
	// are the answers of RunOptions.BatchIn.
	BatchRequests io.Writer
	BatchResults  Reader
	// Now is the clock of a batch's wait (nil: time.Now).
	Now func() time.Time
	// Secrets are the process's keys and tokens (the environment's, a key
	// given, the credentials of the server URLs given): redacted, with every
	// credential of a known shape or in a URL (httpretry.RedactText), from
	// every text of the model or its server that the labels, the cache and
	// the report keep: the reasons, the answers an unreadable one quotes,
	// the error texts of a batch's results (Options.Secrets,
	// BatchOptions.Secrets).
	Secrets []string
	// Logf, when set, receives the run's log lines, without a trailing newline;
	// Progress, judgments done of the total (serialised).
	Logf     func(format string, args ...any)
	Progress func(done, total int)
}

// RunResult is what a judge run did: the labels (Result; nil with BatchOut,
// which writes only the requests), their Summary and the human sample drawn
// (nil without HumanSample).
type RunResult struct {
	Result  *Result
	Summary *Summary
	Sample  *HumanSample
}

// Run is the judge command's pipeline on o's (validated) options: it pools the
// top K of every run per query, leaves out the pairs the known qrels label,
// judges the rest (Judge, or a batch in o's batch mode) from the cache where it
// can, and summarises the labels and draws the human sample. The cache keeps
// every judgment made, also when the run fails or is cancelled. Writing the
// labels, the report and the sheet is the caller's (WriteTREC, WriteJSONL,
// WriteSheetCSV, WriteSheetJSONL; the report is judgereport's).
func Run(ctx context.Context, in In, o RunOptions) (*RunResult, error) {
	opt := Options{Client: in.Client, Model: o.LLM.Model, Prompt: in.Prompt, Format: o.Format, Repeat: o.Repeat,
		Workers: o.LLM.Concurrency, Cache: in.Cache, Progress: in.Progress, Secrets: in.Secrets}
	if opt.Prompt == nil {
		opt.Prompt = DefaultPrompt()
	}
	if opt.Cache == nil {
		opt.Cache = MemoryCache()
	}
	if o.BatchOut == "" && o.BatchIn == "" && !o.Batch {
		opt.MaxRequests = o.LLM.MaxRequests // a batch keeps its budget itself (BatchOptions)
	}
	var bo *BatchOptions
	switch {
	case o.BatchOut != "":
		bo = &BatchOptions{RequestsOut: in.BatchRequests, Provider: o.BatchAPI, MaxRequests: o.LLM.MaxRequests}
	case o.BatchIn != "":
		bo = &BatchOptions{ResultsIn: in.BatchResults, Provider: o.BatchAPI, MaxRequests: o.LLM.MaxRequests, Secrets: in.Secrets}
	case o.Batch:
		bo = &BatchOptions{API: in.BatchAPI, State: in.BatchState, Poll: llm.PollFrom(o.BatchPoll), MaxRequests: o.LLM.MaxRequests, Now: in.Now, Secrets: in.Secrets}
	}
	switch {
	case bo == nil && in.Client == nil,
		bo != nil && bo.RequestsOut == nil && bo.ResultsIn.R == nil && (bo.API == nil || bo.State == nil):
		return nil, errors.New("judge: no server, batch or file of the run's mode was given")
	}
	in.KB.WarnSkipped(in.Logf)
	qs := Queries{}
	if in.Queries.R != nil {
		var err error
		if qs, err = ReadQueries(ctx, in.Queries.R, in.Queries.Name); err != nil {
			return nil, err
		}
	}
	var runs []NamedRun
	for _, r := range in.Runs {
		run, err := trecfile.ReadRunFrom(ctx, r.R, r.File, o.K, trecfile.RunOptions{})
		if err != nil {
			return nil, fmt.Errorf("failed to read run %q: %w", r.Name, err)
		}
		if run.Format == "cases" {
			if _, err := r.R.Seek(0, io.SeekStart); err != nil {
				return nil, err
			}
			if err := QueriesFromCases(ctx, r.R, r.File, qs); err != nil {
				return nil, err
			}
		}
		runs = append(runs, NamedRun{Name: r.Name, Run: run})
	}
	pairs, err := BuildPool(runs, qs, in.KB)
	if err != nil {
		return nil, err
	}
	if o.QrelsOut != "" {
		if err := qrelsIDs(runs); err != nil {
			return nil, err
		}
	}
	knownQrels, err := readKnown(ctx, in.KnownQrels)
	if err != nil {
		return nil, err
	}
	pool := len(pairs)
	pairs, known := splitKnown(pairs, knownQrels)
	if in.Logf != nil {
		in.Logf("%d pairs from %d run(s) at k %d, %d judgment(s) each; %d cached judgment(s) loaded",
			pool, len(runs), o.K, opt.Repeat, opt.Cache.Loaded())
		if in.KnownQrels.R != nil {
			in.Logf("%d pair(s) labelled in %s are not judged; %d pair(s) left for the judge", len(known), in.KnownQrels.Name, len(pairs))
		}
	}
	var res *Result
	if bo != nil {
		res, err = RunBatch(ctx, pairs, opt, bo, in.Logf)
	} else {
		res, err = Judge(ctx, pairs, opt)
	}
	if err != nil {
		return nil, err
	}
	out := &RunResult{}
	if res == nil { // BatchOut: the requests only
		return out, nil
	}
	res.Known = known
	out.Result = res
	if out.Summary, err = SummarizeContext(ctx, res, o.Price); err != nil {
		return nil, err
	}
	if o.HumanSample > 0 {
		out.Sample = SampleQueries(res.Pairs, o.HumanSample, o.HumanSeed)
	}
	return out, nil
}

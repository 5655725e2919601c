package trend

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/valyala/fastjson"

	"github.com/retrieval-gate/retrieval-gate/internal/history"
)

// RunRead is one read of a run's history, before the run is appended: where
// the history is, this run (its provenance, command, fingerprint and JSON
// document), the trend asked for and an observer of the runs.
type RunRead struct {
	Path   string // --history: a DIR or FILE.jsonl ("" none)
	Branch string // --history-branch: read instead of Path ("" none)
	// OpenBranch reads the history file on Branch; an error wrapping
	// NoHistory is a branch with no history yet (no runs).
	OpenBranch func(ctx context.Context, branch string) (io.Reader, error)
	NoHistory  error
	// Provenance is this run's: the trend is of its base branch (Base), and
	// the observer sees this run's record.
	Provenance history.Provenance
	Command    string
	Inputs     map[string]string // this run's fingerprint
	Params     map[string]string
	Doc        func(io.Writer) error // writes this run's JSON document
	Runs       int                   // the trend's newest runs (0: no trend)
	Measures   []Measure             // the trend's measures
	// Observe, when set, is called with the history's name and the base branch
	// and returns what sees each record of the base branch, then this run's
	// (a view of the runs over time, in the same one pass).
	Observe func(file, base string) func(history.Record, *fastjson.Value) error
}

// Reading is what a RunRead gives.
type Reading struct {
	Trend *Trend
	// Unread, when set, is why the history branch Branch could not be read
	// (UnreadRecords: the branch was read, its history was not readable): no
	// trend, which the CLI warns about (trendtable.UnreadWarning words it; a
	// problem on GitHub's side never changes a verdict), and the view says so.
	Unread        error
	UnreadRecords bool
	Branch        string // the history branch (--history-branch), "" for a file
	File          string // the history as named: the file, or BRANCH:history.jsonl
	Base          string // the base branch whose runs the trend and the view are of
	Read          bool   // a history was read (one was given and something was asked of it)
}

// ReadRun reads r's history once: the trend (Runs > 0 and Measures), and the
// observer's view. With no history, or nothing asked of it, nothing is read.
// A history branch that cannot be read is Unread, unless ctx ended: a read
// cut short by SIGINT or SIGTERM is the error, so that the run stops instead
// of writing its outputs without the trend.
func ReadRun(ctx context.Context, r RunRead) (Reading, error) {
	wantTrend := r.Runs > 0 && len(r.Measures) > 0
	if (r.Path == "" && r.Branch == "") || (!wantTrend && r.Observe == nil) {
		return Reading{}, nil
	}
	var b bytes.Buffer
	if err := r.Doc(&b); err != nil {
		return Reading{}, err
	}
	cur, err := fastjson.ParseBytes(b.Bytes())
	if err != nil {
		return Reading{}, err
	}
	fp, err := history.NewFingerprint(ctx, r.Inputs, r.Params)
	if err != nil {
		return Reading{}, fmt.Errorf("--history: %w", err)
	}
	out := Reading{Base: r.Provenance.Base, Branch: r.Branch, Read: true}
	if r.Path != "" {
		out.File = history.File(r.Path)
	}
	source := FileSource(ctx, r.Path)
	if r.Branch != "" {
		out.File = r.Branch + ":" + history.FileName
		h, err := r.OpenBranch(ctx, r.Branch)
		if err != nil && ctx.Err() != nil {
			// Cancelled (SIGINT, SIGTERM): the run stops here, it does not
			// go on without a trend to write its outputs.
			return Reading{}, fmt.Errorf("reading %s: %w", out.File, ctx.Err())
		}
		if err != nil && !errors.Is(err, r.NoHistory) {
			out.Unread = err
			return out, nil
		}
		source = ReaderSource(ctx, out.File, h)
	}
	var observe func(history.Record, *fastjson.Value) error
	if r.Observe != nil {
		observe = r.Observe(out.File, out.Base)
		source = Observe(source, out.Base, observe)
	}
	out.Trend, err = Read(source, cur, fp, Options{Command: r.Command, Branch: out.Base, Limit: r.Runs, Measures: r.Measures})
	if err != nil && r.Branch != "" && ctx.Err() != nil {
		return Reading{}, fmt.Errorf("reading %s: %w", out.File, ctx.Err())
	}
	if err != nil {
		if r.Branch != "" {
			out.Unread, out.UnreadRecords = err, true
			return out, nil
		}
		return Reading{}, fmt.Errorf("failed to read the history for the trend: %w", err)
	}
	if observe != nil {
		rec, err := history.NewRecord(ctx, r.Provenance, r.Command, r.Inputs, r.Params, b.Bytes())
		if err != nil {
			return Reading{}, err
		}
		if err := observe(rec, cur); err != nil {
			return Reading{}, err
		}
	}
	return out, nil
}

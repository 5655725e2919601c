package check

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/retrieval-gate/retrieval-gate/internal/baseline"
	"github.com/retrieval-gate/retrieval-gate/internal/history"
	"github.com/retrieval-gate/retrieval-gate/internal/input"
)

// BaselineSpec is what --baseline and --write-baseline ask Run to open.
type BaselineSpec struct {
	// Path is the baseline file ("" none), named Name in messages ("" is Path);
	// Source is its provenance (a fetched artifact's) and Cleanup removes a
	// downloaded file (nil: nothing to remove).
	Path, Name string
	Source     map[string]string
	Cleanup    func() error
	// Unavailable is why --baseline found no baseline (nil when it did or was not asked).
	Unavailable *baseline.Unavailability
	// Write: --write-baseline, whose case lines go to a temporary body.
	Write bool
}

// Baseline is the files opened for a run's baseline; Close releases them.
type Baseline struct {
	file    io.ReadCloser // the baseline, or its shards
	body    *os.File
	cleanup func() error
	remap   func(error) error       // of its shards (nil: one file)
	locate  func(int) (string, int) // of its shards (nil: one file)
}

// OpenBaseline opens s into in: the baseline file and the temporary body of
// --write-baseline (nil when s asks for neither).
func OpenBaseline(ctx context.Context, s BaselineSpec, in *In) (*Baseline, error) {
	in.BaselineUnavailable = s.Unavailable
	if s.Path == "" && !s.Write && s.Cleanup == nil {
		return nil, nil
	}
	b := &Baseline{cleanup: s.Cleanup}
	if s.Path != "" {
		var f io.ReadCloser
		var err error
		if input.IsSharded(s.Path) { // a directory or a glob of --cases-out shards, read as one file
			var sh *input.Sharded
			if sh, err = input.OpenSharded(ctx, s.Path); err == nil {
				f, b.remap, b.locate = sh, sh.Remap, sh.Locate
			}
		} else {
			f, err = input.Open(ctx, s.Path)
		}
		if err != nil {
			_ = b.Close()
			return nil, fmt.Errorf("failed to read the baseline: %w", err)
		}
		b.file = f
		in.Baseline, in.BaselineName, in.BaselineSource = f, s.Path, s.Source
		if s.Name != "" {
			in.BaselineName = s.Name
		}
	}
	if s.Write {
		body, err := os.CreateTemp("", "retrieval-gate-baseline-body-*")
		if err != nil {
			_ = b.Close()
			return nil, fmt.Errorf("--write-baseline: %w", err)
		}
		os.Remove(body.Name())
		b.body = body
		in.BaselineBody = body
	}
	return b, nil
}

// Remap gives an error at a line of a sharded baseline (a directory or a glob
// pattern) the shard and its line; any other error is returned as it is.
func (b *Baseline) Remap(err error) error {
	if b == nil || b.remap == nil {
		return err
	}
	return b.remap(err)
}

// Locate names the places of a sharded baseline (a directory or a glob
// pattern) that r lists, the cases only in the baseline, at their shard and
// line there (Result.LocateBaseline); for one file it leaves them.
func (b *Baseline) Locate(r *Result) {
	if b == nil || b.locate == nil || r == nil {
		return
	}
	r.LocateBaseline(b.locate)
}

// Close closes the files and removes a downloaded baseline; the error is the
// removal's (a temporary left behind: a warning, not a failure).
func (b *Baseline) Close() error {
	if b == nil {
		return nil
	}
	if b.file != nil {
		b.file.Close()
	}
	if b.body != nil {
		b.body.Close()
	}
	var err error
	if b.cleanup != nil {
		err = b.cleanup()
		b.cleanup = nil
	}
	return err
}

// WriteFile writes the --write-baseline file into w: its header (this run's
// aggregates, the JSON document doc writes; the cases file; the run's commit
// and time, from its provenance p; the k scored at; the KB's cards, the case
// count and the KB fingerprint), then the case lines compressed while scoring.
func (b *Baseline) WriteFile(w io.Writer, run *Result, p history.Provenance, casesFile string, kbCards int, doc func(io.Writer) error) error {
	var agg strings.Builder
	if err := doc(&agg); err != nil {
		return err
	}
	h := baseline.Header{Aggregates: []byte(strings.TrimSpace(agg.String())), CasesFile: casesFile, Commit: p.Commit,
		CreatedAt: p.TimeText(), K: run.Gate.K, KBCards: kbCards, Cases: run.Gate.Total, KBFingerprint: run.KBFingerprint}
	if _, err := b.body.Seek(0, io.SeekStart); err != nil {
		return err
	}
	return baseline.WriteFile(w, &h, b.body)
}

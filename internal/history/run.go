package history

import (
	"context"
	"fmt"
	"time"
)

// Provenance is where and when a run happened, as its history record and a
// baseline file's header keep it. The front end fills it once (the CLI: the
// GitHub Actions variables, else the repository of the working directory read
// by internal/gitread, never by running git) and hands it in: nothing here
// reads the environment.
type Provenance struct {
	// Commit is the commit the run measured ("" unknown).
	Commit string
	// Branch is the branch the run is on, as its history record names it
	// ("" unknown; "HEAD" on a detached HEAD, as git names it).
	Branch string
	// Base is the branch a trend is of: a pull request's base branch, else
	// Branch.
	Base string
	// Time is when the run happened ($SOURCE_DATE_EPOCH when it is set).
	Time time.Time
}

// TimeText is p's time as a record and a baseline header write it: UTC, RFC 3339.
func (p Provenance) TimeText() string { return p.Time.UTC().Format(time.RFC3339) }

// NewRecord is a run's history record: its provenance (commit, branch, time),
// the fingerprint of the inputs and parameters, and the command's JSON
// document.
func NewRecord(ctx context.Context, p Provenance, command string, inputs, params map[string]string, doc []byte) (Record, error) {
	fp, err := NewFingerprint(ctx, inputs, params)
	if err != nil {
		return Record{}, fmt.Errorf("--history: %w", err)
	}
	return Record{Command: command, Commit: p.Commit, Branch: p.Branch, Time: p.TimeText(),
		Fingerprint: fp, Document: doc}, nil
}

package history

import (
	"bytes"
	"context"
	"fmt"
	"io"
)

// AppendRun is a run's history when one is asked for (path: --history, a DIR
// or FILE.jsonl; branch: --history-branch): its record (NewRecord of the run's
// provenance p and the document written by doc), returned for the branch (which
// is written once the run's outputs are published), and the append of the
// record to the local history at path (AppendUndo; nil without path), which the
// caller makes when it publishes the run's outputs, all or none with them
// (atomicfile.Set.Append); the append waits for the history's lock until ctx
// ends. warn receives a warning of the append (a torn last
// line repaired). Without path and branch it does nothing and returns nils.
func AppendRun(ctx context.Context, p Provenance, path, branch, command string, inputs, params map[string]string,
	doc func(io.Writer) error, warn func(string)) (*Record, func() (undo func() error, err error), error) {
	if path == "" && branch == "" {
		return nil, nil, nil
	}
	var b bytes.Buffer
	if err := doc(&b); err != nil {
		return nil, nil, err
	}
	rec, err := NewRecord(ctx, p, command, inputs, params, b.Bytes())
	if err != nil {
		return nil, nil, err
	}
	if path == "" {
		return &rec, nil, nil
	}
	return &rec, func() (func() error, error) {
		warning, undo, err := AppendUndo(ctx, path, rec)
		if warning != "" {
			warn(warning)
		}
		if err != nil {
			return nil, fmt.Errorf("--history: %w", err)
		}
		return undo, nil
	}, nil
}

// FileOf is the file --history path appends to, "" without one (for the
// overwrite guard).
func FileOf(path string) string {
	if path == "" {
		return ""
	}
	return File(path)
}

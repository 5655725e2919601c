package cli

import (
	"context"
	"fmt"
	"io"

	"github.com/retrieval-gate/retrieval-gate/internal/atomicfile"
	"github.com/retrieval-gate/retrieval-gate/internal/input"
	"github.com/retrieval-gate/retrieval-gate/internal/input/kbfile"
	"github.com/retrieval-gate/retrieval-gate/internal/retrieve"
)

// retrieveFiles is retrieve.Run on files: the output is created (as a
// temporary file) first, so an unwritable one fails before the knowledge base
// is loaded (here, after the cases are opened, and handed to Run) and indexed, and is published only when every case is written;
// the cases are read from a file, from a directory or a glob pattern of shards
// (input.OpenSharded: an error at a line names its shard), or, for "-", from
// stdin.
func retrieveFiles(ctx context.Context, kb, cases, out string, stdin io.Reader, o retrieve.RunOptions) (*retrieve.RunResult, error) {
	outs := atomicfile.NewSet()
	defer outs.Abort()
	w, err := outs.Add(out)
	if err != nil {
		return nil, err
	}
	in := retrieve.In{Cases: stdin, CasesName: "stdin", Out: w, OutName: out}
	remap := func(err error) error { return err }
	if cases != "-" {
		var cf io.ReadCloser
		var err error
		if input.IsSharded(cases) { // a directory or a glob of shards, read as one stream
			var s *input.Sharded
			s, err = input.OpenSharded(ctx, cases)
			if err == nil {
				cf, remap = s, s.Remap
			}
		} else {
			cf, err = input.Open(ctx, cases)
		}
		if err != nil {
			return nil, fmt.Errorf("failed to read cases: %w", err)
		}
		defer cf.Close()
		in.Cases, in.CasesName = cf, cases
	}
	if in.KB, err = kbfile.Load(ctx, kb); err != nil {
		return nil, err
	}
	res, err := retrieve.Run(ctx, in, o)
	if err != nil {
		return nil, remap(err)
	}
	if err := outs.Commit(ctx); err != nil {
		return nil, err
	}
	return res, nil
}

package retrieve

import (
	"context"
	"fmt"
	"io"

	"github.com/retrieval-gate/retrieval-gate/internal/atomicfile"
	"github.com/retrieval-gate/retrieval-gate/internal/input"
)

// Files are the files of a retrieval run: the knowledge base, the cases ("-"
// reads Stdin; a directory or a glob pattern, its shards: input.OpenSharded)
// and the output, written whole or not at all.
type Files struct {
	KB, Cases, Out string
	Stdin          io.Reader
}

// RunFiles is Run on files: the output is created (as a temporary file) first,
// so an unwritable one fails before the knowledge base is loaded and indexed,
// and is published only when every case is written.
func RunFiles(ctx context.Context, f Files, o RunOptions) (*RunResult, error) {
	outs := atomicfile.NewSet()
	defer outs.Abort()
	out, err := outs.Add(f.Out)
	if err != nil {
		return nil, err
	}
	in := In{KB: f.KB, Cases: f.Stdin, CasesName: "stdin", Out: out, OutName: f.Out}
	remap := func(err error) error { return err }
	if f.Cases != "-" {
		var cf io.ReadCloser
		var err error
		if input.IsSharded(f.Cases) { // a directory or a glob of shards, read as one stream
			var s *input.Sharded
			s, err = input.OpenSharded(ctx, f.Cases)
			if err == nil {
				cf, remap = s, s.Remap
			}
		} else {
			cf, err = input.Open(ctx, f.Cases)
		}
		if err != nil {
			return nil, fmt.Errorf("failed to read cases: %w", err)
		}
		defer cf.Close()
		in.Cases, in.CasesName = cf, f.Cases
	}
	res, err := Run(ctx, in, o)
	if err != nil {
		return nil, remap(err)
	}
	if err := outs.Commit(); err != nil {
		return nil, err
	}
	return res, nil
}

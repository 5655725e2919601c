package cli

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/retrieval-gate/retrieval-gate/internal/compare"
	"github.com/retrieval-gate/retrieval-gate/internal/input"
)

// opened are the input files a run opened (input.Open: a FIFO's open stops
// with the context), closed together when the run ends. The domain's Run reads
// them; the front end opens them.
type opened struct {
	files  []io.Closer
	remaps []func(error) error // of the sharded inputs
}

// open opens path; an error is wrapped as wrap words it (fmt's %w).
func (o *opened) open(ctx context.Context, path, wrap string, args ...any) (*os.File, error) {
	f, err := input.Open(ctx, path)
	if err != nil {
		return nil, fmt.Errorf(wrap, append(args, err)...)
	}
	o.files = append(o.files, f)
	return f, nil
}

// shards opens path as open does, or its shards when it names a directory or
// a glob pattern (openInputWith); remap then names the shard of an error.
func (o *opened) shards(ctx context.Context, path, wrap string, args ...any) (io.ReadSeeker, error) {
	return o.shardsWith(ctx, input.OpenSharded, path, wrap, args...)
}

// sheet is shards for a labelling sheet, a CSV (or JSONL) whose every shard
// carries the header line (input.OpenShardedCSV).
func (o *opened) sheet(ctx context.Context, path, wrap string, args ...any) (io.ReadSeeker, error) {
	return o.shardsWith(ctx, input.OpenShardedCSV, path, wrap, args...)
}

func (o *opened) shardsWith(ctx context.Context, openShards func(context.Context, string) (*input.Sharded, error), path, wrap string, args ...any) (io.ReadSeeker, error) {
	r, remap, err := openInputWith(ctx, path, openShards)
	if err != nil {
		return nil, fmt.Errorf(wrap, append(args, err)...)
	}
	o.files = append(o.files, r)
	if _, ok := r.(*input.Sharded); ok {
		o.remaps = append(o.remaps, remap)
	}
	return r, nil
}

// remap gives an error at a line of a sharded input its shard and line.
func (o *opened) remap(err error) error {
	for _, r := range o.remaps {
		err = r(err)
	}
	return err
}

// close closes every file opened.
func (o *opened) close() {
	for _, f := range o.files {
		f.Close()
	}
	o.files, o.remaps = nil, nil
}

// openCompare opens compare's files as compare.In. The errors read as they
// did when compare opened them itself (the qrels' wrapped twice).
func openCompare(ctx context.Context, files *opened, f compare.Files) (compare.In, error) {
	var in compare.In
	q, err := files.shards(ctx, f.Qrels, "failed to read qrels: failed to read qrels: %w")
	if err != nil {
		return in, err
	}
	in.Qrels = compare.Reader{Name: f.Qrels, R: q}
	for _, r := range f.Runs {
		rf, err := files.shards(ctx, r.Path, "failed to read run %q: failed to read run: %w", r.Name)
		if err != nil {
			return in, err
		}
		in.Runs = append(in.Runs, compare.RunReader{Strategy: r.Name, Reader: compare.Reader{Name: r.Path, R: rf}})
	}
	if f.HumanQrels != "" {
		h, err := files.sheet(ctx, f.HumanQrels, "failed to read the human labels: %w")
		if err != nil {
			return in, err
		}
		in.HumanQrels = compare.Reader{Name: f.HumanQrels, R: h}
	}
	if f.Clusters != "" {
		c, err := files.shards(ctx, f.Clusters, "failed to read the clusters: %w")
		if err != nil {
			return in, err
		}
		in.Clusters = compare.Reader{Name: f.Clusters, R: c}
	}
	if f.Queries != "" {
		c, err := files.shards(ctx, f.Queries, "failed to read the queries: %w")
		if err != nil {
			return in, err
		}
		in.Queries = compare.Reader{Name: f.Queries, R: c}
	}
	return in, nil
}

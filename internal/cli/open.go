package cli

import (
	"context"
	"fmt"
	"os"

	"github.com/retrieval-gate/retrieval-gate/internal/compare"
	"github.com/retrieval-gate/retrieval-gate/internal/input"
)

// opened are the input files a run opened (input.Open: a FIFO's open stops
// with the context), closed together when the run ends. The domain's Run reads
// them; the front end opens them.
type opened []*os.File

// open opens path; an error is wrapped as wrap words it (fmt's %w).
func (o *opened) open(ctx context.Context, path, wrap string, args ...any) (*os.File, error) {
	f, err := input.Open(ctx, path)
	if err != nil {
		return nil, fmt.Errorf(wrap, append(args, err)...)
	}
	*o = append(*o, f)
	return f, nil
}

// close closes every file opened.
func (o *opened) close() {
	for _, f := range *o {
		f.Close()
	}
	*o = nil
}

// openCompare opens compare's files as compare.In. The errors read as they
// did when compare opened them itself (the qrels' wrapped twice).
func openCompare(ctx context.Context, files *opened, f compare.Files) (compare.In, error) {
	var in compare.In
	q, err := files.open(ctx, f.Qrels, "failed to read qrels: failed to read qrels: %w")
	if err != nil {
		return in, err
	}
	in.Qrels = compare.Reader{Name: f.Qrels, R: q}
	for _, r := range f.Runs {
		rf, err := files.open(ctx, r.Path, "failed to read run %q: failed to read run: %w", r.Name)
		if err != nil {
			return in, err
		}
		in.Runs = append(in.Runs, compare.RunReader{Strategy: r.Name, Reader: compare.Reader{Name: r.Path, R: rf}})
	}
	if f.HumanQrels != "" {
		h, err := files.open(ctx, f.HumanQrels, "failed to read the human labels: %w")
		if err != nil {
			return in, err
		}
		in.HumanQrels = compare.Reader{Name: f.HumanQrels, R: h}
	}
	return in, nil
}

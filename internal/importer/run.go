package importer

import (
	"context"
	"fmt"
	"io"

	"github.com/retrieval-gate/retrieval-gate/internal/input"
)

// Files name import's input and output as the front end gives them: a file,
// or "-" for standard input and output. The front end opens them (In).
type Files struct {
	Path string // the input file; "-" reads standard input
	Out  string // the output file, written whole or not at all; "-" writes standard output
}

// In is what an import reads and where it writes, opened by the front end:
// the input named Name in messages, read once; LineAt, when the input can be
// read again from its start (a file: LineAt of it), gives the line of an
// error in a JSON array; Out receives the converted records.
type In struct {
	Name   string
	R      io.Reader
	LineAt func(off int64) int
	Out    io.Writer
}

// RunOptions are import's options: the format (nil: detect it) and the
// converters' options.
type RunOptions struct {
	Format *Format
	Options
}

// Result is what Run did: the format it read (Given when it was not detected),
// the input's name in messages and the conversion's counts.
type Result struct {
	Format *Format
	Given  bool
	Name   string
	Stats  Stats
}

// Run converts in.R into in.Out in the format o gives, or the one it detects.
// It writes only into in.Out: the caller makes the output all or nothing.
func Run(ctx context.Context, in In, o RunOptions) (*Result, error) {
	opt := o.Options
	opt.LineAt = in.LineAt
	r := input.Reader(ctx, in.R) // a silent pipe or FIFO stops on SIGINT/SIGTERM
	res := &Result{Given: o.Format != nil, Name: in.Name}
	var err error
	res.Format, res.Stats, err = Convert(ctx, r, in.Name, in.Out, o.Format, opt)
	if err != nil {
		if res.Format != nil && o.Format == nil {
			return nil, fmt.Errorf("%w (detected format %s; pass --format to choose another)", err, res.Format.Name)
		}
		return nil, err
	}
	return res, nil
}

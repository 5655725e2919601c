package importer

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/retrieval-gate/retrieval-gate/internal/atomicfile"
	"github.com/retrieval-gate/retrieval-gate/internal/input"
)

// In is what Run reads and where it writes: a file, or "-" for Stdin and Stdout.
type In struct {
	Path   string    // the input file; "-" reads Stdin
	Out    string    // the output file, written whole or not at all; "-" writes Stdout
	Stdin  io.Reader // read when Path is "-"
	Stdout io.Writer // written when Out is "-"
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

// Run converts in.Path to in.Out: the output is created (as a temporary file)
// first, so an unwritable one fails before the input is read, and is published
// only when the whole input converted. Standard output cannot be all-or-nothing:
// the conversion is buffered whole and written after it.
func Run(ctx context.Context, in In, o RunOptions) (*Result, error) {
	outs := atomicfile.NewSet()
	defer outs.Abort()
	var w io.Writer
	if in.Out != "-" {
		var err error
		if w, err = outs.Add(in.Out); err != nil {
			return nil, err
		}
	}
	opt := o.Options
	r, name := in.Stdin, "<stdin>"
	if in.Path != "-" {
		file, err := input.Open(ctx, in.Path)
		if err != nil {
			return nil, err
		}
		defer file.Close()
		r, name = file, in.Path
		opt.LineAt = LineAt(file)
	}
	r = input.Reader(ctx, r) // a silent pipe or FIFO stops on SIGINT/SIGTERM
	res := &Result{Given: o.Format != nil, Name: name}
	convert := func(w io.Writer) error {
		var err error
		res.Format, res.Stats, err = Convert(ctx, r, name, w, o.Format, opt)
		return err
	}
	var err error
	if in.Out == "-" {
		var buf strings.Builder
		if err = convert(&buf); err == nil {
			_, err = io.WriteString(in.Stdout, buf.String())
		}
	} else if err = convert(w); err == nil {
		err = outs.Commit()
	}
	if err != nil {
		if res.Format != nil && o.Format == nil {
			return nil, fmt.Errorf("%w (detected format %s; pass --format to choose another)", err, res.Format.Name)
		}
		return nil, err
	}
	return res, nil
}

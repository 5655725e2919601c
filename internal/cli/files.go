package cli

import (
	"bytes"
	"context"
	"io"
	iofs "io/fs"

	"github.com/retrieval-gate/retrieval-gate/internal/atomicfile"
	"github.com/retrieval-gate/retrieval-gate/internal/input"
)

// printText renders a command's text report and gives it to outs, whose
// Commit prints it on standard output as the outputs are published, before
// them: a report that cannot be printed publishes none (atomicfile.Set.Print).
func printText(outs *atomicfile.Set, env *Env, text func(io.Writer) error) error {
	var b bytes.Buffer
	if err := text(&b); err != nil {
		return err
	}
	outs.Print("standard output", env.Stdout, b.Bytes())
	return nil
}

// file is a path a command reads or writes, with the flag that named it.
type file struct{ flag, path string }

// paths are fs as input.Paths; stdin is the file standard input is
// redirected from (nil: none), the file of a path "-".
func paths(fs []file, stdin iofs.FileInfo) []input.Path {
	out := make([]input.Path, 0, len(fs))
	for _, f := range fs {
		if f.path == "-" {
			out = append(out, input.Path{Option: f.flag, Path: f.path, Open: stdin})
			continue
		}
		if input.IsPattern(f.path) { // an input's shards: each is an input, and so is the pattern (a file that would match it)
			if ps, err := input.ExpandShards(f.path); err == nil {
				for _, p := range ps {
					out = append(out, input.Path{Option: f.flag, Path: p})
				}
			}
		}
		out = append(out, input.Path{Option: f.flag, Path: f.path})
	}
	return out
}

// openInputWith opens an input that may be sharded (--cases, --run, --qrels,
// a sheet): a file as it is, a directory or a glob pattern as its shards read
// as one stream (openShards: input.OpenSharded, or input.OpenShardedCSV for a
// CSV sheet whose every shard has the header). remap gives an error of the
// reader at a line of the stream the shard and its line (the identity for a
// file).
func openInputWith(ctx context.Context, path string, openShards func(context.Context, string) (*input.Sharded, error)) (r io.ReadSeekCloser, remap func(error) error, err error) {
	if input.IsSharded(path) {
		s, err := openShards(ctx, path)
		if err != nil {
			return nil, nil, err
		}
		return s, s.Remap, nil
	}
	f, err := input.Open(ctx, path)
	if err != nil {
		return nil, nil, err
	}
	return f, func(err error) error { return err }, nil
}

// refuseOverwrite refuses, before any work, an output flag given "-" that
// does not write standard output (refuseStdout), and an output that collides
// with an input or another output (input.CheckOverlap: the one rule for every
// command's outputs, reports, caches, histories and baselines alike), naming
// each path's flag, or its Action input, as src gives it.
func refuseOverwrite(cmd string, src *sources, inputs, outputs []file) error {
	if err := refuseStdout(cmd, src, outputs); err != nil {
		return err
	}
	o := input.CheckOverlap(paths(inputs, src.stdinFile()), paths(outputs, nil))
	if o == nil {
		return nil
	}
	a, b := o.A, o.B
	switch o.Kind {
	case input.OverwritesInput:
		if b.Path == "-" {
			return usagef("%s: %s would overwrite the input read from standard input (%s -), the same file", cmd, src.with(a.Option, a.Path), src.name(b.Option))
		}
		return usagef("%s: %s would overwrite the input %s (%s)", cmd, src.with(a.Option, a.Path), b.Path, src.name(b.Option))
	case input.InsideInput:
		return usagef("%s: %s is inside the input directory %s (%s); write reports elsewhere", cmd, src.with(a.Option, a.Path), b.Path, src.name(b.Option))
	case input.MatchesPattern:
		return usagef("%s: %s would be a shard of the input %s (%s), read by the next run; write it elsewhere", cmd, src.with(a.Option, a.Path), b.Path, src.name(b.Option))
	case input.SameOutput:
		return usagef("%s: %s and %s name the same file %s", cmd, src.name(b.Option), src.name(a.Option), a.Path)
	}
	return usagef("%s: %s is written as a file, but %s needs it as a directory (%s); give them separate paths", cmd, src.with(a.Option, a.Path), src.name(b.Option), b.Path)
}

// stdinFile is the regular file standard input is redirected from, nil when it
// is none (a terminal, a pipe, a test's reader).
func (s *sources) stdinFile() iofs.FileInfo {
	if s == nil {
		return nil
	}
	f, ok := s.stdin.(interface{ Stat() (iofs.FileInfo, error) })
	if !ok {
		return nil
	}
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() {
		return nil
	}
	return st
}

// stdoutOutputs are the output flags that write standard output when given
// "-", by command: import's --out alone. Every other output flag names a file
// or a directory.
var stdoutOutputs = map[string]string{"import": "out"}

// refuseStdout refuses an output flag of command cmd given "-" (the flag's
// value, as src holds it: an output named after it, such as --history's
// DIR/history.jsonl or judge --human-sheet's BASE.csv, counts too) unless
// the flag writes standard output (stdoutOutputs): writing a file named "-"
// where standard output was meant would be a silent surprise. A file named
// "-" is still written as ./-.
//
//	check: --json -: only import's --out writes to standard output; give a path (./- for a file named "-")
func refuseStdout(cmd string, src *sources, outputs []file) error {
	for _, f := range outputs {
		if stdoutOutputs[cmd] == f.flag || outputValue(src, f) != "-" {
			continue
		}
		return usagef("%s: %s: only import's --out writes to standard output; give a path (./- for a file named \"-\")", cmd, src.with(f.flag, "-"))
	}
	return nil
}

// outputValue is the value of output f's flag as given (f's path when src
// does not hold the flag).
func outputValue(src *sources, f file) string {
	if src != nil && src.fs != nil {
		if fl := src.fs.Lookup(f.flag); fl != nil {
			return fl.Value.String()
		}
	}
	return f.path
}

package cli

import (
	"bytes"
	"context"
	"io"
	"strconv"

	"github.com/retrieval-gate/retrieval-gate/internal/atomicfile"
	"github.com/retrieval-gate/retrieval-gate/internal/guard"
	"github.com/retrieval-gate/retrieval-gate/internal/importer"
	"github.com/retrieval-gate/retrieval-gate/internal/input"
	"github.com/retrieval-gate/retrieval-gate/internal/publish"
	"github.com/retrieval-gate/retrieval-gate/internal/report/summary"
)

// NewCmdImport is `retrieval-gate import`: converts a file in a format users
// already have (BEIR, MS MARCO, TREC, ir_datasets, ragas, promptfoo, CSV) into
// cases JSONL, TREC qrels, a TREC run or a KB JSONL. It says on stderr which format
// it read. It has no gate: it exits 0 unless the command line or the input is bad (2).
// runF, when set, replaces its run (a test of the parsing alone).
func NewCmdImport(f *Factory, runF func(context.Context, *importOptions) error) *Command {
	parse := func(env *Env, args []string) (*importOptions, error) {
		if outIsStdout(args) {
			f.commandsOnStderr() // a usage error's ::error too: stdout is the converted file
		}
		return parseImport(env, args)
	}
	return newCommand(f, "import", "convert BEIR, MS MARCO, TREC, ir_datasets, ragas, promptfoo or CSV files to cases, qrels or runs", parse, func(ctx context.Context, o *importOptions) error { return runImport(ctx, f, o) }, runF)
}

// outIsStdout says whether import's command line gives --out - (-out -,
// --out=-), before the flags are parsed: a parse that fails has its message
// written before runImport would know.
func outIsStdout(args []string) bool {
	for i, a := range args {
		switch {
		case a == "--":
			return false
		case a == "--out=-" || a == "-out=-":
			return true
		case (a == "--out" || a == "-out") && i+1 < len(args) && args[i+1] == "-":
			return true
		}
	}
	return false
}

// importOptions are the parsed and validated flags of import.
type importOptions struct {
	files importer.Files
	run   importer.RunOptions // Format nil: detect
}

// importInputs are import's Action inputs.
var importInputs = actionInputs{
	"format": "", "in": "", "out": "", "parent-from-id": "", "parent-from-id-regexp": "", "list-sep": "", "run-tag": "", "provider": "",
}

func parseImport(env *Env, args []string) (*importOptions, error) {
	fs := newFlagSet(env, "import")
	o := &importOptions{}
	opt := &o.run.Options
	format := fs.String("format", "auto", "input `FORMAT`: auto (detect from the content) or one of "+importer.Names(", "))
	fs.StringVar(&o.files.Path, "in", "", "input `FILE` (- reads standard input) (required)")
	fs.StringVar(&o.files.Out, "out", "", "output `FILE`, written whole or not at all (- writes standard output) (required)")
	fs.StringVar(&opt.ParentSep, "parent-from-id", "", "derive a retrieved chunk's card from its id: the part before the last `SEPARATOR` (card-12#chunk-3 with # is card-12)")
	parentRe := fs.String("parent-from-id-regexp", "", "derive a retrieved chunk's card from its id with a `REGEXP` (RE2 syntax): the first capture group of its leftmost match, or the whole match without a group; an id it does not match is its own card (^(.+)-chunk-[0-9]+$ makes card-12-chunk-3 card-12)")
	fs.StringVar(&opt.ListSep, "list-sep", "|", "separator of the ids in one CSV cell or promptfoo var that is not a JSON array")
	fs.StringVar(&opt.RunTag, "run-tag", "", "tag column of a TREC run written from a format without one (default: the format's name)")
	fs.StringVar(&opt.Provider, "provider", "", "promptfoo: the provider (label or id) whose results to import, when the file holds several")
	src, err := parseFlags(fs, env, args, importInputs)
	if err != nil {
		return nil, err
	}
	if err := opt.Validate(o.files, *parentRe); err != nil {
		return nil, src.option("import", err)
	}
	if err := refuseOverwrite("import", src, []file{{"in", o.files.Path}}, []file{{"out", o.files.Out}}); err != nil {
		return nil, err
	}
	if *format != "auto" {
		var ok bool
		if o.run.Format, ok = importer.Lookup(*format); !ok {
			return nil, src.refuse("import", "format", "must be auto or one of "+importer.Names(", "))
		}
	}
	return o, nil
}

// importShards opens import's --in given as shards, as its format says
// (importer.ShardsOf; the format --format gives, else the one detected from
// the stream's first bytes): lines, or a CSV or TSV whose every shard carries
// the header; a format that is one JSON document is refused.
func importShards(ctx context.Context, files *opened, path string, f *importer.Format) (io.Reader, error) {
	s, err := input.OpenSharded(ctx, path)
	if err != nil {
		return nil, err
	}
	head, err := io.ReadAll(io.LimitReader(s, importer.DetectBytes))
	if cerr := s.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, s.Remap(err)
	}
	if f == nil {
		f, _ = importer.Detect(head) // none: importer.Run says why
	}
	mode := importer.ShardLines
	if f != nil {
		mode = importer.ShardsOf(f, head)
	}
	switch mode {
	case importer.ShardNone:
		return nil, input.Errorf(path, 0, "read as %s, one JSON document, not lines: a directory or a glob of shards cannot hold one; give one file", f.Name)
	case importer.ShardHeader:
		return files.sheet(ctx, path, "%w")
	}
	return files.shards(ctx, path, "%w")
}

// runImport converts the input: the output is created (as a temporary file)
// first, so an unwritable one fails before the input is read, and is
// published only when the whole input converted. Standard output (--out -)
// cannot be taken back: the conversion is buffered whole and written at the
// set's Commit, only once the whole input converted.
func runImport(ctx context.Context, fac *Factory, o *importOptions) error {
	env := fac.Env
	if o.files.Out == "-" {
		fac.commandsOnStderr() // stdout is the converted file
	}
	outs := atomicfile.NewSet()
	defer outs.Abort()
	var buf bytes.Buffer
	in := importer.In{Name: "<stdin>", R: env.Stdin, Out: &buf}
	if o.files.Out != "-" {
		var err error
		if in.Out, err = outs.Add(o.files.Out); err != nil {
			return err
		}
	}
	var files opened
	defer files.close()
	switch {
	case o.files.Path == "-":
	case input.IsSharded(o.files.Path): // a directory or a glob of shards, or a Parquet file
		r, err := importShards(ctx, &files, o.files.Path, o.run.Format)
		if err != nil {
			return err
		}
		in.Name, in.R = o.files.Path, r // no LineAt: a format read as shards is lines, its errors name them
	default:
		f, err := files.open(ctx, o.files.Path, "%w")
		if err != nil {
			return err
		}
		in.Name, in.R, in.LineAt = o.files.Path, f, importer.LineAt(f)
	}
	res, err := importer.Run(ctx, in, o.run)
	if err != nil {
		return files.remap(err) // the shard and its line
	}
	if o.files.Out == "-" {
		out := buf.Bytes()
		if res.Format.Kind == importer.KindCases || res.Format.Kind == importer.KindKB {
			// JSON lines: what the stream's guard would break (a "##[" in
			// an id) is escaped in JSON's own way, so the lines stay valid
			// and hold the very data. TREC text has no escape: the guard's
			// backslash stays (docs/import.md).
			out = guard.JSON(out)
		}
		outs.Print("standard output", env.Stdout, out)
	}
	if err := outs.Commit(ctx); err != nil {
		return err
	}
	md := summary.Import(env.Stderr, res, o.files.Out)
	pub := publish.Publication{Outputs: map[string]string{}}
	if o.files.Out != "-" {
		pub = publish.PathOutputs(map[string]string{"out": o.files.Out})
	}
	pub.Outputs["format"], pub.Outputs["records"], pub.Mode, pub.Markdown = res.Format.Name, strconv.Itoa(res.Stats.Records), publish.ModeNever, md
	fac.Publisher().Publish(ctx, pub)
	return nil
}

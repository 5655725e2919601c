package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/retrieval-gate/retrieval-gate/internal/atomicfile"
	"github.com/retrieval-gate/retrieval-gate/internal/calibrate"
	"github.com/retrieval-gate/retrieval-gate/internal/input"
	"github.com/retrieval-gate/retrieval-gate/internal/input/labelfile"
	"github.com/retrieval-gate/retrieval-gate/internal/metrics"
	"github.com/retrieval-gate/retrieval-gate/internal/publish"
	"github.com/retrieval-gate/retrieval-gate/internal/report/calibratereport"
)

// NewCmdCalibrate is `retrieval-gate calibrate`: agreement between human labels and
// an LLM judge under the frozen constants of a lock.
// runF, when set, replaces its run (a test of the parsing alone).
func NewCmdCalibrate(f *Factory, runF func(context.Context, *calibrateOptions) error) *Command {
	return newCommand(f, "calibrate", "agreement (kappa) between human labels and an LLM judge under a frozen lock", parseCalibrate, func(ctx context.Context, o *calibrateOptions) error { return runCalibrate(ctx, f, o) }, runF)
}

// calibrateOptions are the parsed and validated flags of calibrate.
type calibrateOptions struct {
	files          calibrate.Files
	run            calibrate.Options
	jsonOut, mdOut string
	comment        commentFlags // its own key: never check's comment
}

// calibrateInputs are calibrate's Action inputs.
var calibrateInputs = commentInputs(actionInputs{
	"human": "", "judge": "", "lock": "", "lock-base": "", "git-anchoring": "", "bootstrap": "", "max-unpaired": "",
	"json": "retrieval-gate-calibrate.json", "markdown": "",
})

func parseCalibrate(env *Env, args []string) (*calibrateOptions, error) {
	fs := newFlagSet(env, "calibrate")
	o := &calibrateOptions{run: calibrate.Options{Seed: metrics.DefaultSeed}}
	fs.StringVar(&o.files.Human, "human", "", "human labels JSONL (a file, a directory or glob of shards) (required)")
	fs.StringVar(&o.files.Judge, "judge", "", "judge scores JSONL (a file, a directory or glob of shards) (required)")
	fs.StringVar(&o.files.Lock, "lock", "", "lock file of frozen constants, JSON or YAML (required)")
	fs.StringVar(&o.files.HumanSheet, "human-sheet", "", "instead of --human: the labelling sheet of judge --human-sample as filled in (`FILE`, CSV or JSONL; a directory or glob of shards, each CSV shard with the header), calibrated as the lock's dimension relevance (with --judge-qrels)")
	fs.StringVar(&o.files.JudgeQrels, "judge-qrels", "", "instead of --judge: the judge's labels as judge writes them (`FILE`: --qrels or --judgments; a directory or glob of shards), with --human-sheet")
	fs.StringVar(&o.run.LockBase, "lock-base", "", "git ref whose copy of the lock must hold the same constants (but for a panel adoption the lock declares against a single-rater base), and whose human labels the carried-over dimensions must keep")
	fs.BoolVar(&o.run.GitAnchoring, "git-anchoring", false, "also require the commit that last changed --human to be a strict ancestor of the one that last changed --judge, and every paired human label, per rater, to be committed before the judge run it is compared with")
	fs.StringVar(&o.jsonOut, "json", "", "write the calibration JSON here")
	fs.StringVar(&o.mdOut, "markdown", "", "write the Markdown report here")
	fs.IntVar(&o.run.Resamples, "bootstrap", metrics.DefaultResamples, fmt.Sprintf("bootstrap resamples for the weighted-kappa CI (0: no CI; at most %d)", metrics.MaxResamples))
	maxUnpaired := fs.String("max-unpaired", "", "fail the gate when a gated dimension has more unpaired labels than `N` (a count) or P% of its labelled cases (default: no limit)")
	o.comment.register(fs, calibrateCommentKey)
	src, err := parseFlags(fs, env, args, calibrateInputs)
	if err != nil {
		return nil, err
	}
	if err := o.run.Validate(o.files); err != nil {
		return nil, src.option("calibrate", err)
	}
	if err := o.comment.validate("calibrate", src); err != nil {
		return nil, err
	}
	// The git guards read the history of one file each: a labels file given as
	// shards has none.
	for _, x := range []struct{ flag, path string }{{"human", o.files.Human}, {"judge", o.files.Judge}} {
		if (o.run.LockBase != "" || o.run.GitAnchoring) && x.path != "" && input.IsSharded(x.path) {
			return nil, usagef("calibrate: --lock-base and --git-anchoring read the git history of one labels file; %s is read as shards (a directory, a glob or a Parquet file): give it as one JSONL file", src.with(x.flag, x.path))
		}
	}
	if o.run.Resamples < 0 || o.run.Resamples > metrics.MaxResamples {
		return nil, src.refuse("calibrate", "bootstrap", fmt.Sprintf("must be between 0 and %d", metrics.MaxResamples))
	}
	if *maxUnpaired != "" {
		l, err := calibrate.ParseUnpairedLimit(*maxUnpaired)
		if err != nil {
			return nil, src.refuseErr("calibrate", "max-unpaired", err)
		}
		o.run.MaxUnpaired = l
	}
	if err := refuseOverwrite("calibrate", src, []file{{"human", o.files.Human}, {"judge", o.files.Judge}, {"lock", o.files.Lock}, {"human-sheet", o.files.HumanSheet}, {"judge-qrels", o.files.JudgeQrels}},
		[]file{{"json", o.jsonOut}, {"markdown", o.mdOut}}); err != nil {
		return nil, err
	}
	return o, nil
}

// runCalibrate reads, evaluates and reports. A cancelled ctx (SIGINT,
// SIGTERM) stops the reading, the pairing and the bootstrap within moments; it
// is checked once more before the first report is printed, so an interrupted
// run writes nothing, and says so whatever stopped first (a reader, git, the
// bootstrap): the signal is the cause.
func runCalibrate(ctx context.Context, f *Factory, o *calibrateOptions) (err error) {
	defer func() {
		if ge := (*GateError)(nil); err != nil && ctx.Err() != nil && !errors.As(err, &ge) {
			err = interruptedf("calibrate: interrupted, nothing written: %w", ctx.Err())
		}
	}()
	env := f.Env
	// The outputs, all or none (an unwritable one fails before the inputs are read).
	outs := atomicfile.NewSet()
	defer outs.Abort()
	ws, err := outs.AddAll(o.jsonOut, o.mdOut)
	if err != nil {
		return err
	}
	var files opened
	defer files.close()
	in, err := openCalibrate(ctx, &files, o.files)
	if err != nil {
		return err
	}
	res, err := calibrate.Run(ctx, in, o.run)
	err = files.remap(err) // the shard of sharded --judge-qrels
	if err != nil {
		if ie := (*calibrate.InputError)(nil); errors.As(err, &ie) { // an unknown ref, not a repository
			return usagef("calibrate: %s", ie.Msg)
		}
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}

	doc := calibratereport.New(res)
	if err := atomicfile.Render(ws, doc.WriteJSON, func(w io.Writer) error { return doc.Markdown(w, publish.Marker(o.comment.key)) }); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err // the temp files are removed, no report replaced
	}
	if err := printText(outs, env, doc.Text); err != nil {
		return err
	}
	if err := outs.Commit(ctx); err != nil {
		return err
	}
	var md strings.Builder
	if err := doc.Markdown(&md, publish.Marker(o.comment.key)); err != nil {
		return err
	}
	f.Publisher().Publish(ctx, o.comment.publication(publish.Calibrate(res, md.String(), o.jsonOut, calibratereport.ViolationReason)))
	return gateError(res.Failed())
}

// openCalibrate reads the lock and opens the labels files of a calibration as
// calibrate.In, the git guards reading the repositories on disk. The errors
// read as they did when calibrate opened the files itself.
func openCalibrate(ctx context.Context, files *opened, f calibrate.Files) (calibrate.In, error) {
	in := calibrate.In{Repos: calibrate.GitRepos{}}
	lock, err := labelfile.ReadLockFile(ctx, f.Lock)
	if err != nil {
		return in, fmt.Errorf("failed to read lock: %w", err)
	}
	in.Lock = lock
	// Each a file, a directory or a glob of shards, or a Parquet file; the
	// sheet's CSV shards each with the header.
	for _, x := range []struct {
		path, wrap string
		to         *calibrate.Reader
		sheet      bool
	}{
		{f.HumanSheet, "failed to read the human sheet: %w", &in.HumanSheet, true},
		{f.JudgeQrels, "failed to read the judge's qrels: failed to read qrels: %w", &in.JudgeQrels, false},
		{f.Human, "failed to read human labels: %w", &in.Human, false},
		{f.Judge, "failed to read judge scores: %w", &in.Judge, false},
	} {
		if x.path == "" {
			continue
		}
		var r io.Reader
		var err error
		if x.sheet {
			r, err = files.sheet(ctx, x.path, x.wrap)
		} else {
			r, err = files.shards(ctx, x.path, x.wrap)
		}
		if err != nil {
			return in, err
		}
		*x.to = calibrate.Reader{Name: x.path, R: r}
	}
	return in, nil
}

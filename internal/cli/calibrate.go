package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/retrieval-gate/retrieval-gate/internal/atomicfile"
	"github.com/retrieval-gate/retrieval-gate/internal/calibrate"
	"github.com/retrieval-gate/retrieval-gate/internal/dataset"
	"github.com/retrieval-gate/retrieval-gate/internal/github"
	"github.com/retrieval-gate/retrieval-gate/internal/metrics"
	"github.com/retrieval-gate/retrieval-gate/internal/report"
)

// CalibrateCommand is `retrieval-gate calibrate`: agreement between human labels and
// an LLM judge under the frozen constants of a lock.
type CalibrateCommand struct{}

func (c *CalibrateCommand) Name() string { return "calibrate" }
func (c *CalibrateCommand) Synopsis() string {
	return "agreement (kappa) between human labels and an LLM judge under a frozen lock"
}

func (c *CalibrateCommand) Run(ctx context.Context, env *Env, args []string) error {
	fs := newFlagSet(env, "calibrate")
	human := fs.String("human", "", "human labels JSONL (required)")
	judge := fs.String("judge", "", "judge scores JSONL (required)")
	lockPath := fs.String("lock", "", "lock file of frozen constants, JSON or YAML (required)")
	lockBase := fs.String("lock-base", "", "git ref whose copy of the lock must be identical")
	gitAnchoring := fs.Bool("git-anchoring", false, "also require the commit that last changed --human to be a strict ancestor of the one that last changed --judge")
	jsonOut := fs.String("json", "", "write the calibration JSON here")
	mdOut := fs.String("markdown", "", "write the Markdown report here")
	commentKey := fs.String("comment-key", "calibrate", "key of the report's hidden marker (one PR comment per key)")
	resamples := fs.Int("bootstrap", calibrate.DefaultResamples, "bootstrap resamples for the weighted-kappa CI (0: no CI)")
	maxUnpaired := fs.String("max-unpaired", "", "fail the gate when a gated dimension has more unpaired labels than `N` (a count) or P% of its labelled cases (default: no limit)")
	comment := fs.String("comment", commentAuto, "PR comment: auto, always or never")
	var action actionFlags // --pr; GitHub glue in actions.go
	action.register(fs)
	if err := parseFlags(fs, env, args); err != nil {
		return err
	}
	if err := validCommentMode(*comment); err != nil {
		return err
	}
	for _, f := range []struct{ name, v string }{{"human", *human}, {"judge", *judge}, {"lock", *lockPath}} {
		if f.v == "" {
			return usagef("calibrate: --%s is required", f.name)
		}
	}
	if !report.ValidCommentKey(*commentKey) {
		return usagef("calibrate: --comment-key %q must be 1 to 100 of A-Z a-z 0-9 . _ / -", *commentKey)
	}
	if *resamples < 0 {
		return usagef("calibrate: --bootstrap must be ≥ 0, got %d", *resamples)
	}
	var unpairedLimit *calibrate.UnpairedLimit
	if *maxUnpaired != "" {
		l, err := calibrate.ParseUnpairedLimit(*maxUnpaired)
		if err != nil {
			return usagef("calibrate: --max-unpaired: %v", err)
		}
		unpairedLimit = l
	}

	// Inputs are never overwritten by a report.
	for _, out := range []struct{ flag, path string }{{"json", *jsonOut}, {"markdown", *mdOut}} {
		for _, in := range []string{*human, *judge, *lockPath} {
			if out.path != "" && samePath(out.path, in) {
				return usagef("calibrate: --%s %s would overwrite the input %s", out.flag, out.path, in)
			}
		}
	}
	if *jsonOut != "" && *mdOut != "" && samePath(*jsonOut, *mdOut) {
		return usagef("calibrate: --json and --markdown are the same file %s", *jsonOut)
	}

	lockData, err := os.ReadFile(*lockPath)
	if err != nil {
		return fmt.Errorf("failed to read lock: %w", err)
	}
	lock, err := dataset.ReadLock(lockData, *lockPath)
	if err != nil {
		return fmt.Errorf("failed to read lock: %w", err)
	}
	hs, err := readLabelFile(*human, dataset.HumanSide, lock)
	if err != nil {
		return fmt.Errorf("failed to read human labels: %w", err)
	}
	js, err := readLabelFile(*judge, dataset.JudgeSide, lock)
	if err != nil {
		return fmt.Errorf("failed to read judge scores: %w", err)
	}

	// The git checks first: an unknown ref is an input error before any work.
	var lc *calibrate.LockCheck
	if *lockBase != "" {
		if lc, err = calibrate.CheckLock(ctx, *lockPath, *lockBase, lock); err != nil {
			return inputErr(err)
		}
	}
	var ga *calibrate.GitAnchoring
	if *gitAnchoring {
		if ga, err = calibrate.CheckGitAnchoring(ctx, *human, *judge); err != nil {
			return inputErr(err)
		}
	}
	res := calibrate.Evaluate(calibrate.Input{Lock: lock, Human: hs, Judge: js, Resamples: *resamples, Seed: metrics.DefaultSeed, MaxUnpaired: unpairedLimit})
	res.LockCheck, res.GitAnchor = lc, ga
	res.Finish()

	if err := report.CalibrationText(env.Stdout, res); err != nil {
		return err
	}
	if *jsonOut != "" {
		if err := atomicfile.Write(*jsonOut, func(w io.Writer) error { return report.CalibrationJSON(w, res) }); err != nil {
			return err
		}
	}
	if *mdOut != "" {
		if err := atomicfile.Write(*mdOut, func(w io.Writer) error { return report.CalibrationMarkdown(w, res, *commentKey) }); err != nil {
			return err
		}
	}
	var md strings.Builder
	if err := report.CalibrationMarkdown(&md, res, *commentKey); err != nil {
		return err
	}
	publish(ctx, env, calibratePublication(res, md.String(), *commentKey, *comment, *jsonOut, action))
	if len(res.Failed) > 0 {
		return &GateError{Failed: res.Failed}
	}
	return nil
}

// calibratePublication hands the calibration to GitHub (actions.go): the Markdown
// for the job summary and the sticky PR comment under its own key, the step
// outputs `verdict` and `json`, and one annotation per violating label.
func calibratePublication(r *calibrate.Result, md, key, mode, jsonPath string, af actionFlags) publication {
	var anns []annotation
	var total int64
	for _, d := range r.Dimensions {
		for _, v := range d.Violations {
			total++
			if len(anns) < github.MaxAnnotations {
				anns = append(anns, annotation{File: v.File, Line: v.Line, Title: "retrieval-gate: calibrate " + d.Status,
					Message: fmt.Sprintf("%s, case %s: %s", d.Name, v.CaseID, v.Reason)})
			}
		}
	}
	return publication{
		Key:              key,
		Markdown:         md,
		Outputs:          map[string]string{"verdict": r.Verdict(), "json": jsonPath},
		Annotations:      anns,
		AnnotationsTotal: total,
		CommentMode:      mode,
		PR:               af.pr,
	}
}

// inputErr turns a calibrate.InputError (unknown ref, not a repository) into a usage
// error; anything else stays an input error. Both are exit code 2.
func inputErr(err error) error {
	var ie *calibrate.InputError
	if errors.As(err, &ie) {
		return usagef("calibrate: %s", ie.Msg)
	}
	return err
}

func readLabelFile(path string, side dataset.LabelSide, lock *dataset.Lock) ([]dataset.Label, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return dataset.ReadLabels(f, path, side, lock)
}

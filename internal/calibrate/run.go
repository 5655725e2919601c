package calibrate

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"

	"github.com/retrieval-gate/retrieval-gate/internal/input/labelfile"
)

// Files name the files of a calibration as the front end gives them (it opens
// them: In): the human labels, the judge's scores and the lock of frozen
// constants they are read with.
type Files struct {
	Human, Judge, Lock string
	// HumanSheet and JudgeQrels replace Human and Judge: the labelling sheet of
	// judge --human-sample as filled in, and the judge's qrels (SheetLabels).
	HumanSheet, JudgeQrels string
}

// Reader is one input of a calibration: its bytes and its name, the path the
// git guards find it by in its repository (Repos).
type Reader struct {
	Name string
	R    io.Reader
}

// In is what a calibration reads, all opened by the front end: the lock of
// frozen constants (read first: the labels are read with it; Lock.File is its
// path), the human labels and the judge's scores (or, with HumanSheet's R set,
// the filled-in labelling sheet and the judge's qrels), and the repositories
// of the git guards (Options.LockBase, GitAnchoring; GitRepos).
type In struct {
	Lock                   *labelfile.Lock
	Human, Judge           Reader
	HumanSheet, JudgeQrels Reader
	Repos                  Repos
}

// Options are the options of a calibration (the calibrate command's), each set
// once, here.
type Options struct {
	// LockBase, when set, is the git ref whose copy of the lock must be identical
	// and whose copy of the human labels the carried-over dimensions must keep.
	LockBase string
	// GitAnchoring also requires the commit that last changed the human labels to
	// be a strict ancestor of the one that last changed the judge's scores, and
	// every paired human label to be committed before its judge score (CheckBlind).
	GitAnchoring bool
	Resamples    int    // bootstrap resamples of the kappa CI; 0 disables it
	Seed         uint64 // metrics.DefaultSeed for reproducible reports
	MaxUnpaired  *UnpairedLimit
}

// Run reads both label files with the lock, makes the git checks (first: an
// unknown ref is an *InputError before any work) and evaluates the agreement,
// finished (Result.Finish). A cancelled ctx stops it within moments. It opens
// no file: the git guards read through in.Repos.
func Run(ctx context.Context, in In, o Options) (*Result, error) {
	if (o.LockBase != "" || o.GitAnchoring) && in.Repos == nil {
		return nil, errors.New("calibrate: the git guards need the repositories (In.Repos)")
	}
	lock := in.Lock
	var err error
	human, judge := in.Human.Name, in.Judge.Name // the files git anchoring reads
	var hs, js *labelfile.Labels
	if in.HumanSheet.R != nil {
		h, j, err := SheetLabels(ctx, lock, in.HumanSheet, in.JudgeQrels)
		if err != nil {
			return nil, err
		}
		hs, js = labelfile.FromLabels(h), labelfile.FromLabels(j)
		human, judge = in.HumanSheet.Name, in.JudgeQrels.Name
	} else {
		if hs, err = labelfile.ReadLabels(ctx, in.Human.R, in.Human.Name, labelfile.HumanSide, lock); err != nil {
			return nil, fmt.Errorf("failed to read human labels: %w", err)
		}
		if js, err = labelfile.ReadLabels(ctx, in.Judge.R, in.Judge.Name, labelfile.JudgeSide, lock); err != nil {
			return nil, fmt.Errorf("failed to read judge scores: %w", err)
		}
	}
	var lc *LockCheck
	if o.LockBase != "" {
		if lc, err = CheckLock(ctx, in.Repos, lock.File, o.LockBase, lock); err != nil {
			return nil, err
		}
	}
	var co *CarriedOverCheck
	if o.LockBase != "" {
		if co, err = CheckCarriedOver(ctx, in.Repos, human, o.LockBase, hs, lock); err != nil {
			return nil, err
		}
	}
	var ga *GitAnchoring
	var bc *BlindCheck
	if o.GitAnchoring {
		if ga, err = CheckGitAnchoring(ctx, in.Repos, human, judge); err != nil {
			return nil, err
		}
		if bc, err = CheckBlind(ctx, in.Repos, human, judge, hs, js, lock); err != nil {
			return nil, err
		}
	}
	res, err := Evaluate(ctx, Input{Lock: lock, Human: hs, Judge: js, Resamples: o.Resamples, Seed: o.Seed, MaxUnpaired: o.MaxUnpaired})
	if err != nil {
		return nil, err
	}
	// The label records are garbage now (the result keeps only case ids, in
	// their slabs): one collection here, while the heap is mostly them, lets
	// the collector size its headroom for the reports from what stays live,
	// instead of letting the heap grow to twice the labels first (at 1M pairs:
	// 246 -> see BENCHMARKS.md). hs and js are not used below, so nothing
	// keeps them live.
	runtime.GC()
	if in.HumanSheet.R != nil {
		// The sheet's labels and the judge's qrels declare no construct:
		// SheetLabels gave both the lock's, which the report must not present
		// as declared.
		for _, d := range res.Dimensions {
			if d.Name == SheetDimension {
				d.HumanConstructs, d.JudgeConstructs, d.ConstructsAssigned = []string{}, []string{}, true
			}
		}
	}
	res.LockCheck, res.GitAnchor, res.CarriedOver, res.Blind = lc, ga, co, bc
	res.Finish()
	return res, ctx.Err()
}

package calibrate

import (
	"context"
	"fmt"
	"runtime"

	"github.com/retrieval-gate/retrieval-gate/internal/input/labelfile"
)

// Files are the files a calibration reads: the human labels, the judge's scores
// and the lock of frozen constants they are read with.
type Files struct {
	Human, Judge, Lock string
	// HumanSheet and JudgeQrels replace Human and Judge: the labelling sheet of
	// judge --human-sample as filled in, and the judge's qrels (SheetLabels).
	HumanSheet, JudgeQrels string
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

// Run reads the lock and both label files, makes the git checks (first: an
// unknown ref is an *InputError before any work) and evaluates the agreement,
// finished (Result.Finish). A cancelled ctx stops it within moments.
func Run(ctx context.Context, f Files, o Options) (*Result, error) {
	lock, err := labelfile.ReadLockFile(ctx, f.Lock)
	if err != nil {
		return nil, fmt.Errorf("failed to read lock: %w", err)
	}
	var hs, js *labelfile.Labels
	if f.HumanSheet != "" {
		h, j, err := SheetLabels(ctx, lock, f.HumanSheet, f.JudgeQrels)
		if err != nil {
			return nil, err
		}
		hs, js = labelfile.FromLabels(h), labelfile.FromLabels(j)
		f.Human, f.Judge = f.HumanSheet, f.JudgeQrels // the files git anchoring reads
	} else {
		if hs, err = labelfile.ReadLabelsFile(ctx, f.Human, labelfile.HumanSide, lock); err != nil {
			return nil, fmt.Errorf("failed to read human labels: %w", err)
		}
		if js, err = labelfile.ReadLabelsFile(ctx, f.Judge, labelfile.JudgeSide, lock); err != nil {
			return nil, fmt.Errorf("failed to read judge scores: %w", err)
		}
	}
	var lc *LockCheck
	if o.LockBase != "" {
		if lc, err = CheckLock(ctx, f.Lock, o.LockBase, lock); err != nil {
			return nil, err
		}
	}
	var co *CarriedOverCheck
	if o.LockBase != "" {
		if co, err = CheckCarriedOver(ctx, f.Human, o.LockBase, hs, lock); err != nil {
			return nil, err
		}
	}
	var ga *GitAnchoring
	var bc *BlindCheck
	if o.GitAnchoring {
		if ga, err = CheckGitAnchoring(ctx, f.Human, f.Judge); err != nil {
			return nil, err
		}
		if bc, err = CheckBlind(ctx, f.Human, f.Judge, hs, js, lock); err != nil {
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
	res.LockCheck, res.GitAnchor, res.CarriedOver, res.Blind = lc, ga, co, bc
	res.Finish()
	return res, ctx.Err()
}

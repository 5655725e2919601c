package calibrate

import "github.com/retrieval-gate/retrieval-gate/internal/option"

// Validate checks which files a calibration is given: the lock, and the human
// labels and judge scores, or the labelling sheet and the judge's qrels (which
// the git guards do not read yet).
func (o *Options) Validate(f Files) error {
	sheet := f.HumanSheet != "" || f.JudgeQrels != ""
	switch {
	case sheet && (f.Human != "" || f.Judge != ""):
		return option.Conflict("--human-sheet and --judge-qrels replace --human and --judge; give one pair")
	case sheet && (f.HumanSheet == "" || f.JudgeQrels == ""):
		return option.Conflict("--human-sheet and --judge-qrels go together")
	case sheet && (o.LockBase != "" || o.GitAnchoring):
		// Their git checks read the labels files as calibrate's JSONL, line by line.
		return option.Conflict("--lock-base and --git-anchoring read --human and --judge label files; they do not take --human-sheet yet")
	case f.Human == "" && !sheet:
		return option.Required("human", "")
	case f.Judge == "" && !sheet:
		return option.Required("judge", "")
	case f.Lock == "":
		return option.Required("lock", "")
	}
	return nil
}

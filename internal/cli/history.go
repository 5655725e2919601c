package cli

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strconv"

	"github.com/retrieval-gate/retrieval-gate/internal/format"
	"github.com/retrieval-gate/retrieval-gate/internal/gate"
	"github.com/retrieval-gate/retrieval-gate/internal/history"
)

// historyRecord is this run's history record (history.NewRecord), its
// document written by doc.
func historyRecord(ctx context.Context, env *Env, command string, in fingerprint, doc func(io.Writer) error) (history.Record, error) {
	var b bytes.Buffer
	if err := doc(&b); err != nil {
		return history.Record{}, err
	}
	return history.NewRecord(ctx, env.Getenv, command, in.inputs, in.params, b.Bytes())
}

// historyRun is the history of one run: the record (when --history or
// --history-branch asks for one), appended to the local history at once and
// to the branch once the outputs are published.
type historyRun struct {
	rec    *history.Record
	branch string // --history-branch
}

// recordHistory builds the record when one is asked for and appends it to the
// local history at path (--history DIR or FILE.jsonl; nothing when empty).
func recordHistory(ctx context.Context, env *Env, path, branch, command string, in fingerprint, doc func(io.Writer) error) (historyRun, error) {
	run := historyRun{branch: branch}
	if path == "" && branch == "" {
		return run, nil
	}
	rec, err := historyRecord(ctx, env, command, in, doc)
	if err != nil {
		return run, err
	}
	run.rec = &rec
	if path != "" {
		warning, err := history.AppendWarn(path, rec)
		if warning != "" {
			fmt.Fprintf(env.Stderr, "retrieval-gate: warning: history: %s\n", format.SanitizeText(warning))
		}
		if err != nil {
			return run, fmt.Errorf("--history: %w", err)
		}
	}
	return run, nil
}

// historyFile is the file --history appends to ("" when not given), for the
// overwrite guard.
func historyFile(path string) string {
	if path == "" {
		return ""
	}
	return history.File(path)
}

func floorParam(f gate.Floor) string {
	if !f.Set {
		return "off"
	}
	return strconv.FormatFloat(f.Value, 'g', -1, 64)
}

// fingerprint is what a run's numbers depend on: input files by role, and parameters.
type fingerprint struct{ inputs, params map[string]string }

// checkFingerprint: the cases (unless read from standard input), the KB, k, the
// reference locale, the floors and the parent separator.
func checkFingerprint(o *checkOptions) fingerprint {
	fp := fingerprint{
		inputs: map[string]string{"kb": o.kb},
		params: map[string]string{"k": strconv.Itoa(o.k), "reference-locale": o.referenceLocale,
			"min-hit": floorParam(o.minHit), "min-recall": floorParam(o.minRecall), "parent-from-id": o.parentSep},
	}
	if o.cases == "-" {
		fp.params["cases"] = "stdin (not fingerprinted)"
	} else {
		fp.inputs["cases"] = o.cases
	}
	return fp
}

// compareFingerprint: the qrels, each run by name, and every parameter.
func compareFingerprint(o *compareOptions) fingerprint {
	fp := fingerprint{
		inputs: map[string]string{"qrels": o.qrels},
		params: map[string]string{"k": strconv.Itoa(o.run.K), "gain": o.run.Gain.String(), "relevant-level": strconv.Itoa(o.run.RelevantLevel),
			"baseline": o.run.Baseline, "bootstrap": strconv.Itoa(o.run.Resamples), "seed": strconv.FormatUint(o.run.Seed, 10)},
	}
	for i, n := range o.runs.names {
		fp.inputs["run:"+n] = o.runs.files[i]
	}
	if o.humanQrels != "" { // corrected figures are another series
		fp.inputs["human-qrels"] = o.humanQrels
	}
	return fp
}

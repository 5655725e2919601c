package cli

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/retrieval-gate/retrieval-gate/internal/gate"
	"github.com/retrieval-gate/retrieval-gate/internal/history"
)

// appendHistory appends this run to the history at path (--history DIR or
// FILE.jsonl; nothing when empty): the time, the commit and branch (GitHub's
// GITHUB_SHA and GITHUB_HEAD_REF or GITHUB_REF_NAME, else git in the working
// directory, else empty), the fingerprint of the inputs and the command's JSON
// document, written by doc.
func appendHistory(ctx context.Context, env *Env, path, command string, inputs, params map[string]string, doc func(io.Writer) error) error {
	if path == "" {
		return nil
	}
	fp, err := history.NewFingerprint(inputs, params)
	if err != nil {
		return fmt.Errorf("--history: %w", err)
	}
	var b bytes.Buffer
	if err := doc(&b); err != nil {
		return err
	}
	now, err := history.Now(env.Getenv)
	if err != nil {
		return usagef("--history: %v", err)
	}
	commit, branch := env.Getenv("GITHUB_SHA"), env.Getenv("GITHUB_HEAD_REF")
	if branch == "" {
		branch = env.Getenv("GITHUB_REF_NAME")
	}
	if commit == "" {
		commit = git(ctx, "rev-parse", "HEAD")
	}
	if branch == "" {
		branch = git(ctx, "rev-parse", "--abbrev-ref", "HEAD")
	}
	rec := history.Record{Command: command, Commit: commit, Branch: branch, Time: now.Format(time.RFC3339),
		Fingerprint: fp, Document: b.Bytes()}
	if err := history.Append(path, rec); err != nil {
		return fmt.Errorf("--history: %w", err)
	}
	return nil
}

// git returns the trimmed output of a git command, or "" when it fails.
func git(ctx context.Context, args ...string) string {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "git", args...).Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}

// validHistory refuses a --history that names an input file, before anything
// is written.
func validHistory(command, path string, inputs map[string]string) error {
	if path == "" {
		return nil
	}
	file := history.File(path)
	for _, in := range inputs {
		if samePath(file, in) {
			return usagef("%s: --history %s would append to the input %s", command, path, in)
		}
	}
	return nil
}

func floorParam(f gate.Floor) string {
	if !f.Set {
		return "off"
	}
	return strconv.FormatFloat(f.Value, 'g', -1, 64)
}

// checkInputs and checkParams are what a check run's numbers depend on.
func checkInputs(o *checkOptions) map[string]string {
	in := map[string]string{"kb": o.kb}
	if o.cases != "-" {
		in["cases"] = o.cases
	}
	return in
}

func checkParams(o *checkOptions) map[string]string {
	p := map[string]string{"k": strconv.Itoa(o.k), "reference-locale": o.referenceLocale,
		"min-hit": floorParam(o.minHit), "min-recall": floorParam(o.minRecall)}
	if o.cases == "-" {
		p["cases"] = "stdin (not fingerprinted)"
	}
	return p
}

// compareFingerprint is what a compare run's numbers depend on.
func compareFingerprint(qrels string, names, files []string, k int, gain string, level int, baseline string, resamples int, seed uint64) (inputs, params map[string]string) {
	inputs = map[string]string{"qrels": qrels}
	for i, n := range names {
		inputs["run:"+n] = files[i]
	}
	params = map[string]string{"k": strconv.Itoa(k), "gain": gain, "relevant-level": strconv.Itoa(level),
		"baseline": baseline, "bootstrap": strconv.Itoa(resamples), "seed": strconv.FormatUint(seed, 10)}
	return inputs, params
}

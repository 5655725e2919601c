// Package evaluate is `retrieval-gate evaluate`, the whole pipeline (generate
// -> retrieve with each strategy -> judge the pool -> compare): Run composes
// the stages' domain Runs in memory (run.go), the plan gives every stage's
// options and command line (DIR/stages.txt), and the package names the files
// the front end keeps in the evaluation's directory and the fingerprint of an
// evaluation in the history. It opens no file, reads no environment and writes
// no prose but the stages' command lines: the front end (Front) opens the
// inputs, makes the services and writes each stage's files.
package evaluate

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/retrieval-gate/retrieval-gate/internal/generate"
	"github.com/retrieval-gate/retrieval-gate/internal/judge"
	"github.com/retrieval-gate/retrieval-gate/internal/retrieve"
)

// Files are the files evaluate writes in its directory, besides the runs
// (RunFile).
var Files = []string{"stages.txt", "cases.jsonl", "judge-cache.jsonl", "qrels.txt", "judgments.jsonl", "judge.json",
	"compare.json", "compare.md", "per-query.jsonl", "compare.html"}

// StaleFiles are the files of evaluate's directory that an earlier run may
// have left and a new run replaces: every file of Files and every run's
// (Runs, with a reranker), but stages.txt (each run writes its own) and the
// judge's cache, which a rerun reads. The batch state files, which a rerun
// reads to pick its batches up, are none of them either.
func StaleFiles() []string {
	var out []string
	for _, name := range Files {
		if name != "stages.txt" && name != "judge-cache.jsonl" {
			out = append(out, name)
		}
	}
	for _, r := range Runs(true) {
		out = append(out, RunFile(r.Name))
	}
	return out
}

// RunFile is the file of the run named name in evaluate's directory.
func RunFile(name string) string { return "run-" + name + ".jsonl" }

// RunSpec is one retrieve stage: its run's name (the strategy, "+rerank" when
// reranked), strategy and whether it reranks.
type RunSpec struct {
	Name, Strategy string
	Rerank         bool
}

// Runs are the runs evaluate retrieves, in order: every strategy, then, with a
// reranker, every strategy reranked.
func Runs(rerank bool) []RunSpec {
	var out []RunSpec
	for _, rr := range []bool{false, true} {
		if rr && !rerank {
			break
		}
		for _, s := range retrieve.Strategies {
			name := s
			if rr {
				name += "+rerank"
			}
			out = append(out, RunSpec{Name: name, Strategy: s, Rerank: rr})
		}
	}
	return out
}

// Stage is one command of the pipeline: its name and its arguments (its
// command line in DIR/stages.txt, to rerun it alone).
type Stage struct {
	Name string
	Args []string
}

// String is the stage's command line, quoted for a POSIX shell.
func (s Stage) String() string {
	parts := []string{"retrieval-gate", s.Name}
	for _, a := range s.Args {
		parts = append(parts, shellQuote(a))
	}
	return strings.Join(parts, " ")
}

// shellQuote quotes a for a POSIX shell when it needs it.
func shellQuote(a string) string {
	if a != "" && strings.IndexFunc(a, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./:=+,@%", r))
	}) < 0 {
		return a
	}
	return "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
}

// WriteStages writes DIR/stages.txt: a comment, the notes as comments, then
// each stage's command line.
func WriteStages(w io.Writer, stages []Stage, notes ...string) error {
	if _, err := fmt.Fprintln(w, "# The stages of this evaluation, in order; each can be rerun alone."); err != nil {
		return err
	}
	for _, n := range notes {
		if _, err := fmt.Fprintln(w, "# "+n); err != nil {
			return err
		}
	}
	for _, s := range stages {
		if _, err := fmt.Fprintln(w, s.String()); err != nil {
			return err
		}
	}
	return nil
}

// FingerprintOf is what an evaluation's numbers depend on.
type FingerprintOf struct {
	KB, Cases            string // Cases "": generated from the KB
	K, Repeat, Bootstrap int
	Runs                 []string // the runs' names
	Judge                *judge.Result
	// Retrieval's store, embedder and embedding model, and whether it reranks.
	Store, Embedder, EmbedderModel string
	Rerank                         bool
	// The generator's model and documents per locale, when the cases are generated.
	GeneratorModel string
	PerLocale      int
}

// Fingerprint is an evaluation's fingerprint in the history, its inputs (files)
// and its parameters: the KB; the cases, or when they are generated the
// generator's model, prompt and parameters; k and the strategies; the judge's
// model, prompt (the SHA-256 of the template the judge stage used), answer
// format and repeats; retrieval's store, embedder and whether it reranks;
// compare's resamples. Server URLs are not recorded (they may carry
// credentials; the model names what they serve).
func Fingerprint(f FingerprintOf) (inputs, params map[string]string) {
	j := f.Judge
	answer := j.Format
	if j.FellBack {
		answer += " (the server rejected json)"
	}
	rerank := "off"
	if f.Rerank {
		rerank = "on"
	}
	inputs = map[string]string{"kb": f.KB}
	params = map[string]string{"k": strconv.Itoa(f.K), "strategies": strings.Join(f.Runs, ","),
		"judge-model": j.Model, "judge-prompt": j.Prompt.Version + " " + j.Prompt.Hash, "answer-format": answer,
		"repeat": strconv.Itoa(f.Repeat), "bootstrap": strconv.Itoa(f.Bootstrap),
		"store": f.Store, "embedder": f.Embedder, "embedder-model": f.EmbedderModel, "rerank": rerank}
	if f.Cases != "" {
		inputs["cases"] = f.Cases
	} else {
		p := generate.DefaultPrompt()
		params["cases"] = "generated"
		params["generator-model"] = f.GeneratorModel
		params["generator-prompt"] = p.Version + " " + p.Hash
		params["per-locale"] = strconv.Itoa(f.PerLocale)
	}
	return inputs, params
}

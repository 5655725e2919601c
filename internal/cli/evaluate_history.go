package cli

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/retrieval-gate/retrieval-gate/internal/evaluate"
	"github.com/retrieval-gate/retrieval-gate/internal/judge"
)

// evaluateOutputs are the outputs the overwrite guard checks: the history must
// be none of the stages' files.
func evaluateOutputs(o *evaluateOptions) []file {
	out := []file{{"history", historyFile(o.history)}, {"html", o.htmlOut}}
	if o.out != "" {
		for _, name := range evaluate.Files {
			out = append(out, file{"out", o.out + string(os.PathSeparator) + name})
		}
	}
	return out
}

// evaluateFingerprint is the evaluation's fingerprint (evaluate.Fingerprint).
func evaluateFingerprint(o *evaluateOptions, runs []string, j *judge.Result) fingerprint {
	var fp fingerprint
	fp.inputs, fp.params = evaluate.Fingerprint(evaluate.FingerprintOf{KB: o.kb, Cases: o.cases, K: o.k, Repeat: o.repeat,
		Bootstrap: o.bootstrap, Runs: runs, Judge: j, Store: o.retrieval.Store, Embedder: o.retrieval.Embedder,
		EmbedderModel: o.retrieval.EmbedderModel, Rerank: o.rerankURL != "", GeneratorModel: o.genModel, PerLocale: o.perLocale})
	return fp
}

// recordEvaluateHistory appends the evaluation to --history and returns the
// record for --history-branch (nothing without either): a record of command evaluate whose document is the compare stage's JSON
// report (retrieval-gate/compare@1), so `report --history --command evaluate`
// charts it like compare's runs, apart from them (their fingerprints differ).
func recordEvaluateHistory(ctx context.Context, env *Env, o *evaluateOptions, fp fingerprint, in func(string) string) (historyRun, error) {
	if o.history == "" && o.historyBranch == "" {
		return historyRun{}, nil
	}
	doc, err := os.ReadFile(in("compare.json"))
	if err != nil {
		return historyRun{}, fmt.Errorf("evaluate: --history: compare's report: %w", err)
	}
	return recordHistory(ctx, env, o.history, o.historyBranch, "evaluate", fp, func(w io.Writer) error {
		_, err := w.Write(doc)
		return err
	})
}

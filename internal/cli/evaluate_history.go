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
	if o.Out != "" {
		for _, name := range evaluate.Files {
			out = append(out, file{"out", o.Out + string(os.PathSeparator) + name})
		}
	}
	return out
}

// evaluateFingerprint is the evaluation's fingerprint (evaluate.Fingerprint).
func evaluateFingerprint(o *evaluateOptions, runs []string, j *judge.Result) fingerprint {
	var fp fingerprint
	fp.inputs, fp.params = evaluate.Fingerprint(evaluate.FingerprintOf{KB: o.KB, Cases: o.Cases, K: o.K, Repeat: o.Repeat,
		Bootstrap: o.Bootstrap, Runs: runs, Judge: j, Store: o.Retrieval.Store, Embedder: o.Retrieval.Embedder,
		EmbedderModel: o.Retrieval.EmbedderModel, Rerank: o.RerankURL != "", GeneratorModel: o.GeneratorModel, PerLocale: o.PerLocale})
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

package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/retrieval-gate/retrieval-gate/internal/generate"
	"github.com/retrieval-gate/retrieval-gate/internal/judge"
)

// evaluateFiles are the files evaluate writes in --out, besides the runs.
var evaluateFiles = []string{"stages.txt", "cases.jsonl", "judge-cache.jsonl", "qrels.txt", "judgments.jsonl", "judge.json",
	"compare.json", "compare.md", "per-query.jsonl", "compare.html"}

// evaluateOutputs are the outputs the overwrite guard checks: the history must
// be none of the stages' files.
func evaluateOutputs(o *evaluateOptions) []file {
	out := []file{{"history", historyFile(o.history)}, {"html", o.htmlOut}}
	if o.out != "" {
		for _, name := range evaluateFiles {
			out = append(out, file{"out", o.out + string(os.PathSeparator) + name})
		}
	}
	return out
}

// evaluateFingerprint is what an evaluation's numbers depend on: the KB; the
// cases, or when they are generated the generator's model, prompt and
// parameters; k and the strategies; the judge's model, prompt (the SHA-256 of
// the template the judge stage used), answer format and repeats; retrieval's
// store, embedder and whether it reranks; compare's resamples. Server URLs are
// not recorded (they may carry credentials; the model names what they serve).
func evaluateFingerprint(o *evaluateOptions, strategies []string, j *judge.Result) fingerprint {
	onOff := func(s string) string {
		if s == "" {
			return "off"
		}
		return "on"
	}
	format := j.Format
	if j.FellBack {
		format += " (the server rejected json)"
	}
	fp := fingerprint{
		inputs: map[string]string{"kb": o.kb},
		params: map[string]string{"k": strconv.Itoa(o.k), "strategies": strings.Join(strategies, ","),
			"judge-model": j.Model, "judge-prompt": j.Prompt.Version + " " + j.Prompt.Hash, "answer-format": format,
			"repeat": strconv.Itoa(o.repeat), "bootstrap": strconv.Itoa(o.bootstrap),
			"store": o.retrieval.Store, "embedder": o.retrieval.Embedder, "embedder-model": o.retrieval.EmbedderModel, "rerank": onOff(o.rerankURL)},
	}
	if o.cases != "" {
		fp.inputs["cases"] = o.cases
	} else {
		p := generate.DefaultPrompt()
		fp.params["cases"] = "generated"
		fp.params["generator-model"] = o.genModel
		fp.params["generator-prompt"] = p.Version + " " + p.Hash
		fp.params["per-locale"] = strconv.Itoa(o.perLocale)
	}
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

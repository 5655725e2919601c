package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/valyala/fastjson"

	"github.com/retrieval-gate/retrieval-gate/internal/generate"
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

// judgeUsed is what the judge stage reports it used (its --json report,
// retrieval-gate/judge@1): the model, the prompt template's version and
// SHA-256, and the answer format (with whether the server forced the fallback
// to text).
type judgeUsed struct {
	model, promptVersion, promptHash, format string
	fellBack                                 bool
}

func readJudgeUsed(path string) (judgeUsed, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return judgeUsed{}, err
	}
	v, err := fastjson.ParseBytes(b)
	if err != nil {
		return judgeUsed{}, fmt.Errorf("%s: %w", path, err)
	}
	return judgeUsed{model: string(v.GetStringBytes("model")), promptVersion: string(v.GetStringBytes("prompt", "version")),
		promptHash: string(v.GetStringBytes("prompt", "hash")), format: string(v.GetStringBytes("answer_format")),
		fellBack: v.GetBool("answer_format_fallback")}, nil
}

// evaluateFingerprint is what an evaluation's numbers depend on: the KB; the
// cases, or when they are generated the generator's model, prompt and
// parameters; k and the strategies; the judge's model, prompt (the SHA-256 of
// the template the judge stage used), answer format and repeats; retrieval's
// store, embedder and whether it reranks; compare's resamples. Server URLs are
// not recorded (they may carry credentials; the model names what they serve).
func evaluateFingerprint(o *evaluateOptions, strategies []string, j judgeUsed) fingerprint {
	onOff := func(s string) string {
		if s == "" {
			return "off"
		}
		return "on"
	}
	format := j.format
	if j.fellBack {
		format += " (the server rejected json)"
	}
	fp := fingerprint{
		inputs: map[string]string{"kb": o.kb},
		params: map[string]string{"k": strconv.Itoa(o.k), "strategies": strings.Join(strategies, ","),
			"judge-model": j.model, "judge-prompt": j.promptVersion + " " + j.promptHash, "answer-format": format,
			"repeat": strconv.Itoa(o.repeat), "bootstrap": strconv.Itoa(o.bootstrap),
			"store": o.store, "embedder": o.embedder, "embedder-model": o.embedderMdl, "rerank": onOff(o.rerankURL)},
	}
	if o.chromaURL != "" {
		fp.params["store"] = "chroma"
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

// evaluateRuns is what evaluate's compare stage needs to chart evaluate's runs
// on its dashboard: the history (--history, --history-branch) and this run's
// fingerprint, known once the judge stage has reported.
type evaluateRuns struct {
	src         trendSource
	fingerprint func() (fingerprint, error)
}

func newEvaluateRuns(o *evaluateOptions, strategies []string, in func(string) string) *evaluateRuns {
	return &evaluateRuns{src: trendSource{path: o.history, branch: o.historyBranch}, fingerprint: func() (fingerprint, error) {
		j, err := readJudgeUsed(in("judge.json"))
		if err != nil {
			return fingerprint{}, fmt.Errorf("evaluate: --history: the judge's report: %w", err)
		}
		return evaluateFingerprint(o, strategies, j), nil
	}}
}

// recordEvaluateHistory appends the evaluation to --history and returns the
// record for --history-branch (nothing without either): a record of command evaluate whose document is the compare stage's JSON
// report (retrieval-gate/compare@1), so `report --history --command evaluate`
// charts it like compare's runs, apart from them (their fingerprints differ).
func recordEvaluateHistory(ctx context.Context, env *Env, o *evaluateOptions, strategies []string, in func(string) string) (historyRun, error) {
	if o.history == "" && o.historyBranch == "" {
		return historyRun{}, nil
	}
	j, err := readJudgeUsed(in("judge.json"))
	if err != nil {
		return historyRun{}, fmt.Errorf("evaluate: --history: the judge's report: %w", err)
	}
	doc, err := os.ReadFile(in("compare.json"))
	if err != nil {
		return historyRun{}, fmt.Errorf("evaluate: --history: compare's report: %w", err)
	}
	return recordHistory(ctx, env, o.history, o.historyBranch, "evaluate", evaluateFingerprint(o, strategies, j), func(w io.Writer) error {
		_, err := w.Write(doc)
		return err
	})
}

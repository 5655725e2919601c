package judge

import (
	"slices"
	"strings"
	"time"

	"github.com/retrieval-gate/retrieval-gate/internal/llm"
	"github.com/retrieval-gate/retrieval-gate/internal/metrics"
	"github.com/retrieval-gate/retrieval-gate/internal/option"
)

// DefaultCache is the default judgment cache: a directory actions/cache can keep.
const DefaultCache = ".retrieval-gate-cache/judge.jsonl"

// RunOptions are the judge command's options, each set once: its files (Cache
// "none" is no cache), the pool depth, the server, the outputs, the batch
// modes (at most one: the Batch API, write the requests, read results) and the
// human labelling sheet (HumanSample queries, written to HumanSheet.csv and
// .jsonl).
type RunOptions struct {
	Files
	K, Repeat                       int
	LLM                             llm.Server
	Format                          string
	Price                           *Price
	QrelsOut, JudgmentsOut, JSONOut string
	Batch                           bool
	BatchOut, BatchIn               string
	// BatchAPI is the provider whose batch API --batch speaks and whose
	// request and result formats --batch-out and --batch-in write and read
	// (llm.Providers; default llm.ProviderOpenAI).
	BatchAPI    string
	BatchPoll   time.Duration
	HumanSample int
	HumanSheet  string
	HumanSeed   uint64
}

// NewRunOptions are the judge command's defaults.
func NewRunOptions() *RunOptions {
	return &RunOptions{Files: Files{Cache: DefaultCache}, K: 10, Repeat: 1, LLM: llm.Server{Concurrency: 4}, Format: FormatJSON,
		BatchPoll: llm.DefaultPoll.Initial, BatchAPI: llm.ProviderOpenAI, HumanSeed: metrics.DefaultSeed}
}

// SheetPaths are the two files of the human labelling sheet: BASE.csv and BASE.jsonl.
func (o *RunOptions) SheetPaths() (csvPath, jsonlPath string) {
	if o.HumanSheet == "" {
		return "", ""
	}
	return o.HumanSheet + ".csv", o.HumanSheet + ".jsonl"
}

// Validate checks the options (and makes Cache "none" no cache).
func (o *RunOptions) Validate() error {
	switch {
	case len(o.Runs) == 0:
		return option.Conflict("--run NAME=FILE is required (repeat it for each strategy)")
	case o.KB == "":
		return option.Required("kb", "")
	case o.BatchOut != "" && (o.Batch || o.BatchIn != ""), o.Batch && o.BatchIn != "":
		return option.Conflict("--batch, --batch-out and --batch-in are exclusive")
	case o.BatchOut != "" && (o.QrelsOut != "" || o.JudgmentsOut != "" || o.JSONOut != ""):
		return option.Conflict("--batch-out writes only the requests; judge --batch-in RESULTS writes the labels")
	case o.BatchOut == "" && o.QrelsOut == "" && o.JudgmentsOut == "":
		return option.Conflict("give --qrels FILE and/or --judgments FILE for the labels")
	case o.HumanSample < 0:
		return option.Refuse("human-sample", "must be 1 or more")
	case o.HumanSample > 0 && o.HumanSheet == "":
		return option.Conflict("--human-sample needs --human-sheet BASE (the sheet is written to BASE.csv and BASE.jsonl)")
	case o.HumanSample == 0 && o.HumanSheet != "":
		return option.Conflict("--human-sheet needs --human-sample N (the number of queries to label)")
	case o.HumanSample > 0 && o.BatchOut != "":
		return option.Conflict("--human-sample writes its sheet with the labels: give it to judge --batch-in RESULTS, not --batch-out")
	case o.K < 1 || o.K > 1000:
		return option.Refuse("k", "must be between 1 and 1000")
	case o.Repeat < 1 || o.Repeat > 10:
		return option.Refuse("repeat", "must be between 1 and 10")
	case o.Format != FormatJSON && o.Format != FormatText:
		return option.Refuse("answer-format", "must be json or text")
	case o.BatchPoll <= 0 || o.BatchPoll > time.Hour:
		return option.Refuse("batch-poll", "must be between 1ns and 1h")
	case !slices.Contains(llm.Providers, o.BatchAPI):
		return option.Refuse("batch-api", "must be "+strings.Join(llm.Providers[:len(llm.Providers)-1], ", ")+" or "+llm.Providers[len(llm.Providers)-1])
	case o.BatchAPI != llm.ProviderOpenAI && !o.Batch && o.BatchOut == "" && o.BatchIn == "":
		return option.Conflict("--batch-api " + o.BatchAPI + " needs --batch, --batch-out or --batch-in (online judging speaks the OpenAI chat completions API)")
	case o.BatchAPI != llm.ProviderOpenAI && o.LLM.Model == "":
		return option.Conflict("--batch-api " + o.BatchAPI + " needs --judge-model (its batch requests name the model; there is no server default)")
	}
	if o.Batch && o.LLM.URL == "" {
		// The providers' own APIs are the default servers of their batch APIs.
		switch o.BatchAPI {
		case llm.ProviderAnthropic:
			o.LLM.URL = llm.AnthropicURL
		case llm.ProviderGemini:
			o.LLM.URL = llm.GeminiURL
		}
	}
	if o.BatchOut != "" || o.BatchIn != "" {
		// No server: the model name is still part of the requests and the cache key.
		if err := o.LLM.ValidateBudget(); err != nil {
			return err
		}
	} else if err := o.LLM.Validate("judge"); err != nil {
		return err
	}
	if o.Cache == "none" {
		o.Cache = ""
	}
	if o.Batch && o.Cache == "" {
		return option.Conflict("--batch needs a --cache file: the batch id is kept beside it (CACHE" + BatchStateSuffix + ") for a rerun to resume")
	}
	return nil
}

package generate

import (
	"fmt"
	"time"

	"github.com/retrieval-gate/retrieval-gate/internal/judge"
	"github.com/retrieval-gate/retrieval-gate/internal/llm"
	"github.com/retrieval-gate/retrieval-gate/internal/option"
)

// RunOptions are the generate command's options, each set once: the KB and
// the cases written (Out), the sample, the server, the prompt, the filters and
// the batch modes (at most one: the Batch API, write the requests to
// BatchOut, read results from BatchIn).
type RunOptions struct {
	KB, Out             string
	PerLocale           int
	Seed                uint64
	Questions, Keywords int
	LLM                 llm.Server
	Batch               bool
	BatchOut, BatchIn   string
	BatchPoll           time.Duration
	Prompt, Format      string
	Jaccard             float64
	RoundTripK          int
}

// NewRunOptions are the generate command's defaults.
func NewRunOptions() *RunOptions {
	return &RunOptions{PerLocale: 20, Seed: 1, Questions: 2, Keywords: 1, LLM: llm.Server{Concurrency: 4}, Format: judge.FormatJSON, Jaccard: 0.8, BatchPoll: llm.DefaultPoll.Initial}
}

// Validate checks the options.
func (o *RunOptions) Validate() error {
	switch {
	case o.KB == "":
		return option.Required("kb", "")
	case o.BatchOut != "" && (o.Batch || o.BatchIn != ""), o.Batch && o.BatchIn != "":
		return option.Conflict("--batch, --batch-out and --batch-in are exclusive")
	case o.BatchOut != "" && o.Out != "":
		return option.Conflict("--batch-out writes only the requests; generate --batch-in RESULTS --out FILE writes the cases")
	case o.Out == "" && o.BatchOut == "":
		return option.Required("out", "")
	case o.PerLocale < 1:
		return option.Refuse("per-locale", "must be at least 1")
	case o.Questions < 0:
		return option.Refuse("questions", "must be ≥ 0")
	case o.Keywords < 0:
		return option.Refuse("keywords", "must be ≥ 0")
	case o.Questions+o.Keywords < 1 || o.Questions+o.Keywords > 20:
		return option.Conflict(option.Name("questions"), " and ", option.Name("keywords"), fmt.Sprintf(" must sum to 1-20, got %d and %d", o.Questions, o.Keywords))
	case o.Jaccard <= 0 || o.Jaccard > 1:
		return option.Refuse("dedup-jaccard", "must be in (0, 1]")
	case o.RoundTripK < 0:
		return option.Refuse("round-trip-k", "must be ≥ 0")
	case o.Format != judge.FormatJSON && o.Format != judge.FormatText:
		return option.Refuse("answer-format", "must be json or text")
	}
	if o.BatchOut != "" || o.BatchIn != "" {
		// No server: the model name is still part of the requests and their custom_id.
		if err := o.LLM.ValidateBudget(); err != nil {
			return err
		}
	} else if err := o.LLM.Validate("generator"); err != nil {
		return err
	}
	if o.BatchPoll <= 0 || o.BatchPoll > time.Hour {
		return option.Refuse("batch-poll", "must be between 1ns and 1h")
	}
	return nil
}

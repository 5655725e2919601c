// Package judgereport is the typed document of `judge` (schema
// retrieval-gate/judge@1, the --json report): the labels' counts, requests,
// tokens and cost, the judge's self-agreement, the batch and the holes, built
// from a judge result and its summary in one place (New). Like every report
// its numbers are format.Float and it does no arithmetic.
package judgereport

import (
	"io"
	"strconv"

	"github.com/retrieval-gate/retrieval-gate/internal/format"
	"github.com/retrieval-gate/retrieval-gate/internal/judge"
)

// Schema names the JSON report of judge.
const Schema = "retrieval-gate/judge@1"

// Meta is what the report says about the run's inputs and options: the runs'
// names, the pool depth and the price per 1,000 tokens (nil: none given).
type Meta struct {
	Runs  []string
	K     int
	Price *judge.Price
}

// Document is the judge report, its keys in the order they are written.
type Document struct {
	Schema       string   `json:"schema"`
	Model        string   `json:"model"`
	Prompt       Prompt   `json:"prompt"`
	AnswerFormat string   `json:"answer_format"`
	FellBack     bool     `json:"answer_format_fallback"`
	Runs         []string `json:"runs"`
	K            int      `json:"k"`
	Repeat       int      `json:"repeat"`
	Queries      int      `json:"queries"`
	Pairs        int      `json:"pairs"`
	Judged       int      `json:"judged"`
	Unjudged     Unjudged `json:"unjudged"`
	// Distribution counts the labelled pairs per grade ("0" to "3").
	Distribution map[string]int `json:"relevance_distribution"`
	Requests     Requests       `json:"requests"`
	Tokens       Tokens         `json:"tokens"`
	PricePer1K   *Price         `json:"price_per_1k"`
	// EstimatedCost is the tokens at PricePer1K (null without a price).
	EstimatedCost *format.Float `json:"estimated_cost"`
	SelfAgreement []Agreement   `json:"self_agreement"`
	Flickering    int           `json:"flickering_pairs"`
	// Batch is present after a batch run (--batch, --batch-in): its counts,
	// new vs cached judgments and throughput.
	Batch *Batch `json:"batch,omitempty"`
	// Holes counts the pool's pairs: labelled in --known-qrels, judged before
	// (cache), new (asked in this run).
	Holes Holes `json:"holes"`
}

// Prompt is the prompt's version and the hash of its template.
type Prompt struct {
	Version string `json:"version"`
	Hash    string `json:"hash"`
}

// Unjudged are the (pair, repeat) judgments without a valid grade: the pairs
// left unlabelled, the answers by cause, and the list.
type Unjudged struct {
	Pairs   int             `json:"pairs"`
	Answers map[string]int  `json:"answers"`
	List    []UnjudgedEntry `json:"list"`
}

// UnjudgedEntry is one judgment without a valid grade.
type UnjudgedEntry struct {
	QueryID string `json:"query_id"`
	DocID   string `json:"doc_id"`
	Repeat  int    `json:"repeat"`
	Cause   string `json:"cause"`
	Detail  string `json:"detail"`
}

// Requests are the chat calls made (a batch's request lines), the judgments
// read from the cache (cache hits), the judgments not asked because an
// earlier pair of the pool has the same prompt (reused: one request served
// both), and the retries after a bad answer.
type Requests struct {
	Made             int64 `json:"made"`
	Cached           int64 `json:"cached"`
	Reused           int64 `json:"reused"`
	BadAnswerRetries int64 `json:"bad_answer_retries"`
}

// Tokens are the tokens the server reported, and the responses without usage.
type Tokens struct {
	Prompt                int64 `json:"prompt"`
	Completion            int64 `json:"completion"`
	ResponsesWithoutUsage int64 `json:"responses_without_usage"`
}

// Price is the price per 1,000 tokens, completion and prompt.
type Price struct {
	Completion format.Float `json:"completion"`
	Prompt     format.Float `json:"prompt"`
}

// Agreement is the judge's self-agreement between two repeats (judge.Agreement).
type Agreement struct {
	Repeats       [2]int           `json:"repeats"`
	N             int              `json:"n"`
	Agreement     *format.Float    `json:"agreement"`
	Kappa         *format.Float    `json:"kappa"`
	WeightedKappa *format.Float    `json:"weighted_kappa"`
	Weighting     string           `json:"weighting"`
	CI95          *[2]format.Float `json:"ci95"`
	// CIMethod is how ci95 was computed (bca or wilson-disagreement), null
	// without it; Unreliable that its method covers less than 95% at this n,
	// or on margins this sparse, in simulation (calibrate's rule).
	CIMethod   *string `json:"ci95_method"`
	Unreliable bool    `json:"unreliable"`
	Differing  int     `json:"differing"`
}

// Batch is a batch run's counts and throughput (judge.BatchStats).
type Batch struct {
	Mode           string         `json:"mode"`
	Provider       string         `json:"provider"`
	BatchID        string         `json:"batch_id,omitempty"`
	InputFileID    string         `json:"input_file_id,omitempty"`
	Status         string         `json:"status,omitempty"`
	Resumed        bool           `json:"resumed"`
	Submitted      int64          `json:"submitted"`
	Answered       int64          `json:"answered"`
	Failed         int64          `json:"failed"`
	Missing        int64          `json:"missing"`
	New            int64          `json:"new"`
	Cached         int64          `json:"cached"`
	Reused         int64          `json:"reused"`
	WaitSeconds    format.Float   `json:"wait_seconds"`
	PairsPerSecond *format.Float  `json:"pairs_per_second"`
	RequestCounts  *RequestCounts `json:"request_counts,omitempty"`
	Calls          *Calls         `json:"calls,omitempty"`
}

// Calls are the HTTP calls a batch took (--batch; llm.CallCounts): what a
// pool cost in requests to the provider.
type Calls struct {
	Submit   int64 `json:"submit"`
	Poll     int64 `json:"poll"`
	Download int64 `json:"download"`
	Total    int64 `json:"total"`
}

// RequestCounts are the batch object's request_counts.
type RequestCounts struct {
	Total     int64 `json:"total"`
	Completed int64 `json:"completed"`
	Failed    int64 `json:"failed"`
}

// Holes count the pool's pairs by where their label comes from (judge.HoleStats).
type Holes struct {
	Pool   int `json:"pool_pairs"`
	Known  int `json:"known"`
	Cached int `json:"cached"`
	New    int `json:"new"`
}

// New is the report of a judge run: its result, the result's summary
// (judge.Summarize) and what the run was given.
func New(res *judge.Result, s *judge.Summary, meta Meta) *Document {
	d := &Document{Schema: Schema, Model: res.Model, Prompt: Prompt{Version: res.Prompt.Version, Hash: res.Prompt.Hash},
		AnswerFormat: res.Format, FellBack: res.FellBack, Runs: meta.Runs, K: meta.K, Repeat: res.Repeat,
		Queries: s.Queries, Pairs: s.Pairs, Judged: s.Judged,
		Unjudged:      Unjudged{Pairs: s.Unjudged, Answers: s.UnjudgedByCause, List: []UnjudgedEntry{}},
		Distribution:  map[string]int{},
		Requests:      Requests{Made: res.Requests, Cached: res.Cached, Reused: res.Reused, BadAnswerRetries: res.BadAnswerRetries},
		Tokens:        Tokens{Prompt: res.PromptTokens, Completion: res.CompletionTokens, ResponsesWithoutUsage: res.ResponsesWithoutUsage},
		EstimatedCost: floatPtr(s.EstimatedCost), SelfAgreement: []Agreement{}, Flickering: s.Flickering}
	for _, u := range s.UnjudgedList {
		d.Unjudged.List = append(d.Unjudged.List, UnjudgedEntry(u))
	}
	for g, n := range s.Distribution {
		d.Distribution[strconv.Itoa(g)] = n
	}
	if p := meta.Price; p != nil {
		d.PricePer1K = &Price{Completion: format.Float(p.Completion), Prompt: format.Float(p.Prompt)}
	}
	for _, a := range s.SelfAgreement {
		ag := Agreement{Repeats: a.Repeats, N: a.N, Agreement: floatPtr(a.Agreement), Kappa: floatPtr(a.Kappa),
			WeightedKappa: floatPtr(a.WeightedKappa), Weighting: a.Weighting, Differing: a.Differing}
		if a.CI95 != nil {
			ci := format.CI(*a.CI95)
			method := a.CIMethod
			ag.CI95, ag.CIMethod, ag.Unreliable = &ci, &method, a.Unreliable
		}
		d.SelfAgreement = append(d.SelfAgreement, ag)
	}
	if b := res.Batch; b != nil {
		d.Batch = &Batch{Mode: b.Mode, Provider: b.Provider, BatchID: b.BatchID, InputFileID: b.InputFileID, Status: b.Status, Resumed: b.Resumed,
			Submitted: b.Submitted, Answered: b.Answered, Failed: b.Failed, Missing: b.Missing, New: b.New, Cached: b.Cached, Reused: b.Reused,
			WaitSeconds: format.Float(b.WaitSeconds), PairsPerSecond: floatPtr(b.PairsPerSecond)}
		if rc := b.RequestCounts; rc != nil {
			d.Batch.RequestCounts = &RequestCounts{Total: rc.Total, Completed: rc.Completed, Failed: rc.Failed}
		}
		if c := b.Calls; c != nil {
			d.Batch.Calls = &Calls{Submit: c.Submit, Poll: c.Poll, Download: c.Download, Total: c.Total()}
		}
	}
	d.Holes = Holes(res.Holes())
	return d
}

func floatPtr(v *float64) *format.Float {
	if v == nil {
		return nil
	}
	f := format.Float(*v)
	return &f
}

// WriteJSON writes the report as JSON (two-space indentation, HTML characters
// unescaped, a final newline).
func (d *Document) WriteJSON(w io.Writer) error { return format.WriteJSON(w, d) }

package judge

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// ReportSchema names the JSON report of judge.
const ReportSchema = "retrieval-gate/judge@1"

func hasSpace(s string) bool { return s == "" || strings.ContainsAny(s, " \t\r\n\v\f") }

// WriteTREC writes the labels as TREC qrels, "qid 0 docid rel", in pool order:
// the judge's and the known ones (Result.Known, as given); unjudged pairs are
// left out. An id with whitespace cannot be written.
func WriteTREC(w io.Writer, res *Result) error {
	bw := bufio.NewWriter(w)
	line := func(q, d string, rel int) error {
		if hasSpace(q) || hasSpace(d) {
			return fmt.Errorf("query %q / document %q: an id with whitespace cannot be written as TREC qrels (use --judgments for JSONL)", q, d)
		}
		fmt.Fprintf(bw, "%s 0 %s %d\n", q, d, rel)
		return nil
	}
	k := 0
	for i, p := range res.Pairs {
		for ; k < len(res.Known) && poolLess(res.Known[k].QueryID, res.Known[k].DocID, p.QueryID, p.DocID); k++ {
			if err := line(res.Known[k].QueryID, res.Known[k].DocID, res.Known[k].Relevance); err != nil {
				return err
			}
		}
		rel, ok := res.Relevance(i)
		if !ok {
			continue
		}
		if err := line(p.QueryID, p.DocID, rel); err != nil {
			return err
		}
	}
	for ; k < len(res.Known); k++ {
		if err := line(res.Known[k].QueryID, res.Known[k].DocID, res.Known[k].Relevance); err != nil {
			return err
		}
	}
	return bw.Flush()
}

type jsonlRecord struct {
	QueryID       string `json:"query_id"`
	DocID         string `json:"doc_id"`
	Relevance     int    `json:"relevance"`
	Reason        string `json:"reason"`
	Grades        []*int `json:"grades"`
	Model         string `json:"model"`
	PromptVersion string `json:"prompt_version"`
	PromptHash    string `json:"prompt_hash"`
}

// WriteJSONL writes one JSON line per labelled pair: {"query_id", "doc_id",
// "relevance", "reason", "grades" (one per repeat, null when unjudged),
// "model", "prompt_version", "prompt_hash"}; compare --qrels reads it.
func WriteJSONL(w io.Writer, res *Result) error {
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)
	for i, p := range res.Pairs {
		rel, ok := res.Relevance(i)
		if !ok {
			continue
		}
		gs := make([]*int, len(res.Grades[i]))
		for r, j := range res.Grades[i] {
			if j.Valid {
				g := j.Grade
				gs[r] = &g
			}
		}
		rec := jsonlRecord{QueryID: p.QueryID, DocID: p.DocID, Relevance: rel, Reason: res.Reason(i), Grades: gs,
			Model: res.Model, PromptVersion: res.Prompt.Version, PromptHash: res.Prompt.Hash}
		if err := enc.Encode(rec); err != nil {
			return err
		}
	}
	return bw.Flush()
}

// ReportMeta is what the report says about the inputs.
type ReportMeta struct {
	Runs  []string
	K     int
	Price *Price
}

type reportJSON struct {
	Schema string `json:"schema"`
	Model  string `json:"model"`
	Prompt struct {
		Version string `json:"version"`
		Hash    string `json:"hash"`
	} `json:"prompt"`
	AnswerFormat string   `json:"answer_format"`
	FellBack     bool     `json:"answer_format_fallback"`
	Runs         []string `json:"runs"`
	K            int      `json:"k"`
	Repeat       int      `json:"repeat"`
	Queries      int      `json:"queries"`
	Pairs        int      `json:"pairs"`
	Judged       int      `json:"judged"`
	Unjudged     struct {
		Pairs   int            `json:"pairs"`
		Answers map[string]int `json:"answers"`
		List    []Unjudged     `json:"list"`
	} `json:"unjudged"`
	Distribution map[string]int `json:"relevance_distribution"`
	Requests     struct {
		Made             int64 `json:"made"`
		Cached           int64 `json:"cached"`
		BadAnswerRetries int64 `json:"bad_answer_retries"`
	} `json:"requests"`
	Tokens struct {
		Prompt                int64 `json:"prompt"`
		Completion            int64 `json:"completion"`
		ResponsesWithoutUsage int64 `json:"responses_without_usage"`
	} `json:"tokens"`
	PricePer1K    *Price      `json:"price_per_1k"`
	EstimatedCost *float64    `json:"estimated_cost"`
	SelfAgreement []Agreement `json:"self_agreement"`
	Flickering    int         `json:"flickering_pairs"`
	// Batch is present after a batch run (--batch, --batch-in): its counts,
	// new vs cached judgments and throughput.
	Batch *BatchStats `json:"batch,omitempty"`
	// Holes counts the pool's pairs: labelled in --known-qrels, judged before
	// (cache), new (asked in this run).
	Holes HoleStats `json:"holes"`
}

// MarshalJSON keys of Price.
func (p Price) MarshalJSON() ([]byte, error) {
	return json.Marshal(map[string]float64{"prompt": p.Prompt, "completion": p.Completion})
}

// WriteReport writes the JSON report (ReportSchema).
func WriteReport(w io.Writer, res *Result, s *Summary, meta ReportMeta) error {
	var r reportJSON
	r.Schema = ReportSchema
	r.Model = res.Model
	r.Prompt.Version, r.Prompt.Hash = res.Prompt.Version, res.Prompt.Hash
	r.AnswerFormat, r.FellBack = res.Format, res.FellBack
	r.Runs, r.K, r.Repeat = meta.Runs, meta.K, res.Repeat
	qs := map[string]bool{}
	for _, p := range res.Pairs {
		qs[p.QueryID] = true
	}
	r.Queries, r.Pairs, r.Judged = len(qs), s.Pairs, s.Judged
	r.Unjudged.Pairs, r.Unjudged.Answers, r.Unjudged.List = s.Unjudged, s.UnjudgedByCause, s.UnjudgedList
	if r.Unjudged.List == nil {
		r.Unjudged.List = []Unjudged{}
	}
	r.Distribution = map[string]int{}
	for g, n := range s.Distribution {
		r.Distribution[strconv.Itoa(g)] = n
	}
	r.Requests.Made, r.Requests.Cached, r.Requests.BadAnswerRetries = res.Requests, res.Cached, res.BadAnswerRetries
	r.Tokens.Prompt, r.Tokens.Completion, r.Tokens.ResponsesWithoutUsage = res.PromptTokens, res.CompletionTokens, res.ResponsesWithoutUsage
	r.PricePer1K, r.EstimatedCost = meta.Price, s.EstimatedCost
	r.SelfAgreement = s.SelfAgreement
	if r.SelfAgreement == nil {
		r.SelfAgreement = []Agreement{}
	}
	r.Flickering = s.Flickering
	r.Batch = res.Batch
	r.Holes = res.Holes()
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(r)
}

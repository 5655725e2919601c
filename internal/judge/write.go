package judge

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

func hasSpace(s string) bool { return s == "" || strings.ContainsAny(s, " \t\r\n\v\f") }

// trecQueryID says why the query id q cannot start a line of TREC qrels ("":
// it can): a field holds no whitespace, and a file whose first line starts
// with '{' is read as JSON lines by the qrels reader (compare --qrels), so a
// query id may not start with '{' (as import refuses it too).
func trecQueryID(q string) string {
	switch {
	case hasSpace(q):
		return "an id that is empty or holds whitespace"
	case strings.HasPrefix(q, "{"):
		return "an id that starts with '{' (a qrels file whose first line starts with '{' is read as JSON lines)"
	}
	return ""
}

// WriteTREC writes the labels as TREC qrels, "qid 0 docid rel", in pool order:
// the judge's and the known ones (Result.Known, as given); unjudged pairs are
// left out. An id with whitespace, or a query id that starts with '{', cannot
// be written (Run refuses them before any request when RunOptions.QrelsOut
// is set).
func WriteTREC(w io.Writer, res *Result) error {
	bw := bufio.NewWriter(w)
	line := func(q, d string, rel int) error {
		if why := trecQueryID(q); why != "" {
			return fmt.Errorf("query %q: %s cannot be written as TREC qrels (use --judgments for JSONL)", q, why)
		}
		if hasSpace(d) {
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

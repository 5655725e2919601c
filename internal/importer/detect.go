package importer

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"io"
	"strconv"
	"strings"
)

// Detect picks the format of an input from its first bytes (the first non-blank
// line, or the start of a JSON document). When it cannot, it returns nil and
// says why.
func Detect(head []byte) (*Format, string) {
	head = trimBOM(head)
	rest := head
	var first []byte
	for len(rest) > 0 {
		i := bytes.IndexByte(rest, '\n')
		var line []byte
		if i < 0 {
			line, rest = rest, nil
		} else {
			line, rest = rest[:i], rest[i+1:]
		}
		if !blank(line) {
			first = bytes.TrimRight(line, "\r")
			break
		}
	}
	if first == nil {
		return nil, "the input is empty"
	}
	by := func(name string) (*Format, string) { return registry[name], "" }
	trimmed := bytes.TrimSpace(first)
	switch trimmed[0] {
	case '{':
		if looksBEIRResults(head) {
			return by("beir-results")
		}
		var o map[string]json.RawMessage
		if json.Unmarshal(trimmed, &o) != nil {
			// A JSON document spread over lines: promptfoo writes {"evalId", "results", ...}.
			if bytes.Contains(head, []byte(`"results"`)) {
				return by("promptfoo")
			}
			return nil, "a JSON document that is not a promptfoo results file (no \"results\")"
		}
		return detectJSONL(o)
	case '[':
		if bytes.Contains(head, []byte(`"user_input"`)) {
			return by("ragas")
		}
		return nil, "a JSON array whose records have no \"user_input\" (ragas)"
	}
	if cols := bytes.Split(first, []byte{'\t'}); len(cols) == 3 &&
		string(bytes.TrimSpace(cols[0])) == "query-id" && string(bytes.TrimSpace(cols[1])) == "corpus-id" {
		return by("beir-qrels")
	}
	if bytes.IndexByte(first, ',') >= 0 {
		if rec, err := csv.NewReader(bytes.NewReader(first)).Read(); err == nil || err == io.EOF {
			if csvColumn(rec, csvQuery) >= 0 {
				return by("csv")
			}
		}
	}
	f := fields(first, nil)
	isInt := func(b []byte) bool { _, err := strconv.Atoi(string(b)); return err == nil }
	tabs := bytes.IndexByte(first, '\t') >= 0
	switch {
	case len(f) == 3 && isInt(f[2]):
		return by("msmarco-run")
	case len(f) == 4 && isInt(f[3]) && tabs:
		return by("msmarco-qrels")
	case len(f) == 4 && isInt(f[3]):
		return by("trec-qrels")
	case len(f) == 6 && string(f[1]) == "Q0":
		return nil, "already a TREC run (qid Q0 docid rank score tag), which compare --run reads as it is"
	}
	return nil, "the first line " + strconv.Quote(truncate(first)) + " matches no known format"
}

func detectJSONL(o map[string]json.RawMessage) (*Format, string) {
	has := func(keys ...string) bool {
		for _, k := range keys {
			if _, ok := o[k]; !ok {
				return false
			}
		}
		return true
	}
	switch {
	case has("user_input"):
		return registry["ragas"], ""
	case has("query_id", "doc_id", "relevance"):
		return registry["irds-qrels"], ""
	case has("query_id", "doc_id", "score"):
		return registry["irds-scoreddocs"], ""
	case has("doc_id"):
		return registry["irds-docs"], ""
	case has("id") && (has("retrieved") || has("must_cite_one_of") || has("scores")):
		return nil, "already a cases JSONL file, which check reads as it is"
	case has("query_id", "doc_id"):
		return nil, "JSONL with query_id and doc_id but neither relevance (qrels) nor score (scoreddocs)"
	}
	keys := make([]string, 0, len(o))
	for k := range o {
		keys = append(keys, k)
	}
	if len(keys) > 8 {
		keys = keys[:8]
	}
	return nil, "JSONL whose keys (" + strings.Join(sorted(keys), ", ") + ") match no known format"
}

func sorted(s []string) []string {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
	return s
}

// LineAt returns a Options.LineAt for a seekable input: the 1-based line of the
// first byte at or after off that is not whitespace or a comma (where a JSON
// array element starts). It reads the input again from the start, so it costs
// time only on the error path.
func LineAt(ra io.ReaderAt) func(off int64) int {
	return func(off int64) int {
		line := 1
		buf := make([]byte, 64<<10)
		var pos int64
		for {
			n, err := ra.ReadAt(buf, pos)
			for _, c := range buf[:n] {
				if pos >= off && c != ' ' && c != '\t' && c != '\r' && c != '\n' && c != ',' {
					return line
				}
				if c == '\n' {
					line++
				}
				pos++
			}
			if err != nil || n == 0 {
				return line
			}
		}
	}
}

package importer

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"slices"
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
	case '{', '[':
		// From the first value's start to the end of what was read: a JSON
		// document spread over lines, or a first line longer than the head.
		doc := head[bytes.Index(head, trimmed[:1]):]
		if doc[0] == '{' && looksBEIRResults(doc) {
			return registry["beir-results"], ""
		}
		return detectJSON(doc, len(head) >= peekSize)
	}
	if cols := bytes.Split(first, []byte{'\t'}); len(cols) == 3 &&
		string(bytes.TrimSpace(cols[0])) == "query-id" && string(bytes.TrimSpace(cols[1])) == "corpus-id" {
		return by("beir-qrels")
	}
	if bytes.IndexByte(first, ',') >= 0 {
		if rec, err := csv.NewReader(bytes.NewReader(first)).Read(); err == nil || err == io.EOF {
			if c, err := csvColumn("", rec, csvQuery); c >= 0 || err != nil { // twice: the converter says so
				return by("csv")
			}
		}
	}
	f := fields(first, nil)
	// An integer column, however long (a huge one is the converter's precise error).
	isInt := func(b []byte) bool { _, why := textInt(b); return why == "" || strings.Contains(why, "out of range") }
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

// detectJSON detects a JSON input (JSONL or one document) from doc, which
// starts at its first '{' or '[' and may be cut (cut: the head ended before the
// input). It reads only the keys of the first object (of the array's first
// element), whatever their values' sizes, so a first record longer than the
// head is detected by its keys all the same.
func detectJSON(doc []byte, cut bool) (*Format, string) {
	array := doc[0] == '['
	keys, complete, ok, end := firstKeys(doc)
	switch {
	case !ok && array:
		return nil, "a JSON array whose first element is not an object"
	case !ok:
		return nil, "a line starting with '{' that is not JSON"
	}
	has := func(want ...string) bool {
		for _, k := range want {
			if !slices.Contains(keys, k) {
				return false
			}
		}
		return true
	}
	seen := describeKeys(keys)
	more := ""
	if !complete {
		more = " so far"
		if cut {
			more = fmt.Sprintf(" in the first %d KiB", peekSize>>10)
		}
	}
	if array {
		if has("user_input") {
			return registry["ragas"], ""
		}
		return nil, fmt.Sprintf("a JSON array whose first record's keys%s (%s) include no \"user_input\" (ragas)", more, seen)
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
	case has("results"):
		return registry["promptfoo"], ""
	case has("id") && (has("retrieved") || has("must_cite_one_of") || has("scores")):
		return nil, "already a cases JSONL file, which check reads as it is"
	case has("query_id", "doc_id"):
		return nil, "JSONL with query_id and doc_id but neither relevance (qrels) nor score (scoreddocs)"
	}
	if !complete && !cut {
		return nil, "JSON that is not valid or ends early, after the keys (" + seen + ")"
	}
	if !complete && bytes.Contains(doc, []byte(`"results"`)) {
		// promptfoo's "results" after a first member longer than the head.
		return registry["promptfoo"], ""
	}
	if complete && bytes.IndexByte(doc[:end], '\n') < 0 {
		return nil, "JSONL whose keys (" + seen + ") match no known format"
	}
	if complete {
		return nil, "a JSON document whose keys (" + seen + ") match no known format (a promptfoo results file has \"results\")"
	}
	return nil, "a JSON object whose keys" + more + " (" + seen + ") match no known format (a promptfoo results file has \"results\")"
}

// describeKeys lists keys sorted, at most 8 of them and how many more, each
// quoted and shortened (deterministic whatever the order in the file).
func describeKeys(keys []string) string {
	if len(keys) == 0 {
		return "none"
	}
	s := slices.Clone(keys)
	slices.Sort(s)
	n := len(s)
	if n > 8 {
		s = s[:8]
	}
	for i, k := range s {
		if len(k) > 40 {
			k = k[:40] + "..."
		}
		s[i] = strconv.Quote(k)
		if !strings.ContainsAny(k, " ,()\"\\") && s[i] == `"`+k+`"` {
			s[i] = k
		}
	}
	out := strings.Join(s, ", ")
	if n > 8 {
		out += fmt.Sprintf(" and %d more", n-8)
	}
	return out
}

// firstKeys reads the top-level keys of the first object of doc (of its first
// element when doc is an array), in order and without repeats, skipping values
// as tokens. complete says the object ended within doc; ok is false when doc
// does not start an object (or an array of objects).
func firstKeys(doc []byte) (keys []string, complete, ok bool, end int64) {
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil {
		return nil, false, false, 0
	}
	if tok == json.Delim('[') {
		if tok, err = dec.Token(); err != nil || tok != json.Delim('{') {
			return nil, false, false, 0
		}
	} else if tok != json.Delim('{') {
		return nil, false, false, 0
	}
	depth, wantKey := 1, true
	for {
		tok, err := dec.Token()
		if err != nil {
			return keys, false, true, 0 // cut (or malformed) after these keys
		}
		switch t := tok.(type) {
		case json.Delim:
			switch t {
			case '{', '[':
				depth++
			default:
				depth--
				if depth == 0 {
					return keys, true, true, dec.InputOffset()
				}
				if depth == 1 {
					wantKey = true
				}
			}
		default:
			if depth != 1 {
				continue
			}
			if wantKey {
				if k, isStr := t.(string); isStr && !slices.Contains(keys, k) {
					keys = append(keys, k)
				}
				wantKey = false
			} else {
				wantKey = true
			}
		}
	}
}

// LineAt returns a Options.LineAt for a seekable input: the 1-based line of the
// first byte at or after off that is not whitespace or a comma (where a JSON
// array element starts). The converters ask it for every record, at offsets
// that grow: it goes on from where the last answer was (the bytes between
// that answer's offset and its element are blank), so a whole input costs
// one pass; an offset before the last one reads the input again from its
// start. Not for concurrent use.
func LineAt(ra io.ReaderAt) func(off int64) int {
	buf := make([]byte, 64<<10)
	var (
		bufStart int64 // the input offset of buf[0]
		bufLen   int   // the bytes of buf read
		from     int64 // the offset last asked
		pos      int64 // where its answer is: the scan goes on from there
		line     = 1   // the line at pos
	)
	return func(off int64) int {
		if off < from {
			pos, line = 0, 1
		}
		from = off
		for {
			if pos < bufStart || pos >= bufStart+int64(bufLen) {
				n, _ := ra.ReadAt(buf, pos) // an error ends the scan where it is, as the end does
				bufStart, bufLen = pos, n
				if n == 0 {
					return line
				}
			}
			c := buf[pos-bufStart]
			if pos >= off && c != ' ' && c != '\t' && c != '\r' && c != '\n' && c != ',' {
				return line
			}
			if c == '\n' {
				line++
			}
			pos++
		}
	}
}

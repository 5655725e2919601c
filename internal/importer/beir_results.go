package importer

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"io"
	"slices"
	"strconv"
	"strings"
)

// BEIR's results JSON: what `EvaluateRetrieval.retrieve` returns and a json.dump
// of it writes, one object {qid: {docid: score}} for the whole run.

func init() {
	register(&Format{Name: "beir-results", Shards: ShardNone, Kind: KindRun,
		Description: "BEIR results JSON ({\"qid\": {\"docid\": score}}, as EvaluateRetrieval.retrieve returns and json.dump writes): a run, ranked by score",
		convert:     convertBEIRResults})
}

// maxBEIRQuery caps one query's object {docid: score} of a BEIR results file (the
// record of that format), as maxRecord caps a line of the line formats: the
// decoder holds one record at a time, and never more than this of it. A
// variable for the test.
var maxBEIRQuery int64 = maxRecord

// errRecordTooLarge is recordCap's read error past the cap.
var errRecordTooLarge = errors.New("record too large")

// recordCap passes reads through until more than max bytes were read since mark,
// then fails them (and remembers it): a JSON decoder reading through it never
// buffers more than max of one record (plus what it had read ahead at mark),
// however long a token.
type recordCap struct {
	r       io.Reader
	n, mark int64
	max     int64
	over    bool
}

func (c *recordCap) Read(p []byte) (int, error) {
	left := c.mark + c.max - c.n
	if left <= 0 {
		c.over = true
		return 0, errRecordTooLarge
	}
	if int64(len(p)) > left {
		p = p[:left]
	}
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// beirScored is one document of a query: its score as written and as a number.
type beirScored struct {
	doc, text string
	score     float64
}

func convertBEIRResults(ctx context.Context, br *bufio.Reader, file string, w *bufio.Writer, opt Options, st *Stats) error {
	tag := opt.RunTag
	if tag == "" {
		tag = "beir"
	}
	if err := trecID(file, 0, "run tag", []byte(tag)); err != nil {
		return err
	}
	if b, _ := br.Peek(3); len(b) == 3 && b[0] == 0xEF && b[1] == 0xBB && b[2] == 0xBF {
		_, _ = br.Discard(3) // a UTF-8 BOM, which the JSON decoder does not skip
	}
	// The cap counts from where the decoder had read to when a record starts (the
	// read-ahead then counts against the record), so every record may have
	// maxBEIRQuery less the decoder's small buffer.
	rc := &recordCap{r: br, max: maxBEIRQuery}
	d := newJSONDoc(bufio.NewReaderSize(rc, 64<<10), file, opt)
	var recordOff int64
	capped := func(err error) error {
		if rc.over {
			return d.errAt(recordOff, "one query's results are larger than %d MiB (the limit of one record)", maxBEIRQuery>>20)
		}
		return err
	}
	if err := d.delim('{', "the BEIR results (a JSON object {\"qid\": {\"docid\": score}})"); err != nil {
		return capped(err)
	}
	queries := map[string]bool{}
	var docs []beirScored
	for i := 0; d.more(); i++ {
		if i%1024 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		rc.mark, recordOff = rc.n, d.dec.InputOffset()
		tok, err := d.token()
		if err != nil {
			return capped(d.syntax(err))
		}
		qid, _ := tok.(string)
		if err := d.seenKey(queries, qid); err != nil {
			return err
		}
		line := 0
		if opt.LineAt != nil {
			line = opt.LineAt(recordOff)
		}
		if err := trecQueryID(file, line, "query id", []byte(qid)); err != nil {
			return err
		}
		raw, err := d.decodeRaw() // checked by jsonpos: a document repeated in a query is an error at its line
		if err != nil {
			return capped(err)
		}
		start := d.dec.InputOffset() - int64(len(raw))
		if docs, err = beirQuery(d, start, raw, qid, docs[:0]); err != nil {
			return err
		}
		// As trec_eval (and compare) rank a run: score descending, ties by docid descending.
		slices.SortFunc(docs, func(a, b beirScored) int {
			if c := cmp.Compare(b.score, a.score); c != 0 {
				return c
			}
			return strings.Compare(b.doc, a.doc)
		})
		for r, s := range docs {
			b := w.AvailableBuffer()
			b = append(b, qid...)
			b = append(b, " Q0 "...)
			b = append(b, s.doc...)
			b = append(b, ' ')
			b = strconv.AppendInt(b, int64(r+1), 10)
			b = append(b, ' ')
			b = append(b, s.text...)
			b = append(b, ' ')
			b = append(b, tag...)
			b = append(b, '\n')
			if _, err := w.Write(b); err != nil { // the line at once: see writeQrel
				return err
			}
			st.Records++
		}
	}
	rc.mark, recordOff = rc.n, d.dec.InputOffset()
	if err := d.delim('}', "the end of the BEIR results"); err != nil {
		return capped(err)
	}
	off := d.dec.InputOffset()
	if _, err := d.token(); !errors.Is(err, io.EOF) {
		if rc.over {
			return capped(err)
		}
		return d.errAt(off, "data after the BEIR results object")
	}
	return nil
}

// beirQuery reads one query's object {docid: score} (raw, valid JSON without a
// repeated key, at offset start of the document) into docs.
func beirQuery(d *jsonDoc, start int64, raw json.RawMessage, qid string, docs []beirScored) ([]beirScored, error) {
	q := truncate([]byte(qid))
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if tok, _ := dec.Token(); tok != json.Delim('{') {
		return nil, d.errAt(start, "query %q: want an object {\"docid\": score}, got %s", q, jsonKind(raw))
	}
	for dec.More() {
		off := start + dec.InputOffset()
		tok, err := dec.Token()
		if err != nil {
			return nil, d.errAt(off, "query %q: %v", q, err)
		}
		doc, _ := tok.(string)
		if doc == "" || slices.ContainsFunc([]byte(doc), space) {
			return nil, d.errAt(off, "query %q: document id %q is empty or contains whitespace, which a TREC run cannot hold", q, truncate([]byte(doc)))
		}
		off = start + dec.InputOffset()
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, d.errAt(off, "query %q: %v", q, err)
		}
		var n json.Number
		if json.Unmarshal(v, &n) != nil {
			return nil, d.errAt(off, "query %q: the score of document %q must be a number, got %s", q, truncate([]byte(doc)), jsonKind(v))
		}
		f, err := strconv.ParseFloat(n.String(), 64)
		if err != nil {
			return nil, d.errAt(off, "query %q: the score %s of document %q is out of range", q, truncate(v), truncate([]byte(doc)))
		}
		docs = append(docs, beirScored{doc: doc, text: n.String(), score: f})
	}
	return docs, nil
}

// looksBEIRResults reports whether a JSON document's first bytes have the shape
// of BEIR results: an object whose members are objects of numbers, as far as
// head goes (at least one score, nothing else).
func looksBEIRResults(head []byte) bool {
	dec := json.NewDecoder(bytes.NewReader(head))
	dec.UseNumber()
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return false
	}
	scores := 0
	depth := 1
	for {
		tok, err := dec.Token()
		if err != nil {
			return scores > 0 // the end of head inside the document
		}
		switch depth {
		case 1: // a query id, then its object, or the end
			if tok == json.Delim('}') {
				return scores > 0
			}
			if _, ok := tok.(string); !ok {
				return false
			}
			if tok, err = dec.Token(); err != nil {
				return scores > 0
			}
			if tok != json.Delim('{') {
				return false
			}
			depth = 2
		case 2: // a document id and its score, or the end of the query
			if tok == json.Delim('}') {
				depth = 1
				continue
			}
			if _, ok := tok.(string); !ok {
				return false
			}
			if tok, err = dec.Token(); err != nil {
				return scores > 0
			}
			if _, ok := tok.(json.Number); !ok {
				return false
			}
			scores++
		}
	}
}

package importer

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/retrieval-gate/retrieval-gate/internal/input/jsonpos"
	"github.com/retrieval-gate/retrieval-gate/internal/jsoncap"
)

// The JSON formats: ir_datasets JSONL exports, ragas datasets (JSONL or a JSON
// array), promptfoo results (promptfoo.go).

func init() {
	register(&Format{Name: "irds-qrels", Shards: ShardLines, Kind: KindQrels,
		Description: "ir_datasets qrels JSONL: {\"query_id\", \"doc_id\", \"relevance\", \"iteration\"} (relevance clamped to -128..127)",
		convert:     convertIRDSQrels})
	register(&Format{Name: "irds-scoreddocs", Shards: ShardLines, Kind: KindRun,
		Description: "ir_datasets scoreddocs JSONL: {\"query_id\", \"doc_id\", \"score\"}, a run",
		convert:     convertIRDSScoredDocs})
	register(&Format{Name: "irds-docs", Shards: ShardLines, Kind: KindKB,
		Description: "ir_datasets docs JSONL: {\"doc_id\", \"text\", \"title\"}, a knowledge base",
		convert:     convertIRDSDocs})
	register(&Format{Name: "ragas", Shards: ShardLines, Kind: KindCases,
		Description: "ragas dataset (JSONL or a JSON array): user_input, retrieved_context_ids (+ retrieved_contexts), reference_context_ids",
		convert:     convertRagas})
}

// KindKB is a knowledge base JSONL of cards {"id", "title", "text"} (check --kb).
const KindKB Kind = "kb"

// object is one decoded JSON object, with typed getters whose errors name the key.
type object map[string]json.RawMessage

func isNull(raw json.RawMessage) bool { return len(raw) == 0 || string(raw) == "null" }

// str returns a string field, or a number's text (ids are often numbers).
func (o object) str(key string) (string, bool, error) {
	raw, ok := o[key]
	if !ok || isNull(raw) {
		return "", false, nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return s, true, nil
	}
	var n json.Number
	if err := json.Unmarshal(raw, &n); err == nil {
		return n.String(), true, nil
	}
	return "", false, fmt.Errorf("%q must be a string, got %s", key, jsonKind(raw))
}

// list returns an array of strings (numbers as their text) or, for a string
// value, splitList of it.
func (o object) list(key, sep string) ([]string, bool, error) {
	raw, ok := o[key]
	if !ok || isNull(raw) {
		return nil, false, nil
	}
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		var s string
		if json.Unmarshal(raw, &s) == nil {
			l, err := splitList(s, sep)
			if err != nil {
				return nil, false, fmt.Errorf("%q: %w", key, err)
			}
			return l, true, nil
		}
		return nil, false, fmt.Errorf("%q must be an array of strings, got %s", key, jsonKind(raw))
	}
	out := make([]string, len(items))
	for i, it := range items {
		s, _, err := (object{"": it}).str("")
		if err != nil || isNull(it) {
			return nil, false, fmt.Errorf("%q[%d] must be a string, got %s", key, i, jsonKind(it))
		}
		out[i] = s
	}
	return out, true, nil
}

// jsonInt reads a JSON integer as compare's JSON qrels do: an integral number
// in any spelling (2, 2.0, 2e0, -0) is that integer; it returns what is wrong
// otherwise: not a number, not integral (2.5), or beyond int64
// (99999999999999999999, 1e400), which is out of range rather than "not an
// integer".
func jsonInt(raw json.RawMessage) (int64, string) {
	b := bytes.TrimSpace(raw)
	if len(b) == 0 || !(b[0] == '-' || (b[0] >= '0' && b[0] <= '9')) {
		return 0, "must be an integer, got " + jsonKind(b)
	}
	if v, err := strconv.ParseInt(string(b), 10, 64); err == nil {
		return v, ""
	}
	outOfRange := fmt.Sprintf("%s is out of range (an integer within ±%s)", truncate(b), maxIntText)
	f, err := strconv.ParseFloat(string(b), 64)
	switch {
	case errors.Is(err, strconv.ErrRange) && !bytes.ContainsAny(b, ".eE"):
		return 0, outOfRange
	case err != nil && !errors.Is(err, strconv.ErrRange):
		return 0, "must be an integer, got " + truncate(b)
	case math.IsInf(f, 0) || f >= 1<<63 || f < -(1<<63):
		return 0, outOfRange
	case f != math.Trunc(f):
		return 0, "must be an integer, got " + truncate(b)
	}
	return int64(f), ""
}

// firstOf returns the first present key of keys.
func (o object) firstOf(keys ...string) string {
	for _, k := range keys {
		if raw, ok := o[k]; ok && !isNull(raw) {
			return k
		}
	}
	return ""
}

func jsonKind(raw json.RawMessage) string {
	b := bytes.TrimSpace(raw)
	if len(b) == 0 {
		return "nothing"
	}
	switch b[0] {
	case '{':
		return "an object"
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	return "a number"
}

// jsonLines calls fn with each non-blank line of JSONL decoded as an object.
func jsonLines(ctx context.Context, br *bufio.Reader, file string, fn func(n int, o object) error) error {
	var check jsonpos.Scanner
	return lines(ctx, br, file, func(n int, line []byte) error {
		if blank(line) {
			return nil
		}
		// jsonpos first, the one JSON rule of the inputs: a repeated key is
		// an error (encoding/json lets the last one win).
		if err := check.Check(line); err != nil {
			return Errorf(file, n, "%s", jsonpos.Message(err, "invalid JSON: "))
		}
		var o object
		if err := json.Unmarshal(line, &o); err != nil {
			var ute *json.UnmarshalTypeError
			if errors.As(err, &ute) {
				return Errorf(file, n, "want a JSON object per line, got %s", jsonKind(line))
			}
			return Errorf(file, n, "invalid JSON: %v", err)
		}
		if o == nil {
			return Errorf(file, n, "want a JSON object per line, got null")
		}
		return fn(n, o)
	})
}

func convertIRDSQrels(ctx context.Context, br *bufio.Reader, file string, w *bufio.Writer, opt Options, st *Stats) error {
	seen := judged{}
	return jsonLines(ctx, br, file, func(n int, o object) error {
		qid, doc, err := irdsIDs(file, n, o)
		if err != nil {
			return err
		}
		raw, ok := o["relevance"]
		if !ok || isNull(raw) {
			return Errorf(file, n, "judgment has no \"relevance\"")
		}
		rel, why := jsonInt(raw)
		if why != "" {
			return Errorf(file, n, "\"relevance\" %s", why)
		}
		if err := seen.check(file, n, []byte(qid), []byte(doc)); err != nil {
			return err
		}
		if err := writeQrel(w, file, n, []byte(qid), []byte(doc), clampRel(rel, st)); err != nil {
			return err
		}
		st.Records++
		return nil
	})
}

func irdsIDs(file string, n int, o object) (qid, doc string, err error) {
	qid, _, err = o.str("query_id")
	if err != nil {
		return "", "", Errorf(file, n, "%v", err)
	}
	doc, _, err = o.str("doc_id")
	if err != nil {
		return "", "", Errorf(file, n, "%v", err)
	}
	if err := trecQueryID(file, n, "query_id", []byte(qid)); err != nil {
		return "", "", err
	}
	if err := trecID(file, n, "doc_id", []byte(doc)); err != nil {
		return "", "", err
	}
	return qid, doc, nil
}

func convertIRDSScoredDocs(ctx context.Context, br *bufio.Reader, file string, w *bufio.Writer, opt Options, st *Stats) error {
	tag := opt.RunTag
	if tag == "" {
		tag = "irds"
	}
	if err := trecID(file, 0, "run tag", []byte(tag)); err != nil {
		return err
	}
	ranks := map[string]int{} // documents written per query: the next rank
	return jsonLines(ctx, br, file, func(n int, o object) error {
		qid, doc, err := irdsIDs(file, n, o)
		if err != nil {
			return err
		}
		raw, ok := o["score"]
		if !ok || isNull(raw) {
			return Errorf(file, n, "scored document has no \"score\"")
		}
		var score json.Number
		if err := json.Unmarshal(raw, &score); err != nil {
			return Errorf(file, n, "\"score\" must be a number, got %s", truncate(raw))
		}
		if _, err := strconv.ParseFloat(score.String(), 64); err != nil {
			return Errorf(file, n, "\"score\" %s is out of range", truncate(raw))
		}
		rank, seen := ranks[qid]
		if !seen {
			qid = strings.Clone(qid)
		}
		ranks[qid] = rank + 1
		b := w.AvailableBuffer()
		b = append(b, qid...)
		b = append(b, " Q0 "...)
		b = append(b, doc...)
		b = append(b, ' ')
		b = strconv.AppendInt(b, int64(rank+1), 10)
		b = append(b, ' ')
		b = append(b, score.String()...)
		b = append(b, ' ')
		b = append(b, tag...)
		b = append(b, '\n')
		if err := writeTRECLine(w, file, n, b); err != nil { // the line at once: see writeQrel
			return err
		}
		st.Records++
		return nil
	})
}

func convertIRDSDocs(ctx context.Context, br *bufio.Reader, file string, w *bufio.Writer, opt Options, st *Stats) error {
	seen := map[string]int{}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	return jsonLines(ctx, br, file, func(n int, o object) error {
		id, _, err := o.str("doc_id")
		if err != nil {
			return Errorf(file, n, "%v", err)
		}
		if id == "" {
			return Errorf(file, n, "document has no \"doc_id\"")
		}
		if prev, dup := seen[id]; dup {
			return Errorf(file, n, "duplicate doc_id %q (first at line %d)", id, prev)
		}
		seen[id] = n
		text, _, err := o.str("text")
		if err != nil {
			return Errorf(file, n, "%v", err)
		}
		title, _, err := o.str("title")
		if err != nil {
			return Errorf(file, n, "%v", err)
		}
		if l := kbLineLen(id, title, text, maxOutput[KindKB]); l > maxOutput[KindKB] {
			return Errorf(file, n, "document %q would be a KB line of more than %s once converted (JSON escapes included), longer than the KB reader's cap of one card", truncate([]byte(id)), sizeText(int64(maxOutput[KindKB])))
		}
		buf.Reset()
		if err := enc.Encode(struct {
			ID    string `json:"id"`
			Title string `json:"title,omitempty"`
			Text  string `json:"text"`
		}{id, title, text}); err != nil {
			return err
		}
		st.Records++
		_, err = w.Write(buf.Bytes())
		return err
	})
}

// jsonDoc walks a JSON document (not JSONL) element by element.
type jsonDoc struct {
	dec   *jsoncap.Scanner // every token and value read is at most maxRecord bytes
	file  string
	opt   Options
	check jsonpos.Scanner // every value decoded passes jsonpos first: a repeated key is an error
}

func newJSONDoc(br *bufio.Reader, file string, opt Options) *jsonDoc {
	return &jsonDoc{dec: jsoncap.New(br, maxRecord, errRecordTooLong), file: file, opt: opt}
}

// token is dec.Token for one token of at most maxRecord bytes.
func (d *jsonDoc) token() (json.Token, error) {
	d.dec.Mark()
	return d.dec.Token()
}

// more is dec.More, whose look-ahead (white space) is bounded the same way.
func (d *jsonDoc) more() bool {
	d.dec.Mark()
	return d.dec.More()
}

// errAt is an error at byte offset off of the document.
func (d *jsonDoc) errAt(off int64, format string, args ...any) error {
	if d.opt.LineAt != nil {
		return Errorf(d.file, d.opt.LineAt(off), format, args...)
	}
	return Errorf(d.file, 0, "at byte %d: %s", off, fmt.Sprintf(format, args...))
}

// syntax turns a decoder error into an *Error at its place. A read that the
// run's end stopped (SIGINT, SIGTERM: input.Reader's context error) is not
// the input's fault: it is returned as it is, so the front end words it as
// an interruption, with no line of the input to blame (or annotate).
func (d *jsonDoc) syntax(err error) error {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	if errors.Is(err, errRecordTooLong) {
		return d.errAt(d.dec.Start(), "a JSON value longer than %s (the cap of one record, a member skipped or not)", sizeText(maxRecord))
	}
	var se *jsoncap.SyntaxError
	if errors.As(err, &se) {
		return d.errAt(se.Offset, "invalid JSON: %v", err)
	}
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return d.errAt(d.dec.InputOffset(), "unexpected end of the JSON document")
	}
	var ute *json.UnmarshalTypeError
	if errors.As(err, &ute) {
		return d.errAt(ute.Offset, "want a JSON object, got a %s", ute.Value)
	}
	return d.errAt(d.dec.InputOffset(), "%v", err)
}

// decodeRaw decodes the next value as raw bytes and checks it with jsonpos: a
// repeated key is an error at its place.
func (d *jsonDoc) decodeRaw() (json.RawMessage, error) {
	d.dec.Mark()
	raw, err := d.dec.DecodeRaw()
	if err == nil && int64(len(raw)) > maxRecord {
		err = errRecordTooLong
	}
	if err != nil {
		return nil, d.syntax(err)
	}
	if err := d.check.Check(raw); err != nil {
		var se *jsonpos.SyntaxError
		start := d.dec.InputOffset() - int64(len(raw))
		if errors.As(err, &se) {
			// At its line (the document's columns are not counted here).
			if se.NotSyntax() {
				return nil, d.errAt(start+int64(se.Off), "%s", se.Msg)
			}
			return nil, d.errAt(start+int64(se.Off), "invalid JSON: %s", se.Msg)
		}
		return nil, d.errAt(start, "invalid JSON: %v", err)
	}
	return raw, nil
}

// seenKey records key (a member of the object being walked, whose keys are in
// seen) and reports it when the object already has it.
func (d *jsonDoc) seenKey(seen map[string]bool, key string) error {
	if seen[key] {
		return d.errAt(d.dec.InputOffset(), "duplicate key %s", jsonpos.QuoteKey([]byte(key)))
	}
	seen[key] = true
	return nil
}

// delim reads the next token and requires it to be the delimiter want.
func (d *jsonDoc) delim(want json.Delim, what string) error {
	off := d.dec.InputOffset()
	tok, err := d.token()
	if err != nil {
		return d.syntax(err)
	}
	if got, ok := tok.(json.Delim); !ok || got != want {
		return d.errAt(off, "want %s, got %v", what, tok)
	}
	return nil
}

// end checks that nothing but white space follows the document just read (a
// second document concatenated to the first would otherwise be dropped
// silently); what names the document.
func (d *jsonDoc) end(what string) error {
	off := d.dec.InputOffset()
	if _, err := d.token(); !errors.Is(err, io.EOF) {
		return d.errAt(off, "data after %s", what)
	}
	return nil
}

// array calls fn for each element of the array that comes next, decoded as an
// object, with its index and start offset.
func (d *jsonDoc) array(ctx context.Context, what string, fn func(i int, off int64, o object) error) error {
	if err := d.delim('[', what+" (a JSON array)"); err != nil {
		return err
	}
	return d.elements(ctx, what, fn)
}

// elements is array after its '['.
func (d *jsonDoc) elements(ctx context.Context, what string, fn func(i int, off int64, o object) error) error {
	for i := 0; d.more(); i++ {
		if i%1024 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		raw, err := d.decodeRaw()
		if err != nil {
			return err
		}
		off := d.dec.InputOffset() - int64(len(raw))
		var o object
		if err := json.Unmarshal(raw, &o); err != nil {
			var ute *json.UnmarshalTypeError
			if errors.As(err, &ute) {
				return d.errAt(off, "want a JSON object, got a %s", ute.Value)
			}
			return d.errAt(off, "%v", err)
		}
		if o == nil {
			return d.errAt(off, "%s[%d] must be an object, got null", what, i)
		}
		if err := fn(i, off, o); err != nil {
			return err
		}
	}
	if err := d.delim(']', "the end of "+what); err != nil {
		return err
	}
	return nil
}

// key walks the object that comes next to the member named key and leaves the
// decoder before its value; other members are skipped.
func (d *jsonDoc) key(key, what string) (map[string]bool, error) {
	if err := d.delim('{', what+" (a JSON object)"); err != nil {
		return nil, err
	}
	return d.member(key, what)
}

// member is key after the object's '{'. It returns the keys seen so far in the
// object, for rest.
func (d *jsonDoc) member(key, what string) (map[string]bool, error) {
	seen := map[string]bool{}
	for d.more() {
		tok, err := d.token()
		if err != nil {
			return nil, d.syntax(err)
		}
		k, _ := tok.(string)
		if err := d.seenKey(seen, k); err != nil {
			return nil, err
		}
		if tok == key {
			return seen, nil
		}
		if _, err := d.decodeRaw(); err != nil {
			return nil, err
		}
	}
	return nil, d.errAt(d.dec.InputOffset(), "%s has no %q", what, key)
}

// rest reads the members that follow the walked one in an object whose keys so
// far are in seen, and its '}': a repeated key is an error there too.
func (d *jsonDoc) rest(seen map[string]bool, what string) error {
	for d.more() {
		tok, err := d.token()
		if err != nil {
			return d.syntax(err)
		}
		k, _ := tok.(string)
		if err := d.seenKey(seen, k); err != nil {
			return err
		}
		if _, err := d.decodeRaw(); err != nil {
			return err
		}
	}
	return d.delim('}', "the end of "+what)
}

// peekDelim returns the first non-space byte still to be read.
func peekByte(br *bufio.Reader) byte {
	for n := 1; ; n++ {
		b, err := br.Peek(n)
		if len(b) < n || err != nil {
			return 0
		}
		switch c := b[n-1]; c {
		case ' ', '\t', '\r', '\n':
		case 0xEF: // a UTF-8 BOM
			if n == 1 {
				if bb, _ := br.Peek(3); bytes.Equal(bb, []byte{0xEF, 0xBB, 0xBF}) {
					_, _ = br.Discard(3)
					n = 0
					continue
				}
			}
			return c
		default:
			return c
		}
	}
}

func convertRagas(ctx context.Context, br *bufio.Reader, file string, w *bufio.Writer, opt Options, st *Stats) error {
	cw := newCaseWriter(w, opt, st)
	if peekByte(br) == '[' {
		d := newJSONDoc(br, file, opt)
		err := d.array(ctx, "the dataset", func(i int, off int64, o object) error {
			line := 0
			if opt.LineAt != nil {
				line = opt.LineAt(off)
			}
			c, err := ragasCase(o, i+1, opt)
			if err != nil {
				return d.errAt(off, "record %d: %v", i+1, err)
			}
			return cw.write(file, line, c)
		})
		if err != nil {
			return err
		}
		return d.end("the dataset's JSON array")
	}
	rec := 0
	return jsonLines(ctx, br, file, func(n int, o object) error {
		rec++
		c, err := ragasCase(o, rec, opt)
		if err != nil {
			return Errorf(file, n, "%v", err)
		}
		return cw.write(file, n, c)
	})
}

// ragasCase maps one ragas sample: user_input is the query, retrieved_context_ids
// the ranked list (with retrieved_contexts as texts when both have the same
// length), reference_context_ids the gold. id and locale are kept when present;
// the id defaults to "ragas-N", N the record number.
func ragasCase(o object, rec int, opt Options) (caseOut, error) {
	var c caseOut
	var err error
	if c.Query, _, err = o.str("user_input"); err != nil {
		return c, err
	}
	if c.Query == "" {
		return c, fmt.Errorf("no \"user_input\" (the query)")
	}
	if c.ID, _, err = o.str("id"); err != nil {
		return c, err
	}
	if c.ID == "" {
		c.ID = "ragas-" + strconv.Itoa(rec)
	}
	if c.Locale, _, err = o.str("locale"); err != nil {
		return c, err
	}
	ids, hasIDs, err := o.list("retrieved_context_ids", "")
	if err != nil {
		return c, err
	}
	texts, hasTexts, err := o.list("retrieved_contexts", "")
	if err != nil {
		return c, err
	}
	if !hasIDs && hasTexts {
		return c, fmt.Errorf("has \"retrieved_contexts\" (texts) but no \"retrieved_context_ids\": scoring needs the ids of the retrieved cards, so export retrieved_context_ids")
	}
	if hasTexts && len(texts) != len(ids) {
		texts = nil // not parallel to the ids: keep ids only
	}
	c.Retrieved = (&caseWriter{opt: opt}).entries(ids, texts)
	if c.Gold, _, err = o.list("reference_context_ids", ""); err != nil {
		return c, err
	}
	return c, nil
}

// Package baseline is the paired comparison of a check run with a baseline run:
// the baseline file (schema retrieval-gate/baseline@1, gzip-compressed JSONL), its
// reader, the hash join of the two runs' cases on 64-bit id hashes, the paired
// statistics per group and measure, the per-case flips and the regression gates.
// It does no I/O beyond the baseline file and one temporary file (see Load).
package baseline

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	kgzip "github.com/klauspost/compress/gzip"
	"github.com/valyala/fastjson"

	"github.com/retrieval-gate/retrieval-gate/internal/format"
	"github.com/retrieval-gate/retrieval-gate/internal/input"
	"github.com/retrieval-gate/retrieval-gate/internal/input/jsonpos"
	"github.com/retrieval-gate/retrieval-gate/internal/input/kbfile"
	"github.com/retrieval-gate/retrieval-gate/internal/metrics"
)

// Schema is the schema id of the baseline file's first line.
const Schema = "retrieval-gate/baseline@1"

// schemaFamily starts every baseline schema id.
const schemaFamily = "retrieval-gate/baseline@"

// Formats of a baseline source.
const (
	FormatBaseline = "baseline"  // a --write-baseline file
	FormatCasesOut = "cases-out" // a plain --cases-out file: no header
)

// MaxLineBytes bounds one line of a baseline file (the header holds the check document).
const MaxLineBytes = 16 << 20

// Header is the first line of a baseline file: what the run measured and with
// what. Aggregates is the run's check document (--json), as written.
type Header struct {
	Aggregates    json.RawMessage `json:"aggregates,omitempty"`
	Cases         int64           `json:"cases"`
	CasesFile     string          `json:"cases_file"`
	Commit        string          `json:"commit"`
	CreatedAt     string          `json:"created_at,omitempty"` // RFC 3339, UTC; omitted when unknown ("" is refused)
	K             int             `json:"k"`
	KBCards       int             `json:"kb_cards"`
	KBFingerprint string          `json:"kb_fingerprint"`
	Schema        string          `json:"schema"`
}

// KBFingerprint identifies a knowledge base by content: "sha256:" and the hex
// SHA-256 of the lines "id\tsha256(title\ntext)\n" of its cards sorted by id. Card
// order, file layout and locale metadata do not change it; any edit of an id, a
// title or a text does.
func KBFingerprint(cards []kbfile.Card) string {
	lines := make([]string, len(cards))
	for i, c := range cards {
		h := sha256.Sum256([]byte(c.Title + "\n" + c.Text))
		lines[i] = c.ID + "\t" + hex.EncodeToString(h[:]) + "\n"
	}
	slices.Sort(lines)
	h := sha256.New()
	for _, l := range lines {
		_, _ = io.WriteString(h, l) // a hash.Hash's Write never returns an error
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}

// CaseLine is one case of a baseline file.
type CaseLine struct {
	ID           string
	Line         int // in the cases file; 0 when unknown
	Locale, Type string
	Query        string
	Gold         []string
	Scores       [metrics.NumCase]float64
	Has          [metrics.NumCase]bool
	Ranked       bool // Rank and Top are known (a retrieval case with gold, not precomputed scores)
	Rank         int  // metrics.FirstGoldRank; 0 when no gold card was retrieved
	// HasTop: Top is known. Every Ranked case, and a retrieval case without
	// gold (its top k without a rank: the rank-biased overlap compares it).
	HasTop bool
	Top    []string
}

// AppendCaseLine appends the baseline line of c to dst: {"id", "line", "locale",
// "type", "query", "gold", "scores", "rank", "top"} in that order (locale, query
// and gold only when present, rank only when Ranked, top when Ranked or
// HasTop), then a newline.
func AppendCaseLine(dst []byte, c *CaseLine) []byte {
	dst = append(dst, `{"id":`...)
	dst = format.AppendJSONString(dst, c.ID)
	if c.Line > 0 {
		dst = append(dst, `,"line":`...)
		dst = appendInt(dst, int64(c.Line))
	}
	if c.Locale != "" {
		dst = append(dst, `,"locale":`...)
		dst = format.AppendJSONString(dst, c.Locale)
	}
	dst = append(dst, `,"type":`...)
	dst = format.AppendJSONString(dst, c.Type)
	if c.Query != "" {
		dst = append(dst, `,"query":`...)
		dst = format.AppendJSONString(dst, c.Query)
	}
	if len(c.Gold) > 0 {
		dst = appendStrings(append(dst, `,"gold":`...), c.Gold)
	}
	dst = append(dst, `,"scores":{`...)
	first := true
	for _, i := range metrics.CaseKeysSorted {
		if !c.Has[i] {
			continue
		}
		if !first {
			dst = append(dst, ',')
		}
		first = false
		dst = format.AppendJSONString(dst, metrics.CaseKeys[i])
		dst = append(dst, ':')
		dst = format.AppendFloat(dst, c.Scores[i])
	}
	dst = append(dst, '}')
	if c.Ranked {
		dst = append(dst, `,"rank":`...)
		dst = appendInt(dst, int64(c.Rank))
	}
	if c.Ranked || c.HasTop {
		dst = appendStrings(append(dst, `,"top":`...), c.Top)
	}
	return append(dst, "}\n"...)
}

func appendInt(dst []byte, v int64) []byte { return fmt.Appendf(dst, "%d", v) }

func appendStrings(dst []byte, ss []string) []byte {
	dst = append(dst, '[')
	for i, s := range ss {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = format.AppendJSONString(dst, s)
	}
	return append(dst, ']')
}

// WriteFile writes a baseline file to w: a gzip member holding the header line,
// then body, the case lines as one or more gzip members already compressed (a
// multi-member gzip stream is one stream to every gzip reader).
func WriteFile(w io.Writer, h *Header, body io.Reader) error {
	h.Schema = Schema
	line, err := json.Marshal(h)
	if err != nil {
		return err
	}
	zw, _ := gzip.NewWriterLevel(w, gzip.BestSpeed)
	if _, err := zw.Write(append(line, '\n')); err != nil {
		return err
	}
	if err := zw.Close(); err != nil {
		return err
	}
	_, err = io.Copy(w, body)
	return err
}

// Source is an open baseline file being read line by line.
type Source struct {
	File   string
	Format string  // FormatBaseline or FormatCasesOut
	Header *Header // nil for FormatCasesOut
	// SchemaRead is the header's schema when it is a baseline schema other than
	// Schema (read as Schema, reported); "" otherwise.
	SchemaRead string

	in      io.Reader // the inflated stream
	rest    []byte    // read beyond the last line taken (split.go)
	readErr error     // the error that ended in (io.EOF at its end)
	maxLine int       // MaxLineBytes (smaller in tests)
	line    int
	pending []byte // a first line that is already a case (cases-out)
	// pendingLine is pending's line number.
	pendingLine int
	// headerLine is the header's line number; casesStated: the header has
	// "cases" (not null), which Load holds the case lines to.
	headerLine  int
	casesStated bool
	p           fastjson.Parser
	check       jsonpos.Scanner // every line passes jsonpos first: a repeated key is an error
	gz          *kgzip.Reader   // klauspost/compress: a drop-in for compress/gzip, faster to inflate
}

// Open starts reading a baseline from r (gzip or plain, detected by its magic
// bytes): a baseline file (its header first) or a plain --cases-out file. Errors
// are *input.Error naming file and line.
func Open(r io.Reader, file string) (*Source, error) {
	br := bufio.NewReaderSize(r, 1<<20)
	s := &Source{File: file}
	var in io.Reader = br
	if magic, _ := br.Peek(2); len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		gz, err := kgzip.NewReader(br)
		if err != nil {
			return nil, input.Errorf(file, 0, "not a gzip file: %v", err)
		}
		s.gz, in = gz, gz
	}
	s.in, s.maxLine = in, MaxLineBytes
	first, err := s.next()
	if errors.Is(err, io.EOF) {
		return nil, input.Errorf(file, 0, "empty: a baseline file starts with its header line, a --cases-out file with a case")
	}
	if err != nil {
		return nil, err
	}
	if err := s.check.Check(first); err != nil {
		if se, ok := err.(*jsonpos.SyntaxError); ok && se.NotSyntax() { //nolint:errorlint // Check returns *SyntaxError only
			return nil, input.Errorf(file, s.line, "%s", se.Describe())
		}
		return nil, input.Errorf(file, s.line, "not a JSON object (a baseline file starts with its header line)%s", textLooksLike(first))
	}
	v, perr := s.p.ParseBytes(first)
	if perr != nil || v.Type() != fastjson.TypeObject {
		return nil, input.Errorf(file, s.line, "not a JSON object (a baseline file starts with its header line)")
	}
	switch sch := v.Get("schema"); {
	case sch != nil:
		name := string(sch.GetStringBytes())
		if !strings.HasPrefix(name, schemaFamily) {
			return nil, input.Errorf(file, s.line, "schema %q is not a baseline (%q): a check --json report has no per-case data; use its --write-baseline or --cases-out file", format.SanitizeText(name), Schema)
		}
		if msg := headerProblem(v); msg != "" {
			return nil, input.Errorf(file, s.line, "%s", msg)
		}
		h := &Header{}
		if err := json.Unmarshal(first, h); err != nil {
			return nil, input.Errorf(file, s.line, "bad header: %v", err)
		}
		if h.Schema != Schema {
			s.SchemaRead = h.Schema
		}
		s.Header, s.Format = h, FormatBaseline
		s.headerLine = s.line
		s.casesStated = present(v, "cases")
	case v.Get("id") != nil && v.Get("retrieved") == nil && v.Get("text") == nil &&
		(v.Get("scores") != nil || v.Get("rank") != nil || v.Get("top") != nil || v.Get("gold") != nil):
		// A case with results (scores; or rank, top, gold: a baseline's lines)
		// and no retrieval list: a --cases-out file, or a baseline's body.
		s.Format = FormatCasesOut
		s.pending, s.pendingLine = first, s.line
	default:
		return nil, input.Errorf(file, s.line, "neither a baseline file (its header has \"schema\") nor a check --cases-out file (cases with \"scores\" and no \"retrieved\"): %s; pass a file that check --write-baseline or --cases-out wrote", looksLike(v))
	}
	return s, nil
}

// headerProblem is what is wrong with the values of a baseline header's k,
// cases, created_at and aggregates ("" when nothing is). Each may be absent (or
// null): an older or hand-made header lacks some. Present, k is a k check
// takes (an integer of at least 1, as --k), cases a non-negative integer,
// created_at an RFC 3339 time and aggregates an object. The other keys' types
// are json.Unmarshal's to check.
func headerProblem(v *fastjson.Value) string {
	if present(v, "k") {
		if k, ok := wholeNumber(v.Get("k")); !ok || k < 1 {
			return "k must be an integer of at least 1 (as check --k takes), got " + shown(v.Get("k"))
		}
	}
	if present(v, "cases") {
		if n, ok := wholeNumber(v.Get("cases")); !ok || n < 0 {
			return "cases must be a non-negative integer (the number of case lines), got " + shown(v.Get("cases"))
		}
	}
	if present(v, "created_at") {
		x := v.Get("created_at")
		sb, err := x.StringBytes()
		if err != nil {
			return "created_at must be a string, an RFC 3339 time (such as 2025-11-01T00:00:00Z), got " + shown(x)
		}
		if _, err := time.Parse(time.RFC3339, string(sb)); err != nil {
			return "created_at " + shown(x) + " is not an RFC 3339 time (such as 2025-11-01T00:00:00Z)"
		}
	}
	if present(v, "aggregates") && v.Get("aggregates").Type() != fastjson.TypeObject {
		return "aggregates must be an object (the run's check --json document), got " + shown(v.Get("aggregates"))
	}
	return ""
}

// present reports whether the object v has key with a value other than null.
func present(v *fastjson.Value, key string) bool {
	x := v.Get(key)
	return x != nil && x.Type() != fastjson.TypeNull
}

// wholeNumber is the value of a JSON number written as an integer (no
// fraction, no exponent) that fits an int; ok is false for anything else.
func wholeNumber(x *fastjson.Value) (int, bool) {
	if x.Type() != fastjson.TypeNumber {
		return 0, false
	}
	n, err := strconv.Atoi(string(x.MarshalTo(nil))) // a number marshals as written
	return n, err == nil
}

// shown is a header value as an error message quotes it: a number as written,
// a string quoted (its first 40 characters), true or false, else its type.
func shown(x *fastjson.Value) string {
	switch x.Type() {
	case fastjson.TypeNumber:
		return jsonpos.ShownNumber(x.MarshalTo(nil))
	case fastjson.TypeString:
		return jsonpos.ShownString(x.GetStringBytes())
	case fastjson.TypeTrue:
		return "true"
	case fastjson.TypeFalse:
		return "false"
	case fastjson.TypeArray:
		return "an array"
	}
	return "an object"
}

// textLooksLike names a text format a first line that is not JSON seems to be.
func textLooksLike(line []byte) string {
	f := strings.Fields(string(line))
	switch {
	case len(f) == 6 && strings.EqualFold(f[1], "Q0"):
		return ": it looks like a TREC run"
	case len(f) == 4:
		return ": it looks like TREC qrels"
	case bytes.HasPrefix(bytes.TrimSpace(line), []byte("---")):
		return ": it looks like a Markdown card"
	}
	return ""
}

// looksLike names what a first line that is not a baseline's seems to be.
func looksLike(v *fastjson.Value) string {
	has := func(keys ...string) bool {
		for _, k := range keys {
			if v.Get(k) == nil {
				return false
			}
		}
		return true
	}
	switch {
	case has("id", "retrieved"):
		return "it looks like a cases file (the input of check: \"retrieved\" lists, not scores)"
	case has("id", "text"):
		return "it looks like a knowledge-base file (\"id\" and \"text\")"
	case has("id"):
		return "it looks like a cases file without results (no \"scores\")"
	case has("query_id", "doc_id"):
		return "it looks like qrels or a run (\"query_id\", \"doc_id\")"
	case has("case_id"):
		return "it looks like human labels or judgments (\"case_id\")"
	case has("user_input") || has("question"):
		return "it looks like a dataset to import (retrieval-gate import)"
	}
	return "its first line has neither \"schema\" nor \"id\""
}

// next returns the next non-blank line (Open's first; valid until the following call).
func (s *Source) next() ([]byte, error) {
	var lb lineBatch
	s.fill(&lb, 1)
	if len(lb.starts) == 0 {
		return nil, lb.readErr
	}
	return lb.line(0), nil
}

// Close releases the decompressor.
func (s *Source) Close() error {
	if s.gz != nil {
		return s.gz.Close()
	}
	return nil
}

// ParseCaseLine decodes one case line (a baseline line or a --cases-out line:
// "gold" or "must_cite_one_of") into c, reusing its slices. p is the caller's parser.
func ParseCaseLine(p *fastjson.Parser, b []byte, file string, line int, c *CaseLine) error {
	v, err := p.ParseBytes(b)
	if err != nil {
		return input.Errorf(file, line, "invalid JSON: %v", err)
	}
	if v.Type() != fastjson.TypeObject {
		return input.Errorf(file, line, "a case must be a JSON object")
	}
	gold, top := c.Gold[:0], c.Top[:0]
	*c = CaseLine{}
	str := func(key string) (string, error) {
		x := v.Get(key)
		if x == nil || x.Type() == fastjson.TypeNull {
			return "", nil
		}
		sb, err := x.StringBytes()
		if err != nil {
			return "", input.Errorf(file, line, "%s must be a string", key)
		}
		return string(sb), nil
	}
	strs := func(key string, dst []string) ([]string, error) {
		x := v.Get(key)
		if x == nil || x.Type() == fastjson.TypeNull {
			return dst, nil
		}
		arr, err := x.Array()
		if err != nil {
			return nil, input.Errorf(file, line, "%s must be an array of strings", key)
		}
		for _, e := range arr {
			sb, err := e.StringBytes()
			if err != nil {
				return nil, input.Errorf(file, line, "%s must be an array of strings", key)
			}
			dst = append(dst, string(sb))
		}
		return dst, nil
	}
	if c.ID, err = str("id"); err != nil {
		return err
	}
	if c.ID == "" {
		return input.Errorf(file, line, "missing or empty \"id\"")
	}
	if c.Locale, err = str("locale"); err != nil {
		return err
	}
	if c.Type, err = str("type"); err != nil {
		return err
	}
	if c.Query, err = str("query"); err != nil {
		return err
	}
	key := "gold"
	if v.Get(key) == nil {
		key = "must_cite_one_of"
	}
	if c.Gold, err = strs(key, gold); err != nil {
		return err
	}
	if x := v.Get("line"); x != nil {
		n, err := x.Int()
		if err != nil || n < 0 {
			return input.Errorf(file, line, "line must be a non-negative integer")
		}
		c.Line = n
	}
	if x := v.Get("scores"); x != nil && x.Type() != fastjson.TypeNull {
		o, err := x.Object()
		if err != nil {
			return input.Errorf(file, line, "scores must be an object")
		}
		var bad error
		o.Visit(func(k []byte, e *fastjson.Value) {
			i := metrics.CaseIndex(string(k))
			if i < 0 || bad != nil {
				return // not a registered measure: not compared
			}
			f, err := e.Float64()
			if err != nil || math.IsNaN(f) || math.IsInf(f, 0) || !metrics.CaseMeasures[i].Scale.InRange(f) {
				bad = input.Errorf(file, line, "scores.%s must be a number in the measure's range", k)
				return
			}
			c.Scores[i], c.Has[i] = f, true
		})
		if bad != nil {
			return bad
		}
	}
	if x := v.Get("rank"); x != nil {
		n, err := x.Int()
		if err != nil || n < 0 {
			return input.Errorf(file, line, "rank must be a non-negative integer")
		}
		c.Rank, c.Ranked = n, true
	}
	if x := v.Get("top"); x != nil && x.Type() != fastjson.TypeNull {
		if c.Top, err = strs("top", top); err != nil {
			return err
		}
		c.HasTop = true
	}
	return nil
}

// GoldHash is a 64-bit FNV-1a hash of the gold set: distinct non-empty ids sorted,
// each followed by a 0 byte; 0 for no gold. Equal sets hash equal in any order.
func GoldHash(gold []string) uint64 {
	var buf [8]string
	ids := metrics.AppendDedupGold(buf[:0], gold)
	if len(ids) == 0 {
		return 0
	}
	slices.Sort(ids)
	h := uint64(14695981039346656037)
	for _, id := range ids {
		for i := 0; i < len(id); i++ {
			h ^= uint64(id[i])
			h *= 1099511628211
		}
		h ^= 0
		h *= 1099511628211
	}
	return h | 1
}

// IDHash is the 64-bit FNV-1a hash of a case id (the pairing key; never 0). Two
// distinct ids collide with probability about n²/2^65 (≈ 3·10⁻⁸ for a million cases).
func IDHash(s string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= 1099511628211
	}
	if h == 0 {
		h = 1
	}
	return h
}

package dataset

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strconv"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"
)

// CaseParser decodes cases lines. It is a hand-written scanner for the cases
// schema: it validates the whole line as JSON (RFC 8259, the same language
// encoding/json accepts, including its nesting limit), decodes only the fields a
// Case holds, and skips everything else (unknown fields, a retrieved entry's
// text) without allocating. Strings are unescaped exactly as encoding/json does
// (invalid UTF-8 and lone surrogates become U+FFFD). Duplicate keys: the last
// one wins, as with encoding/json.
//
// The zero value is ready to use. A CaseParser is not safe for concurrent use;
// reuse one per goroutine to avoid allocations.
type CaseParser struct {
	b     []byte // the line being parsed
	arena []byte // unescaped strings of the case
	slab  []byte // strings handed out are carved from it (see carveStrings)
	key   []byte // scratch for unescaped keys

	id, locale, typ, query arenaSpan
	hasID                  bool
	gold                   []arenaSpan
	ret                    []retSpan
	hasRetrieved           bool
	scores                 map[string]float64
	hasScores              bool
	scoreErrs              map[string]string // scores key -> type error of its last value
	errs                   [numFields]string // semantic error per top-level field
}

// jsonMaxNesting is encoding/json's limit on nested arrays and objects.
const jsonMaxNesting = 10000

type arenaSpan struct{ off, end int32 } // a string in the arena; off < 0: absent

var noArenaSpan = arenaSpan{-1, -1}

func (s arenaSpan) ok() bool { return s.off >= 0 }

type retSpan struct {
	id, parent arenaSpan
	score      float64
	hasScore   bool
}

// Top-level fields, in the order their errors are reported.
const (
	fID = iota
	fLocale
	fType
	fQuery
	fGold
	fRetrieved
	fScores
	numFields
)

// jsonSyntaxError is a JSON syntax error at a byte offset of the line.
type jsonSyntaxError struct {
	pos int
	msg string
}

func (e *jsonSyntaxError) Error() string { return fmt.Sprintf("%s at column %d", e.msg, e.pos+1) }

// Parse decodes the JSON line b (without its newline) into c, reusing c's
// slices. Errors are *Error naming file and line. Strings in c stay valid after
// the next Parse; c.Raw aliases b.
func (p *CaseParser) Parse(b []byte, file string, line int, c *Case) error {
	p.reset(b)
	if err := p.parseTop(); err != nil {
		return lineError(err, file, line)
	}
	for _, msg := range p.errs {
		if msg != "" {
			return Errorf(file, line, "%s", msg)
		}
	}
	if !p.hasID {
		return Errorf(file, line, "case has no \"id\"")
	}
	if p.id.off == p.id.end {
		return Errorf(file, line, "case \"id\" is empty")
	}
	if p.hasRetrieved && p.hasScores {
		return Errorf(file, line, "case %q has both \"retrieved\" and \"scores\"; give one", p.arena[p.id.off:p.id.end])
	}
	p.fill(c, file, line)
	return nil
}

// lineError is the *Error of a line that failed to parse: "malformed JSON: …"
// for a syntax error, else the error's own message.
func lineError(err error, file string, line int) error {
	var se *jsonSyntaxError
	if errors.As(err, &se) {
		return Errorf(file, line, "malformed JSON: %s", se.Error())
	}
	return Errorf(file, line, "%s", err.Error())
}

func (p *CaseParser) reset(b []byte) {
	p.b = b
	p.arena = p.arena[:0]
	p.id, p.locale, p.typ, p.query = noArenaSpan, noArenaSpan, noArenaSpan, noArenaSpan
	p.hasID = false
	p.gold = p.gold[:0]
	p.ret = p.ret[:0]
	p.hasRetrieved = false
	p.scores = nil
	p.hasScores = false
	clear(p.scoreErrs)
	p.errs = [numFields]string{}
}

// slabSize is the size of the blocks the strings of cases are carved from.
const slabSize = 16 << 10

// carveStrings returns the arena's bytes as a string carved from p.slab: one
// allocation per slabSize bytes of strings instead of one per case, which
// keeps the garbage collector quiet. Safe because a slab is append-only: bytes
// handed out in a string are never written again.
func (p *CaseParser) carveStrings() string {
	n := len(p.arena)
	if n == 0 {
		return ""
	}
	if cap(p.slab)-len(p.slab) < n {
		p.slab = make([]byte, 0, max(slabSize, n))
	}
	start := len(p.slab)
	p.slab = append(p.slab, p.arena...)
	return unsafe.String(&p.slab[start], n)
}

// fill copies the decoded fields into c.
func (p *CaseParser) fill(c *Case, file string, line int) {
	s := p.carveStrings()
	get := func(sp arenaSpan) string {
		if !sp.ok() {
			return ""
		}
		return s[sp.off:sp.end]
	}
	*c = Case{
		File:         file,
		Line:         line,
		ID:           s[p.id.off:p.id.end],
		Locale:       get(p.locale),
		Type:         get(p.typ),
		Query:        get(p.query),
		Gold:         c.Gold[:0],
		Retrieved:    c.Retrieved[:0],
		HasRetrieved: p.hasRetrieved,
		Scores:       p.scores,
		Raw:          p.b,
	}
	if c.Type == "" {
		c.Type = "golden"
	}
	for _, g := range p.gold {
		c.Gold = append(c.Gold, s[g.off:g.end])
	}
	for _, r := range p.ret {
		c.Retrieved = append(c.Retrieved, Retrieved{ID: s[r.id.off:r.id.end], ParentID: get(r.parent), Score: r.score, HasScore: r.hasScore})
	}
}

func (p *CaseParser) syntax(pos int, format string, args ...any) error {
	return &jsonSyntaxError{pos: pos, msg: fmt.Sprintf(format, args...)}
}

// unexpected reports the byte at pos (or the end of the line) as unexpected.
func (p *CaseParser) unexpected(pos int, what string) error {
	if pos >= len(p.b) {
		return p.syntax(pos, "unexpected end of line %s", what)
	}
	return p.syntax(pos, "unexpected %s %s", describeJSONByte(p.b[pos:]), what)
}

func describeJSONByte(b []byte) string {
	c := b[0]
	switch {
	case c >= 0x20 && c < 0x7f:
		return fmt.Sprintf("character '%c'", c)
	case c >= utf8.RuneSelf:
		if r, size := utf8.DecodeRune(b); size > 1 {
			return fmt.Sprintf("character %q", r)
		}
	}
	return fmt.Sprintf("byte 0x%02x", c)
}

func (p *CaseParser) ws(i int) int {
	b := p.b
	for i < len(b) {
		switch b[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// jsonTypeName names the JSON type of the value starting with c, as fastjson does.
func jsonTypeName(c byte) string {
	switch c {
	case '"':
		return "string"
	case '{':
		return "object"
	case '[':
		return "array"
	case 't':
		return "true"
	case 'f':
		return "false"
	case 'n':
		return "null"
	}
	return "number"
}

// jsonStringStop marks the bytes that end the fast path inside a string: the quote, the
// backslash and the control characters (which JSON forbids unescaped).
var jsonStringStop = func() (t [256]bool) {
	for c := 0; c < 0x20; c++ {
		t[c] = true
	}
	t['"'], t['\\'] = true, true
	return t
}()

const (
	swarOnes = 0x0101010101010101
	swarHigh = 0x8080808080808080
)

// scanString validates the string starting at the quote at i and returns the
// offset after its closing quote and whether it needs unquoting (escapes or
// non-ASCII bytes, which may be invalid UTF-8); if not, its content is the
// bytes between the quotes.
func (p *CaseParser) scanString(i int) (end int, esc bool, err error) {
	b := p.b
	j := i + 1
	var hi uint64 // OR of the plain bytes: bit 7 set if any is not ASCII
	for {
		// Eight bytes at a time while none is a quote, a backslash or a control
		// character (exact: haszero/hasless from "Bit Twiddling Hacks").
		for j+8 <= len(b) {
			x := binary.LittleEndian.Uint64(b[j:])
			q := x ^ (swarOnes * '"')
			e := x ^ (swarOnes * '\\')
			if ((q-swarOnes)&^q|(e-swarOnes)&^e|(x-swarOnes*0x20)&^x)&swarHigh != 0 {
				break
			}
			hi |= x
			j += 8
		}
		for j < len(b) && !jsonStringStop[b[j]] {
			hi |= uint64(b[j])
			j++
		}
		if j >= len(b) {
			return 0, false, p.syntax(j, "unexpected end of line in string")
		}
		switch c := b[j]; c {
		case '"':
			return j + 1, esc || hi&swarHigh != 0, nil
		case '\\':
			esc = true
			j++
			if j >= len(b) {
				return 0, false, p.syntax(j, "unexpected end of line in string escape")
			}
			switch b[j] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				j++
			case 'u':
				for k := 1; k <= 4; k++ {
					if j+k >= len(b) {
						return 0, false, p.syntax(j+k, "unexpected end of line in \\u escape")
					}
					if !isJSONHex(b[j+k]) {
						return 0, false, p.unexpected(j+k, "in \\u escape")
					}
				}
				j += 5
			default:
				return 0, false, p.unexpected(j, "in string escape")
			}
		default:
			return 0, false, p.syntax(j, "control character 0x%02x in string", c)
		}
	}
}

func isJSONHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// scanNumber validates the number starting at i and returns the offset after it.
func (p *CaseParser) scanNumber(i int) (int, error) {
	b := p.b
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && '1' <= b[i] && b[i] <= '9':
		i++
		for i < len(b) && '0' <= b[i] && b[i] <= '9' {
			i++
		}
	default:
		return 0, p.unexpected(i, "in number")
	}
	if i < len(b) && b[i] == '.' {
		i++
		if i >= len(b) || b[i] < '0' || b[i] > '9' {
			return 0, p.unexpected(i, "after decimal point in number")
		}
		for i < len(b) && '0' <= b[i] && b[i] <= '9' {
			i++
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if i >= len(b) || b[i] < '0' || b[i] > '9' {
			return 0, p.unexpected(i, "in exponent of number")
		}
		for i < len(b) && '0' <= b[i] && b[i] <= '9' {
			i++
		}
	}
	return i, nil
}

func (p *CaseParser) literal(i int, lit string) (int, error) {
	for k := 0; k < len(lit); k++ {
		if i+k >= len(p.b) || p.b[i+k] != lit[k] {
			return 0, p.unexpected(i+k, "in literal "+lit)
		}
	}
	return i + len(lit), nil
}

// skipValue validates the value starting at i (which must not be whitespace)
// inside depth open containers and returns the offset after it.
func (p *CaseParser) skipValue(i, depth int) (int, error) {
	b := p.b
	if i >= len(b) {
		return 0, p.unexpected(i, "looking for a value")
	}
	switch b[i] {
	case '"':
		end, _, err := p.scanString(i)
		return end, err
	case '{':
		if depth+1 > jsonMaxNesting {
			return 0, p.syntax(i, "nesting deeper than %d", jsonMaxNesting)
		}
		i = p.ws(i + 1)
		if i < len(b) && b[i] == '}' {
			return i + 1, nil
		}
		for {
			if i >= len(b) || b[i] != '"' {
				return 0, p.unexpected(i, "looking for an object key")
			}
			end, _, err := p.scanString(i)
			if err != nil {
				return 0, err
			}
			if i, err = p.colon(end); err != nil {
				return 0, err
			}
			if i, err = p.skipValue(i, depth+1); err != nil {
				return 0, err
			}
			var done bool
			if i, done, err = p.next(i, '}', "after object value"); err != nil || done {
				return i, err
			}
		}
	case '[':
		if depth+1 > jsonMaxNesting {
			return 0, p.syntax(i, "nesting deeper than %d", jsonMaxNesting)
		}
		i = p.ws(i + 1)
		if i < len(b) && b[i] == ']' {
			return i + 1, nil
		}
		for {
			var err error
			if i, err = p.skipValue(i, depth+1); err != nil {
				return 0, err
			}
			var done bool
			if i, done, err = p.next(i, ']', "after array element"); err != nil || done {
				return i, err
			}
		}
	case 't':
		return p.literal(i, "true")
	case 'f':
		return p.literal(i, "false")
	case 'n':
		return p.literal(i, "null")
	case '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		return p.scanNumber(i)
	}
	return 0, p.unexpected(i, "looking for a value")
}

// colon expects optional whitespace, ':' and optional whitespace after a key
// ending at i, and returns the offset of the value.
func (p *CaseParser) colon(i int) (int, error) {
	i = p.ws(i)
	if i >= len(p.b) || p.b[i] != ':' {
		return 0, p.unexpected(i, "after object key")
	}
	return p.ws(i + 1), nil
}

// next handles what follows a member or element: ',' (returns the offset of the
// next one), or the closer (returns the offset after it and done).
func (p *CaseParser) next(i int, closer byte, where string) (int, bool, error) {
	i = p.ws(i)
	if i < len(p.b) {
		switch p.b[i] {
		case ',':
			return p.ws(i + 1), false, nil
		case closer:
			return i + 1, true, nil
		}
	}
	return 0, false, p.unexpected(i, where)
}

// objectKey scans the key at i and returns it unescaped (aliasing p.b or p.key,
// valid until the next key) and the offset of its value. Invalid UTF-8 is
// coerced to U+FFFD, as encoding/json does.
func (p *CaseParser) objectKey(i int) ([]byte, int, error) {
	b := p.b
	if i >= len(b) || b[i] != '"' {
		return nil, 0, p.unexpected(i, "looking for an object key")
	}
	// Fast path: keys are short and plain ASCII.
	for j := i + 1; j < len(b); j++ {
		c := b[j]
		if c == '"' {
			v, err := p.colon(j + 1)
			return b[i+1 : j], v, err
		}
		if c < 0x20 || c == '\\' || c >= utf8.RuneSelf {
			break
		}
	}
	end, esc, err := p.scanString(i)
	if err != nil {
		return nil, 0, err
	}
	key := p.b[i+1 : end-1]
	if esc {
		p.key = appendJSONUnquoted(p.key[:0], key)
		key = p.key
	}
	v, err := p.colon(end)
	return key, v, err
}

// store appends the unescaped content of the string whose quotes are at i and
// end-1 to the arena.
func (p *CaseParser) store(i, end int, esc bool) arenaSpan {
	raw := p.b[i+1 : end-1]
	off := len(p.arena)
	if !esc {
		p.arena = append(p.arena, raw...)
	} else {
		p.arena = appendJSONUnquoted(p.arena, raw)
	}
	return arenaSpan{int32(off), int32(len(p.arena))}
}

// appendJSONUnquoted appends the JSON string content s (already validated, without
// its quotes) unescaped to dst, exactly as encoding/json unquotes it.
func appendJSONUnquoted(dst, s []byte) []byte {
	for r := 0; r < len(s); {
		c := s[r]
		switch {
		case c == '\\':
			r++
			switch s[r] {
			case 'b':
				dst = append(dst, '\b')
			case 'f':
				dst = append(dst, '\f')
			case 'n':
				dst = append(dst, '\n')
			case 'r':
				dst = append(dst, '\r')
			case 't':
				dst = append(dst, '\t')
			case 'u':
				rr := jsonGetu4(s[r+1:])
				r += 5
				if utf16.IsSurrogate(rr) {
					if r+1 < len(s) && s[r] == '\\' && s[r+1] == 'u' {
						if dec := utf16.DecodeRune(rr, jsonGetu4(s[r+2:])); dec != unicode.ReplacementChar {
							r += 6
							dst = utf8.AppendRune(dst, dec)
							continue
						}
					}
					rr = unicode.ReplacementChar
				}
				dst = utf8.AppendRune(dst, rr)
				continue
			default: // '"', '\\', '/'
				dst = append(dst, s[r])
			}
			r++
		case c < utf8.RuneSelf:
			dst = append(dst, c)
			r++
		default:
			rr, size := utf8.DecodeRune(s[r:])
			r += size
			dst = utf8.AppendRune(dst, rr)
		}
	}
	return dst
}

// jsonGetu4 decodes 4 hex digits at the start of s (validated by scanString).
func jsonGetu4(s []byte) rune {
	if len(s) < 4 {
		return -1
	}
	var r rune
	for _, c := range s[:4] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			c = c - 'A' + 10
		default:
			return -1
		}
		r = r*16 + rune(c)
	}
	return r
}

// parseTop parses the whole line. Syntax errors are returned; type errors are
// recorded in p.errs (the last occurrence of a key decides, as with encoding/json)
// and parsing goes on so that a later syntax error still wins.
func (p *CaseParser) parseTop() error { return p.topObject("case", p.caseMember) }

// caseMember decodes the member key of a case whose value starts at v.
func (p *CaseParser) caseMember(key []byte, v int) (int, error) {
	switch string(key) {
	case "id":
		return p.stringField(v, fID, "id", &p.id)
	case "locale":
		return p.stringField(v, fLocale, "locale", &p.locale)
	case "type":
		return p.stringField(v, fType, "type", &p.typ)
	case "query":
		return p.stringField(v, fQuery, "query", &p.query)
	case "must_cite_one_of":
		return p.goldField(v)
	case "retrieved":
		return p.retrievedField(v)
	case "scores":
		return p.scoresField(v)
	}
	return p.skipValue(v, 1)
}

// topObject parses the whole line as one JSON object (what names it in errors:
// "case", "card"), calling member for each of its members in order.
func (p *CaseParser) topObject(what string, member func(key []byte, v int) (int, error)) error {
	b := p.b
	i := p.ws(0)
	if i >= len(b) {
		return p.unexpected(i, "looking for a "+what+" object")
	}
	if b[i] != '{' {
		end, err := p.skipValue(i, 0)
		if err != nil {
			return err
		}
		if end = p.ws(end); end < len(b) {
			return p.unexpected(end, "after top-level value")
		}
		return fmt.Errorf("a %s must be a JSON object, got %s", what, jsonTypeName(b[i]))
	}
	i, err := p.members(i+1, member)
	if err != nil {
		return err
	}
	if i = p.ws(i); i < len(b) {
		return p.unexpected(i, "after the "+what+" object")
	}
	return nil
}

// members parses the members of the object whose '{' ends before i, calling
// member with each key (valid until the next key) and the offset of its value;
// member returns the offset after the value. members returns the offset after
// the closing '}'.
func (p *CaseParser) members(i int, member func(key []byte, v int) (int, error)) (int, error) {
	b := p.b
	i = p.ws(i)
	if i < len(b) && b[i] == '}' {
		return i + 1, nil
	}
	for {
		key, v, err := p.objectKey(i)
		if err != nil {
			return 0, err
		}
		if v >= len(b) {
			return 0, p.unexpected(v, "looking for a value")
		}
		if i, err = member(key, v); err != nil {
			return 0, err
		}
		var done bool
		if i, done, err = p.next(i, '}', "after object value"); err != nil || done {
			return i, err
		}
	}
}

// container starts the value at v of field f (named name in errors), which must
// be a container opened by open ('[' or '{') or null. For the container it returns
// the offset after open and ok; for null, or a value of another type (recorded as
// f's type error: "must be want"), the offset after the value and not ok.
func (p *CaseParser) container(v, f int, open byte, name, want string) (i int, ok bool, err error) {
	switch p.b[v] {
	case open:
		return v + 1, true, nil
	case 'n':
		i, err = p.literal(v, "null")
		return i, false, err
	}
	i, err = p.skipValue(v, 1)
	p.errs[f] = fmt.Sprintf("field %q must be %s, got %s", name, want, jsonTypeName(p.b[v]))
	return i, false, err
}

// elements parses the elements of the array whose '[' ends before i, calling
// element with each index n and the offset of its value (not whitespace, maybe
// any byte); element returns the offset after the value. elements returns the
// offset after the closing ']'.
func (p *CaseParser) elements(i int, element func(n, v int) (int, error)) (int, error) {
	b := p.b
	i = p.ws(i)
	if i < len(b) && b[i] == ']' {
		return i + 1, nil
	}
	for n := 0; ; n++ {
		if i >= len(b) {
			return 0, p.unexpected(i, "looking for a value")
		}
		var err error
		if i, err = element(n, i); err != nil {
			return 0, err
		}
		var done bool
		if i, done, err = p.next(i, ']', "after array element"); err != nil || done {
			return i, err
		}
	}
}

// stringField decodes a string (or null: absent) into *dst.
func (p *CaseParser) stringField(v, f int, name string, dst *arenaSpan) (int, error) {
	p.errs[f] = ""
	*dst = noArenaSpan
	if f == fID {
		p.hasID = true
	}
	switch p.b[v] {
	case '"':
		end, esc, err := p.scanString(v)
		if err != nil {
			return 0, err
		}
		*dst = p.store(v, end, esc)
		return end, nil
	case 'n':
		if f != fID {
			return p.literal(v, "null")
		}
	}
	end, err := p.skipValue(v, 1)
	p.errs[f] = fmt.Sprintf("field %q must be a string, got %s", name, jsonTypeName(p.b[v]))
	return end, err
}

// goldField decodes must_cite_one_of: an array of strings, or null.
func (p *CaseParser) goldField(v int) (int, error) {
	p.errs[fGold] = ""
	p.gold = p.gold[:0]
	i, ok, err := p.container(v, fGold, '[', "must_cite_one_of", "an array of card ids")
	if !ok {
		return i, err
	}
	b := p.b
	return p.elements(i, func(n, i int) (int, error) {
		if b[i] != '"' {
			end, err := p.skipValue(i, 2)
			p.fieldErr(fGold, "must_cite_one_of[%d] must be a string, got %s", n, jsonTypeName(b[i]))
			return end, err
		}
		end, esc, err := p.scanString(i)
		if err != nil {
			return 0, err
		}
		// An empty gold id is kept: it fails the integrity gate, which
		// names it, like any id that is not a card.
		p.gold = append(p.gold, p.store(i, end, esc))
		return end, nil
	})
}

// fieldErr records the first type error of the current occurrence of field f.
func (p *CaseParser) fieldErr(f int, format string, args ...any) {
	if p.errs[f] == "" {
		p.errs[f] = fmt.Sprintf(format, args...)
	}
}

// retrievedField decodes retrieved: an array of card id strings or objects, or null.
func (p *CaseParser) retrievedField(v int) (int, error) {
	p.errs[fRetrieved] = ""
	p.ret = p.ret[:0]
	p.hasRetrieved = false
	i, ok, err := p.container(v, fRetrieved, '[', "retrieved", "an array")
	if !ok {
		return i, err
	}
	p.hasRetrieved = true
	b := p.b
	return p.elements(i, func(n, i int) (int, error) {
		switch b[i] {
		case '"':
			end, esc, err := p.scanString(i)
			if err != nil {
				return 0, err
			}
			if sp := p.store(i, end, esc); sp.off == sp.end {
				p.fieldErr(fRetrieved, "retrieved[%d] is an empty string", n)
			} else {
				p.ret = append(p.ret, retSpan{id: sp, parent: noArenaSpan})
			}
			return end, nil
		case '{':
			return p.retrievedEntry(i, n)
		}
		end, err := p.skipValue(i, 2)
		p.fieldErr(fRetrieved, "retrieved[%d] must be a card id string or an object, got %s", n, jsonTypeName(b[i]))
		return end, err
	})
}

// retrievedEntry decodes the object entry n of retrieved starting at i: id
// (required string), parent_id (string or null), score (number or null); other
// members, text included, are skipped.
func (p *CaseParser) retrievedEntry(i, n int) (int, error) {
	const depth = 3 // case object, retrieved array, this entry
	b := p.b
	r := retSpan{id: noArenaSpan, parent: noArenaSpan}
	var idErr, parentErr, scoreFieldErr string
	i, err := p.members(i+1, func(key []byte, v int) (i int, err error) {
		switch string(key) {
		case "id":
			r.id, idErr = noArenaSpan, ""
			if b[v] == '"' {
				end, esc, err := p.scanString(v)
				if err != nil {
					return 0, err
				}
				if r.id = p.store(v, end, esc); r.id.off == r.id.end {
					idErr = fmt.Sprintf("retrieved[%d].id is empty", n)
				}
				i = end
			} else {
				if i, err = p.skipValue(v, depth); err != nil {
					return 0, err
				}
				idErr = fmt.Sprintf("retrieved[%d].id must be a string, got %s", n, jsonTypeName(b[v]))
			}
		case "parent_id":
			r.parent, parentErr = noArenaSpan, ""
			switch b[v] {
			case '"':
				end, esc, err := p.scanString(v)
				if err != nil {
					return 0, err
				}
				r.parent = p.store(v, end, esc)
				i = end
			case 'n':
				if i, err = p.literal(v, "null"); err != nil {
					return 0, err
				}
			default:
				if i, err = p.skipValue(v, depth); err != nil {
					return 0, err
				}
				parentErr = fmt.Sprintf("retrieved[%d].parent_id must be a string, got %s", n, jsonTypeName(b[v]))
			}
		case "score":
			r.score, r.hasScore, scoreFieldErr = 0, false, ""
			switch c := b[v]; {
			case c == 'n':
				if i, err = p.literal(v, "null"); err != nil {
					return 0, err
				}
			case c == '-' || '0' <= c && c <= '9':
				if i, err = p.scanNumber(v); err != nil {
					return 0, err
				}
				f, ok := parseJSONNumber(b[v:i])
				if !ok {
					scoreFieldErr = fmt.Sprintf("retrieved[%d].score %s is out of range", n, b[v:i])
				} else {
					r.score, r.hasScore = f, true
				}
			default:
				if i, err = p.skipValue(v, depth); err != nil {
					return 0, err
				}
				scoreFieldErr = fmt.Sprintf("retrieved[%d].score must be a number, got %s", n, jsonTypeName(c))
			}
		default:
			if i, err = p.skipValue(v, depth); err != nil {
				return 0, err
			}
		}
		return i, nil
	})
	if err != nil {
		return 0, err
	}
	switch {
	case idErr != "":
		p.fieldErr(fRetrieved, "%s", idErr)
	case !r.id.ok():
		p.fieldErr(fRetrieved, "retrieved[%d] has no \"id\"", n)
	case parentErr != "":
		p.fieldErr(fRetrieved, "%s", parentErr)
	case scoreFieldErr != "":
		p.fieldErr(fRetrieved, "%s", scoreFieldErr)
	default:
		if r.parent.ok() && r.parent.off == r.parent.end {
			r.parent = noArenaSpan // "parent_id": "" means no parent
		}
		p.ret = append(p.ret, r)
	}
	return i, nil
}

// parseJSONNumber converts a validated JSON number; ok is false when it does not
// fit a float64 (as encoding/json refuses it).
func parseJSONNumber(b []byte) (float64, bool) {
	if f, ok := exactDecimalFloat(b); ok {
		return f, true
	}
	f, err := strconv.ParseFloat(string(b), 64)
	if err != nil || math.IsInf(f, 0) {
		return 0, false
	}
	return f, true
}

// scoresField decodes scores: an object of numbers (null: key absent), or null.
func (p *CaseParser) scoresField(v int) (int, error) {
	p.errs[fScores] = ""
	p.scores = nil
	p.hasScores = false
	clear(p.scoreErrs)
	i, ok, err := p.container(v, fScores, '{', "scores", "an object")
	if !ok {
		return i, err
	}
	p.hasScores = true
	p.scores = make(map[string]float64, 4)
	b := p.b
	i, err = p.members(i, func(key []byte, v int) (i int, err error) {
		k := string(key)
		delete(p.scoreErrs, k)
		switch c := b[v]; {
		case c == 'n':
			if i, err = p.literal(v, "null"); err != nil {
				return 0, err
			}
			delete(p.scores, k)
		case c == '-' || '0' <= c && c <= '9':
			if i, err = p.scanNumber(v); err != nil {
				return 0, err
			}
			if f, ok := parseJSONNumber(b[v:i]); ok {
				p.scores[k] = f
			} else {
				delete(p.scores, k)
				p.scoreErr(k, fmt.Sprintf("scores.%s %s is out of range", k, b[v:i]))
			}
		default:
			if i, err = p.skipValue(v, 2); err != nil {
				return 0, err
			}
			delete(p.scores, k)
			p.scoreErr(k, fmt.Sprintf("scores.%s must be a number, got %s", k, jsonTypeName(c)))
		}
		return i, nil
	})
	if err != nil {
		return 0, err
	}
	if len(p.scoreErrs) > 0 {
		// Report the error of the smallest key: independent of member order.
		first, found := "", false
		for k := range p.scoreErrs {
			if !found || k < first {
				first, found = k, true
			}
		}
		p.errs[fScores] = p.scoreErrs[first]
	}
	return i, nil
}

func (p *CaseParser) scoreErr(k, msg string) {
	if p.scoreErrs == nil {
		p.scoreErrs = make(map[string]string)
	}
	p.scoreErrs[k] = msg
}

// exactPow10 holds the powers of ten that are exact float64s.
var exactPow10 = [...]float64{1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
	1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22}

// exactDecimalFloat converts a validated JSON number of the form -?digits(.digits)? with
// at most 15 digits in all, exactly (Clinger's fast path: an integer mantissa
// below 2^53 divided by an exact power of ten is correctly rounded). ok is false
// for any other form; strconv handles those.
func exactDecimalFloat(b []byte) (float64, bool) {
	neg := false
	if len(b) > 0 && b[0] == '-' {
		neg, b = true, b[1:]
	}
	var mant uint64
	digits, frac := 0, -1
	for k, c := range b {
		switch {
		case '0' <= c && c <= '9':
			mant = mant*10 + uint64(c-'0')
			digits++
		case c == '.' && frac < 0:
			frac = len(b) - k - 1
		default:
			return 0, false
		}
	}
	if digits == 0 || digits > 15 {
		return 0, false
	}
	f := float64(mant)
	if frac > 0 {
		f /= exactPow10[frac]
	}
	if neg {
		f = -f
	}
	return f, true
}

// Package jsonpos is the one JSON reader of retrieval-gate's inputs: a strict
// RFC 8259 lexer (the language encoding/json accepts, with its nesting limit)
// and a parser into a tree of values that know their byte offsets and lines.
//
// Two users: the cases scanner (internal/input/casefile) embeds Scanner and
// decodes the cases schema straight from the bytes, without a tree, because it
// is the hot path; every other JSON input (knowledge-base cards, qrels, labels,
// locks, the case rewriting of retrieve, report --from) parses a tree with
// Parser. Readers that decode with another library (the history, the baseline,
// the judge cache, import's JSON formats) validate each line or value with
// Scanner.Check first, so the rule below holds for them too.
//
// One rule for duplicate keys, in both: an object that repeats a key (compared
// after unescaping) is an error naming the key, at the second occurrence.
package jsonpos

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/retrieval-gate/retrieval-gate/internal/format"
)

// MaxDepth is the nesting limit of arrays and objects (encoding/json's).
const MaxDepth = 10000

// MaxValues is the most values one record may hold (every string, number,
// literal, array and object at any depth; keys are not values) when Scanner.Check
// checks it or Parser.Parse builds its tree: the cap on what a record costs in
// memory beyond its bytes. The readers' byte caps alone do not bound it: a tree
// takes 100 to 250 bytes per value (with the collector's headroom) where a value
// can take two bytes of input ("0,"), so a 14 MiB line of zeros took 3.5 GB. A
// record over the cap is a *SyntaxError (Cap) at its first value past the cap.
// Readers of lines use MaxValues; readers of whole report documents
// (DocumentMaxValues) take more.
const MaxValues = 1 << 20

// DocumentMaxValues is MaxValues of a report's --json document read back whole
// (report --from, a history record, which carries one): a compare document lists
// the failed queries of each strategy, so one of a million queries can hold
// millions of values legitimately.
const DocumentMaxValues = 1 << 23

// maxKeyInError bounds how much of a key an error message quotes.
const maxKeyInError = 64

// SyntaxError is a JSON syntax error, a duplicate key, or a record over the
// values cap, at byte offset Off of the input.
type SyntaxError struct {
	Off int
	Msg string
	// Key is set for a duplicate key: the key (unescaped, maybe truncated).
	Key string
	Dup bool
	// Cap is set for a record of more values than the reader takes (MaxValues).
	Cap bool
}

// NotSyntax reports an error that is not of the JSON's syntax (a repeated key,
// the values cap): its message stands alone, without "malformed JSON".
func (e *SyntaxError) NotSyntax() bool { return e.Dup || e.Cap }

func (e *SyntaxError) Error() string { return fmt.Sprintf("%s at column %d", e.Msg, e.Off+1) }

// Describe is the message for a line-oriented reader: "malformed JSON: … at
// column N", or "duplicate key "k" at column N".
func (e *SyntaxError) Describe() string {
	if e.NotSyntax() {
		return e.Error()
	}
	return "malformed JSON: " + e.Error()
}

// DescribeAt is the message for a multi-line document, with the column counted
// from the start of the error's line.
func (e *SyntaxError) DescribeAt(data []byte) (line int, msg string) {
	off := min(e.Off, len(data))
	line = 1 + bytes.Count(data[:off], []byte{'\n'})
	col := off - (bytes.LastIndexByte(data[:off], '\n') + 1)
	msg = fmt.Sprintf("%s at column %d", strings.Replace(e.Msg, "end of line", "end of file", 1), col+1)
	if !e.NotSyntax() {
		msg = "malformed JSON: " + msg
	}
	return line, msg
}

// QuoteKey quotes a key for an error message: Go syntax (control characters
// escaped), at most 64 bytes of it.
func QuoteKey(k []byte) string {
	if len(k) > maxKeyInError {
		return strconv.Quote(string(k[:maxKeyInError])) + "…"
	}
	return strconv.Quote(string(k))
}

// Scanner lexes JSON in B. The zero value (with B set) is ready; a Scanner
// reuses its scratch memory, so a long-lived one lexes without allocating.
type Scanner struct {
	B []byte

	keys   []keySpan             // keys of the open objects, innermost last
	karena []byte                // unescaped keys (those with escapes)
	frames []frame               // open objects
	sets   []map[string]struct{} // sets[d]: the keys of open object d, once it is large
	tmp    []byte                // an unescaped untracked key

	// MaxValues is Check's cap on the values of a record (0: MaxValues).
	MaxValues int
	limit     int // the cap while Check runs (0: none), counted down by Skip
}

// keySpan is where a key's bytes are: in B or, unescaped, in karena. Offsets are
// ints, not int32: B has no size limit here (a caller's cap is not this package's
// proof), and an int32 would wrap past 2 GiB.
type keySpan struct {
	off, end int
	inArena  bool
}

// frame is an open object (no pointers: appending one needs no write barrier).
type frame struct {
	keys, arena int  // len(keys), len(karena) when the object opened
	big         bool // its keys are in sets[depth] (dupMapAt or more)
}

// dupMapAt is the member count from which an object's keys go into a map
// instead of being compared one by one.
const dupMapAt = 16

// Reset starts lexing b.
func (s *Scanner) Reset(b []byte) {
	s.B = b
	s.keys = s.keys[:0]
	s.karena = s.karena[:0]
	s.frames = s.frames[:0]
}

// Errorf is a syntax error at off.
func (s *Scanner) Errorf(off int, format string, args ...any) error {
	return &SyntaxError{Off: off, Msg: fmt.Sprintf(format, args...)}
}

// Unexpected reports the byte at pos (or the end of the input) as unexpected.
func (s *Scanner) Unexpected(pos int, what string) error {
	if pos >= len(s.B) {
		return s.Errorf(pos, "unexpected end of line %s", what)
	}
	return s.Errorf(pos, "unexpected %s %s", describeByte(s.B[pos:]), what)
}

func describeByte(b []byte) string {
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

// WS returns the offset of the first non-whitespace byte at or after i.
// Small enough to inline: most calls find no whitespace, or one space.
func (s *Scanner) WS(i int) int {
	if i < len(s.B) && s.B[i] > ' ' {
		return i
	}
	if i+1 < len(s.B) && s.B[i] == ' ' && s.B[i+1] > ' ' {
		return i + 1
	}
	return s.wsSlow(i)
}

func (s *Scanner) wsSlow(i int) int {
	b := s.B
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

// TypeName names the JSON type of the value starting with c: string, object,
// array, true, false, null or number.
func TypeName(c byte) string {
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

// stringStop marks the bytes that end the fast path inside a string: the quote,
// the backslash and the control characters (which JSON forbids unescaped).
var stringStop = func() (t [256]bool) {
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

// String validates the string starting at the quote at i and returns the offset
// after its closing quote and whether it needs unquoting (escapes, or invalid
// UTF-8, which unquoting turns into U+FFFD); if not, its content is the bytes
// between the quotes.
func (s *Scanner) String(i int) (end int, esc bool, err error) {
	// The common string: no backslash, no control character, ASCII. Eight
	// bytes at a time, the closing quote found inside its word; a string with
	// other bytes before its quote goes on below.
	b := s.B
	for j := i + 1; j+8 <= len(b); j += 8 {
		x := binary.LittleEndian.Uint64(b[j:])
		q := x ^ (swarOnes * '"')
		// Flags at bit 7 of each byte; the lowest quote flag is exact (a false
		// one only sits above a true one), and so is "any stop flag below it".
		quotes := (q - swarOnes) &^ q & swarHigh
		stops := stopFlags(x) | x&swarHigh
		if quotes != 0 {
			if stops&(quotes&-quotes-1) == 0 {
				return j + int(uint(bits.TrailingZeros64(quotes))>>3) + 1, false, nil
			}
			break
		}
		if stops != 0 {
			break
		}
	}
	// Non-ASCII (valid UTF-8 needs no unquoting), or the last bytes of the
	// input: one search for the quote, one check of the span.
	if q := bytes.IndexByte(b[i+1:], '"'); q >= 0 {
		switch plainSpan(b, i+1, i+1+q) {
		case spanASCII:
			return i + q + 2, false, nil
		case spanHigh:
			if utf8.Valid(b[i+1 : i+1+q]) {
				return i + q + 2, false, nil
			}
		}
	}
	return s.stringSlow(i)
}

// Results of plainSpan.
const (
	spanASCII = iota // printable ASCII, no backslash
	spanHigh         // no backslash or control character; some byte ≥ 0x80
	spanStop         // a backslash or a control character
)

// plainSpan classifies b[j:e] (e ≤ len(b)) eight bytes at a time: a backslash
// or a control character (which the slow path handles or reports), else
// whether any byte is not ASCII. Bytes of b past e are read but ignored.
func plainSpan(b []byte, j, e int) int {
	var hi uint64
	for ; j+8 <= e; j += 8 {
		x := binary.LittleEndian.Uint64(b[j:])
		if stopWord(x) {
			return spanStop
		}
		hi |= x
	}
	if j < e {
		var x uint64
		if j+8 <= len(b) {
			// The tail in one load; the bytes past e read as spaces.
			m := uint64(1)<<(8*uint(e-j)) - 1
			x = binary.LittleEndian.Uint64(b[j:])&m | (swarOnes*' ')&^m
		} else {
			x = swarOnes * ' '
			for k := e - 1; k >= j; k-- {
				x = x<<8 | uint64(b[k])
			}
		}
		if stopWord(x) {
			return spanStop
		}
		hi |= x
	}
	if hi&swarHigh != 0 {
		return spanHigh
	}
	return spanASCII
}

// stopWord reports whether any byte of x is a backslash or a control character.
func stopWord(x uint64) bool { return stopFlags(x) != 0 }

// stopFlags flags (bit 7 of a byte) the backslashes and control characters of
// x, exact for the lowest one and for "any" (haszero/hasless from "Bit
// Twiddling Hacks": a false flag only sits above a true one).
func stopFlags(x uint64) uint64 {
	e := x ^ (swarOnes * '\\')
	return ((e-swarOnes)&^e | (x-swarOnes*0x20)&^x) & swarHigh
}

// stringSlow is String's general path: escapes, control characters (an error)
// and non-ASCII bytes.
func (s *Scanner) stringSlow(i int) (end int, esc bool, err error) {
	b := s.B
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
		for j < len(b) && !stringStop[b[j]] {
			hi |= uint64(b[j])
			j++
		}
		if j >= len(b) {
			return 0, false, s.Errorf(j, "unexpected end of line in string")
		}
		switch c := b[j]; c {
		case '"':
			return j + 1, esc || hi&swarHigh != 0, nil
		case '\\':
			esc = true
			j++
			if j >= len(b) {
				return 0, false, s.Errorf(j, "unexpected end of line in string escape")
			}
			switch b[j] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				j++
			case 'u':
				for k := 1; k <= 4; k++ {
					if j+k >= len(b) {
						return 0, false, s.Errorf(j+k, "unexpected end of line in \\u escape")
					}
					if !isHex(b[j+k]) {
						return 0, false, s.Unexpected(j+k, "in \\u escape")
					}
				}
				j += 5
			default:
				return 0, false, s.Unexpected(j, "in string escape")
			}
		default:
			return 0, false, s.Errorf(j, "control character 0x%02x in string", c)
		}
	}
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// Number validates the number starting at i and returns the offset after it.
func (s *Scanner) Number(i int) (int, error) {
	b := s.B
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
		return 0, s.Unexpected(i, "in number")
	}
	if i < len(b) && b[i] == '.' {
		i++
		if i >= len(b) || b[i] < '0' || b[i] > '9' {
			return 0, s.Unexpected(i, "after decimal point in number")
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
			return 0, s.Unexpected(i, "in exponent of number")
		}
		for i < len(b) && '0' <= b[i] && b[i] <= '9' {
			i++
		}
	}
	return i, nil
}

// Literal expects lit (true, false, null) at i.
func (s *Scanner) Literal(i int, lit string) (int, error) {
	for k := 0; k < len(lit); k++ {
		if i+k >= len(s.B) || s.B[i+k] != lit[k] {
			return 0, s.Unexpected(i+k, "in literal "+lit)
		}
	}
	return i + len(lit), nil
}

// Colon expects optional whitespace, ':' and optional whitespace after a key
// ending at i, and returns the offset of the value.
func (s *Scanner) Colon(i int) (int, error) {
	i = s.WS(i)
	if i >= len(s.B) || s.B[i] != ':' {
		return 0, s.Unexpected(i, "after object key")
	}
	return s.WS(i + 1), nil
}

// Next handles what follows a member or element: ',' (returns the offset of the
// next one), or the closer (returns the offset after it and done).
func (s *Scanner) Next(i int, closer byte, where string) (int, bool, error) {
	i = s.WS(i)
	if i < len(s.B) {
		switch s.B[i] {
		case ',':
			return s.WS(i + 1), false, nil
		case closer:
			return i + 1, true, nil
		}
	}
	return 0, false, s.Unexpected(i, where)
}

// OpenObject starts tracking the keys of an object (for duplicates); every
// OpenObject is matched by a CloseObject.
func (s *Scanner) OpenObject() {
	s.frames = append(s.frames, frame{keys: len(s.keys), arena: len(s.karena)})
}

// CloseObject ends the innermost object opened by OpenObject.
func (s *Scanner) CloseObject() {
	d := len(s.frames) - 1
	f := s.frames[d]
	s.keys, s.karena = s.keys[:f.keys], s.karena[:f.arena]
	if f.big {
		clear(s.sets[d])
	}
	s.frames = s.frames[:d]
}

func (s *Scanner) keyBytes(k keySpan) []byte {
	if k.inArena {
		return s.karena[k.off:k.end]
	}
	return s.B[k.off:k.end]
}

// Key scans the key at i of the innermost open object, rejects it when the
// object already has it, and returns it unescaped (aliasing B or scratch memory,
// valid until the next key) and the offset of its value. Invalid UTF-8 is
// coerced to U+FFFD, as encoding/json does.
func (s *Scanner) Key(i int) ([]byte, int, error) {
	b := s.B
	if i >= len(b) || b[i] != '"' {
		return nil, 0, s.Unexpected(i, "looking for an object key")
	}
	end, esc, err := s.String(i)
	if err != nil {
		return nil, 0, err
	}
	k := keySpan{off: i + 1, end: end - 1}
	if esc {
		off := len(s.karena)
		s.karena = AppendUnquoted(s.karena, b[i+1:end-1])
		k = keySpan{off: off, end: len(s.karena), inArena: true}
	}
	key := s.keyBytes(k)
	if err := s.addKey(k, key, i); err != nil {
		return nil, 0, err
	}
	v, err := s.Colon(end)
	return key, v, err
}

// KeyUntracked scans the key at i like Key but records nothing and stops after
// its closing quote (end): the caller checks duplicates itself (with its own
// bookkeeping, or TrackKey) before Colon. The key is valid until the next key.
func (s *Scanner) KeyUntracked(i int) (key []byte, end int, err error) {
	b := s.B
	if i >= len(b) || b[i] != '"' {
		return nil, 0, s.Unexpected(i, "looking for an object key")
	}
	end, esc, err := s.String(i)
	if err != nil {
		return nil, 0, err
	}
	key = b[i+1 : end-1]
	if esc {
		s.tmp = AppendUnquoted(s.tmp[:0], key)
		key = s.tmp
	}
	return key, end, nil
}

// TrackKey records key (whose opening quote is at offset at) in the innermost
// object opened by OpenObject, or reports it as a duplicate there.
func (s *Scanner) TrackKey(key []byte, at int) error {
	off := len(s.karena)
	s.karena = append(s.karena, key...)
	return s.addKey(keySpan{off: off, end: len(s.karena), inArena: true}, s.karena[off:], at)
}

// DuplicateKey is the error of key repeated at offset at.
func DuplicateKey(at int, key []byte) error {
	return &SyntaxError{Off: at, Msg: "duplicate key " + QuoteKey(key), Key: string(key[:min(len(key), maxKeyInError)]), Dup: true}
}

// addKey records key in the innermost object, or reports it as a duplicate.
func (s *Scanner) addKey(k keySpan, key []byte, at int) error {
	d := len(s.frames) - 1
	f := &s.frames[d]
	dup := false
	if f.big {
		set := s.sets[d]
		if _, dup = set[string(key)]; !dup {
			set[string(key)] = struct{}{}
		}
	} else {
		open := s.keys[f.keys:]
		for _, o := range open {
			if o.end-o.off == len(key) && string(s.keyBytes(o)) == string(key) {
				dup = true
				break
			}
		}
		if !dup {
			if len(open)+1 < dupMapAt {
				s.keys = append(s.keys, k)
				return nil
			}
			// Large object: its keys move into a set.
			for len(s.sets) <= d {
				s.sets = append(s.sets, nil)
			}
			if s.sets[d] == nil {
				s.sets[d] = make(map[string]struct{}, 2*dupMapAt)
			}
			set := s.sets[d]
			for _, o := range open {
				set[string(s.keyBytes(o))] = struct{}{}
			}
			set[string(key)] = struct{}{}
			f.big = true
		}
	}
	if dup {
		return DuplicateKey(at, key)
	}
	return nil
}

// Skip validates the value starting at i (which must not be whitespace) inside
// depth open containers, duplicate keys included, and returns the offset after it.
func (s *Scanner) Skip(i, depth int) (int, error) {
	b := s.B
	if i >= len(b) {
		return 0, s.Unexpected(i, "looking for a value")
	}
	if s.limit > 0 {
		if s.limit--; s.limit == 0 {
			return 0, capError(i, s.MaxValues)
		}
	}
	switch b[i] {
	case '"':
		end, _, err := s.String(i)
		return end, err
	case '{':
		if depth+1 > MaxDepth {
			return 0, s.Errorf(i, "nesting deeper than %d", MaxDepth)
		}
		i = s.WS(i + 1)
		if i < len(b) && b[i] == '}' {
			return i + 1, nil
		}
		// CloseObject on every return, without defer: a deferred call per
		// object was a fifth of the time of checking a large document.
		s.OpenObject()
		for {
			_, v, err := s.Key(i)
			if err != nil {
				s.CloseObject()
				return 0, err
			}
			if i, err = s.Skip(v, depth+1); err != nil {
				s.CloseObject()
				return 0, err
			}
			var done bool
			if i, done, err = s.Next(i, '}', "after object value"); err != nil || done {
				s.CloseObject()
				return i, err
			}
		}
	case '[':
		if depth+1 > MaxDepth {
			return 0, s.Errorf(i, "nesting deeper than %d", MaxDepth)
		}
		i = s.WS(i + 1)
		if i < len(b) && b[i] == ']' {
			return i + 1, nil
		}
		for {
			var err error
			if i, err = s.Skip(i, depth+1); err != nil {
				return 0, err
			}
			var done bool
			if i, done, err = s.Next(i, ']', "after array element"); err != nil || done {
				return i, err
			}
		}
	case 't':
		return s.Literal(i, "true")
	case 'f':
		return s.Literal(i, "false")
	case 'n':
		return s.Literal(i, "null")
	case '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		return s.Number(i)
	}
	return 0, s.Unexpected(i, "looking for a value")
}

// AppendUnquoted appends the JSON string content s (already validated, without
// its quotes) unescaped to dst, exactly as encoding/json unquotes it.
func AppendUnquoted(dst, s []byte) []byte {
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
				rr := getu4(s[r+1:])
				r += 5
				if utf16.IsSurrogate(rr) {
					if r+1 < len(s) && s[r] == '\\' && s[r+1] == 'u' {
						if dec := utf16.DecodeRune(rr, getu4(s[r+2:])); dec != unicode.ReplacementChar {
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

// getu4 decodes 4 hex digits at the start of s (validated by String).
func getu4(s []byte) rune {
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

// NumberValue validates the number starting at i and converts it: the offset
// after it, its value, and ok false when it does not fit a float64 (as
// ParseNumber). The common form (-?digits(.digits)?, at most 15 digits) is
// validated and converted in one pass, exactly as exactDecimal converts it.
func (s *Scanner) NumberValue(i int) (end int, f float64, ok bool, err error) {
	b := s.B
	j := i
	neg := j < len(b) && b[j] == '-'
	if neg {
		j++
	}
	var mant uint64
	start := j
	for j < len(b) && b[j]-'0' < 10 {
		mant = mant*10 + uint64(b[j]-'0')
		j++
	}
	digits, frac := j-start, 0
	if digits == 0 || digits > 1 && b[start] == '0' {
		return s.numberValueSlow(i)
	}
	if j < len(b) && b[j] == '.' {
		j++
		fs := j
		for j < len(b) && b[j]-'0' < 10 {
			mant = mant*10 + uint64(b[j]-'0')
			j++
		}
		if frac = j - fs; frac == 0 {
			return s.numberValueSlow(i)
		}
		digits += frac
	}
	if digits > 15 || j < len(b) && (b[j] == 'e' || b[j] == 'E') {
		return s.numberValueSlow(i)
	}
	f = float64(mant)
	if frac > 0 {
		f /= exactPow10[frac]
	}
	if neg {
		f = -f
	}
	return j, f, true, nil
}

func (s *Scanner) numberValueSlow(i int) (end int, f float64, ok bool, err error) {
	if end, err = s.Number(i); err != nil {
		return 0, 0, false, err
	}
	f, ok = ParseNumber(s.B[i:end])
	return end, f, ok, nil
}

// ParseNumber converts a validated JSON number; ok is false when it does not
// fit a float64 (1e400: encoding/json refuses it too).
func ParseNumber(b []byte) (float64, bool) {
	if f, ok := exactDecimal(b); ok {
		return f, true
	}
	f, err := strconv.ParseFloat(string(b), 64)
	if err != nil || math.IsInf(f, 0) {
		return 0, false
	}
	return f, true
}

// exactPow10 holds the powers of ten that are exact float64s.
var exactPow10 = [...]float64{1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
	1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22}

// exactDecimal converts a number of the form -?digits(.digits)? with at most 15
// digits in all, exactly (Clinger's fast path: an integer mantissa below 2^53
// divided by an exact power of ten is correctly rounded). ok is false for any
// other form; strconv handles those.
func exactDecimal(b []byte) (float64, bool) {
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

// Check validates data as one JSON value (whitespace around it allowed) in the
// language of Parse, duplicate keys included, without building a tree: the
// check of a reader that decodes with another library. A value of more than
// s.MaxValues values (0: MaxValues) is refused, so that the other library's tree
// is bounded too. Errors are *SyntaxError (Describe or DescribeAt give the
// reader's message). A long-lived Scanner checks without allocating.
func (s *Scanner) Check(data []byte) error {
	s.Reset(data)
	i := s.WS(0)
	if i >= len(data) {
		return s.Unexpected(i, "looking for a value")
	}
	if s.MaxValues <= 0 {
		s.MaxValues = MaxValues
	}
	s.limit = s.MaxValues + 1
	end, err := s.Skip(i, 0)
	s.limit = 0
	if err != nil {
		return err
	}
	if end = s.WS(end); end < len(data) {
		return s.Unexpected(end, "after top-level value")
	}
	return nil
}

// TooManyValues is the error of a reader that counts a record's values itself
// (the cases scanner): the first value past a cap of max values is at off.
func TooManyValues(off, max int) error { return capError(off, max) }

// capError is the error of the first value (at off) past a cap of max values.
func capError(off, max int) *SyntaxError {
	return &SyntaxError{Off: off, Cap: true, Msg: fmt.Sprintf("more than %s values in one record (the cap on what a record may take in memory)", format.Thousands(max))}
}

// Message is the line-oriented reader's message for an error of Check or Parse:
// "duplicate key "k" at column N" for a repeated key (the same words in every
// reader), else what followed by "malformed JSON: … at column N".
func Message(err error, what string) string {
	var se *SyntaxError
	if !errors.As(err, &se) {
		return what + err.Error()
	}
	if se.NotSyntax() {
		return se.Describe()
	}
	return what + se.Describe()
}

// Package jsoncap reads a JSON document token by token and value by value, as
// encoding/json's Decoder does, but holding at most a cap on one token or
// value and a constant: the importer's JSON documents, GitLab's pages of
// notes.
package jsoncap

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strconv"
)

// Scanner reads a JSON document (not JSONL) token by token and value by
// value, as encoding/json's Decoder does through Token, More and Decode into a
// json.RawMessage (with UseNumber), with the same tokens and the same syntax
// errors, but bounded while it reads: a token or value of more than max bytes
// of input (the white space before it counted) is refused when its bytes pass
// the cap, having held no more than the cap and one piece of bufio's buffer.
// The Decoder grows its buffer by doubling, and held about three times the
// cap before the cap's reader behind it stopped it (an 80 MiB ragas element
// against the 64 MiB cap).
//
// A value's extent is found by counting brackets outside strings, its bytes
// kept in pieces (pieces) and joined once whole, then checked by
// encoding/json: what is not JSON fails there, at its offset.
type Scanner struct {
	br      *bufio.Reader
	off     int64 // input offset of the next byte
	start   int64 // input offset where the current read began: the cap counts from it
	max     int64
	tooLong error // the error of a token or value over max
	state   int   // as the Decoder's tokenState
	stack   []int // the states of the enclosing arrays and objects
	value   Pieces
	frag    []byte // the value the input ended in (Buffered)
	refused bool   // a read passed the cap: every later one fails with tooLong
}

// The token states of encoding/json's Decoder (stream.go).
const (
	jsTopValue = iota
	jsArrayStart
	jsArrayValue
	jsArrayComma
	jsObjectStart
	jsObjectKey
	jsObjectColon
	jsObjectValue
	jsObjectComma
)

// SyntaxError is a syntax error at input offset Offset, worded as
// encoding/json words it.
type SyntaxError struct {
	msg    string
	Offset int64
}

func (e *SyntaxError) Error() string { return e.msg }

// New reads br, each token or value (and the white space before it) at most
// max bytes from the last Mark: one longer fails with tooLong when its bytes
// pass the cap, and so does every read after it (the document cannot be read
// on: the Decoder behind a capped reader failed every read after it too).
func New(br *bufio.Reader, max int64, tooLong error) *Scanner {
	return &Scanner{br: br, max: max, tooLong: tooLong}
}

// Start is the input offset of the last Mark.
func (s *Scanner) Start() int64 { return s.start }

// InputOffset is the offset of the next byte to read.
func (s *Scanner) InputOffset() int64 { return s.off }

// Mark starts a read: the cap counts from here.
func (s *Scanner) Mark() { s.start = s.off }

// over reports whether n more bytes would take the current read past the cap;
// if so the scanner is refused from then on.
func (s *Scanner) over(n int) bool {
	if s.off+int64(n)-s.start > s.max {
		s.refused = true
	}
	return s.refused
}

// Buffered is what encoding/json's Decoder.Buffered gives where a caller may
// ask it: after io.ErrUnexpectedEOF, the value the input ended in, as far as
// it came; after "expected comma after array element" or "expected colon
// after object key" (DecodeRaw), or an error of Token outside a value, the
// input from the byte in error; after a token or value, input that follows
// it. Unlike the Decoder's, it does not begin with the white space before
// the value, and it holds no more than the cap and bufio's buffer: the
// reader's unread bytes, to the end of bufio's buffer. It is valid until the
// next read.
func (s *Scanner) Buffered() io.Reader {
	rest, _ := s.br.Peek(s.br.Buffered())
	if len(s.frag) == 0 {
		return bytes.NewReader(rest)
	}
	return io.MultiReader(bytes.NewReader(s.frag), bytes.NewReader(rest))
}

// eof is the input ending inside the value whose bytes read are frag.
func (s *Scanner) eof(frag []byte) error {
	s.frag = frag
	return io.ErrUnexpectedEOF
}

// peek skips white space and returns the next byte.
func (s *Scanner) peek() (byte, error) {
	s.frag = nil
	if s.refused {
		return 0, s.tooLong
	}
	for {
		n := max(s.br.Buffered(), 1)
		b, err := s.br.Peek(n)
		if len(b) == 0 {
			if err == nil {
				err = io.EOF
			}
			return 0, err
		}
		i := 0
		for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\r' || b[i] == '\n') {
			i++
		}
		if s.over(i) {
			return 0, s.tooLong
		}
		_, _ = s.br.Discard(i)
		s.off += int64(i)
		if i < len(b) {
			return b[i], nil
		}
	}
}

// skip consumes the byte peek returned.
func (s *Scanner) skip() error {
	if s.over(1) {
		return s.tooLong
	}
	_, _ = s.br.Discard(1)
	s.off++
	return nil
}

// More reports whether the array or object being read has another element.
func (s *Scanner) More() bool {
	c, err := s.peek()
	return err == nil && c != ']' && c != '}'
}

func (s *Scanner) valueAllowed() bool {
	switch s.state {
	case jsTopValue, jsArrayStart, jsArrayValue, jsObjectValue:
		return true
	}
	return false
}

func (s *Scanner) valueEnd() {
	switch s.state {
	case jsArrayStart, jsArrayValue:
		s.state = jsArrayComma
	case jsObjectValue:
		s.state = jsObjectComma
	}
}

func (s *Scanner) pop() {
	s.state = s.stack[len(s.stack)-1]
	s.stack = s.stack[:len(s.stack)-1]
}

func (s *Scanner) tokenError(c byte) error {
	var context string
	switch s.state {
	case jsTopValue, jsArrayStart, jsArrayValue, jsObjectValue:
		context = " looking for beginning of value"
	case jsArrayComma:
		context = " after array element"
	case jsObjectKey:
		context = " looking for beginning of object key string"
	case jsObjectColon:
		context = " after object key"
	case jsObjectComma:
		context = " after object key:value pair"
	}
	return &SyntaxError{"invalid character " + quoteChar(c) + context, s.off}
}

// quoteChar is encoding/json's: a byte as its messages quote it.
func quoteChar(c byte) string {
	if c == '\'' {
		return `'\''`
	}
	if c == '"' {
		return `'"'`
	}
	s := strconv.Quote(string(c))
	return "'" + s[1:len(s)-1] + "'"
}

// Token is the Decoder's Token: a json.Delim, a key or a value (a string,
// json.Number, bool or nil), the commas and colons checked and skipped.
func (s *Scanner) Token() (json.Token, error) {
	for {
		c, err := s.peek()
		if err != nil {
			return nil, err
		}
		switch c {
		case '[', '{':
			if !s.valueAllowed() {
				return nil, s.tokenError(c)
			}
			if err := s.skip(); err != nil {
				return nil, err
			}
			s.stack = append(s.stack, s.state)
			if c == '[' {
				s.state = jsArrayStart
			} else {
				s.state = jsObjectStart
			}
			return json.Delim(c), nil
		case ']':
			if s.state != jsArrayStart && s.state != jsArrayComma {
				return nil, s.tokenError(c)
			}
			if err := s.skip(); err != nil {
				return nil, err
			}
			s.pop()
			s.valueEnd()
			return json.Delim(c), nil
		case '}':
			if s.state != jsObjectStart && s.state != jsObjectComma {
				return nil, s.tokenError(c)
			}
			if err := s.skip(); err != nil {
				return nil, err
			}
			s.pop()
			s.valueEnd()
			return json.Delim(c), nil
		case ':':
			if s.state != jsObjectColon {
				return nil, s.tokenError(c)
			}
			if err := s.skip(); err != nil {
				return nil, err
			}
			s.state = jsObjectValue
			continue
		case ',':
			switch s.state {
			case jsArrayComma:
				s.state = jsArrayValue
			case jsObjectComma:
				s.state = jsObjectKey
			default:
				return nil, s.tokenError(c)
			}
			if err := s.skip(); err != nil {
				return nil, err
			}
			continue
		case '"':
			if s.state == jsObjectStart || s.state == jsObjectKey {
				raw, start, err := s.readValue()
				if err != nil {
					return nil, err
				}
				var k string
				if err := unmarshalAt(raw, start, &k); err != nil {
					return nil, err
				}
				s.state = jsObjectColon
				return k, nil
			}
		}
		if !s.valueAllowed() {
			return nil, s.tokenError(c)
		}
		raw, err := s.DecodeRaw()
		if err != nil {
			return nil, err
		}
		return scalar(raw)
	}
}

// scalar is the token of raw, a string, number or literal that readValue
// read (valid JSON): the value the Decoder gives with UseNumber, decoded from
// raw with no other copy of it (a Decoder over raw copied it into its buffer,
// and grew the buffer by doubling).
func scalar(raw []byte) (json.Token, error) {
	switch raw[0] {
	case '"':
		var str string
		if err := json.Unmarshal(raw, &str); err != nil {
			return nil, err
		}
		return str, nil
	case 't':
		return true, nil
	case 'f':
		return false, nil
	case 'n':
		return nil, nil
	}
	return json.Number(string(raw)), nil
}

// DecodeRaw is the Decoder's Decode into a json.RawMessage: the next value's
// bytes (valid only until the next read).
func (s *Scanner) DecodeRaw() ([]byte, error) {
	if s.refused {
		return nil, s.tooLong
	}
	switch s.state {
	case jsArrayComma:
		c, err := s.peek()
		if err != nil {
			return nil, err
		}
		if c != ',' {
			return nil, &SyntaxError{"expected comma after array element", s.off}
		}
		if err := s.skip(); err != nil {
			return nil, err
		}
		s.state = jsArrayValue
	case jsObjectColon:
		c, err := s.peek()
		if err != nil {
			return nil, err
		}
		if c != ':' {
			return nil, &SyntaxError{"expected colon after object key", s.off}
		}
		if err := s.skip(); err != nil {
			return nil, err
		}
		s.state = jsObjectValue
	}
	if !s.valueAllowed() {
		return nil, &SyntaxError{"not at beginning of value", s.off}
	}
	raw, _, err := s.readValue()
	if err != nil {
		return nil, err
	}
	s.valueEnd()
	return raw, nil
}

// unmarshalAt is json.Unmarshal of raw, read at input offset start: a syntax
// error is at its offset in the input.
func unmarshalAt(raw []byte, start int64, v any) error {
	err := json.Unmarshal(raw, v)
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return &SyntaxError{se.Error(), start + se.Offset - 1}
	}
	return err
}

// readValue reads the value that starts at the next non-space byte, as
// far as the Decoder reads it: an object or array to its closing bracket
// (brackets in strings not counted) and a string to its closing quote, then
// checked by encoding/json; a number or a literal (true, false, null) byte by
// byte, to the first byte that does not continue it (left unread). The input
// ending inside a value is io.ErrUnexpectedEOF, unless a syntax error came
// first.
func (s *Scanner) readValue() ([]byte, int64, error) {
	first, err := s.peek()
	if err != nil {
		return nil, 0, err
	}
	start := s.off
	s.value.Reset()
	if first != '{' && first != '[' && first != '"' {
		return s.readScalar(first, start)
	}
	depth, inString, escaped := 0, false, false
	done := false
	for !done {
		b, err := s.br.Peek(max(s.br.Buffered(), 1))
		if len(b) == 0 {
			if err == nil || errors.Is(err, io.EOF) {
				// A syntax error before the end is the error; else the
				// document ended inside the value.
				raw := append(s.value.Join(), 0)
				var se *json.SyntaxError
				if errors.As(json.Unmarshal(raw, new(json.RawMessage)), &se) && se.Offset < int64(len(raw)) {
					return nil, 0, &SyntaxError{se.Error(), start + se.Offset - 1}
				}
				err = s.eof(raw[:len(raw)-1])
			}
			return nil, 0, err
		}
		i := 0
		for ; i < len(b) && !done; i++ {
			c := b[i]
			switch {
			case inString:
				switch {
				case escaped:
					escaped = false
				case c == '\\':
					escaped = true
				case c == '"':
					inString = false
					done = depth == 0
				}
			case c == '"':
				inString = true
			case c == '{' || c == '[':
				depth++
			case c == '}' || c == ']':
				depth--
				done = depth == 0
			}
		}
		if s.over(i) {
			return nil, 0, s.tooLong
		}
		s.value.Add(b[:i])
		_, _ = s.br.Discard(i)
		s.off += int64(i)
	}
	raw := s.join()
	if !json.Valid(raw) {
		var se *json.SyntaxError
		if err := json.Unmarshal(raw, new(json.RawMessage)); errors.As(err, &se) {
			return nil, 0, &SyntaxError{se.Error(), start + se.Offset - 1}
		}
		return nil, 0, &SyntaxError{"invalid JSON", start}
	}
	return raw, start, nil
}

// join is the value read, its pieces joined; a large one is not kept for the
// next value.
func (s *Scanner) join() []byte {
	raw := s.value.Join()
	if len(raw) > 1<<20 {
		s.value.line = nil
	}
	return raw
}

// The states of a number or literal being read (encoding/json's scanner).
const (
	jsNeg    = iota // after '-'
	jsInt           // in the digits of the integer part (not a leading 0)
	jsZero          // after a leading 0
	jsDot           // after '.'
	jsFrac          // in the fraction's digits
	jsExp           // after 'e' or 'E'
	jsExpSig        // after the exponent's sign
	jsExpDig        // in the exponent's digits
	jsWord          // in a literal
)

// readScalar reads a number or a literal starting with first, at start.
func (s *Scanner) readScalar(first byte, start int64) ([]byte, int64, error) {
	st, word := jsNeg, ""
	switch {
	case first == '-':
	case first == '0':
		st = jsZero
	case first >= '1' && first <= '9':
		st = jsInt
	case first == 't':
		st, word = jsWord, "true"
	case first == 'f':
		st, word = jsWord, "false"
	case first == 'n':
		st, word = jsWord, "null"
	default:
		return nil, 0, &SyntaxError{"invalid character " + quoteChar(first) + " looking for beginning of value", start}
	}
	n := 1 // bytes of the value read (the first)
	if err := s.skip(); err != nil {
		return nil, 0, err
	}
	s.value.Add([]byte{first})
	digit := func(c byte) bool { return c >= '0' && c <= '9' }
	for {
		b, err := s.br.Peek(max(s.br.Buffered(), 1))
		if len(b) == 0 {
			if err != nil && !errors.Is(err, io.EOF) {
				return nil, 0, err
			}
			switch st {
			case jsInt, jsZero, jsFrac, jsExpDig:
				return s.join(), start, nil
			}
			return nil, 0, s.eof(s.join())
		}
		i, end := 0, false
		var bad string // the context of a byte that may not come here
		for ; i < len(b) && !end && bad == ""; i++ {
			c := b[i]
			switch st {
			case jsNeg:
				switch {
				case c == '0':
					st = jsZero
				case c >= '1' && c <= '9':
					st = jsInt
				default:
					bad = "in numeric literal"
				}
			case jsInt, jsZero:
				switch {
				case st == jsInt && digit(c):
				case c == '.':
					st = jsDot
				case c == 'e' || c == 'E':
					st = jsExp
				default:
					end = true
				}
			case jsDot:
				if !digit(c) {
					bad = "after decimal point in numeric literal"
				}
				st = jsFrac
			case jsFrac:
				switch {
				case digit(c):
				case c == 'e' || c == 'E':
					st = jsExp
				default:
					end = true
				}
			case jsExp, jsExpSig:
				switch {
				case digit(c):
					st = jsExpDig
				case st == jsExp && (c == '+' || c == '-'):
					st = jsExpSig
				default:
					bad = "in exponent of numeric literal"
				}
			case jsExpDig:
				if !digit(c) {
					end = true
				}
			case jsWord:
				if c != word[n] {
					bad = "in literal " + word + " (expecting " + quoteChar(word[n]) + ")"
				} else if n++; n == len(word) {
					end = true // the loop's i++ takes the last letter
				}
			}
		}
		if end && st != jsWord {
			i-- // the byte that ends it is not the value's
		}
		if bad != "" {
			i--
			return nil, 0, &SyntaxError{"invalid character " + quoteChar(b[i]) + " " + bad, s.off + int64(i)}
		}
		if s.over(i) {
			return nil, 0, s.tooLong
		}
		s.value.Add(b[:i])
		_, _ = s.br.Discard(i)
		s.off += int64(i)
		if end {
			return s.join(), start, nil
		}
	}
}

// Pieces is a value (or a line) read in pieces, bufio's buffer at a time,
// and joined once whole: each piece is copied into a buffer of its own, the
// buffers kept from value to value, so a value over a cap is refused having
// held the cap and a piece, not the doublings of an append.
type Pieces struct {
	bufs [][]byte // bufs[:used] hold the value's pieces
	used int
	n    int64  // the value's bytes so far
	line []byte // the joined value, its buffer kept from value to value
}

// Reset starts the next value.
func (p *Pieces) Reset() { p.used, p.n = 0, 0 }

// Len is the number of bytes added since Reset.
func (p *Pieces) Len() int64 { return p.n }

// Add copies b, a piece of the value.
func (p *Pieces) Add(b []byte) {
	if p.used == len(p.bufs) {
		p.bufs = append(p.bufs, make([]byte, 0, max(len(b), 4<<10)))
	}
	buf := p.bufs[p.used]
	if cap(buf) < len(b) {
		buf = make([]byte, 0, len(b))
	}
	p.bufs[p.used] = append(buf[:0], b...)
	p.used++
	p.n += int64(len(b))
}

// Join is the value, its pieces one after the other (valid until the next
// Join); the pieces' buffers are then given up when the value is large, so
// that they are not held beside it.
func (p *Pieces) Join() []byte {
	if int64(cap(p.line)) < p.n {
		p.line = make([]byte, 0, p.n)
	}
	p.line = p.line[:0]
	for _, b := range p.bufs[:p.used] {
		p.line = append(p.line, b...)
	}
	if p.n > 1<<20 {
		p.bufs = nil
	}
	p.used = 0
	return p.line
}

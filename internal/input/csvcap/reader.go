// Package csvcap reads CSV as encoding/csv does with its defaults, bounded
// while it reads: a record over a cap of input bytes is refused having held
// no more than the cap and a chunk (encoding/csv held about five times it).
package csvcap

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"errors"
	"io"
	"strings"

	"github.com/retrieval-gate/retrieval-gate/internal/input"
)

// Reader reads CSV records as encoding/csv's Reader does with its defaults
// and ReuseRecord (RFC 4180: fields separated by commas, a field in double
// quotes may hold commas, line breaks and "" for a quote; "\r\n" read as
// "\n", a "\r" that ends the input dropped, empty lines skipped, every record
// as wide as the first; the same errors at the same lines), but bounded
// while it reads: a record over max bytes of input, or of more than
// input.MaxCSVSeparators commas, is refused when its bytes pass the cap,
// having held no more than the cap and one piece of bufio's buffer.
// encoding/csv grows its line and field buffers by append, and held about
// five times the cap before the cap's reader behind it stopped it (316 MB for
// an 80 MiB quoted cell against the 64 MiB cap).
//
// The fields' bytes are kept in chunks of csvChunk bytes and joined into one
// string when the record is whole, as encoding/csv does.
type Reader struct {
	br    *bufio.Reader
	max   int64 // the cap of one record, in bytes of input (its newline included)
	width int   // the fields of the first record; 0 before it

	line      int  // the line being read (1-based)
	pending   bool // a line break inside a quoted field was read: the next byte starts line+1
	startLine int  // the line where the last record started
	endLine   int  // the line where the last record ended

	n      int64 // bytes of input of the record so far
	seps   int   // commas of the record so far (quoted ones too)
	chunks [][]byte
	used   int   // chunks[:used] hold the record's field bytes
	size   int   // the field bytes held
	ends   []int // the end of each field, in the field bytes
	rec    []string
}

// csvChunk is the size of a chunk of a record's field bytes.
const csvChunk = 64 << 10

// ParseError is a parse error of Reader, as encoding/csv's *csv.ParseError
// words it (its Err is csv.ErrBareQuote, csv.ErrQuote or csv.ErrFieldCount)
// and at the line its Line names.
type ParseError struct {
	Line int
	Err  error
}

func (e *ParseError) Error() string { return e.Err.Error() }
func (e *ParseError) Unwrap() error { return e.Err }

// ErrTooLong is the read error of a record over the cap.
var ErrTooLong = errors.New("record too long")

// NewReader reads CSV from br, refusing a record over max bytes of input.
func NewReader(br *bufio.Reader, max int64) *Reader { return &Reader{br: br, max: max} }

// StartLine is the line (1-based) where the last record read started.
func (r *Reader) StartLine() int { return r.startLine }

// EndLine is the line where the last record read ended (0 before the first):
// a record that fails with ErrTooLong or input.ErrTooManySeparators starts
// at EndLine()+1 or, after blank lines, below it.
func (r *Reader) EndLine() int { return r.endLine }

// The states of the record being read.
const (
	csvFieldStart  = iota // before a field's first byte
	csvUnquoted           // in a field not quoted
	csvUnquotedCR         // a "\r" read in a field not quoted (a "\r\n" line end, or data)
	csvQuoted             // in a quoted field
	csvQuotedCR           // a "\r" read in a quoted field
	csvQuoteSeen          // a '"' read in a quoted field: its end, or the first of ""
	csvQuoteSeenCR        // "\r" after a quoted field's end
)

// Read returns the next record (valid until the next call), io.EOF after the
// last, a *ParseError, ErrTooLong or input.ErrTooManySeparators.
func (r *Reader) Read() ([]string, error) {
	r.n, r.seps, r.used, r.size = 0, 0, 0, 0
	r.ends = r.ends[:0]
	// Empty lines before the record are skipped (and count towards its cap).
	for {
		b, err := r.br.Peek(2)
		if len(b) == 0 {
			if err == nil || errors.Is(err, io.EOF) {
				return nil, io.EOF
			}
			return nil, err
		}
		skip := 0
		switch {
		case b[0] == '\n':
			skip = 1
		case b[0] == '\r' && len(b) == 2 && b[1] == '\n':
			skip = 2
		case b[0] == '\r' && len(b) == 1 && errors.Is(err, io.EOF):
			skip = 1 // a "\r" that ends the input is dropped: an empty line
		}
		if skip == 0 {
			break
		}
		_, _ = r.br.Discard(skip)
		r.line++
		if r.n += int64(skip); r.n > r.max {
			return nil, ErrTooLong
		}
	}
	r.line++
	recLine := r.line
	r.startLine = recLine
	st := csvFieldStart
	crLine := false // the last byte read is a "\r" that started a line
	for {
		b, rerr := r.br.ReadSlice('\n')
		if rerr != nil && !errors.Is(rerr, io.EOF) && !errors.Is(rerr, bufio.ErrBufferFull) {
			return nil, rerr
		}
		if r.n += int64(len(b)); r.n > r.max {
			return nil, ErrTooLong
		}
		if r.seps += bytes.Count(b, []byte{','}); r.seps > input.MaxCSVSeparators {
			return nil, input.ErrTooManySeparators
		}
		done := false
		for i := 0; i < len(b) && !done; {
			if r.pending {
				r.line++
				r.pending = false
				crLine = b[i] == '\r'
			} else {
				crLine = false
			}
			switch st {
			case csvFieldStart:
				if b[i] == '"' {
					st = csvQuoted
					i++
				} else {
					st = csvUnquoted
				}
			case csvUnquoted:
				j := i
				for j < len(b) && b[j] != ',' && b[j] != '"' && b[j] != '\n' && b[j] != '\r' {
					j++
				}
				r.add(b[i:j])
				if i = j; i == len(b) {
					break
				}
				switch b[i] {
				case ',':
					r.endField()
					st = csvFieldStart
				case '\n':
					r.endField()
					done = true
				case '\r':
					st = csvUnquotedCR
				case '"':
					return nil, &ParseError{Line: r.line, Err: csv.ErrBareQuote}
				}
				i++
			case csvUnquotedCR:
				if b[i] == '\n' {
					r.endField()
					done = true
					i++
				} else {
					r.add([]byte{'\r'})
					st = csvUnquoted
				}
			case csvQuoted:
				j := i
				for j < len(b) && b[j] != '"' && b[j] != '\n' && b[j] != '\r' {
					j++
				}
				r.add(b[i:j])
				if i = j; i == len(b) {
					break
				}
				switch b[i] {
				case '"':
					st = csvQuoteSeen
				case '\n':
					r.add([]byte{'\n'})
					r.pending = true
				case '\r':
					st = csvQuotedCR
				}
				i++
			case csvQuotedCR:
				if b[i] == '\n' {
					r.add([]byte{'\n'})
					r.pending = true
					i++
				} else {
					r.add([]byte{'\r'})
				}
				st = csvQuoted
			case csvQuoteSeen:
				switch b[i] {
				case '"':
					r.add([]byte{'"'})
					st = csvQuoted
				case ',':
					r.endField()
					st = csvFieldStart
				case '\n':
					r.endField()
					done = true
				case '\r':
					st = csvQuoteSeenCR
				default:
					return nil, &ParseError{Line: r.line, Err: csv.ErrQuote}
				}
				i++
			case csvQuoteSeenCR:
				if b[i] != '\n' {
					return nil, &ParseError{Line: r.line, Err: csv.ErrQuote}
				}
				r.endField()
				done = true
				i++
			}
		}
		if !done && errors.Is(rerr, io.EOF) {
			// The input ends the record (a "\r" before its end is dropped).
			switch st {
			case csvQuoted, csvQuotedCR:
				line := r.line
				if st == csvQuotedCR && crLine {
					line-- // a line of a "\r" that ends the input is empty: not counted
				}
				return nil, &ParseError{Line: line, Err: csv.ErrQuote}
			}
			r.endField()
			done = true
		}
		if done {
			break
		}
	}
	r.endLine = r.line
	rec := r.record()
	if r.width == 0 {
		r.width = len(rec)
	} else if len(rec) != r.width {
		return rec, &ParseError{Line: recLine, Err: csv.ErrFieldCount}
	}
	return rec, nil
}

// add appends b to the record's field bytes.
func (r *Reader) add(b []byte) {
	for len(b) > 0 {
		if r.used == 0 || len(r.chunks[r.used-1]) == cap(r.chunks[r.used-1]) {
			if r.used == len(r.chunks) {
				r.chunks = append(r.chunks, make([]byte, 0, csvChunk))
			}
			r.chunks[r.used] = r.chunks[r.used][:0]
			r.used++
		}
		c := &r.chunks[r.used-1]
		n := min(len(b), cap(*c)-len(*c))
		*c = append(*c, b[:n]...)
		b = b[n:]
		r.size += n
	}
}

func (r *Reader) endField() { r.ends = append(r.ends, r.size) }

// record is the fields, sliced from one string of the field bytes; the
// chunks of a large record are then given up, so that they are not held
// beside it while it is converted.
func (r *Reader) record() []string {
	var s string
	switch r.used {
	case 0:
	case 1:
		s = string(r.chunks[0])
	default:
		var sb strings.Builder
		sb.Grow(r.size)
		for _, c := range r.chunks[:r.used] {
			sb.Write(c)
		}
		s = sb.String()
	}
	if len(r.chunks) > 16 {
		r.chunks = r.chunks[:1]
	}
	r.rec = r.rec[:0]
	start := 0
	for _, end := range r.ends {
		r.rec = append(r.rec, s[start:end])
		start = end
	}
	return r.rec
}
